"""Graph nodes: the ``grad_fn`` objects of the tape.

Every differentiable result carries a ``grad_fn``: an :class:`OpNode` that knows its op entry,
what the op saved for backward and, through ``next_functions``, the nodes of its inputs. Leaves
that require grad end in an :class:`AccumulateGrad`, which adds into ``tensor.grad``. A node
has ``num_outputs`` results (more than one for ops such as ``max(dim)``), and the engine keeps
one gradient slot per result. :class:`node_creation_hook` watches nodes being made;
:class:`saved_tensors_hooks` decides how the tensors a node saves are kept.
"""

import threading
import weakref

from .grad_mode import SAVED_OUTSIDE, InferenceSaved

__all__ = ["Node", "OpNode", "AccumulateGrad", "node_creation_hook", "saved_tensors_hooks",
           "save_on_cpu", "disable_saved_tensors_hooks"]

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

    qualified_name = None  # a node class whose C++ name has a namespace: its name()

    def name(self):
        """The node's name, as ``grad_fn.name()`` in PyTorch (``"MulBackward0"``; with its C++
        namespace where torch gives one, ``"torch::autograd::NotImplemented"``)."""
        return self.qualified_name or type(self).__name__

    def __repr__(self):  # as printed tensors, by the class's name (``<NotImplemented object at ...>``)
        return f"<{type(self).__name__} object at {id(self):#x}>"

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

    def post_accumulate_grad_hooks(self):
        """The table of ``Tensor.register_post_accumulate_grad_hook``'s hooks (an
        AccumulateGrad's, kept in its metadata), made on first use."""
        return self.metadata.setdefault("post_accumulate_grad", {})


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
                 "_freed", "num_outputs", "index_versions", "_packed")

    def __init__(self, op, inputs, attrs, next_functions, needs_input_grad, out, tensor_cls):
        self.next_functions = next_functions
        self._pre_hooks = self._hooks = self._metadata = None
        self.op = op
        self.num_outputs = len(out) if type(out) is tuple else op.num_outputs  # (unbind's: one per view)
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
        packed = False
        if _HOOKED:
            stack = _saved_hooks.stack
            packed = bool(stack) and type(stack) is not str  # saved through saved_tensors_hooks
        self._packed = packed
        if not op.save_inputs:
            self._saved = None
        elif not packed:
            try:  # ([-1]: an inference tensor's counter refuses that index, see InferenceVersions)
                self._saved = [(x, x._versions[-1]) if isinstance(x, tensor_cls) else (x, None) for x in inputs]
            except InferenceSaved:
                self._saved = self._saved_beside_inference(inputs, tensor_cls)
        elif op.grad_reads is None:
            self._saved = [save(x) if isinstance(x, tensor_cls) else (x, None) for x in inputs]
        else:  # the hooks see what a wanted gradient reads, in the order the formulas read it (PyTorch's)
            self._saved = [(None, None)] * len(inputs)
            for j in self._pack_order():
                x = inputs[j]
                self._saved[j] = save(x) if isinstance(x, tensor_cls) else (x, None)
        if not op.save_output:
            self._out = None
        elif type(out) is tuple:
            self._out = tuple(None if o is None else save(o._alias(), self, i) for i, o in enumerate(out))
        elif not packed:
            self._out = (out._alias(), out._versions[0])
        else:
            self._out = save(out._alias(), self, 0)
        if _creation.hooks:
            node_created(self)

    def _saved_beside_inference(self, inputs, tensor_cls):
        """The saved inputs when some are inference tensors: torch's RuntimeError when a wanted
        gradient reads one (by ``op.grad_reads``; all inputs when the op does not say)."""
        reads = self.op.grad_reads
        read = range(len(inputs)) if reads is None else \
            {j for i, need in enumerate(self.needs_input_grad) if need for j in reads[i]}
        for j in read:
            if isinstance(inputs[j], tensor_cls) and inputs[j].is_inference():
                raise RuntimeError(SAVED_OUTSIDE)
        return [(x, x._versions[0]) if isinstance(x, tensor_cls) else (x, None) for x in inputs]

    def _pack_order(self):
        """The saved inputs' positions in the order they are packed and unpacked."""
        reads = self.op.grad_reads
        if reads is None:
            return range(len(self._saved))
        return dict.fromkeys(j for i, need in enumerate(self.needs_input_grad) if need for j in reads[i])

    def input(self, i):
        """The ``i``-th saved input (a tensor or constant). RuntimeError when the graph was freed
        by a backward without ``retain_graph``, or when the tensor was changed in place since."""
        if self._freed:
            raise RuntimeError(_FREED)
        x, version = self._saved[i]
        if type(x) is Packed:
            x, version = x.unpacked(version)
        if version is not None:
            if x._versions[0] != version:
                raise modified_error(x, version, x._grad_fn)
            if x.dtype.is_complex and self.op.holomorphic:
                return x.conj_physical()
        elif type(x) is complex and self.op.holomorphic:
            return x.conjugate()
        return x

    def saved_layout(self, i):
        """The ``i``-th saved input's array, for its strides only: unlike :meth:`input`, no error
        when it was changed in place since (PyTorch keeps an operand's strides apart from its
        values: ``addmm`` reads ``mat2``'s layout for ``mat2``'s gradient, which needs ``mat1``)."""
        if self._freed:
            raise RuntimeError(_FREED)
        x = self._saved[i][0]
        return self.input(i)._data if type(x) is Packed else x._data

    def __getattr__(self, name):
        # torch's ``grad_fn._saved_self`` & co.: a saved value, read (and unpacked) as a backward reads it
        if name == "_saved_result" and self._out is not None and self.num_outputs == 1:
            return self.output
        attribute = _SAVED_ATTRIBUTES.get(type(self).__name__, {}).get(name)
        if attribute is not None:
            return attribute(self)
        i = _SAVED_ARGUMENTS.get(name)
        if i is None or self._saved is None or i >= len(self._saved) or self._saved[i][0] is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        return self.input(i)

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
        if type(out) is Packed:
            out, version = out.unpacked(version)
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
        if not self._packed:
            return self._backward(grads)
        records = [self._saved[j][0] for j in self._pack_order() if type(self._saved[j][0]) is Packed] \
            if self._saved is not None else []
        if self._out is not None:
            records += [saved[0] for saved in (self._out if self.num_outputs > 1 else (self._out,))
                        if saved is not None and type(saved[0]) is Packed]
        for r in records:  # unpacked once per backward, in the order saved, as in PyTorch
            r.open()
        try:
            return self._backward(grads)
        finally:
            for r in records:
                r.close()

    def _backward(self, grads):
        if self.num_outputs > 1:
            return self.op.backward(self, *grads)
        return self.op.backward(self, grads[0])

    def release(self):
        # A node that saved nothing (a view's, an add's) can run again, as in PyTorch: only a
        # read of a freed saved value is an error.
        self._freed = self._saved is not None or self._out is not None
        self._saved = None
        self._out = None


