"""Tensor: a thin handle on a backend array (``torch.Tensor``).

A Tensor holds its array, dtype, ``requires_grad``, ``grad``, ``grad_fn`` and a version counter
(a one-element list shared with its views, bumped by every in-place op). Everything it
computes goes through the public op functions of :mod:`ember._ops`: the table at the bottom
of this file binds each method and operator to the function it runs.
"""
import sys

import numpy as np

from . import _dtype, _layout, _memory_format
from ._backend import shared as _shared
from ._backend.sparse import SparseCOO
from ._memory import track as _track
from ._ops import core as _core
from ._print import tensor_repr
from ._size import Size
from ._tensor_autograd import TensorAutograd
from ._tensor_conversions import TensorConversions
from ._tensor_subclass import TensorSubclassing

__all__ = ["Tensor"]


@_core.tensor_class
class Tensor(TensorSubclassing, TensorAutograd, TensorConversions):
    """A multi-dimensional array with autograd (https://pytorch.org/docs/stable/tensors.html).

    Construct tensors with :func:`ember.tensor` and the creation functions; ``Tensor(data)``
    with a list or array, or ``Tensor(*sizes)`` for an uninitialised float tensor, also work.
    """
    # _view_chain: on views, how to remake the view from its base (the view ops and their
    # arguments); None elsewhere. _view_creation: on views that torch forbids writing in place,
    # why (core.link_view). _is_buffer and persistent: the marks ``nn.Buffer`` sets.
    __slots__ = ("_data", "dtype", "_requires_grad", "_grad", "_grad_fn", "_versions", "_base",
                 "_view_chain", "_view_version", "_view_creation", "_node", "_retains_grad", "_output_nr", "_is_buffer", "persistent",
                 "__weakref__")
    __array_priority__ = 1000  # numpy scalars defer to Tensor's reflected operators

    def __new__(cls, *args, **kwargs):
        # The legacy constructor: Tensor(data) or Tensor(*sizes), always the default float dtype.
        self = object.__new__(cls)
        default = _dtype.get_default_dtype().np
        if len(args) == 1 and hasattr(args[0], "_as_tensor"):  # a storage: its memory, shared
            data = args[0]._as_tensor(_dtype.get_default_dtype(), "argument")._data
        elif len(args) == 1 and not isinstance(args[0], int):
            src = args[0]._data if isinstance(args[0], Tensor) else args[0]
            data = np.array(src, dtype=default)
        else:
            data = np.empty(args, dtype=default)
        Tensor._init(self, data)
        return self

    def __init__(self, *args, **kwargs):
        pass

    @staticmethod
    def _init(self, data, requires_grad=False):
        _track(data)
        self._data = data
        self.dtype = _dtype.from_numpy_dtype(data.dtype)
        self._requires_grad = requires_grad
        self._grad = None
        self._grad_fn = None
        self._versions = [0]
        self._base = None
        self._view_chain = None
        self._view_creation = None
        self._node = None
        self._retains_grad = False
        self._output_nr = 0

    @classmethod
    def _make(cls, data):
        _track(data)
        t = object.__new__(Tensor)
        t._data = data
        try:
            t.dtype = _DTYPES[data.dtype]
        except KeyError:  # (bfloat16 before ember's first use: an ml_dtypes array; a dtype ember lacks)
            t.dtype = _dtype.from_numpy_dtype(data.dtype)
        t._requires_grad = False
        t._grad = None
        t._grad_fn = None
        t._versions = [0]
        t._base = None
        t._view_chain = None
        t._view_creation = None
        t._node = None
        t._retains_grad = False
        t._output_nr = 0
        return t

    def _snapshot(self):
        """A copy of the current values that carries this tensor's history."""
        t = self._alias_with_history()
        t._data = self._data.copy()
        _track(t._data)
        t._versions = [0]
        t._base = None
        return t

    # ---- attributes -------------------------------------------------------------------------
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        """The shape as a ``torch.Size``, or the size of dimension ``dim``; IndexError outside the dims."""
        if dim is None:
            return self.shape
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    def dim(self):
        """The number of dimensions (``ndimension``, ``ndim``)."""
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self):
        return self._data.ndim

    def numel(self):
        """The number of elements (``nelement``)."""
        return self._data.size

    nelement = numel

    @property
    def is_cuda(self):
        return False

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def data(self):
        return self.detach()

    @data.setter
    def data(self, value):
        self._data = value._data
        self.dtype = value.dtype

    @property
    def is_sparse(self):
        return type(self._data) is SparseCOO

    @property
    def layout(self):
        return _layout.sparse_coo if type(self._data) is SparseCOO else _layout.strided

    def element_size(self):
        """The size of one element in bytes."""
        return self._data.itemsize

    @property
    def itemsize(self):
        return self._data.itemsize

    @property
    def nbytes(self):
        return self._data.nbytes

    def stride(self, dim=None):
        """The step in elements between neighbours along each dim (a tuple), or along ``dim``."""
        # course:begin 01/strides
        # hint: self._data.strides are in bytes; torch counts elements; dim picks one (negative dims wrap);
        # hint: NumPy may give a tensor with no elements zero strides: torch's are then those of
        # hint: a contiguous one, sizes of 0 counted as 1
        if self._data.size or any(self._data.strides):  # (an empty view keeps its creation's)
            strides = tuple(s // self._data.itemsize for s in self._data.strides)
        else:  # NumPy gives a new empty array zero strides; torch, the contiguous ones
            strides, step = [], 1
            for size in reversed(self._data.shape):
                strides.append(step)
                step *= max(size, 1)
            strides = tuple(reversed(strides))
        return strides if dim is None else strides[_wrap_dim(dim, self._data.ndim)]
        # course:end 01/strides

    def storage_offset(self):
        """Where this tensor's first element lies in its storage, in elements."""
        return (self._data.__array_interface__["data"][0]
                - _shared.owner(self._data).__array_interface__["data"][0]) // self._data.itemsize

    def data_ptr(self):
        """The address of the first element (an int)."""
        return self._data.__array_interface__["data"][0]

    def is_contiguous(self, memory_format=_memory_format.contiguous_format):
        """Whether the elements lie in memory in row-major order (or ``memory_format``'s:
        ``channels_last`` NHWC, ``channels_last_3d`` NDHWC) without gaps."""
        return _memory_format.is_contiguous(self._data, _memory_format.checked(memory_format, "is_contiguous"))

    def is_floating_point(self):
        """Whether the dtype is a floating-point one."""
        return self.dtype.is_floating_point

    def is_complex(self):
        """Whether the dtype is complex64 or complex128."""
        return self.dtype.is_complex

    def get_device(self):
        """-1: the tensor is on the CPU (a CUDA tensor's index otherwise, in PyTorch)."""
        return -1

    def share_memory_(self):
        """Moves this tensor's storage into shared memory, where processes it is sent to (through
        ``ember.multiprocessing``) read and write the same values; its views and aliases (``view``,
        slices, ``detach``, ``.data``) move with it, as torch moves the storage under all of them.
        Returns self (https://pytorch.org/docs/stable/generated/torch.Tensor.share_memory_.html).
        RuntimeError if something other than tensors (an array from ``numpy()``, a compiled
        graph) holds the memory: it could not follow the move."""
        owner = _shared.owner(self._data)
        if _shared.is_shared(owner):
            return self
        # held only by this tensor's slot (besides the name and getrefcount's argument): no search
        alone = self._data is owner and sys.getrefcount(owner) <= 3
        tensors = [self] if alone else _shared.holders(owner, Tensor)
        arrays = list({id(t._data): t._data for t in tensors}.values())
        moved = dict(zip(map(id, arrays), _shared.move(arrays)))
        _track(next(iter(moved.values())))
        for t in tensors:
            t._data = moved[id(t._data)]
        return self

    def is_shared(self):
        """Whether this tensor's values are in shared memory (``share_memory_``)."""
        return _shared.is_shared(self._data)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (type(self), self._data, self.requires_grad), getattr(self, "__dict__", None) or None)

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                               "the deepcopy protocol at the moment.")
        import copy
        t = object.__new__(type(self))
        Tensor._init(t, self._data.copy(order="K"), self.requires_grad)  # its layout kept, as torch's clone
        memo[id(self)] = t
        if self.grad is not None:
            t.grad = copy.deepcopy(self.grad, memo)
        if hasattr(self, "__dict__"):  # a subclass's attributes (a Parameter's, say)
            t.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return t

    # ---- printing ---------------------------------------------------------------------------
    def __repr__(self):
        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return format(repr(self), spec)


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def _rebuild(cls, data, requires_grad):
    t = object.__new__(cls)
    Tensor._init(t, data, requires_grad)
    return t


