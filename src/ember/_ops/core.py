"""The op entry and the one dispatcher every op goes through.

An :class:`Op` is a primitive: ``forward`` computes on backend arrays, ``backward`` gives the gradients of
the inputs in ember ops (so gradients of gradients come free), ``promote`` is its dtype rule and ``infer``
gives the result's shape and dtype without running the kernel. :func:`apply` runs an op eagerly and, when
gradients are being recorded, puts an :class:`~ember.autograd.graph.OpNode` on the tape. (Gradients that
come back with a broadcast shape are summed down to the input's shape by the engine, once, for every op.)
:func:`write_into` is every in-place write: through a view of a recorded tensor it records :class:`CopySlices` on the base.
"""
import threading

from .. import _backend
from .._backend import IGNORE_ERRORS as _IGNORE_ERRORS, conj_views, errstate_set as _errstate_set, restore as _restore
from .._backend.sparse import SparseUnsupported, unsupported_message
from .._backend.meta import LIVE as META_LIVE, NO_DATA, MetaArray, result as meta_result
from .._dispatch_state import INPUT_CASTS, OBSERVERS, Observer, observed_range
from .._dtype import SCALAR_TYPE_NAMES, bfloat16, can_cast, float16, float32, get_default_dtype, result_type
from .._result_layout import pointwise as pointwise_layout
from ..autograd.grad_mode import DUAL, STATE
from ..autograd.graph import AccumulateGrad, OpNode, saved_versions
from .names import snake_case, torch_name
from .numpy_operands import operand_array
from .refusals import refuse, refused_kinds

__all__ = ["Op", "apply", "write_into", "OPS", "OBSERVERS", "Observer", "INPUT_CASTS", "observed_range",
           "named", "node_class", "elementwise_rule", "like_input", "link_view", "mark_multi_output",
           "tensor_class", "transposed", "backward_view", "recording", "record", "replay"]

OPS = {}
_observing = threading.local()
_ndarray = _backend.ndarray
_PLAIN_NUMBERS = (int, float)  # (not bool: a type of its own here) cast by _cast_inputs as they are
_REDUCED = (float16, bfloat16)  # computed in float32 with a Python number by ``opmath`` ops
_Tensor = None  # the class of the tensors apply takes and makes: see tensor_class


def tensor_class(cls):
    """Registers ``cls`` as the Tensor class: the class of the tensors :func:`apply` takes and
    makes. ``ember._tensor`` applies it to ``Tensor`` as a class decorator, once. The class sits
    beside the ops rather than below them (its methods are the ops' public functions), so the
    dispatcher, loaded first, is told the class instead of importing it."""
    global _Tensor
    if _Tensor is not None and _Tensor is not cls:
        raise RuntimeError(f"the Tensor class is already {_Tensor.__qualname__}")
    _Tensor = cls
    return cls