# The names torch's nodes give their saved arguments (``_saved_<name>``), by input position.
_SAVED_ARGUMENTS = {"_saved_self": 0, "_saved_other": 1, "_saved_exponent": 1}


def _input_sizes(node):
    return tuple(node.shapes[0])


# The other arguments torch's nodes save, by node name: ``grad_fn._saved_dim`` of a split.
_SAVED_ATTRIBUTES = {
    "SplitBackward0": {"_saved_dim": lambda n: n.attrs["dim"], "_saved_split_size": lambda n: n.attrs["sizes"][0],
                       "_saved_self_sym_sizes": _input_sizes},
    "SplitWithSizesBackward0": {"_saved_dim": lambda n: n.attrs["dim"],
                                "_saved_split_sizes": lambda n: tuple(n.attrs["sizes"]),
                                "_saved_self_sym_sizes": _input_sizes},
    "UnbindBackward0": {"_saved_dim": lambda n: n.attrs["dim"]},
}


class AccumulateGrad(Node):
    """Ends the graph at a leaf: adds the incoming gradient into ``variable.grad``.

    The leaf keeps its node (``tensor._node``) and the node refers back to the leaf weakly:
    a strong reference both ways would be a cycle, so a leaf made per step (an input with
    ``requires_grad=True``) would outlive its last use until the cycle collector ran, and
    ``ember.memory_allocated`` would climb in between. ``variable`` is None once the leaf is
    gone; no one can read that leaf's gradient then, so the engine skips it."""
    __slots__ = ("_variable",)
    qualified_name = "torch::autograd::AccumulateGrad"

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
    leaf its ``AccumulateGrad`` node (made on first use and kept by the leaf) and 0; ``(None, 0)`` for a
    view made under no_grad that requires grad through its base only (torch's: no accumulator)."""
    node = tensor.grad_fn
    if node is None:
        node = tensor._node
        if node is None and tensor._requires_grad:
            node = tensor._node = AccumulateGrad(tensor)
        return (node, 0)
    return (node, tensor._output_nr)


def node_created(node):
    """Calls this thread's node creation hooks on ``node`` (a complete node)."""
    for hook in _creation.hooks:
        hook(node)


def modified_error(x, version, producer=None):
    """torch's RuntimeError for a tensor a backward reads (saved, or an index) that was written in
    place since it was recorded at ``version``; ``producer``: the node whose output it is, named
    as torch 2.13 names it there (:func:`_message_name`)."""
    made = f", which is output {x._output_nr} of {_message_name(producer)}," if producer is not None else ""
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{x.type()} {list(x.shape)}]{made} is at version {x._versions[0]}; expected "
        f"version {version} instead. Hint: enable anomaly detection to find the operation that failed "
        f"to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")


