"""The attribute a user's ``getattr(obj, name)`` / ``hasattr(obj, name)`` asks for, read from the
call site's bytecode while a call is recorded (:mod:`.side_effects`' profile function).

A graph guards the module attributes its recording's code could read
(:func:`~.side_effects.names_read`). A call of the built-in ``getattr`` reads the attribute its
argument names: where that argument is a constant or a variable (``getattr(self, "scale")``,
``for name in ("a", "b"): getattr(self, name)``, ``getattr(self, f"layer{i}")`` bound to a local
first), the name is known when the call is made, so the guards can stay narrowed to the names
actually requested (torch's dynamo traces the read of that attribute). Anything else (a name
computed on the stack, ``getattr`` passed to ``map``) leaves every attribute guarded.
"""
import dis
import functools

__all__ = ["direct_calls_only", "requested_name"]

# the instructions that push one argument whose value a frame still holds when the call is made
_LOADS = {"LOAD_CONST", "LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_FAST_LOAD_FAST"}
_BETWEEN = {"PRECALL", "CACHE", "EXTENDED_ARG"}  # (between the arguments and the CALL: nothing pushed)


@functools.lru_cache(maxsize=2048)
def _instructions(code):
    listed = list(dis.get_instructions(code))
    return listed, {ins.offset: k for k, ins in enumerate(listed)}


@functools.lru_cache(maxsize=2048)
def direct_calls_only(code, readers):
    """Whether ``code`` uses each of the names ``readers`` (a frozenset: ``getattr``,
    ``hasattr``) only as the function of a call (``getattr(self, n)``; not ``map(getattr, ...)``,
    whose calls come from C and are not seen one by one)."""
    for ins in _instructions(code)[0]:
        if ins.argval in readers and not (ins.opname == "LOAD_GLOBAL" and ins.argrepr.startswith("NULL + ")):
            return False
    return True


def requested_name(frame, reader):
    """The attribute name the call under way in ``frame`` (of the built-in ``reader``,
    ``getattr`` or ``hasattr``) passes, or None where its bytecode does not tell."""
    listed, at = _instructions(frame.f_code)
    k = at.get(frame.f_lasti)
    if k is None or not listed[k].opname.startswith("CALL") or not isinstance(listed[k].arg, int):
        return None
    argc = listed[k].arg
    if argc not in ((2, 3) if reader is getattr else (2,)):
        return None
    k -= 1
    while k >= 0 and listed[k].opname in _BETWEEN:
        k -= 1
    pushes = []  # the values pushed last, the last first: (instruction, which of its values)
    while k >= 0 and len(pushes) < argc and listed[k].opname in _LOADS:
        ins = listed[k]
        pushes += [(ins, 1), (ins, 0)] if ins.opname == "LOAD_FAST_LOAD_FAST" else [(ins, None)]
        k -= 1
    if len(pushes) < argc - 1:
        return None
    ins, which = pushes[argc - 2]  # (the name: the second argument)
    if ins.opname == "LOAD_CONST":
        value = ins.argval
    else:
        variable = ins.argval if which is None else ins.argval[which]
        value = frame.f_locals.get(variable)
    return value if type(value) is str else None