class Op:
    """One primitive operation.

    Attributes read by the dispatcher:
        promote: ``None`` (inputs used as given), ``"promote"`` (cast to PyTorch's result
            dtype) or ``"float"`` (the result dtype, then the default float if it is integral).
        save_inputs / save_output: what ``backward`` reads through ``ctx``.
        differentiable: False for ops whose results never require grad (comparisons, argmax).
        is_view: the result is a view of input 0 (shares its storage and version counter).
        untracked_view: the result is a view a write cannot be followed through by NumPy's
            base alone (conj: a copy kept in step; view_as_real: another dtype); the compiler's
            tracer records it and follows (or breaks at) the writes itself.
        holomorphic: ``backward`` is the real derivative rule of a complex-analytic op with
            real coefficients (exp, mul, matmul...): ``ctx`` then hands it the conjugates of
            complex saved values, which makes its result PyTorch's conjugate Wirtinger
            gradient, grad * conj(f'(z)). Ops that are not (abs, angle, real) set False and
            state their complex rule.
        num_outputs: how many results ``forward`` returns (as a tuple of arrays when more than
            one, None for a result this application does not have); ``backward`` then takes
            one gradient per result (None for a result that received none), and only
            floating-point results require grad.
        grad_reads: ``None``, or for each input the inputs its gradient reads: a recording
            under ``saved_tensors_hooks`` packs only those a wanted gradient reads (PyTorch's).
        draws: the kernel draws from a random generator (each run gives other values).
        index_read_by: for an op taking an index array as an attr, the inputs whose gradients
            read it (None: all); see :func:`reads_indices`.
        complex_error: ``(exception class, message)`` PyTorch raises for a complex input array
            (``{T}`` in the message: its dtype, as ``ComplexFloat``), or None. The dispatcher
            checks the input arrays' kinds in ``refused_kinds`` (set when the class is made:
            complex, and uint16/32/64 for the ops in ``refusals.UNSIGNED_KERNELS``) before the
            kernel runs (``refusals.refuse``).
        opmath: with a float16/bfloat16 result and a Python number (or a 0-d second operand),
            compute in float32, the number not cast to 16 bits first: torch's ``opmath_t``
            (``half(0) * 2**20`` is 0; with 2**20 cast to float16, inf, it would be nan).
        at_float32: ``forward`` computes float16/bfloat16 arrays at float32 (``_backend.at_float32``).
        pointwise: elementwise, its result laid out as torch's (default: a non-view elementwise infer).
    """
    promote = "promote"
    save_inputs = True
    save_output = False
    grad_reads = None
    differentiable = True
    is_view = False
    holomorphic = True
    num_outputs = 1
    draws = False
    complex_error = None
    opmath = False
    at_float32 = False
    pointwise = False

    def __init_subclass__(cls):
        # ``name``: what users see (grad_fn names, profiler events, captured graphs) and the key in OPS,
        # the class name unless it sets one (``Hardtanh``'s entry ``HardtanhForward`` would collide).
        cls.name = cls.__dict__.get("name", cls.__name__)
        cls.backward_name = cls.name + "Backward0"
        OPS[cls.name] = cls
        cls.refused_kinds = refused_kinds(cls.name, cls.complex_error)
        if cls.at_float32 and "forward" in cls.__dict__:  # (one wrapper: the dispatcher's and a compiled graph's call)
            cls.forward = staticmethod(_backend.at_float32(cls.forward))
        if "pointwise" not in cls.__dict__:
            cls.pointwise = not cls.is_view and getattr(cls.infer, "__func__", None) in (elementwise_rule, real_rule)

    @staticmethod
    def forward(*arrays, **attrs):
        """The kernel: the result array(s) from the input arrays (promoted per ``promote``) and the
        attributes, computed with the inputs' namespace (``_backend.namespace``), never ``np.*``."""
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad):
        """The gradients of the inputs (one per input, None where not needed) from the result's,
        written in ember ops and reading what ``ctx`` saved."""
        raise NotImplementedError

    @classmethod
    def infer(cls, *inputs, **attrs):
        """The result's ``(shape, dtype)`` for these inputs, computed without the kernel.
        Every registered op sets it: from :func:`elementwise_rule`, :func:`like_input`,
        ``reduce.reduction_rule`` or a rule of its own (tests/ops/test_shape_rules.py)."""
        raise NotImplementedError(f"{cls.name} has no shape rule")


def result_dtype(op, inputs):
    """The dtype ``apply`` computes ``op`` in: the first tensor's without promotion, else
    PyTorch's promotion of ``inputs`` (raised to the default float for ``promote="float"``)."""
    if op.promote is None:
        return next(x.dtype for x in inputs if isinstance(x, _Tensor))
    dt = result_type(*inputs)
    if op.promote == "float" and not dt.is_inexact:
        dt = get_default_dtype()
    return dt


def elementwise_rule(op, *inputs, **attrs):
    """The shape rule of elementwise ops: the tensor inputs broadcast (RuntimeError naming the
    sizes when they do not), and the dtype is :func:`result_dtype`."""
    shapes = [x._data.shape for x in inputs if isinstance(x, _Tensor)]
    try:
        shape = _backend.broadcast_shapes(*shapes)
    except ValueError:
        raise RuntimeError(_backend.broadcast_error(shapes)) from None
    return shape, result_dtype(op, inputs)


def real_rule(op, *inputs, **attrs):
    """:func:`elementwise_rule` with a real result (``abs``, ``angle`` of complex inputs)."""
    shape, dt = elementwise_rule(op, *inputs)
    return shape, dt.to_real()