def _message_name(node):
    """A node as torch 2.13's modified-in-place error names it: a view's node ``AsStrided`` (torch
    regenerates the grad_fn of a view whose memory was written as an ``as_strided``), an op's
    without ``Backward`` and a ``0`` after it (``ExpBackward0`` is ``Exp``, ``PowBackward1``
    ``Pow1``, a custom Function's ``MyFnBackward`` ``MyFn``), the other nodes with their C++
    namespace (``torch::autograd::CopySlices``)."""
    if getattr(getattr(node, "op", None), "is_view", False):
        return "AsStrided"
    name = node.name()
    stem, backward, number = name.rpartition("Backward")
    if backward and (number == "" or number.isdigit()):
        return stem + ("" if number == "0" else number)
    return name if "::" in name else f"torch::autograd::{name}"


class _SavedHooks(threading.local):
    stack = ()  # this thread's (pack, unpack) pairs, outermost first; a str: hooks disabled


_saved_hooks = _SavedHooks()
_HOOKED = []  # non-empty once saved_tensors_hooks were entered (in any thread): until then nodes skip the check


class Packed:
    """A tensor saved for backward while :class:`saved_tensors_hooks` were active: what
    ``pack_hook`` returned, and the ``unpack_hook`` that gives the tensor back. The tensor's
    version counter is kept (not the tensor): an unpacked tensor that is the saved one (or a
    view of it) still raises at backward when written in place since; a copy (``save_on_cpu``)
    holds the values as saved, so it is used as it is, as in PyTorch."""
    __slots__ = ("packed", "unpack_hook", "versions", "value")

    def __init__(self, packed, unpack_hook, versions):
        self.packed = packed
        self.unpack_hook = unpack_hook
        self.versions = versions
        self.value = None

    def unpacked(self, version):
        """The saved tensor (the one :meth:`open` unpacked, else ``unpack_hook(packed)`` now) and
        the version to check it against."""
        value = self.value if self.value is not None else self.unpack_hook(self.packed)
        if not hasattr(value, "_versions"):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(value).__name__}")
        return value, (version if value._versions is self.versions else value._versions[0])

    def open(self):
        self.value = self.unpacked(None)[0]

    def close(self):
        self.value = None


