"""Sources: where each array a captured function reads is found again on the next call.

A placeholder of a captured graph stands for an array the function read but did not compute: an
argument (``("input", i)``) or its ``.grad`` (``("input_grad", i)``), a parameter (``("param", p)``)
or its ``.grad``, an optimizer's state tensor, a fixed tensor, a hyperparameter or a constant.
:func:`known_arrays` lists the arrays known before the call with their source and a readable name
(the names a learner sees in ``graph.print_tabular()``), :func:`input_names` names the arguments
after ``fn``'s signature; on replay :func:`fetcher` finds each placeholder's tensor again
(:func:`escapes`: whether a constant needs a fresh copy per call).
"""
import inspect

import numpy as np

from .._tensor import Tensor
from ..autograd.graph import AccumulateGrad
from .input_grads import INPUT_GRADS, INPUT_HOOKS
from .structure import flatten

__all__ = ["relevant", "Narrowed", "AttributesRead", "GradsRead", "ATTRIBUTES", "GRADS", "input_names", "known_arrays", "found_again",
           "placeholder_tensors", "world_arrays", "root_array", "fetcher", "escapes", "history_nodes", "written_view_of"]


def relevant(facts, cap):
    """The guards a capture depends on: without a backward, a ``.grad`` read or an optimizer
    update, not which parameters have a ``.grad`` nor the optimizers' state; nor, of the former,
    the parameters whose ``.grad`` the call set before reading it (a step starting with
    ``zero_grad()``: its first call, without gradients, and the later ones share a graph; a GAN's
    ``netG.zero_grad()`` after the discriminator's step: :class:`GradsRead`); nor which inputs
    have a ``.grad`` where the call read none (a backward's adds: input_grads.py), nor their
    gradient hooks without a backward; of the modules' attributes, those its code could read
    (:class:`AttributesRead`)."""
    grads = cap.reads_grad or any(s[0] == "grad" for s in cap.sources)
    read = None
    if not (cap.ran_backward or grads or any(s[0] in ("state", "hyper") for s in cap.sources)):
        drop = ("which parameters", "optimizer")
    else:
        params = dict(facts).get("parameter identity", ())
        unset = {id(s[1]) for s in cap.sources if s[0] == "grad"} | cap.reads_grad | (set(params) - cap.grad_written)
        read = tuple(i for i, p in enumerate(params) if p in unset)
        drop = () if read else ("which parameters have .grad",)
    if not (cap.reads_grad or any(s[0] == "input_grad" for s in cap.sources)):
        drop += (INPUT_GRADS,)  # (a forward alone: a backward run after it sets x.grad, no recompile)
    if not cap.ran_backward:
        drop += (INPUT_HOOKS,)
    names = cap.read_names
    return [(name, AttributesRead(value, names) if names is not None and name == ATTRIBUTES else
             GradsRead(value, read) if name == GRADS and read is not None and len(read) < len(value) else value)
            for name, value in facts if not (drop and name.startswith(drop))]


ATTRIBUTES = "Python values of the modules' attributes (also in lists, dicts, plain objects: self.cfg.scale)"
GRADS = "which parameters have .grad"


class Narrowed:
    """A guard's value (a tuple) narrowed to the part a capture could read (``names``: which
    part): equal to a call's whole value when that part is."""
    __slots__ = ("names", "value", "length")

    def __init__(self, value, names):
        self.names, self.length = names, len(value)
        self.value = self._narrow(value)

    def __eq__(self, other):
        if isinstance(other, Narrowed):
            return type(self) is type(other) and self.names == other.names and self.value == other.value
        return isinstance(other, tuple) and len(other) == self.length and self._narrow(other) == self.value

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self.value)

    def __repr__(self):
        return repr(self.value)


class AttributesRead(Narrowed):
    """The guard on the modules' attribute values (per module ``((name, ...), ...)``, see
    :func:`~.guards.snapshot`) narrowed to the attributes named in ``names``, the ones a
    capture's code could read (:func:`~.side_effects.names_read`): equal to a call's whole value
    when those are, so modules differing in an attribute nothing read share a graph (torch's
    dynamo guards the attributes it traced a read of: twelve blocks, each with its own unread
    ``self.index``, compile once)."""
    __slots__ = ()

    def _narrow(self, value):
        return tuple([tuple([a for a in attrs if a[0] in self.names]) for attrs in value])