def like_input(op, x, *inputs, **attrs):
    """The shape rule of ops whose result has the shape and dtype of their first input
    (activations, scatters into a copy, flips, gradients shaped like what they differentiate)."""
    return tuple(x.shape), x.dtype


def _cast_inputs(op, inputs):
    """The arrays ``op``'s kernel takes and the dtype its result is rounded to (None: as is)."""
    dt = result_dtype(op, inputs)  # (op.promote is not None here)
    inputs = [float.__float__(x) if isinstance(x, float) else x.item() if getattr(x, "ndim", None) == 0 and not isinstance(
        x, (_Tensor, _ndarray)) else x for x in inputs]  # (a NumPy scalar or float subclass: the Python number, as torch)
    if op.opmath and dt in _REDUCED:
        if len(inputs) == 2 and isinstance(inputs[1], _Tensor) and not inputs[1].ndim:
            inputs = [inputs[0], inputs[1].item()]  # torch reads a 0-d second operand as a number too
        if any(type(x) in _PLAIN_NUMBERS for x in inputs):
            return [_backend.float32_number(x) if type(x) in _PLAIN_NUMBERS else x._data.astype(float32.np)
                    if isinstance(x, _Tensor) else x for x in inputs], dt.np
    arrays = []
    for x in inputs:
        if isinstance(x, _Tensor):
            a = x._data
            arrays.append(a if x.dtype is dt else a.astype(dt.np))
        elif type(x) is _ndarray:
            arrays.append(operand_array(x).astype(dt.np, copy=False))
        else:
            arrays.append(x if type(x) is not int else _backend.wrapped_integer(x, dt.np) if dt.np.kind in "iu" else _backend.int_operand(x))
    return arrays, None


def apply(op, *inputs, **attrs):
    """Runs ``op`` on ``inputs`` (Tensors, Python numbers or other constants) and records it."""
    if INPUT_CASTS:
        inputs = INPUT_CASTS[0](op, inputs)
    if OBSERVERS and not getattr(_observing, "inside", False):
        return _observed_apply(op, inputs, attrs)
    if META_LIVE and any(type(getattr(x, "_data", None)) is MetaArray for x in inputs):
        arrays = ()
        out = meta_result(op, inputs, attrs)  # no kernel: the rule's shapes and dtypes
    else:
        token = None if op.is_view else _errstate_set(_IGNORE_ERRORS)  # no NumPy RuntimeWarnings (_backend.quiet)
        try:
            narrow, one_dtype = None, False
            if op.promote is None:
                arrays = (inputs[0]._data,) if len(inputs) == 1 and type(inputs[0]) is _Tensor else \
                    [x._data if isinstance(x, _Tensor) else x if type(x) is not _ndarray else operand_array(x) for x in inputs]
            elif len(inputs) == 2 and type(inputs[0]) is type(inputs[1]) is _Tensor \
                    and inputs[0].dtype is inputs[1].dtype and (op.promote != "float" or inputs[0].dtype.is_inexact):
                arrays, one_dtype = (inputs[0]._data, inputs[1]._data), True
            elif len(inputs) == 2 and type(inputs[0]) is _Tensor and type(inputs[1]) in _PLAIN_NUMBERS \
                    and inputs[0].dtype.is_inexact and not (op.opmath and inputs[0].dtype in _REDUCED) \
                    and (type(inputs[1]) is not int or _backend.INT_MIN <= inputs[1] < _backend.UINT_END):
                arrays, one_dtype = (inputs[0]._data, inputs[1]), True  # a float tensor, a real number: its dtype
            else:
                arrays, narrow = _cast_inputs(op, inputs)
            kinds = op.refused_kinds  # complex or uint16/32/64 inputs to an op without a kernel for them
            if kinds:
                for a in arrays[:1] if one_dtype and type(arrays[0]) is _ndarray else arrays:  # (one dtype: the first's)
                    if type(a) is _ndarray and a.dtype.kind in kinds:
                        refuse(op, a, arrays, attrs)
            try:
                out = op.forward(*arrays, **attrs)
                if narrow is not None:
                    out = out.astype(narrow)
                # torch's elementwise layout (_result_layout.pointwise) is NumPy's when, with elements, the first is row-major and the
                # second too, of its shape, or the result has no size-1 dim; or one operand (and numbers) has its strides
                if op.pointwise and type(out) is _ndarray and out.ndim > 1:  # (one layout below 2 dims)
                    a, b = arrays[0], arrays[1] if len(arrays) == 2 else None
                    if len(arrays) > 2 or not out.size or not (type(a) is _ndarray and (a.flags.c_contiguous and (
                            type(b) is _ndarray and b.flags.c_contiguous and a.shape == b.shape or 1 not in out.shape
                            and a.size == out.size) or type(b) is not _ndarray and a.strides == out.strides
                            and (a.flags.c_contiguous or 1 not in out.shape))):  # (NumPy's flag ignores size-1 dims)
                        out = pointwise_layout(out, arrays)
            except ValueError as e:  # NumPy's shape errors: PyTorch's RuntimeError naming the sizes
                shapes = [x._data.shape for x in inputs if isinstance(x, _Tensor)]
                raise RuntimeError(_backend.broadcast_error(shapes) or str(e)) from None
            except SparseUnsupported:  # sparse storage met an op it lacks: name the op, as PyTorch does
                raise NotImplementedError(unsupported_message(snake_case(op.name))) from None
        finally:
            if token is not None:
                _restore(token)
    if type(out) is not _ndarray:
        if type(out) is tuple:
            return _results(op, inputs, attrs, out, arrays)
        out = _backend.as_array(out, *arrays)
    t = _Tensor._make(out)
    # a view op that had to copy (a reshape the strides forbid) made a new tensor: no link back
    if op.is_view and _backend.is_view_of(out, inputs[0]._data):
        link_view(t, inputs[0], op, attrs)
    if STATE.enabled and op.differentiable:
        for x in inputs:  # (a view's requires_grad may remake its stale history first: the property)
            if isinstance(x, _Tensor) and (x._requires_grad if x._view_chain is None else x.requires_grad):
                record(op, inputs, attrs, t)
                break
    return t


