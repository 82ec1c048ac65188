"""The guards of a training loop's next call, re-read flat instead of rebuilt.

A call that replayed a graph is usually followed by one that meets the same world: the same
closure cells and globals, the same modules (``nn.modules.module.STATE_VERSION`` unchanged, or
moved by train/eval flags alone, each set back),
optimizers and parameters, inputs of the same shapes. Building a :class:`~.guards.World` and its
:func:`~.guards.snapshot` for it touches a few hundred Python objects, which the step's own data
has pushed out of the cache. :class:`Recheck`, made from the last such call's world, re-reads
only what can differ from it and compares flat lists at C speed: what the world's walk read
(closure cells, globals, the containers read), the plain objects' tensors, the optimizers'
parameter lists, hyperparameters and state, and of every input, tensor read and parameter its
class, array shape, strides, dtype and ``requires_grad``, which parameters have a ``.grad`` and which
arrays are shared. When all are the same, ``snapshot`` of this call's world would give that
call's facts again, so the same entry applies. When anything differs the call takes the full
path, which alone decides which entry applies and names a failed guard (see
:mod:`.eval_frame`).
"""
import functools
import operator

import numpy as np

from .._dtype import get_default_dtype
from .._tensor import Tensor
from .._tensor_subclass import torch_function_state
from ..amp import autocast_mode as _autocast
from ..autograd import graph as _graph
from ..autograd.grad_mode import STATE
from ..nn.modules import module as _module
from .breaks import unobserved
from .contents import members, owner, same, scalar_key, sharing
from .guards import code_ids, constants, object_tensors, optimizer_facts

__all__ = ["Recheck", "rechecking"]

# what the guards read of an input (its shape through its array: ``Size`` is made per read;
# its strides: its layout, layouts.layout_keys)
_META = operator.attrgetter("__class__", "_data.shape", "_data.strides", "dtype", "requires_grad")
_DATA = operator.attrgetter("_data")
_BASE = operator.attrgetter("base")
_GRAD = operator.attrgetter("grad")
_GRAD_SLOT = operator.attrgetter("_grad")  # (an input's: a non-leaf's read warns)
_IS_NONE = functools.partial(operator.is_, None)
_PLAIN = (float, int, bool, str, type(None))
_ARGUMENTS = frozenset(_PLAIN)  # (besides tensors: an argument compared by its guard's key)
_END = object()