class GradsRead(Narrowed):
    """The guard on which parameters have a ``.grad`` narrowed to the positions ``names`` of
    those whose ``.grad`` the call could read: not those it set first (a GAN step's
    ``netG.zero_grad()`` after ``optD.step()``: its first call finds netG without gradients, the
    later ones with the last backward's, and all share a graph; torch's dynamo guards the
    ``.grad`` it traced a read of)."""
    __slots__ = ()

    def _narrow(self, value):
        return tuple([value[i] for i in self.names])


def history_nodes(world):
    """The ids of the autograd nodes behind the tensors a call starts with (its inputs and the
    tensors it reads from globals and closures), leaves' AccumulateGrad nodes aside: made before
    the call (by an eager statement between a split function's pieces, or by an earlier
    compiled call), they hold saved values of that time, which a replay of a backward through
    them would read again."""
    todo = [t.grad_fn for t in (*world.inputs, *world.free)]
    seen = set()
    while todo:
        node = todo.pop()
        if node is not None and id(node) not in seen and not isinstance(node, AccumulateGrad):
            seen.add(id(node))
            todo += [n for n, _ in node.next_functions]
    return seen


def input_names(fn, args, kwargs, access=False):
    """A readable name per tensor of ``flatten((args, kwargs))``: the parameter's name of
    ``fn``'s signature (``x``; ``xs_0``, ``xs_1`` inside a list, ``ys_1_a`` for ``ys[1]["a"]``),
    else ``input_<i>``; for a module's ``__call__``, its ``forward``'s signature. ``access``:
    the Python that reads each instead (``ys[1]['a']``: torch.export's guard messages)."""
    if getattr(fn, "__name__", "") in ("__call__", "_call_impl") and hasattr(getattr(fn, "__self__", None), "forward"):
        fn = fn.__self__.forward
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return [f"input_{i}" for i in range(len(flatten((args, kwargs))))]
    names = {}  # id(tensor) -> its names, in the signature's order (one tensor may be passed twice)
    for name, value in bound.arguments.items():
        for t, keys in _paths(value, ()):
            names.setdefault(id(t), []).append(name + "".join(f"[{k!r}]" for k in keys) if access
                                               else "_".join(map(str, (name, *keys))))
    return [names[id(t)].pop(0) if names.get(id(t)) else f"input_{i}" for i, t in enumerate(flatten((args, kwargs)))]


def _paths(value, keys):
    """(tensor, keys) for each tensor of ``value`` in :func:`flatten`'s order, ``keys`` the
    positions and dict keys leading to it from ``value`` (``(1, "a")`` for ``value[1]["a"]``)."""
    if isinstance(value, Tensor):
        yield value, keys
    elif isinstance(value, (tuple, list, dict)):
        for key, v in (value.items() if isinstance(value, dict) else enumerate(value)):
            yield from _paths(v, (*keys, key))


def known_arrays(world, args, kwargs):
    """Where each array the function may read is found again: id(array) -> (source, name)."""
    known = {}  # the arrays themselves are kept by the tracer, so no id is reused meanwhile
    names = input_names(world.fn, args, kwargs) + [h[0] for h in world.held]
    for i, (t, name) in enumerate(zip(world.inputs, names)):
        known.setdefault(id(t._data), (("input", i), name))
    for i, (t, name) in enumerate(zip(world.inputs, names)):  # (a leaf's: a backward accumulates into it;
        if t._grad is not None:  # a non-leaf's retained one read: not a constant of the graph)
            known.setdefault(id(t._grad._data), (("input_grad", i), name + "_grad"))
    for p, name in zip(world.params, world.param_names()):
        known.setdefault(id(p._data), (("param", p), name))
        if p.grad is not None:
            known.setdefault(id(p.grad._data), (("grad", p), name + "_grad"))
    names = dict(zip(map(id, world.params), world.param_names()))
    for opt in world.optimizers:
        for group in opt.param_groups:
            for p in group["params"]:
                for key, value in opt.state.get(p, {}).items():
                    if isinstance(value, Tensor):
                        known.setdefault(id(value._data), (("state", opt, p, key),
                                                           f"{names.get(id(p), 'param')}_{key}"))
    return known


def found_again(known, p, world):
    """Whether parameter ``p``'s array is the one the recording knew as ``p`` (:func:`known_arrays`),
    as a parameter or as an input (``SGD([w, u])`` with ``u`` an argument): not replaced (``.data =``)."""
    source = known.get(id(p._data), ((None, None),))[0]
    return source[1] is p or source[0] == "input" and world.inputs[source[1]] is p


