"""Custom differentiable functions: ``autograd.Function`` with ``ctx`` (PyTorch's
https://pytorch.org/docs/stable/autograd.html#function)."""
from .. import _dtype
from .._dispatch_state import OBSERVERS
from .._tensor import Tensor  # first: it loads the ops, which _creation is written on
from .._creation import zeros
from .grad_mode import STATE, no_grad
from . import forward_ad
from .graph import Node, Packed, _FREED, _creation, gradient_edge, modified_error, node_created, save

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """What ``forward`` hands to ``backward``: saved tensors, ``needs_input_grad`` and any
    attributes the user sets."""

    def save_for_backward(self, *tensors):
        """Keeps ``tensors`` (inputs or outputs of ``forward``, or None) for ``backward``, which reads
        them as ``ctx.saved_tensors``; a tensor changed in place in between raises RuntimeError there
        (https://pytorch.org/docs/stable/generated/torch.autograd.function.FunctionCtx.save_for_backward.html)."""
        self._to_save = tensors

    def mark_dirty(self, *tensors):
        """Declares the inputs ``forward`` changed in place (and returns), so their history is rewritten."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        """Declares outputs that never require grad (indices, masks); their gradients in ``backward``
        are zeros or None."""
        self._non_diff = tensors

    def set_materialize_grads(self, value):
        """With ``value`` True (the default) ``backward`` receives zero tensors for outputs that got
        no gradient; with False, None."""
        self._materialize = bool(value)

    def set_output_grad_dtype(self, *dtypes):
        """The dtypes ``backward`` receives its gradients in, one per output of ``forward``
        (None: as it comes); the engine casts each incoming gradient. Called once, in
        ``forward`` or ``setup_context`` (PyTorch 2.14).

        Raises:
            RuntimeError: called a second time on this ctx.
            TypeError: an entry is neither a dtype nor None.
        """
        if getattr(self, "_grad_dtypes", None) is not None:
            raise RuntimeError("set_output_grad_dtype can only be called once per ctx, it was already "
                               f"called with {self._grad_dtypes}")
        for d in dtypes:
            if d is not None and not isinstance(d, _dtype.dtype):
                raise TypeError(f"set_output_grad_dtype expects dtypes or None, got {d!r}")
        self._grad_dtypes = dtypes

    @property
    def saved_tensors(self):
        node = self._node
        if node is None or node._freed:
            raise RuntimeError(_FREED)
        out = []
        for x, version in node._saved:
            if type(x) is Packed:
                x, version = x.unpacked(version)
            if version is not None and x._versions[0] != version:
                raise modified_error(x, version, x._grad_fn)
            out.append(x)
        return tuple(out)

    saved_variables = saved_tensors


class FunctionNode(Node):
    """The ``grad_fn`` of a custom Function's outputs; it has one slot per output. Each Function
    class has its own subclass, named as torch's (``FooBackward``: ``grad_fn=<FooBackward>`` in a
    printed tensor)."""
    __slots__ = ("fn", "ctx", "shapes", "dtypes", "num_outputs", "_saved", "_freed", "_out_meta")

    def __init__(self, fn, ctx, next_functions, shapes, dtypes, out_meta, freed=False):
        """The node of Function ``fn``'s outputs: ``ctx`` its FunctionCtx (None once ``freed``), one edge,
        shape and dtype per input (None: not a tensor), ``out_meta`` the (shape, dtype) of each output.
        ``freed``: its saved values already released (``aot.freed_outputs``), a backward raises."""
        Node.__init__(self, next_functions)
        self.fn, self.ctx, self.shapes, self.dtypes = fn, ctx, shapes, dtypes
        self.num_outputs, self._out_meta, self._saved, self._freed = len(out_meta), out_meta, (), freed

    def name(self):
        return self.fn.__name__ + "Backward"

    def apply(self, grads):
        if self._freed:
            raise RuntimeError(_FREED)
        if getattr(self.ctx, "_materialize", True):
            grads = [g if g is not None else zeros(shape, dtype=dtype)
                     for g, (shape, dtype) in zip(grads, self._out_meta)]
        cast = getattr(self.ctx, "_grad_dtypes", None)
        if cast is not None:
            grads = [g.to(d) if g is not None and d is not None and g.dtype is not d else g
                     for g, d in zip(grads, cast)]
        result = self.fn.backward(self.ctx, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self.shapes)
        if len(result) < n or any(r is not None for r in result[n:]):
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(result)})")
        return result[:n]

    def release(self):
        self._saved = ()
        self._freed = True


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = cls
        cls._node_cls = type(name + "Backward", (FunctionNode,), {"__slots__": (), "__module__": cls.__module__})


class Function(metaclass=_FunctionMeta):
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)``,
    then call ``MyFunction.apply(*args)``. ``backward`` returns one gradient (or None) per
    ``forward`` argument. Runs ``forward`` without recording; the outputs get one node."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        """The computation, on tensors, written by the subclass (with ``ctx`` first, or without it
        when :meth:`setup_context` is defined). NotImplementedError on the base."""
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """The gradients of ``forward``'s inputs (one per input, None for a non-tensor) from those of
        its outputs, written by the subclass in ember ops. NotImplementedError on the base."""
        raise NotImplementedError("You must implement either the backward or vjp method for your "
                                  "custom autograd.Function to use it with backward mode AD.")

    jvp = None  # ``jvp(ctx, *input_tangents)``: the output tangents, for forward mode (autograd.forward_ad)

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Saves what ``backward`` needs from ``inputs`` and ``output``, for a ``forward`` written
        without ``ctx`` (PyTorch 2's form); the base does nothing."""
        return None

    @classmethod
    def apply(cls, *args, **kwargs):
        """Runs ``forward`` on ``args`` with gradients off and, when an input requires grad, records
        one node whose backward is the subclass's ``backward``; returns ``forward``'s result
        (https://pytorch.org/docs/stable/autograd.html#function)."""
        ctx = FunctionCtx()
        ctx._node = None
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        def forward():
            if cls.setup_context is not Function.setup_context:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
                return outputs
            return cls.forward(ctx, *args, **kwargs)
        with no_grad():
            outputs = forward_ad.custom_function(cls, ctx, args, forward)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        cast = getattr(ctx, "_grad_dtypes", None)
        if cast is not None and len(cast) != len(outs):
            raise RuntimeError(f"set_output_grad_dtype got {len(cast)} dtypes for the {len(outs)} outputs "
                               f"of {cls.__name__}.forward")
        non_diff = {id(t) for t in getattr(ctx, "_non_diff", ())}
        if not (STATE.enabled and any(ctx.needs_input_grad)):
            if OBSERVERS and not STATE.enabled:  # (checkpoint's first run follows what would require grad)
                differentiable = tuple(o for o in outs if isinstance(o, Tensor) and id(o) not in non_diff)
                for observer in tuple(OBSERVERS):
                    observer.function_exit(cls, args, differentiable)
            return outputs
        dirty = {id(t) for t in getattr(ctx, "_dirty", ())}
        edges = tuple(gradient_edge(a) if need else (None, 0) for a, need in zip(args, ctx.needs_input_grad))
        node = cls._node_cls(cls, ctx, edges, tuple(a.shape if isinstance(a, Tensor) else None for a in args),
                             tuple(a.dtype if isinstance(a, Tensor) else None for a in args),
                             tuple((o.shape, o.dtype) if isinstance(o, Tensor) else ((), None) for o in outs))
        saved = getattr(ctx, "_to_save", ())
        new_outs = []
        for i, o in enumerate(outs):
            if isinstance(o, Tensor) and id(o) not in non_diff and o.dtype.is_inexact:
                if id(o) in dirty:
                    o._versions[0] += 1
                elif any(o is a for a in args) or o.grad_fn is not None or o._base is not None:
                    o, old = o._alias(), o
                    o._base = None
                    forward_ad.moved(old, o)
                o.grad_fn = node
                o.requires_grad = True
                o._output_nr = i
            new_outs.append(o)
        node._saved = tuple(save(x) if isinstance(x, Tensor) else (x, None) for x in saved)
        ctx._node = node
        if _creation.hooks:
            node_created(node)
        return new_outs[0] if single else tuple(new_outs)


def once_differentiable(fn):
    """Marks a backward as not itself differentiable (kept for API compatibility)."""
    return fn
