"""What runs a split function's pieces and callees (:mod:`.split`): :class:`Piece` calls a
piece's compiled function and checks what its recordings return (:func:`unsafe`);
:class:`CalleeSwap` hands an eager statement the compiled form of the user function (method,
module) that broke inside it; :func:`module_call` calls a module with its ``forward`` split.
"""
import types
import weakref

import numpy as np

from .._device import device
from .._dtype import dtype
from .._tensor import Tensor
from ..nn.modules import module as _module
from ..nn.modules.module import Module
from ..optim.optimizer import Optimizer
from .aot import retained_history
from .structure import flatten, skeleton, unflatten

__all__ = ["Piece", "unsafe", "CalleeSwap", "module_call"]

SMALL, REBINDS = 16, 3  # (a rebinding costs about what 20 eager ops do)
_ATOMS = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis), dtype, device)


class Piece:
    """A piece's callable: its compiled function, whose recordings are checked (:func:`unsafe`):
    a result the recording had identical to an input tensor (or parameter) is that tensor in
    each replay too (a replay's own is an alias of it); one a replay cannot give back the same
    makes the piece run its Python function, eagerly, from then on, unless it is the ``last``
    piece, whose results are the function's (returned as a whole function's replay returns them).
    A piece whose recording dispatched no op (Python numbers only) runs eagerly from then on too,
    and so does a small one (at most ``SMALL`` ops) whose calls rebind its graph (:mod:`.rebind`)
    ``REBINDS`` times running: objects new at each call (the ``Categorical`` an eager statement
    before it made), whose guards and rebinding cost more than the few ops they save.
    A ``guarded`` piece (inside a ``try`` or ``with``, binding names read after it) whose replay
    raises runs its Python function instead, and from then on, so that the exception leaves a
    frame holding what it bound (:meth:`bound`); unless a recording of it writes in place or runs
    a backward, which a replay may have done in part (then the exception goes on as it is)."""

    def __init__(self, fn, compiled, log, last):
        self.fn, self.compiled, self.log, self.last = fn, compiled, log, last
        self.eager, self.same, self.guarded, self.rebinds = False, None, False, 0

    def __call__(self, *args):
        if self.eager:
            return self.fn(*args)
        compiled = self.compiled
        n, known = len(compiled._entries), set(map(id, compiled._entries))
        try:
            results = compiled(*args)
        except BaseException as error:
            if not self.guarded or not _replayed(error, compiled) or _frame(error, self.fn.__code__) is not None \
                    or any(e.cap.graph.mutations or e.cap.ran_backward or e.cap.grad_sets for e in compiled._entries):
                raise
            # a replay raised (an index out of range) inside a try or with: the names bound before the
            # op that raised are in no frame; the piece's Python runs instead, as eager raises
            self.eager = True
            self.log(f"{compiled._label} runs eagerly from now on: a replay raised {type(error).__name__}")
            return self.fn(*args)
        if len(compiled._entries) != n:  # a recording: its results are the eager run's
            same, why = unsafe(results, args, compiled._world)
            if why is None and self.same is not None and _key(same) != _key(self.same):
                why = "it returns results identical to other inputs than an earlier recording's"
            elif why is not None:
                why = f"it returns {why}"
            empty = not any(n.op == "call_op" for n in compiled._entries[-1].cap.graph.nodes)
            if why is not None and not self.last or empty:
                self.eager = True  # (one of Python numbers only: its replays would guard on their values)
                self.log(f"{compiled._label} runs eagerly from now on: {why or 'its recording dispatched no op'}")
            elif why is None and getattr(compiled._entries[-1], "cap", None) is not None:
                results = _as_replayed(results, same, compiled._entries[-1].cap)
            self.same = same
        if self._rebinding(known):
            self.eager = True
            self.log(f"{compiled._label} runs eagerly from now on: its calls rebind its graph of at most "
                     f"{SMALL} ops to new objects ({REBINDS} running)")
        if len(compiled._entries) == n and self.same:
            flat, tensors = flatten(results), flatten(args)
            for j, source in self.same:
                want = tensors[source] if type(source) is int else source
                if flat[j] is not want and flat[j]._data is want._data:
                    flat[j] = want  # (same array: the alias a joint graph's autograd node made)
            results = unflatten(skeleton(results), iter(flat))
        if not self.last and any(getattr(getattr(e, "cap", None), "freed", None) for e in compiled._entries):
            # a loss after its backward() is passed on detached, as by its recording (_as_replayed)
            flat = [t.detach() if getattr(getattr(t, "grad_fn", None), "_freed", False) else t for t in flatten(results)]
            results = unflatten(skeleton(results), iter(flat))
        return results


    def _rebinding(self, known):
        """Whether the call just made rebound the piece's graph (a new entry, not one of
        ``known``) ``REBINDS`` times running, its graph holding at most ``SMALL`` ops."""
        last = self.compiled._last[1]
        if not getattr(last, "rebound", False) or id(last) in known:
            self.rebinds = 0
            return False
        self.rebinds += 1
        return self.rebinds >= REBINDS and sum(node.op == "call_op" for node in last.cap.graph.nodes) <= SMALL

    def bound(self, error):
        """The names this piece's function had bound when ``error`` left it (its frame, found in
        the traceback), for the split function to bind before the exception goes on to the user's
        ``except``, ``finally`` or manager (none where its frame is not there: the names keep
        what they held before the piece)."""
        frame = _frame(error, self.fn.__code__)
        return {} if frame is None else dict(frame.f_locals)


