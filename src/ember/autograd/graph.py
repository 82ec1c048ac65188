"""Graph nodes: the ``grad_fn`` objects of the tape.

Every differentiable result carries a ``grad_fn``: an :class:`OpNode` that knows its op entry,
what the op saved for backward and, through ``next_functions``, the nodes of its inputs. Leaves
that require grad end in an :class:`AccumulateGrad`, which adds into ``tensor.grad``. A node
has ``num_outputs`` results (more than one for ops such as ``max(dim)``), and the engine keeps
one gradient slot per result. :class:`node_creation_hook` watches nodes being made.
"""

import threading
import weakref

__all__ = ["Node", "OpNode", "AccumulateGrad", "node_creation_hook"]

_FREED = ("Trying to backward through the graph a second time (or directly access saved tensors "
          "after they have already been freed). Saved intermediate values of the graph are freed "
          "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
          "backward through the graph a second time or if you need to access saved tensors after "
          "calling backward.")


class Node:
    """Base of all graph nodes (``torch.autograd.graph.Node``)."""
    __slots__ = ("next_functions", "_pre_hooks", "_hooks", "_metadata", "__weakref__")
    num_outputs = 1

    def __init__(self, next_functions=()):
        self.next_functions = next_functions
        self._pre_hooks = None
        self._hooks = None
        self._metadata = None

    @property
    def metadata(self):
        """A dict for the user's (and ``retain_grad``'s) annotations, made on first use."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def name(self):
        """The node's printed name, as ``grad_fn.name()`` in PyTorch (``"MulBackward0"``)."""
        return type(self).__name__

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"

    def register_prehook(self, hook):
        """``hook(grad_outputs) -> grad_outputs or None`` runs before the node; returns a handle."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        return _Handle(self._pre_hooks, hook)

    def register_hook(self, hook):
        """``hook(grad_inputs, grad_outputs) -> grad_inputs or None`` runs after the node."""
        if self._hooks is None:
            self._hooks = {}
        return _Handle(self._hooks, hook)

    def release(self):
        """Drops what the node saved; a later backward through it raises RuntimeError."""


# Counts the hooks registered on and removed from nodes: a compiled function's recheck of a warm
# call (``compiler.recheck``) leaves the hooks unread while this has not moved.
HOOKS_VERSION = [0]


class _Handle:
    """``RemovableHandle``: ``handle.remove()`` takes the hook out again."""
    _next_id = 0

    def __init__(self, table, hook):
        _Handle._next_id += 1
        HOOKS_VERSION[0] += 1
        self.id = _Handle._next_id
        self.table = table
        table[self.id] = hook

    def remove(self):
        HOOKS_VERSION[0] += 1
        self.table.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class OpNode(Node):
    """The ``grad_fn`` of one op application; it is also the ``ctx`` its backward reads.

    ``ctx.input(i)`` gives the i-th input as saved (checking that it was not modified in place
    since), ``ctx.output`` the result (both conjugated when complex and the op is
    ``holomorphic``), ``ctx.attrs`` the op's keyword arguments, ``ctx.shapes``/``ctx.dtypes``
    the inputs' shapes and dtypes, ``ctx.needs_input_grad`` which inputs want a gradient.
    """
    __slots__ = ("op", "attrs", "shapes", "dtypes", "needs_input_grad", "_saved", "_out",
                 "_freed", "num_outputs", "index_versions")

    def __init__(self, op, inputs, attrs, next_functions, needs_input_grad, out, tensor_cls):
        self.next_functions = next_functions
        self._pre_hooks = self._hooks = self._metadata = None
        self.op = op
        self.num_outputs = op.num_outputs
        self.attrs = attrs
        self.needs_input_grad = needs_input_grad
        shapes, dtypes = [], []
        for x in inputs:
            if isinstance(x, tensor_cls):
                shapes.append(x._data.shape)
                dtypes.append(x.dtype)
            else:
                shapes.append(None)
                dtypes.append(None)
        self.shapes = shapes
        self.dtypes = dtypes
        self._freed = False
        self.index_versions = None  # [(tensor, version)]: index tensors read through attrs (reads_indices)
        if op.save_inputs:
            self._saved = [(x, x._versions[0]) if isinstance(x, tensor_cls) else (x, None)
                           for x in inputs]
        else:
            self._saved = None
        if not op.save_output:
            self._out = None
        elif type(out) is tuple:
            self._out = tuple(None if o is None else (o._alias(), o._versions[0]) for o in out)
        else:
            self._out = (out._alias(), out._versions[0])
        if _creation.hooks:
            node_created(self)

    def input(self, i):
        """The ``i``-th saved input (a tensor or constant). RuntimeError when the graph was freed
        by a backward without ``retain_graph``, or when the tensor was changed in place since."""
        if self._freed:
            raise RuntimeError(_FREED)
        x, version = self._saved[i]
        if version is not None:
            if x._versions[0] != version:
                raise modified_error(x, version, x._grad_fn)
            if x.dtype.is_complex and self.op.holomorphic:
                return x.conj_physical()
        elif type(x) is complex and self.op.holomorphic:
            return x.conjugate()
        return x

    @property
    def inputs(self):
        return tuple(self.input(i) for i in range(len(self._saved)))

    @property
    def output(self):
        """The result (a tuple of them for a multi-result op), carrying this node."""
        if self._freed:
            raise RuntimeError(_FREED)
        if self.num_outputs > 1:
            return tuple(None if saved is None else self._saved_output(*saved, i)
                         for i, saved in enumerate(self._out))
        return self._saved_output(*self._out, 0)

    def _saved_output(self, out, version, i):
        if out._versions[0] != version:
            raise modified_error(out, version, self)
        if out.dtype.is_inexact:
            out.grad_fn, out.requires_grad, out._output_nr = self, True, i
        return out.conj_physical() if out.dtype.is_complex and self.op.holomorphic else out

    @property
    def saved_tensors(self):
        return self.inputs

    def apply(self, grads):
        """The gradients of the recorded op's inputs from ``grads`` (one per output), computed by
        the op entry's ``backward``. RuntimeError when the graph was freed."""
        if self._freed:
            raise RuntimeError(_FREED)
        if self.index_versions is not None:
            for x, version in self.index_versions:
                if x._versions[0] != version:
                    raise modified_error(x, version, x._grad_fn)
        if self.num_outputs > 1:
            return self.op.backward(self, *grads)
        return self.op.backward(self, grads[0])

    def release(self):
        # A node that saved nothing (a view's, an add's) can run again, as in PyTorch: only a
        # read of a freed saved value is an error.
        self._freed = self._saved is not None or self._out is not None
        self._saved = None
        self._out = None