def recording(*inputs):
    """Whether an op on ``inputs`` would be put on the tape: grad mode is on and one of them
    requires grad. Functions that PyTorch decomposes (``F.linear``, ``matmul``'s folds) show the
    decomposition's nodes only where there is a graph to show; without one they run a single op
    (the same numbers, fewer dispatches: a decoding step's small products are mostly dispatch).
    Inside a dual level (``autograd.forward_ad``) always true: forward mode differentiates the
    ops of the decomposition."""
    return STATE.enabled and any(x is not None and x.requires_grad for x in inputs) or DUAL.level is not None


def dispatches(g):
    """Whether an op on a backward's gradient ``g`` is dispatched: ``create_graph``, or ops watched."""
    return bool(OBSERVERS) or STATE.enabled and g.requires_grad


def backward_view(op, g, **attrs):
    """``apply(op, g, **attrs)`` for view ``op`` where that :func:`dispatches`; else the array's
    view wrapped directly (no node, no version link: a gradient on its way does not need them)."""
    if OBSERVERS or STATE.enabled and g.requires_grad:  # (dispatches(g) inlined: one call fewer per view)
        return apply(op, g, **attrs)
    return _Tensor._make(op.forward(g._data, **attrs))


def transposed(t):
    """``t.mT`` (2 or more dims) of a saved input or gradient in a backward, dispatched or not as
    :func:`backward_view` (a dispatch would cost more than the product the transpose feeds)."""
    return t.mT if OBSERVERS or STATE.enabled and t.requires_grad else _Tensor._make(t._data.swapaxes(-1, -2))


def link_view(t, src, op, attrs):
    """Makes ``t``, the result of view ``op`` on ``src``, a view: it shares ``src``'s version
    counter and base, and remembers the chain of view ops that remakes it from the base."""
    t._versions, t._view_version = src._versions, src._versions[0]
    # Views torch forbids writing in place while recording (and rebuilding once their storage
    # was written): a view made under no_grad, and the views of multi-output functions (split,
    # unbind: mark_multi_output), with the views taken of them (they require grad as their base).
    t._view_creation = src._view_creation or (None if STATE.enabled else "no_grad")
    if src._base is None:
        t._base = src
        t._view_chain = ((op, attrs),)
    else:
        t._base = src._base
        t._view_chain = src._view_chain + ((op, attrs),) if src._view_chain is not None else None