def placeholder_tensors(sources, world):
    """(placeholder index, tensor) for the placeholders (of ``sources``, one per placeholder) that
    are tensors a gradient can reach."""
    for k, source in enumerate(sources):
        if source[0] == "input":
            yield k, world.inputs[source[1]]
        elif source[0] in ("param", "tensor"):
            yield k, source[1]


def world_arrays(world):
    """Every array the function may read in place: its inputs', parameters', their ``.grad``s' and
    the optimizers' state tensors'."""
    for t in world.inputs + world.params:
        yield t._data
        if t._grad is not None:  # (an input may be a non-leaf: no warning)
            yield t._grad._data
    for opt in world.optimizers:
        for state in opt.state.values():
            yield from (v._data for v in state.values() if isinstance(v, Tensor))


def written_view_of(target, world, tracks):
    """``(tensor, view chain)`` for an in-place write into ``target``, an ember view: its base
    when the graph follows it (``tracks(array)``), else a tensor the call started with (an
    input, a parameter, a global's) that is a view of that same base and that ``target`` was
    made from (``x[:, 1:]`` of an input ``x = b[1:]`` of a ``b`` the graph never reads): the
    write is a new value of it, and the chain holds the view ops from it to ``target``."""
    base, chain = target._base, target._view_chain
    if base is None or chain is None or tracks(base._data):
        return None if base is None or chain is None else (base, chain)
    for k in (*world.inputs, *world.params, *world.free):
        start = k._view_chain
        if k._base is base and start is not None and len(start) < len(chain) and tracks(k._data) \
                and all(a is b for a, b in zip(start, chain)):
            return k, chain[len(start):]
    return None


def root_array(array):
    """The array owning ``array``'s memory (NumPy's ``base`` followed to its end)."""
    while isinstance(getattr(array, "base", None), np.ndarray):
        array = array.base
    return array


def fetcher(source, shared=False):
    """``fetch(inputs, sizes)``: the tensor a placeholder stands for at this call. A constant
    is a fresh copy per call unless ``shared`` (the graph never writes it nor hands it out)."""
    kind = source[0]
    if kind == "input":
        return lambda inputs, sizes, i=source[1]: inputs[i]
    if kind in ("param", "tensor"):
        return lambda inputs, sizes, t=source[1]: t
    if kind == "grad":
        return lambda inputs, sizes, p=source[1]: p.grad
    if kind == "input_grad":
        return lambda inputs, sizes, i=source[1]: inputs[i]._grad
    if kind == "state":
        return lambda inputs, sizes, opt=source[1], p=source[2], key=source[3]: opt.state[p][key]
    if kind == "hyper":
        return _hyperparameter(*source[1:])
    if kind == "float_arg":  # a float argument: put in by the caller, who has the arguments (traced_floats.py)
        return lambda inputs, sizes: None
    if kind == "sized_const":  # dynamic shapes: a constant whose size follows the sizes
        return lambda inputs, sizes, const=source[1]: Tensor._make(const.build(sizes))
    if shared:
        return lambda inputs, sizes, t=Tensor._make(source[1].copy()): t
    # handed out or written: a copy in the array's layout (a channels-last ``empty``'s)
    return lambda inputs, sizes, array=source[1]: Tensor._make(array.copy(order="K"))


def _hyperparameter(opt, index, key):
    """The fetch of an optimizer's hyperparameter (``opt.param_groups[index]``'s ``key``, or
    ``(key, i)``: item i of that tuple) as a 0-d float64 tensor, written at each call into one
    array the graph only reads. A tensor there (``lr=torch.tensor(0.01)``) is read as its number."""
    value = Tensor._make(np.zeros((), np.float64))
    array = value._data
    if type(key) is str:
        def fetch(inputs, sizes):
            array[()] = float(opt.param_groups[index][key])
            return value
    else:
        def fetch(inputs, sizes, key=key[0], item=key[1]):
            array[()] = float(opt.param_groups[index][key][item])
            return value
    return fetch


def escapes(graph, placeholder):
    """Whether the graph writes ``placeholder`` or returns it or a view of it: then its array
    must be a fresh copy on each call."""
    outputs = set(o for o in graph.outputs if hasattr(o, "meta"))
    if any(p is placeholder for p, _ in graph.mutations):
        return True
    seen, todo = set(), [placeholder]
    while todo:
        node = todo.pop()
        if node in outputs:
            return True
        seen.add(node)
        todo += [u for u in node.users if u not in seen and getattr(u.target, "is_view", False)]
    return False