def _as_replayed(results, same, cap):
    """``results`` of a recording that ran a backward (``cap``, replayable) as its replays return
    them: a tensor whose history the backward released (a loss after its ``backward()``) detached
    (:func:`.aot.retained_history`), so that a later piece taking it is not recorded again for a
    ``requires_grad`` that changed between the first and the second call."""
    if not cap.ran_backward or cap.breaks:
        return results
    flat, kept = flatten(results), {j for j, _ in same}
    retained = retained_history(flat, True)
    flat = [t if j in kept or t.grad_fn is None or any(t is r for r in retained) else t.detach()
            for j, t in enumerate(flat)]
    return unflatten(skeleton(results), iter(flat))


def _frame(error, code):
    """The outermost frame running ``code`` in ``error``'s traceback, or None."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code is not code:
        tb = tb.tb_next
    return None if tb is None else tb.tb_frame


def _replayed(error, compiled):
    """Whether ``error`` was raised inside a replay of one of ``compiled``'s entries (its graph run)."""
    codes = {type(entry).__call__.__code__ for entry in compiled._entries}
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code not in codes:
        tb = tb.tb_next
    return tb is not None


def _key(same):
    return [(j, s if type(s) is int else id(s)) for j, s in same]


def unsafe(results, args, world):
    """``(same, why)`` of a recording's ``results``: ``same`` lists ``(j, source)`` for each
    returned tensor ``j`` (in :func:`~.structure.flatten` order) that is an input tensor
    (``source``: its index among the arguments' tensors) or a parameter or tensor the function
    read (``source``: it); ``why`` (None when safe) says what a replay could return differently:
    a tensor sharing memory with an input, parameter, tensor read or another result without
    being it (a replay returns new arrays), a mutable or unknown object (a replay returns the
    recorded one)."""
    todo = [results]
    while todo:
        v = todo.pop()
        if isinstance(v, tuple):
            todo += v
        elif isinstance(v, Module) and any(v is m for m in world.all_modules) or \
                isinstance(v, Optimizer) and any(v is o for o in world.optimizers):
            continue
        elif not isinstance(v, _ATOMS + (Tensor,)):
            return [], f"a {type(v).__name__}"
    inputs, known, tensors, same = flatten(args), [*world.params, *world.free], flatten(results), []
    for j, t in enumerate(tensors):
        source = next((i for i, a in enumerate(inputs) if a is t), None)
        if source is None:
            source = next((o for o in known if o is t), None)
        if source is not None:
            same.append((j, source))
            continue
        for other in [*inputs, *known, *tensors[:j]]:
            a, b = t._data, other._data
            if type(a) is not np.ndarray or type(b) is not np.ndarray or np.may_share_memory(a, b):
                return same, "a tensor that shares memory with an input, a parameter or another result"
    return same, None


class CalleeSwap:
    """``swap(f)``: the compiled form of ``f`` where ``f`` runs ``code``, the user code a graph
    break happened in below an eager statement (a function, a bound method, a module whose
    ``forward`` it is), made by ``make(f)`` once per function, object or module; else ``f``
    itself. The eager statement calls ``swap(helper)(...)`` where it called ``helper(...)``:
    the name or attribute is looked up as written (one rebound since is called as it is now)."""

    def __init__(self, code, make):
        self.code, self.make, self.made = code, make, weakref.WeakKeyDictionary()

    def __call__(self, f):
        if isinstance(f, types.FunctionType):
            key = f if f.__code__ is self.code else None
        elif isinstance(f, types.MethodType):
            key = f.__self__ if getattr(f.__func__, "__code__", None) is self.code else None
        elif isinstance(f, Module):
            forward = getattr(f, "forward", None)
            key = f if getattr(getattr(forward, "__func__", forward), "__code__", None) is self.code else None
        else:
            key = None
        if key is None:
            return f
        try:
            compiled = self.made.get(key)
            if compiled is None:
                compiled = self.made[key] = self.make(f)
        except TypeError:  # an object that cannot be a weak dictionary's key: called as it is
            return f
        return compiled


def module_call(module, split_forward, call):
    """Calls ``module`` with its ``forward`` split; with hooks, ``call`` (the whole module, eagerly)."""
    def run(*args, **kwargs):
        if module._forward_pre_hooks or module._forward_hooks or module._backward_hooks \
                or module._backward_pre_hooks or _module._global_forward_pre_hooks or _module._global_forward_hooks:
            return call(*args, **kwargs)
        return split_forward(module, *args, **kwargs)
    run.pieces, run.callees = split_forward.pieces, split_forward.callees
    return run