def mark_multi_output(views, name):
    """Marks (and returns) the results of multi-output view function ``name`` (``"Split"``) as
    torch does: writing one in place while recording raises; ``output_nr`` reads the index."""
    for i, t in enumerate(views):
        if t._base is not None and t._view_creation is None:
            t._view_creation = (name, i)
    return views


def _creation_error(t, what):
    creation = t._view_creation
    if creation == "no_grad":
        return (f"A view was created in no_grad mode and {what} with grad mode enabled. Given that "
                "this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
                "code by moving both the view and the inplace either both inside the no_grad block "
                "(if you don't want the inplace to be tracked) or both outside (if you want the "
                "inplace to be tracked).")
    # torch names the op that made this view: the function's own output, or a view of it.
    name, index = creation
    if t._grad_fn is not None and t._grad_fn.name() != name + "Backward0":
        name, index = t._grad_fn.name().removesuffix("Backward0"), 0
    return (f"Output {index} of {name} is a view and {what}. This view is the output of a function that returns "
            "multiple views. Such functions do not allow the output views to be modified inplace. "
            "You should replace the inplace operation by an out-of-place one.")


def replay(x, chain):
    """Applies a view chain to a backend array or a Tensor (the view ops accept both)."""
    for op, attrs in chain:
        x = apply(op, x, **attrs) if isinstance(x, _Tensor) else op.forward(x, **attrs)
    return x


def refresh_view(t):
    """A view whose storage was written in place since its history was set (through its base
    or another view) gets its history remade from the base's, as torch regenerates a view's
    grad_fn when the version counter moved: its gradient then flows through the write, also
    when the view had no history before (its base was given one by the write). Tensor's
    ``grad_fn`` and ``requires_grad`` call this on a stale view."""
    t._view_version = t._versions[0]
    base = t._base
    if base is not None and base.requires_grad and base.grad_fn is not None:
        if t._view_creation is not None:
            raise RuntimeError(_creation_error(t, "its base or another view of its base has "
                                                                 "been modified inplace"))
        recording, STATE.enabled = STATE.enabled, True  # the history exists in any grad mode
        try:
            rebuilt = replay(base, t._view_chain)
        finally:
            STATE.enabled = recording
        old = t._grad_fn
        t._grad_fn, t._output_nr, t._requires_grad = rebuilt._grad_fn, rebuilt._output_nr, True
        if t._retains_grad:
            t._move_retain(old)


class ZeroLink(Op):
    """``grad`` unchanged, recorded as depending on ``inputs`` with derivative 0."""
    promote = None
    save_inputs = False
    infer = classmethod(like_input)

    @staticmethod
    def forward(grad, *inputs):
        return grad.copy()

    @staticmethod
    def backward(ctx, g):
        return (g,) + tuple(g.new_zeros(shape) for shape in ctx.shapes[1:])


def zero_link(grad, *inputs):
    """``grad`` tied to ``inputs`` under ``create_graph``: an op whose derivative depends on
    its input only through comparisons (relu's mask, hardtanh's bounds) still gives a gradient
    in the input's graph, so a second derivative is zeros rather than an error, as in PyTorch."""
    return apply(ZeroLink, grad, *inputs) if STATE.enabled else grad


def _results(op, inputs, attrs, results, arrays):
    """The tensors of a multi-result op, all recorded on one node (``_output_nr`` tells them
    apart for the engine). A result may be None (a gradient that is not wanted, an LSTM's
    cell state that a GRU layer lacks)."""
    outs = tuple(None if r is None else _Tensor._make(r if type(r) is _ndarray else _backend.as_array(r, *arrays))
                 for r in results)
    if STATE.enabled and op.differentiable and any(
            isinstance(x, _Tensor) and x.requires_grad for x in inputs):
        record(op, inputs, attrs, outs)
    return outs