_DTYPES = _dtype._FROM_NP  # (one dict: bfloat16 joins it on its first use)

# ---- the method and operator table ---------------------------------------------------------------
# Every method and operator of Tensor, bound to the public function it runs; each function is
# defined once, with its op entry, in ember._ops (and ember._creation / ember._random). They are
# imported after the class because they need it.
from ._ops import compare as _compare, complex as _complex  # noqa: E402
from ._ops import gather as _gather, indexing as _indexing  # noqa: E402
from ._ops import inplace as _inplace, join as _join, splits as _splits  # noqa: E402
from ._ops import linalg as _linalg  # noqa: E402
from ._ops import clamp as _clamp, pointwise_binary as _binary  # noqa: E402
from ._ops import pointwise_float as _float  # noqa: E402
from ._ops import positions as _positions  # noqa: E402
from ._ops import pointwise_unary as _unary  # noqa: E402
from ._ops import reduce as _reduce  # noqa: E402
from ._ops import shape as _shape, variance as _variance  # noqa: E402
from ._ops import parser as _parser, softmax as _softmax, sort as _sort  # noqa: E402
from ._ops import numeric as _numeric, numpy_operands as _numpy_operands  # noqa: E402
from ._ops import special as _special  # noqa: E402
from ._ops import scan as _scan  # noqa: E402
from ._ops import statistics as _statistics  # noqa: E402
from ._ops import arrange as _arrange  # noqa: E402
from ._ops import products as _products  # noqa: E402
from ._ops import scatter_reduce as _scatter_reduce  # noqa: E402
from ._ops import covariance as _covariance  # noqa: E402
from ._ops import sparse as _sparse  # noqa: E402
from ._ops import restride as _restride  # noqa: E402
from . import _creation, _linalg_legacy, _random, _sampling  # noqa: E402
from . import functional as _functional  # noqa: E402
from . import _tensor_extras  # noqa: E402