class Recheck:
    """The facts of one call (its ``world``, made with ``args`` and no keyword arguments), kept
    for :meth:`holds`. Made only for calls whose arguments are plain tensors or plain Python
    values (a float, int, bool, str or None: compared by the key its guard compares,
    :func:`~.contents.scalar_key`, so ``f(x, y, 0.5)`` with a float default filled in is covered)
    and that hold no declared tensors (``Recheck.of`` answers None for others).

    :meth:`holds` compares objects by identity (what the walk read; the plain objects'
    tensors; the optimizers' parameters; the arrays of the tensors read and of the parameters:
    the same array has the same shape and dtype, as ember rebinds ``_data`` rather than reshape
    an array in place) and values that change in place (the optimizers' groups, compared with
    copies, and where they differ, the optimizer's facts as the full path reads them; state
    sizes; an input's shape, dtype, ``requires_grad`` and whether it has a ``.grad``; the
    tensors' ``requires_grad``, which parameters have a ``.grad``, which tensors read have a
    ``grad_fn``), and that no gradient hook was registered or removed since
    (``autograd.graph.HOOKS_VERSION``).
    A tensor that is not a view never becomes one (views are made as new tensors), so for those
    the slots are read, not the properties that refresh a view's history."""

    @classmethod
    def of(cls, world, args, kwargs):
        """A Recheck of the call that made ``world``, or None for a call it does not cover."""
        if kwargs or world.held or any([type(a) is not Tensor and type(a) not in _ARGUMENTS for a in args]):
            return None
        return cls(world, args)

    def __init__(self, world, args):
        self.world, self.n_args, self.held = world, len(args), False  # held: set by the caller
        # the positions of the tensors among the arguments (None: all are) and the others' keys
        self.at = at = None if all([type(a) is Tensor for a in args]) else [
            i for i, a in enumerate(args) if type(a) is Tensor]
        self.keys = None if at is None else [scalar_key(a) for a in args if type(a) is not Tensor]
        args = self.inputs(args)
        self.grad_mode, self.dtype, self.hooks = STATE.enabled, get_default_dtype(), _graph.HOOKS_VERSION[0]
        self.autocast, self.modes = _autocast.AUTOCAST.dtype, torch_function_state()
        _, self.scalars, self.functions, _, self.objects, self.containers = world.kinds
        self.held_objects = object_tensors(self.objects)
        self.tensors = world.free + world.params
        views = any([t._view_chain is not None for t in self.tensors])
        self.requires_grad = operator.attrgetter("requires_grad" if views else "_requires_grad")
        self.grad_fn = operator.attrgetter("grad_fn" if views else "_grad_fn")
        arrays = list(map(_DATA, self.tensors))
        # the memory the tensors read own (their arrays' owners): an input that is no view of it
        # and owns other memory than the other inputs shares none (see contents.sharing)
        self.arrays, self.roots = arrays, {id(owner(a)) for a in arrays}
        self.sharing = sharing([*map(_DATA, args), *arrays])
        # whether that is what inputs that share no memory give (the tensors read may share some)
        self.apart = self.sharing == sharing([*[np.empty(0) for _ in args], *arrays])
        # each optimizer's facts as the full path reads them, and copies of its groups, equal while
        # nothing in them changed (a scheduler's new lr: the copies differ, the facts may not)
        self.optimizers = [[opt, optimizer_facts(opt), _copies(opt)] for opt in world.optimizers]
        self.rare = bool(self.containers or self.objects or world.held_lists or self.scalars or self.functions)
        # the modules' train/eval flags, where the call set none (then they are the world's)
        self.flags = [m.training for m in world.all_modules] if _module.TRAINING_VERSION[0] == world.trainings else None
        self.then = self._objects(again=False), self._values(args)

    def inputs(self, args):
        """The tensors among ``args`` (the graph's inputs), in order."""
        return args if self.at is None else [args[i] for i in self.at]

    def _plain_hold(self, args):
        """Whether the arguments other than tensors are where and what they were."""
        at, keys, k = self.at, self.keys, 0
        for i, a in enumerate(args):
            if k < len(at) and at[k] == i:
                if type(a) is not Tensor:
                    return False
                k += 1
            elif type(a) not in _ARGUMENTS or scalar_key(a) != keys[i - k]:
                return False
        return True

    def _objects(self, again=True):
        """The objects the facts rest on (identity), in a fixed order: what the walk read (closure
        cells, globals, containers; read ``again`` or as the walk read them), the tensors'
        arrays, the optimizers' parameters."""
        objects = []
        for read, arguments, values in self.world.reads:  # each read and group ended by _END:
            objects += read(*arguments) if again else values  # a module moved from one list to
            objects.append(_END)                              # the next is not the same
        objects += map(_DATA, self.tensors)
        for opt in self.world.optimizers:
            for g in opt.param_groups:
                objects += g["params"]
                objects.append(_END)
        return objects

    def _values(self, args):
        """The facts that may change in place (compared by ``==``), in a fixed order."""
        world = self.world
        values = [*map(_META, args), *map(_IS_NONE, map(_GRAD_SLOT, args)), *map(self.requires_grad, self.tensors),
                  *map(_IS_NONE, map(_GRAD, world.params)), *map(_IS_NONE, map(self.grad_fn, world.free))]
        for opt in world.optimizers:
            values.append(tuple(map(len, opt.state.values())))
        return values

    def _rare_hold(self):
        """The guards most programs do not have: what containers and plain objects hold, values
        baked in, functions called, lists the modules hold."""
        world = self.world
        return ((not self.containers or same(members(self.containers), world.members))
                and (not self.objects or same(object_tensors(self.objects), self.held_objects))
                and (not world.held_lists or world.held_same())
                and (not self.scalars or constants(self.scalars) == world.constants)
                and (not self.functions or code_ids(self.functions) == world.codes))

    def _trained_back(self):
        """Whether the modules changed since the world was made only by train/eval flags, each now
        as it was then (a model trained, then evaluated, at each step: its two graphs' rechecks hold)."""
        world = self.world
        return (self.flags is not None
                and _module.STATE_VERSION[0] - _module.TRAINING_VERSION[0] == world.version - world.trainings
                and [m.training for m in world.all_modules] == self.flags)

    def holds(self, args):
        """Whether :func:`~.guards.snapshot` of a world made for ``args`` (positional, no keyword
        arguments) would equal that of the call this was made from."""
        world = self.world
        if (len(args) != self.n_args or STATE.enabled != self.grad_mode or get_default_dtype() is not self.dtype
                or _module.STATE_VERSION[0] != world.version and not self._trained_back()
                or _graph.HOOKS_VERSION[0] != self.hooks
                or _autocast.AUTOCAST.dtype is not self.autocast or torch_function_state() != self.modes):
            return False
        if self.at is not None:
            if not self._plain_hold(args):
                return False
            args = self.inputs(args)
        objects, values = self.then
        if not same(self._objects(), objects) or self.rare and not self._rare_hold():
            return False
        # the parameters being the same objects, a group equals its copy when its values are equal
        for entry in self.optimizers:
            opt, facts, copies = entry
            if opt.param_groups != copies:
                if optimizer_facts(opt) != facts:
                    return False
                entry[2] = _copies(opt)
        try:
            if self._values(args) != values:
                return False
        except AttributeError:  # an argument that is not a tensor
            return False
        if not args:
            return True
        arrays = list(map(_DATA, args))
        bases = list(map(_BASE, arrays))
        roots = list(map(id, arrays)) if all(map(_IS_NONE, bases)) else \
            [id(owner(a)) for a in arrays]
        if len(set(roots)) == len(roots) and self.roots.isdisjoint(roots):  # no memory shared
            return self.apart
        return sharing(arrays + self.arrays) == self.sharing