def saved_versions(tensors):
    """``[(tensor, version)]`` for tensors a node reads in its backward besides its inputs (the
    index arrays of ``reads_indices``); torch's RuntimeError for an inference tensor."""
    try:  # (as a node saving its inputs: an inference counter refuses [-1], see InferenceVersions)
        return [(t, t._versions[-1]) for t in tensors]
    except InferenceSaved:
        raise RuntimeError(SAVED_OUTSIDE) from None


def save(x, node=None, output_nr=0):
    """The ``(saved, version)`` pair a node keeps for tensor ``x``: ``x`` itself, or with
    :class:`saved_tensors_hooks` active, a :class:`Packed` made by the innermost ``pack_hook``.
    ``node``: ``x`` is an alias of that node's result ``output_nr``, which ``pack_hook`` sees
    as the result (carrying the node) and which the node keeps without it (no cycle)."""
    if x.is_inference():
        raise RuntimeError(SAVED_OUTSIDE)
    stack = _saved_hooks.stack
    if not stack or type(stack) is str:
        return (x, x._versions[0])
    pack_hook, unpack_hook = stack[-1]
    as_output = node is not None and x.dtype.is_inexact
    if as_output:
        x._grad_fn, x._requires_grad, x._output_nr = node, True, output_nr
    _saved_hooks.stack = ()  # the hook's own ops save their tensors as they are
    try:
        packed = pack_hook(x)
    finally:
        _saved_hooks.stack = stack
        if as_output:
            x._grad_fn, x._requires_grad = None, False
    return (Packed(packed, unpack_hook, x._versions), x._versions[0])


class saved_tensors_hooks:
    """Context manager: each tensor an operation saves for backward inside it is passed to
    ``pack_hook(tensor)``, and what that returns is kept instead of the tensor; when a backward
    needs it, ``unpack_hook(packed)`` must return a tensor with the same content. ``pack_hook``
    runs once per saved tensor, at the operation; ``unpack_hook`` once per saved tensor each
    time a backward runs the node (or ``ctx.saved_tensors`` is read). The innermost pair
    applies. A tensor written in place after it was saved still raises RuntimeError at backward.

    Source: PyTorch 2.13, ``torch.autograd.graph.saved_tensors_hooks``
    (https://pytorch.org/docs/stable/autograd.html#saved-tensors-default-hooks).
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        stack = _saved_hooks.stack
        if type(stack) is str:
            raise RuntimeError(stack)
        _saved_hooks.stack = stack + ((self.pack_hook, self.unpack_hook),)
        _HOOKED[:] = [True]
        return self

    def __exit__(self, *exc):
        _saved_hooks.stack = _saved_hooks.stack[:-1]
        return False


class save_on_cpu(saved_tensors_hooks):
    """:class:`saved_tensors_hooks` that keep each saved tensor in CPU memory (``tensor.cpu()``)
    and move it back to the tensor's device at backward. A tensor already on the CPU is kept as
    it is, as in PyTorch, so a write in place after it was saved raises RuntimeError at backward
    (torch 2.13 skips that check under hooks and differentiates at the new values).
    ``pin_memory`` is accepted and has no effect.

    Source: PyTorch 2.13, ``torch.autograd.graph.save_on_cpu``.
    """

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            return (tensor.device, tensor.cpu())

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:
    """Context manager: entering :class:`saved_tensors_hooks` inside it raises RuntimeError with
    ``error_message``; tensors are saved as they are, without hooks (PyTorch 2.13,
    ``torch.autograd.graph.disable_saved_tensors_hooks``)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self._previous = _saved_hooks.stack
        _saved_hooks.stack = self.error_message
        return self

    def __exit__(self, *exc):
        _saved_hooks.stack = self._previous
        return False