# ``number / t`` is ``t.reciprocal() * number`` (torch's ``__rtruediv__``: rounded twice, a
# MulBackward0 node), below; the other reflected operators call their function. Each declines a
# NumPy array as torch's (``_ops/numpy_operands.py``: NumPy computes ``x + nd``, ``nd + x`` is a TypeError).
def _reflected(function):
    """``other <op> self`` for the reflected operators (``2 - t`` calls ``t.__rsub__(2)``)."""
    ndarray = np.ndarray

    def reflected(self, other):
        if isinstance(other, ndarray):
            return NotImplemented
        return function(other, self)
    reflected.__name__ = f"r{function.__name__}"
    return reflected


def _arithmetic(op, check=None):
    """``Tensor.__add__`` (``__sub__``, ``__mul__``: ``op``): ``add(self, other)`` without its alpha
    and out, in one call, ``check`` first (sub's refusal of bool)."""
    apply, ndarray = _core.apply, np.ndarray

    def slot(self, other):
        if isinstance(other, ndarray):
            return NotImplemented
        if check is not None:
            check(self, other)
        return apply(op, self, other)
    return slot


def _documented(function, doc):
    """``function`` (an adapter in the table below that reorders its function's arguments) with
    the docstring ``doc``."""
    function.__doc__ = doc
    return function


def _no_cuda(self, *args, **kwargs):
    """``Tensor.cuda``: AssertionError, ember has no CUDA device (as a CPU-only PyTorch)."""
    raise AssertionError("Torch not compiled with CUDA enabled")


def _invert(self):
    return _compare.logical_not(self) if self.dtype is _dtype.bool else _compare.bitwise_not(self)