class AccumulateGrad(Node):
    """Ends the graph at a leaf: adds the incoming gradient into ``variable.grad``.

    The leaf keeps its node (``tensor._node``) and the node refers back to the leaf weakly:
    a strong reference both ways would be a cycle, so a leaf made per step (an input with
    ``requires_grad=True``) would outlive its last use until the cycle collector ran, and
    ``ember.memory_allocated`` would climb in between. ``variable`` is None once the leaf is
    gone; no one can read that leaf's gradient then, so the engine skips it."""
    __slots__ = ("_variable",)

    def __init__(self, variable):
        Node.__init__(self, ())
        self._variable = weakref.ref(variable)
        if _creation.hooks:
            node_created(self)

    @property
    def variable(self):
        return self._variable()


class _Hooks(threading.local):
    hooks = ()  # this thread's, outermost first


_creation = _Hooks()


class node_creation_hook:
    """Context manager: ``hook(node)`` is called once for each graph node created inside it
    (an op's ``grad_fn``, a custom Function's, a leaf's ``AccumulateGrad``), once the node is
    complete. Nested contexts call their hooks outermost first; hooks are per thread (a node
    made in another thread calls only that thread's). The hook's return value is ignored.

    Raises:
        TypeError: ``hook`` is not callable.

    Source: PyTorch 2.14, ``torch.autograd.graph.node_creation_hook``.
    """

    def __init__(self, hook):
        if not callable(hook):
            raise TypeError(f"node_creation_hook expects a callable, got {type(hook).__name__}")
        self.hook = hook

    def __enter__(self):
        _creation.hooks = _creation.hooks + (self.hook,)
        return self

    def __exit__(self, *exc):
        hooks = list(_creation.hooks)
        del hooks[len(hooks) - 1 - hooks[::-1].index(self.hook)]
        _creation.hooks = tuple(hooks)
        return False


def gradient_edge(tensor):
    """The edge a gradient for ``tensor`` flows along: ``(tensor.grad_fn, output index)``, or for a
    leaf its ``AccumulateGrad`` node (made on first use and kept by the leaf) and 0."""
    node = tensor.grad_fn
    if node is None:
        node = tensor._node
        if node is None:
            node = tensor._node = AccumulateGrad(tensor)
        return (node, 0)
    return (node, tensor._output_nr)


def node_created(node):
    """Calls this thread's node creation hooks on ``node`` (a complete node)."""
    for hook in _creation.hooks:
        hook(node)


def modified_error(x, version, producer=None):
    """torch's RuntimeError for a tensor a backward reads (saved, or an index) that was written in
    place since it was recorded at ``version``; ``producer``: the node whose output it is."""
    made = f", which is output {x._output_nr} of {producer.name()}," if producer is not None else ""
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{x.type()} {list(x.shape)}]{made} is at version {x._versions[0]}; expected "
        f"version {version} instead. Hint: enable anomaly detection to find the operation that failed "
        f"to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