def _copies(opt):
    """Copies of an optimizer's groups, or None where a value other than a number or a string
    (a 0-d tensor ``lr``) may change in place, unseen by a comparison with a copy."""
    exact = all([type(v) in _PLAIN or type(v) is tuple and all([type(x) in _PLAIN for x in v])
                 for g in opt.param_groups for k, v in g.items() if k != "params"])
    return [dict(g) for g in opt.param_groups] if exact else None


def rechecking(compiled, world, args, kwargs):
    """Makes the recheck of a compiled function's next call from this call, which replays its
    ``_last``. While the rechecks made never hold (what they compare changes on every call:
    ``x.data = batch`` each step), one is made only at the 1st, 2nd, 4th, 8th ... such call, so
    that its making and reading cost little more than the full path alone. The one before, made
    for another graph, is kept to try second (``_other``): two graphs used in turn (a model
    trained, then evaluated under ``no_grad``, at each step) each take their recheck."""
    last = compiled._recheck
    if last is not None:
        compiled._missed = 0 if last.held else compiled._missed + 1
        if compiled._recheck_for is not None and compiled._recheck_for[1] is not compiled._last[1]:
            compiled._other = last, compiled._recheck_for
    elif compiled._missed:
        compiled._missed += 1
    n = compiled._missed
    compiled._recheck = unobserved(Recheck.of, world, args, kwargs) if n & (n - 1) == 0 else None
    compiled._recheck_for = compiled._last