def _observed_apply(op, inputs, attrs):
    """``apply`` between the observers' enter and exit calls; ops run inside it (none do today)
    are part of this op, not separate events."""
    observers = tuple(OBSERVERS)
    for o in observers:  # (one may give other inputs and attrs to run the op on)
        inputs, attrs = o.op_enter(op, inputs, attrs) or (inputs, attrs)
    _observing.inside = True
    out = None
    try:
        out = apply(op, *inputs, **attrs)
    finally:
        _observing.inside = False
        for o in reversed(observers):
            o.op_exit(op, inputs, attrs, out)
    return out


_NODE_CLASSES = {}


def node_class(name):
    """The ``OpNode`` subclass named as torch's ``type(y.grad_fn).__name__`` (``MulBackward0``), made once;
    ``name()`` keeps a C++ namespace (``torch::autograd::NotImplemented``, the class ``NotImplemented``)."""
    if name not in _NODE_CLASSES:
        short = name.rpartition("::")[2]
        _NODE_CLASSES[name] = type(short, (OpNode,), {"__slots__": (), "qualified_name": name if "::" in name else None})
    return _NODE_CLASSES[name]


def named(t, name):
    """``t`` with its ``grad_fn`` renamed ``name``: a composite function (``mean`` is a sum
    divided) shows the node PyTorch's primitive would (``MeanBackward0``)."""
    node = t._grad_fn  # a fresh result: its history is current
    if node is not None and isinstance(node, OpNode):
        node.__class__ = node_class(name)
    return t


def reads_indices(t, indices):
    """``t``, whose node reads the index tensors ``indices`` in its backward through its attrs
    (arrays, not inputs): the node keeps their versions, so that writing one in place before
    the backward raises torch's RuntimeError instead of scattering the gradient elsewhere."""
    node = t._grad_fn if type(t) is _Tensor else None
    if node is None or not isinstance(node, OpNode) or not indices:
        return t
    readers = getattr(node.op, "index_read_by", None)  # the inputs whose gradients read the index
    if readers is not None and not any(node.needs_input_grad[k] for k in readers):
        return t
    node.index_versions = saved_versions(indices)
    return t


def record(op, inputs, attrs, t):
    """Puts ``op`` on ``inputs`` on the tape with fresh result(s) ``t``, as :func:`apply` does
    (forward mode records an op it has run, onto its own leaves: ``autograd.forward_ad``)."""
    needs, nexts = [], []
    for x in inputs:
        if isinstance(x, _Tensor) and x.requires_grad:
            needs.append(True)
            # gradient_edge(x), inlined: a call per input costs add_tiny_grad ~6% (3.47 vs 3.70 us)
            node = x.grad_fn
            if node is None:
                node = x._node
                if node is None and x._requires_grad:  # (else a view requiring grad through its base: no edge)
                    node = x._node = AccumulateGrad(x)
                nexts.append((node, 0))
            else:
                nexts.append((node, x._output_nr))
        else:
            needs.append(False)
            nexts.append((None, 0))
    node = node_class(torch_name(op, inputs, attrs))(op, inputs, attrs, tuple(nexts), tuple(needs), t, _Tensor)
    if type(t) is tuple:  # fresh results: their slots are set directly
        for i, out in enumerate(t):
            if out is not None and out.dtype.is_inexact:
                out._grad_fn, out._requires_grad, out._output_nr = node, True, i
    else:
        t._grad_fn = node
        t._requires_grad = True


_conjugate, _negative = _backend.kernel("conjugate"), _backend.kernel("negative")


def _region(x, chain):
    """The part of the array ``x`` that ``chain`` selects, as a view to write into, and how a
    value written through the chain is stored there. A conj view selects the same elements
    conjugated, so its values are stored conjugated (and the imaginary parts of a conjugate,
    negated); the other view ops select without changing values."""
    stored = _same
    for op, attrs in chain:
        if op.name == "Conj":
            stored = _same if stored is _conjugate else _conjugate
            continue
        if op.name == "Imag" and stored is _conjugate:
            stored = _negative
        elif op.name == "Real":
            stored = _same
        x = op.forward(x, **attrs)
    return x, stored


def _same(value):
    return value


