"""What a dynamic recording's probe (:mod:`.dynamic_ints`, :mod:`.dynamic`) or a callable
backend's first run (:mod:`.custom_backend`) may change, kept before and put back after it: the
modules' tensors and attributes, gradients, optimizers' state and groups, the inputs' values and
gradient hooks, their version counters, the random stream, floats at read paths and logging
modes' lists."""
import numpy as np

from .. import _random
from .._backend.sparse import SparseCOO
from .._tensor import Tensor
from ..autograd.graph import HOOKS_VERSION
from .breaks import unobserved
from .mode_appends import mode_lists
from .path_writes import floats_at, put_back

__all__ = ["State"]


class State:
    """Parameters and buffers (and which tensors the modules hold), the modules' attributes, the parameters' and inputs'
    gradients (a probe's copy of an input keeps its own, but an input of the size it had is the real one), optimizer state
    and hyperparameters, the input and free tensors' values, version counters and gradient hooks (``x.register_hook``), the random
    stream, the floats at read paths (path_writes) and the modes' lists (:mod:`.mode_appends`): what a probe may
    change, restored before and after it."""

    def __init__(self, world):
        self.tables = [(table, dict(table)) for table in world.tables]
        self.attributes = [(vars(m), dict(vars(m))) for m in world.all_modules]  # (``self.mask = mask``)
        self.tensors = [(t, t._data.copy()) for t in (*world.inputs, *world.free)  # (sparse: a graph break)
                        if type(t._data) is not SparseCOO and t._data.flags.writeable]
        self.params = [(p, p._data.copy()) for p in world.params]
        self.versions = [t._versions[0] for t, _ in (*self.tensors, *self.params)]  # (the tensors' first)
        self.grads = [(t, t._grad) for t in {id(t): t for t in (*world.params, *world.inputs)}.values()]
        self.grad_data = [(g, g._data.copy()) for _, g in self.grads if g is not None]
        self.optimizers = [(opt, {p: dict(s) for p, s in opt.state.items()},
                            [(v, v._data.copy()) for s in opt.state.values() for v in s.values()
                             if isinstance(v, Tensor)], [dict(g) for g in opt.param_groups])
                           for opt in world.optimizers]
        self.rng, self.lists = _random.get_rng_state(), [(value, list(value)) for *_, value, _ in mode_lists()]
        self.hooks = [(t, dict(_hook_table(t) or ())) for t in (*world.inputs, *world.free, *world.params)
                      if t.requires_grad]
        self.floats = world.fn, world.arguments, floats_at(world.fn, world.arguments, {})  # (``LR = LR * 0.5``)

    def restore(self):
        """Puts back what was kept, unseen by a mode around the call (ember's reads, not the call's)."""
        unobserved(self._put_back)

    def _put_back(self):
        for table, saved in self.tables:
            table.clear()
            table.update(saved)
        for attributes, saved in self.attributes:
            if len(attributes) != len(saved) or any(attributes.get(k, saved) is not v for k, v in saved.items()):
                attributes.clear()
                attributes.update(saved)
        for t, data in (*self.tensors, *self.params, *self.grad_data):
            np.copyto(t._data, data)
        for (t, _), version in zip((*self.tensors, *self.params), self.versions):  # (``x.add_(1)`` counts once)
            t._versions[0] = version
        for t, grad in self.grads:
            t._grad = grad
        for opt, state, arrays, groups in self.optimizers:
            for group, saved in zip(opt.param_groups, groups):
                group.update(saved)
            opt.state.clear()
            opt.state.update({p: dict(s) for p, s in state.items()})
            for v, data in arrays:
                np.copyto(v._data, data)
        _random.set_rng_state(self.rng)
        put_back(*self.floats)
        for value, saved in self.lists:
            value[:] = saved
        for t, hooks in self.hooks:
            table = _hook_table(t)
            if table is not None and table != hooks:  # (in place: the handles remove from it)
                table.clear()
                table.update(hooks)
                HOOKS_VERSION[0] += 1


def _hook_table(t):
    """The table of tensor ``t``'s gradient hooks (its node's pre-hooks), None where it has none."""
    node = t.grad_fn or t._node
    return None if node is None else node._pre_hooks