_METHODS = {
    "add": _binary.add, "sub": _binary.sub, "mul": _binary.mul, "div": _binary.div,
    "true_divide": _binary.true_divide, "floor_divide": _binary.floor_divide,
    "remainder": _binary.remainder, "fmod": _binary.fmod, "pow": _binary.pow,
    "atan2": _float.atan2, "arctan2": _float.arctan2, "hypot": _float.hypot,
    "logaddexp2": _float.logaddexp2, "maximum": _binary.maximum,
    "minimum": _binary.minimum, "fmax": _binary.fmax, "fmin": _binary.fmin, "lerp": _float.lerp,
    "addcmul": _float.addcmul, "addcdiv": _float.addcdiv, "clamp": _clamp.clamp,
    "clip": _clamp.clip, "clamp_min": _clamp.clamp_min, "clamp_max": _clamp.clamp_max,
    "subtract": _binary.subtract, "multiply": _binary.multiply, "divide": _binary.divide,
    "rsub": _binary.rsub, "float_power": _binary.float_power,
    "unfold": _shape.unfold, "positive": _unary.positive, "frexp": _numeric.frexp,
    "neg": _unary.neg, "negative": _unary.negative, "abs": _unary.abs, "absolute": _unary.absolute,
    "sign": _unary.sign, "sgn": _complex.sgn, "angle": _complex.angle, "conj": _complex.conj,
    "conj_physical": _complex.conj_physical, "resolve_conj": _complex.resolve_conj,
    "resolve_neg": _complex.resolve_neg, "is_neg": _complex.is_neg, "is_conj": _complex.is_conj, "adjoint": _complex.adjoint,
    "isreal": _complex.isreal,
    "exp": _unary.exp, "expm1": _unary.expm1, "log": _unary.log,
    "log2": _unary.log2, "log10": _unary.log10, "log1p": _unary.log1p, "sqrt": _unary.sqrt,
    "rsqrt": _unary.rsqrt, "reciprocal": _unary.reciprocal, "sin": _unary.sin, "cos": _unary.cos,
    "tan": _unary.tan, "asin": _unary.asin, "acos": _unary.acos, "atan": _unary.atan,
    "arcsin": _unary.arcsin, "arccos": _unary.arccos, "arctan": _unary.arctan, "sinh": _unary.sinh,
    "cosh": _unary.cosh, "tanh": _unary.tanh, "sigmoid": _unary.sigmoid, "erf": _unary.erf, "floor": _unary.floor,
    "ceil": _unary.ceil, "trunc": _unary.trunc, "fix": _unary.fix, "frac": _unary.frac,
    "round": _unary.round, "relu": _unary.relu, "square": _unary.square,
    "nan_to_num": _unary.nan_to_num,
    "isnan": _compare.isnan, "isinf": _compare.isinf, "isfinite": _compare.isfinite,
    "logical_not": _compare.logical_not, "logical_and": _compare.logical_and,
    "logical_or": _compare.logical_or, "logical_xor": _compare.logical_xor,
    "bitwise_not": _compare.bitwise_not, "bitwise_and": _compare.bitwise_and,
    "bitwise_or": _compare.bitwise_or, "bitwise_xor": _compare.bitwise_xor, "eq": _compare.eq,
    "bitwise_left_shift": _compare.bitwise_left_shift,
    "bitwise_right_shift": _compare.bitwise_right_shift,
    "ne": _compare.ne, "lt": _compare.lt, "le": _compare.le, "gt": _compare.gt, "ge": _compare.ge,
    "greater": _compare.greater, "greater_equal": _compare.greater_equal, "less": _compare.less,
    "less_equal": _compare.less_equal, "not_equal": _compare.not_equal,
    "isclose": _compare.isclose, "allclose": _compare.allclose, "equal": _compare.equal,
    "sum": _reduce.sum, "nansum": _reduce.nansum, "mean": _reduce.mean, "nanmean": _reduce.nanmean,
    "prod": _reduce.prod, "var": _variance.var, "std": _variance.std, "amax": _reduce.amax,
    "amin": _reduce.amin, "max": _reduce.max, "min": _reduce.min, "argmax": _reduce.argmax,
    "argmin": _reduce.argmin, "cumsum": _reduce.cumsum, "cumprod": _reduce.cumprod,
    "all": _reduce.all, "any": _reduce.any, "count_nonzero": _reduce.count_nonzero,
    "logsumexp": _softmax.logsumexp, "softmax": _softmax.softmax,
    "log_softmax": _softmax.log_softmax,
    "norm": _linalg_legacy.norm, "dist": _linalg.dist, "matmul": _linalg.matmul, "mm": _linalg.mm,
    "bmm": _linalg.bmm, "mv": _linalg.mv, "addmm": _linalg.addmm, "baddbmm": _linalg.baddbmm,
    "dot": _linalg.dot, "inner": _linalg.inner, "outer": _linalg.outer, "ger": _linalg.ger,
    "reshape": _shape.reshape, "view": _shape.view, "view_as": _shape.view_as,
    "reshape_as": _shape.reshape_as, "flatten": _shape.flatten, "ravel": _shape.ravel,
    "unflatten": _shape.unflatten, "squeeze": _shape.squeeze, "unsqueeze": _shape.unsqueeze,
    "permute": _shape.permute, "transpose": _shape.transpose, "swapaxes": _shape.swapaxes,
    "swapdims": _shape.swapdims, "t": _shape.t, "movedim": _shape.movedim,
    "moveaxis": _shape.moveaxis, "expand": _shape.expand, "expand_as": _shape.expand_as,
    "broadcast_to": _shape.broadcast_to, "sum_to_size": _shape.sum_to_size,
    "contiguous": _shape.contiguous, "clone": _shape.clone,
    "repeat": _join.repeat, "repeat_interleave": _join.repeat_interleave,
    "tile": _join.tile,
    "narrow": _join.narrow, "select": _join.select, "split": _splits.split_method, "chunk": _splits.chunk,
    "tensor_split": _join.tensor_split, "unbind": _splits.unbind, "flip": _join.flip,
    "fliplr": _join.fliplr, "flipud": _join.flipud, "roll": _join.roll, "tril": _join.tril,
    "triu": _join.triu, "diagonal": _join.diagonal, "diagonal_scatter": _join.diagonal_scatter,
    "diag_embed": _join.diag_embed, "diag": _join.diag, "trace": _join.trace,
    "diagflat": _join.diagflat, "hsplit": _join.hsplit, "vsplit": _join.vsplit, "dsplit": _join.dsplit,
    "split_with_sizes": _splits.split_with_sizes, "unsafe_split": _splits.unsafe_split,
    "unsafe_chunk": _splits.unsafe_chunk, "select_scatter": _join.select_scatter,
    "slice_scatter": _join.slice_scatter,
    "index_put": _indexing.index_put, "gather": _gather.gather, "scatter": _scatter_reduce.scatter,
    "scatter_add": _gather.scatter_add, "index_select": _indexing.index_select,
    "index_add": _indexing.index_add, "index_fill": _indexing.index_fill,
    "index_copy": _indexing.index_copy, "masked_fill": _indexing.masked_fill,
    "masked_select": _indexing.masked_select, "masked_scatter": _indexing.masked_scatter,
    "take": _indexing.take, "take_along_dim": _indexing.take_along_dim, "put": _indexing.put,
    "as_strided": _restride.as_strided,
    "nonzero": _positions.nonzero, "argwhere": _positions.argwhere,
    "argsort": _sort.argsort, "sort": _sort.sort, "msort": _sort.msort, "topk": _sort.topk,
    "kthvalue": _sort.kthvalue, "median": _sort.median, "unique": _sort.unique,
    "bincount": _sort.bincount, "histc": _sort.histc, "histogram": _sort.histogram,
    "bernoulli": _sampling.bernoulli, "multinomial": _sampling.multinomial,
    "to": _creation.to, "new_zeros": _creation.new_zeros, "new_ones": _creation.new_ones,
    "new_empty": _creation.new_empty, "new_full": _creation.new_full,
    "new_tensor": _creation.new_tensor,
    "where": _binary.where_method,
    "float": _creation.cast_to(_dtype.float32), "double": _creation.cast_to(_dtype.float64),
    "half": _creation.cast_to(_dtype.float16), "long": _creation.cast_to(_dtype.int64),
    "int": _creation.cast_to(_dtype.int32), "short": _creation.cast_to(_dtype.int16),
    "char": _creation.cast_to(_dtype.int8), "byte": _creation.cast_to(_dtype.uint8),
    "bool": _creation.cast_to(_dtype.bool), "bfloat16": _creation.cast_to(_dtype.bfloat16),
    "cfloat": _creation.cast_to(_dtype.complex64), "cdouble": _creation.cast_to(_dtype.complex128),
    "det": _linalg_legacy.det, "logdet": _linalg_legacy.logdet, "slogdet": _linalg_legacy.slogdet,
    "inverse": _linalg_legacy.inverse, "pinverse": _linalg_legacy.pinverse,
    "cholesky": _linalg_legacy.cholesky, "cholesky_solve": _linalg_legacy.cholesky_solve,
    "cholesky_inverse": _linalg_legacy.cholesky_inverse, "svd": _linalg_legacy.svd,
    "qr": _linalg_legacy.qr, "matrix_exp": _linalg_legacy.matrix_exp,
    "matrix_power": _linalg_legacy.matrix_power, "triangular_solve": _linalg_legacy.triangular_solve,
    "geqrf": _linalg_legacy.geqrf, "lu": _linalg_legacy.lu, "lu_solve": _linalg_legacy.lu_solve,
    "orgqr": _linalg_legacy.orgqr, "ormqr": _linalg_legacy.ormqr,
    "to_sparse": _sparse.to_sparse, "to_sparse_coo": _sparse.to_sparse_coo,
    "to_dense": _sparse.to_dense, "coalesce": _sparse.coalesce,
    "is_coalesced": _sparse.is_coalesced, "indices": _sparse.indices,
    "values": _sparse.values, "_indices": _sparse.raw_indices, "_values": _sparse.raw_values,
    "_nnz": _sparse.nnz, "sparse_dim": _sparse.sparse_dim, "dense_dim": _sparse.dense_dim,
    "cpu": _documented(lambda self, memory_format=None: _creation.to(self, "cpu"),
                       "``self`` (ember computes on the CPU); NotImplementedError for a meta tensor."),
    "cuda": _no_cuda,
    "pin_memory": _documented(lambda self: self, "``self``: ember has no device to pin host memory for."),
    "asinh": _special.asinh, "acosh": _special.acosh, "atanh": _special.atanh,
    "arcsinh": _special.arcsinh, "arccosh": _special.arccosh, "arctanh": _special.arctanh,
    "exp2": _special.exp2, "erfc": _special.erfc, "erfinv": _special.erfinv,
    "logit": _special.logit, "sinc": _special.sinc, "lgamma": _special.lgamma,
    "digamma": _special.digamma, "polygamma": _documented(lambda self, n: _special.polygamma(n, self),
                                                  "``torch.polygamma(n, self)``: the n-th derivative of digamma."),
    "i0": _special.i0, "deg2rad": _special.deg2rad, "rad2deg": _special.rad2deg,
    "xlogy": _special.xlogy, "logaddexp": _float.logaddexp,
    "copysign": _numeric.copysign, "ldexp": _numeric.ldexp, "nextafter": _numeric.nextafter,
    "signbit": _numeric.signbit, "isposinf": _numeric.isposinf, "isneginf": _numeric.isneginf,
    "heaviside": _numeric.heaviside, "gcd": _numeric.gcd, "lcm": _numeric.lcm,
    "cummax": _scan.cummax, "cummin": _scan.cummin, "logcumsumexp": _scan.logcumsumexp,
    "diff": _scan.diff, "aminmax": _statistics.aminmax, "mode": _statistics.mode,
    "nanmedian": _statistics.nanmedian, "quantile": _statistics.quantile,
    "nanquantile": _statistics.nanquantile,
    "rot90": _arrange.rot90, "kron": _arrange.kron, "addmv": _products.addmv,
    "addbmm": _products.addbmm, "addr": _products.addr, "renorm": _products.renorm,
    "vdot": _linalg.vdot, "type_as": _documented(lambda self, other: _creation.to(self, other.dtype),
                                                    "``self`` in ``other``'s dtype (``self.to(other.dtype)``)."),
    "scatter_reduce": _scatter_reduce.scatter_reduce, "index_reduce": _scatter_reduce.index_reduce,
    "cross": _linalg_legacy.cross, "cov": _covariance.cov, "corrcoef": _covariance.corrcoef,
    "stft": _functional.stft, "istft": _functional.istft,
}

