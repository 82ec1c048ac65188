"""The names torch's dynamo gives a graph's inputs, for the graph a callable backend gets
(:mod:`.custom_backend`): each placeholder is named by the Python that reaches its tensor from
the frame, ``L_`` for the frame's locals (arguments, ``self``, closure cells) and ``G_`` for
its globals, each step spelt as torch spells it: ``L_x_``, ``G_w_``,
``L_self_modules_fc_parameters_weight_`` (``self.fc.weight``),
``L_self_modules_bn_buffers_running_mean_``, ``L_self_lst_0_parameters_weight_`` (a module
held in a plain list) and ``L_self_scale`` (a plain tensor attribute, without the closing
underscore, as torch's).
"""
import inspect

from .._tensor import Tensor
from ..nn.modules.module import Module

__all__ = ["placeholder_names"]


def _walk(obj, prefix, names, seen):
    """Names ``names[id(t)]`` each tensor reached from ``obj`` (a tensor, a module or a plain
    list, tuple or dict of modules) at ``prefix``, the first path found kept."""
    if isinstance(obj, Tensor):
        names.setdefault(id(obj), prefix + "_")
        return
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, (list, tuple, dict)):
        for key, v in (obj.items() if isinstance(obj, dict) else enumerate(obj)):
            if isinstance(v, Module):
                _walk(v, f"{prefix}_{key}", names, seen)
        return
    if not isinstance(obj, Module):
        return
    for kind in ("parameters", "buffers"):
        for key, t in getattr(obj, f"_{kind}").items():
            if t is not None:
                names.setdefault(id(t), f"{prefix}_{kind}_{key}_")
    for key, child in obj._modules.items():
        if child is not None:
            _walk(child, f"{prefix}_modules_{key}", names, seen)
    for key, v in vars(obj).items():
        if isinstance(v, Tensor):
            names.setdefault(id(v), f"{prefix}_{key}")
        elif isinstance(v, (list, tuple, dict)) and not key.startswith("_"):
            _walk(v, f"{prefix}_{key}", names, seen)


def _roots(world):
    """``(prefix, object)`` of what the frame of ``world``'s function names: the object it is
    bound to (``L_self``: a module's ``forward``'s first parameter's name), its arguments, its
    closure cells and the globals its code reads."""
    bound, fn, global_names = world.source
    signature_of = fn
    for obj in bound:
        if isinstance(obj, Module) and obj is getattr(world.fn, "__self__", None):  # (not a partial's argument)
            forward = type(obj).forward
            code = getattr(forward, "__code__", None)
            yield f"L_{code.co_varnames[0] if code and code.co_argcount else 'self'}", obj
            signature_of = obj.forward
    try:
        parameters = list(inspect.signature(signature_of).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    positional = [p.name for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if len(positional) == len(parameters):  # (no *args: the arguments are the parameters, in order)
        yield from ((f"L_{name}", value) for name, value in zip(positional, world.arguments))
    code = getattr(fn, "__code__", None)
    if code is not None and getattr(fn, "__closure__", None):
        for name, cell in zip(code.co_freevars, fn.__closure__):
            try:
                yield f"L_{name}", cell.cell_contents
            except ValueError:  # (an empty cell)
                continue
    for name in global_names or ():
        value = getattr(fn, "__globals__", {}).get(name)
        if value is not None:
            yield f"G_{name}", value


def placeholder_names(graph, sources, world):
    """The target of each placeholder of ``graph`` (``sources``: one per placeholder, see
    :class:`~.capture.Capture`) as torch's dynamo names it in the capturing call's ``world``
    (:class:`~.guards.World`); a tensor no name reaches keeps ``L_<captured name>_``."""
    names, seen = {}, set()
    for prefix, obj in _roots(world):
        _walk(obj, prefix, names, seen)
    targets = []
    for p, source in zip(graph.placeholders, sources):
        found = names.get(id(source[1])) if source[0] in ("param", "tensor") else None
        targets.append(found or f"L_{p.name}_")
    return targets