class CopySlices(Op):
    """``base`` with the region that ``chain`` selects replaced by ``value``: what
    :func:`write_into` records for a write into a view of a tensor whose history is recorded
    (the base's new value is the old base with the view's region replaced). The view
    remembers how it was made from its base (``_view_chain``: the view ops and their
    arguments), so the same chain addresses the region in the forward kernel, in the
    gradient, and in the rebuilt view."""
    promote = None
    save_inputs = False
    infer = classmethod(like_input)

    @staticmethod
    def forward(base, value, chain):
        out = base.copy()
        region, stored = _region(out, chain)
        if not region.flags.writeable:
            raise RuntimeError("unsupported operation: this view cannot be written to in place "
                               "while its history is recorded (clone() it first)")
        region[...] = stored(value)
        return out

    @staticmethod
    def backward(ctx, g):
        chain = ctx.attrs["chain"]
        # A real zero: the region may be the real or imaginary parts of a complex gradient.
        zero = g.new_zeros((), dtype=g.dtype.to_real())
        gbase = apply(CopySlices, g, zero, chain=chain) if ctx.needs_input_grad[0] else None
        gvalue = replay(g, chain) if ctx.needs_input_grad[1] else None
        return gbase, gvalue


def write_into(self, result, overlapping=False):
    """Copies ``result`` into ``self`` as an in-place update: checks dtype and shape, bumps the
    version counter, and moves ``self``'s history onto the result's node. ``overlapping``: the
    write is well defined where elements of ``self`` share memory (a fill). RuntimeError for a
    leaf that requires grad (while recording), for a view made under no_grad or by a
    multi-output function (split, unbind) while recording."""
    base = self._base
    recorded = STATE.enabled and base is not None and (result.requires_grad or base.requires_grad)
    through_view = recorded and self._view_chain is not None
    if self._view_creation is not None and (through_view or recorded and type(self._view_creation) is tuple):
        raise RuntimeError(_creation_error(self, "is being modified inplace"))  # (a split of a detached alias too)
    if STATE.enabled and self.requires_grad:
        if self.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        if not result.requires_grad and self._view_chain is None:
            # The new value does not depend on the old one (copy_, fill_, eq_): PyTorch keeps
            # ``self`` in the graph with a zero gradient rather than its old history attached.
            result = apply(ZeroLink, result, self)
    if result.dtype is not self.dtype:
        if not can_cast(result.dtype, self.dtype):
            raise RuntimeError(f"result type {_type_name(result.dtype)} can't be cast to the "
                               f"desired output type {_type_name(self.dtype)}")
    if result._data.shape != self._data.shape:
        try:
            target = _backend.broadcast_shapes(result.shape, self.shape)
        except ValueError:
            target = None
        if target != self.shape:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast "
                               f"shape {list(result.shape)}")
    meta = type(self._data) is MetaArray  # no data to write: the shapes were checked
    if type(result._data) is MetaArray and not meta:
        raise NotImplementedError(NO_DATA)
    if not meta and type(self._data) is not _backend.SparseCOO and (  # sparse storage is rewritten whole
            not self._data.flags.writeable or not overlapping and _backend.overlaps_itself(self._data)):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor "
                           "refers to a single memory location. Please clone() the tensor before "
                           "performing the operation.")
    if through_view:
        if base.requires_grad and base.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        if result.dtype is not self.dtype:
            result = result.to(self.dtype)
        new_base = apply(CopySlices, base._alias_with_history(), result, chain=self._view_chain)
    if not meta:
        _backend.copy_into(self._data, result._data)
    if conj_views.VIEWS:
        conj_views.sync(self._data)
    self._versions[0] += 1
    if OBSERVERS:
        for o in tuple(OBSERVERS):
            if hasattr(o, "op_write"):
                o.op_write(self, result)
    if through_view:
        base.grad_fn = new_base.grad_fn
        base.requires_grad = True
        rebuilt = replay(base, self._view_chain)
        self.grad_fn = rebuilt.grad_fn
        self.requires_grad = True
        self._view_version = self._versions[0]
    elif result.requires_grad:
        self.grad_fn = result.grad_fn
        self.requires_grad = True


_NAMES = SCALAR_TYPE_NAMES  # imported by the modules that name dtypes in torch's messages


def _type_name(dtype):
    return _NAMES[dtype.name]