# In-place forms: the same functions, with the result written into ``self``.
_IN_PLACE = {
    "add_": _binary.add, "sub_": _binary.sub, "mul_": _binary.mul, "div_": _binary.div,
    "true_divide_": _binary.true_divide, "floor_divide_": _binary.floor_divide,
    "remainder_": _binary.remainder, "fmod_": _binary.fmod, "pow_": _binary.pow,
    "atan2_": _float.atan2, "hypot_": _float.hypot, "lerp_": _float.lerp,
    "addcmul_": _float.addcmul,
    "addcdiv_": _float.addcdiv, "clamp_": _clamp.clamp, "clip_": _clamp.clip,
    "clamp_min_": _clamp.clamp_min, "clamp_max_": _clamp.clamp_max,
    "subtract_": _binary.subtract, "multiply_": _binary.multiply, "divide_": _binary.divide,
    "neg_": _unary.neg, "abs_": _complex.abs_for_in_place, "sign_": _unary.sign, "sgn_": _complex.sgn,
    "conj_physical_": _complex.conj_physical, "exp_": _unary.exp,
    "expm1_": _unary.expm1, "log_": _unary.log, "log2_": _unary.log2, "log10_": _unary.log10,
    "log1p_": _unary.log1p, "sqrt_": _unary.sqrt, "rsqrt_": _unary.rsqrt,
    "reciprocal_": _unary.reciprocal, "sin_": _unary.sin, "cos_": _unary.cos, "tan_": _unary.tan,
    "asin_": _unary.asin, "acos_": _unary.acos, "atan_": _unary.atan, "sinh_": _unary.sinh,
    "arcsin_": _unary.asin, "arccos_": _unary.acos, "arctan_": _unary.atan, "negative_": _unary.neg,
    "fix_": _unary.trunc,
    "cosh_": _unary.cosh, "tanh_": _unary.tanh, "sigmoid_": _unary.sigmoid, "erf_": _unary.erf, "floor_": _unary.floor,
    "ceil_": _unary.ceil, "trunc_": _unary.trunc, "frac_": _unary.frac, "round_": _unary.round,
    "relu_": _unary.relu, "square_": _unary.square, "nan_to_num_": _unary.nan_to_num,
    "logical_not_": _compare.logical_not, "logical_and_": _compare.logical_and,
    "logical_or_": _compare.logical_or, "bitwise_and_": _compare.bitwise_and,
    "bitwise_or_": _compare.bitwise_or, "bitwise_xor_": _compare.bitwise_xor, "eq_": _compare.eq,
    "bitwise_left_shift_": _compare.bitwise_left_shift,
    "bitwise_right_shift_": _compare.bitwise_right_shift,
    "ne_": _compare.ne, "lt_": _compare.lt, "le_": _compare.le, "gt_": _compare.gt,
    "ge_": _compare.ge,
    "cumsum_": _reduce.cumsum, "cumprod_": _reduce.cumprod,
    "tril_": _join.tril, "triu_": _join.triu,
    "scatter_": _scatter_reduce.scatter, "scatter_add_": _gather.scatter_add,
    "index_add_": _indexing.index_add, "index_fill_": _indexing.index_fill,
    "index_copy_": _indexing.index_copy, "masked_fill_": _indexing.masked_fill,
    "masked_scatter_": _indexing.masked_scatter,
    "asinh_": _special.asinh, "acosh_": _special.acosh, "atanh_": _special.atanh,
    "arcsinh_": _special.arcsinh, "arccosh_": _special.arccosh, "arctanh_": _special.arctanh,
    "exp2_": _special.exp2, "erfc_": _special.erfc, "erfinv_": _special.erfinv,
    "logit_": _special.logit, "sinc_": _special.sinc, "lgamma_": _special.lgamma,
    "digamma_": _special.digamma, "polygamma_": lambda self, n: _special.polygamma(n, self),
    "i0_": _special.i0, "deg2rad_": _special.deg2rad, "rad2deg_": _special.rad2deg,
    "xlogy_": _special.xlogy, "copysign_": _numeric.copysign, "ldexp_": _numeric.ldexp,
    "nextafter_": _numeric.nextafter, "heaviside_": _numeric.heaviside, "gcd_": _numeric.gcd,
    "lcm_": _numeric.lcm, "addmm_": _linalg.addmm, "baddbmm_": _linalg.baddbmm,
    "addmv_": _products.addmv, "addbmm_": _products.addbmm, "addr_": _products.addr,
    "renorm_": _products.renorm, "scatter_reduce_": _scatter_reduce.scatter_reduce,
    "index_reduce_": _scatter_reduce.index_reduce,
}

# Methods that only exist in place.
_IN_PLACE_ONLY = {
    "index_put_": _indexing.index_put_,
    "fill_": _inplace.fill_, "zero_": _inplace.zero_, "copy_": _inplace.copy_,
    "uniform_": _random.uniform_, "normal_": _random.normal_, "bernoulli_": _random.bernoulli_,
    "random_": _random.random_, "exponential_": _random.exponential_,
    "put_": _indexing.put_, "t_": _restride.t_, "squeeze_": _restride.squeeze_,
    "unsqueeze_": _restride.unsqueeze_, "resize_": _restride.resize_,
    "cauchy_": _random.cauchy_, "log_normal_": _random.log_normal_, "geometric_": _random.geometric_,
}

_OPERATORS = {  # (add, mul... past the argument parser's wrapper, _ops/parser.py: no extra call)
    "__add__": _arithmetic(_binary.Add), "__radd__": _reflected(_binary.add.__wrapped__),
    "__sub__": _arithmetic(_binary.Sub, _binary._check_sub), "__rsub__": _reflected(_binary.sub.__wrapped__),
    "__mul__": _arithmetic(_binary.Mul), "__rmul__": _reflected(_binary.mul.__wrapped__),
    "__truediv__": _binary.div, "__rtruediv__": lambda self, other: _unary.reciprocal(self) * other,  # (torch's: NumPy's for an array)
    "__floordiv__": _binary.floor_divide, "__rfloordiv__": _reflected(_binary.floor_divide),
    "__mod__": _binary.remainder, "__rmod__": _reflected(_binary.remainder),
    "__pow__": _binary.pow, "__rpow__": _reflected(_binary.pow),
    "__matmul__": _linalg.matmul.__wrapped__, "__rmatmul__": _reflected(_linalg.matmul.__wrapped__),
    "__and__": _compare.bitwise_and, "__rand__": _reflected(_compare.bitwise_and),
    "__or__": _compare.bitwise_or, "__ror__": _reflected(_compare.bitwise_or),
    "__xor__": _compare.bitwise_xor, "__rxor__": _reflected(_compare.bitwise_xor),
    "__lshift__": _compare.bitwise_left_shift,
    "__rlshift__": _reflected(_compare.bitwise_left_shift),
    "__rshift__": _compare.bitwise_right_shift,
    "__rrshift__": _reflected(_compare.bitwise_right_shift),
    **{f"__{n}__": _compare.operator_form(getattr(_compare, n).__wrapped__) for n in ("eq", "ne", "lt", "le", "gt", "ge")},
    "__neg__": _unary.neg, "__pos__": lambda self: self, "__abs__": _unary.abs, "__invert__": _invert,
    "__getitem__": _indexing.getitem, "__setitem__": _indexing.setitem,
    "__iadd__": "add_", "__isub__": "sub_", "__imul__": "mul_", "__itruediv__": "div_",
    "__ifloordiv__": "floor_divide_", "__imod__": "remainder_", "__ipow__": "pow_",
    "__iand__": "bitwise_and_", "__ior__": "bitwise_or_", "__ixor__": "bitwise_xor_",
    "__ilshift__": "bitwise_left_shift_", "__irshift__": "bitwise_right_shift_",
}

_PROPERTIES = {
    "H": _complex.conj_transpose,
    "real": _complex.real, "imag": _complex.imag, "is_xpu": lambda self: False,
}

for _name, _function in {**_METHODS, **_tensor_extras.METHODS}.items():
    setattr(Tensor, _name, _parser.method_form(_name, _function))
for _name, _function in {**_IN_PLACE, **_tensor_extras.IN_PLACE}.items():
    setattr(Tensor, _name, _inplace.inplace(_function))
for _name, _function in _IN_PLACE_ONLY.items():
    setattr(Tensor, _name, _function)
for _name, _function in _OPERATORS.items():  # augmented assignments name their in-place method
    _function = getattr(Tensor, _function) if isinstance(_function, str) else _function
    setattr(Tensor, _name, _function if _name in ("__getitem__", "__setitem__") else _numpy_operands.operator_slot(_name, _function))
for _name, _function in {**_PROPERTIES, **_tensor_extras.PROPERTIES}.items():
    setattr(Tensor, _name, property(_function))
del _name, _function


def _write_part(part):
    """The setter of ``Tensor.real``/``imag``: ``z.real = x`` copies ``x`` (a tensor or a number,
    broadcast) through the view, as torch does."""
    def set_part(self, value):
        view = part(self)
        view.copy_(value) if isinstance(value, Tensor) else view.fill_(value)
    return set_part


Tensor.real = Tensor.real.setter(_write_part(_complex.real))
Tensor.imag = Tensor.imag.setter(_write_part(_complex.imag))
