"""ember: a deep-learning framework with PyTorch's API, small enough to read.

``import ember as torch`` runs PyTorch programs that use the parts ember has. The map of the
code is DESIGN.md; each op is defined once in ``_ops``.
"""
# autograd first: its package holds the tape and the grad modes (below the ops: the ops record
# onto them) and, written on the ops, Function and gradcheck, which load ember._tensor and the
# op layer from there. Entered anywhere else, the ops would meet a half-loaded autograd package.
from . import autograd
from ._tensor import Tensor
# The op functions (some shadow builtins on purpose: ``ember.max``, ``ember.sum``, ...).
from ._ops.clamp import clamp, clamp_max, clamp_min, clip
from ._ops.pointwise_binary import (add, div, divide, float_power, floor_divide, fmax,
                                    fmin, fmod, maximum, minimum, mul,
                                    multiply, pow,
                                    remainder, rsub, sub, subtract, true_divide, where)
from ._ops.pointwise_float import addcdiv, addcmul, arctan2, atan2, hypot, lerp, logaddexp, logaddexp2
from ._ops.pointwise_unary import (abs, absolute, acos, arccos, arcsin, arctan, asin, atan, ceil,
                                   cos, cosh, erf, exp, expm1, fix, floor, frac, log, log10, log1p,
                                   log2, nan_to_num, neg, negative, positive, reciprocal, relu, round,
                                   rsqrt, sigmoid, sign, sin, sinh, sqrt, square, tan, tanh, trunc)
from ._ops.compare import (allclose, bitwise_and, bitwise_left_shift, bitwise_not, bitwise_or,
                           bitwise_right_shift, bitwise_xor, eq, equal,
                           ge, greater, greater_equal, gt, isclose, isfinite, isinf, isnan, le,
                           less, less_equal, logical_and, logical_not, logical_or, logical_xor, lt,
                           ne, not_equal)
from ._ops.reduce import (all, amax, amin, any, argmax, argmin, count_nonzero, cumprod, cumsum, max,
                          mean, min, nanmean, nansum, prod, sum)
from ._ops.variance import (std, std_mean, var, var_mean)
from ._ops.softmax import (log_softmax, logsumexp, softmax)
from ._ops.complex import (adjoint, angle, complex, conj, conj_physical, imag, is_conj, is_neg, isreal,
                           polar, real, resolve_conj, resolve_neg, sgn, view_as_complex, view_as_real)
from ._ops.linalg import (addmm, baddbmm, bmm, dist, dot, einsum, ger, inner, matmul, mm, mv,
                          outer, tensordot, vdot, vector_norm)
from ._ops.shape import (broadcast_shapes, broadcast_tensors, broadcast_to, clone, contiguous,
                         expand, expand_as, flatten, moveaxis, movedim, permute_function as permute, ravel,
                         reshape_function as reshape,
                         reshape_as, squeeze, sum_to_size, swapaxes, swapdims, t, transpose,
                         unflatten, unsqueeze, view, view_as)
from ._ops.join import (cartesian_prod, cat, concat, concatenate, diag, diag_embed, diagonal,
                        diagonal_scatter, flip, fliplr, flipud, hstack, meshgrid, narrow, repeat,
                        repeat_interleave, roll, select, stack, tensor_split, tile, trace,
                        tril, triu, vstack)
from ._ops.splits import (chunk, split, split_with_sizes, unbind, unsafe_chunk, unsafe_split,
                          unsafe_split_with_sizes)
from ._ops.gather import gather, scatter_add
from ._ops.indexing import (index_add, index_copy, index_fill, index_put, index_put_, index_select,
                            masked_fill, masked_scatter, masked_select, take, take_along_dim)
from ._ops.positions import argwhere, nonzero, one_hot
from ._ops.sort import (argsort, bincount, bucketize, histc, kthvalue, median, msort, searchsorted,
                        sort, topk, unique, unique_consecutive)
from ._ops.inplace import (copy_, fill_, zero_)
from ._ops.special import (acosh, arccosh, arcsinh, arctanh, asinh, atanh, deg2rad, digamma, erfc,
                           erfinv, exp2, i0, igamma, igammac, lgamma, logit, polygamma, rad2deg, sinc,
                           xlogy)
from ._ops.random import (sample_dirichlet as _sample_dirichlet, standard_gamma as _standard_gamma,
                          standard_gamma_grad as _standard_gamma_grad)
from ._ops.numeric import (copysign, frexp, gcd, heaviside, isneginf, isposinf, lcm, ldexp, nextafter,
                           signbit)
from ._ops.scan import (cummax, cummin, cumulative_trapezoid, diff, gradient, logcumsumexp,
                        trapezoid, trapz)
from ._ops.statistics import (aminmax, mode, nanmedian, nanquantile, quantile)
from ._ops.arrange import (atleast_1d, atleast_2d, atleast_3d, block_diag, column_stack, combinations,
                           dstack, kron, rot90, tril_indices, triu_indices)
from ._ops.products import (addbmm, addmv, addr, cdist, renorm)
from ._ops.scatter_reduce import (index_reduce, scatter, scatter_reduce)
from ._creation import (new_empty, new_full, new_ones, new_tensor, new_zeros, to)
from ._tensor_extras import type_
from ._random import (bernoulli_, exponential_, normal_, random_, uniform_)
# The op families only nn uses: imported so that every entry is registered in ``OPS``.
from ._ops import (attention as _attention, conv as _conv, embedding as _embedding, nn as _nn,  # noqa: F401
                   norm as _norm, pool as _pool, resample as _resample, rnn as _rnn)
from ._creation import (tensor, as_tensor, asarray, from_numpy, zeros, ones, full, empty, zeros_like,
                        ones_like, full_like, empty_like, arange, eye, scalar_tensor)
from ._spacing import linspace, logspace
from ._sampling import (rand, randn, randint, randperm, normal, bernoulli, multinomial, rand_like, randn_like,
                        randint_like)
from ._dtype import (dtype, float16, bfloat16, float32, float64, half, float, double, int8, int16, int32,
                     int64, short, int, long, uint8, uint16, uint32, uint64, bool, complex64, complex128, cfloat, cdouble,
                     get_default_dtype, set_default_dtype,
                     promote_types, result_type, can_cast, finfo, iinfo)
from ._linalg_legacy import (det, logdet, slogdet, inverse, svd, qr, cholesky, cholesky_solve,
                             cholesky_inverse, triangular_solve, pinverse, matrix_exp, matrix_power,
                             lu_unpack, geqrf, cross, lu, lu_solve, orgqr, ormqr, norm)
from ._ops.covariance import cov, corrcoef
from ._ops.sparse import sparse_coo_tensor, spmm
from ._layout import (layout, sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr, strided)
from . import _memory_format
memory_format, contiguous_format, preserve_format = (_memory_format.memory_format, _memory_format.contiguous_format,
                                                     _memory_format.preserve_format)
channels_last, channels_last_3d = _memory_format.channels_last, _memory_format.channels_last_3d
from .functional import (stft, istft, hann_window, hamming_window, blackman_window, bartlett_window,
                         kaiser_window)
from ._device import device
from ._size import Size
from ._random import Generator, manual_seed, seed, initial_seed, default_generator, get_rng_state, set_rng_state
from ._random import poisson
from ._creation import empty_strided, frombuffer, range_inclusive as range
from ._ops.join import (diagflat, dsplit, hsplit, row_stack, select_scatter, slice_scatter, vsplit)
from ._ops.sort import histogram
from ._ops.positions import unravel_index
from ._ops.compare import isin
from ._ops.special import mvlgamma
from ._linalg_legacy import chain_matmul
from ._lowrank import pca_lowrank, svd_lowrank
from ._runtime import (are_deterministic_algorithms_enabled, get_default_device, get_deterministic_debug_mode,
                       get_float32_matmul_precision, get_num_interop_threads, get_num_threads,
                       is_deterministic_algorithms_warn_only_enabled, is_warn_always_enabled, set_default_device,
                       set_deterministic_debug_mode, set_float32_matmul_precision, set_num_interop_threads,
                       set_num_threads, set_warn_always, use_deterministic_algorithms)
from ._ops.restride import as_strided
from ._ops.indexing import put
from ._print import set_printoptions
from ._legacy import (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor,
                      ShortTensor, CharTensor, ByteTensor, BoolTensor)
from . import _legacy, _tensor_extras
from .autograd import no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled
from . import linalg, fft, cuda, backends, accelerator
from . import special, sparse, storage
from .storage import UntypedStorage, TypedStorage
from .storage import (FloatStorage, DoubleStorage, HalfStorage, BFloat16Storage, LongStorage, IntStorage,  # noqa: F401
                      ShortStorage, CharStorage, ByteStorage, BoolStorage, ComplexFloatStorage, ComplexDoubleStorage)
from .cuda import amp as _cuda_amp  # noqa: F401  (``torch.cuda.amp`` is there wherever ``torch.cuda`` is)
from ._memory import memory_allocated, max_memory_allocated, reset_peak_memory_stats
from ._ops.view_copies import (alias_copy, as_strided_copy, detach_copy, diagonal_copy, expand_copy, permute_copy,
                               select_copy, slice_copy, split_copy, split_with_sizes_copy, squeeze_copy, t_copy,
                               transpose_copy, unbind_copy, unfold_copy, unsqueeze_copy, view_as_complex_copy,
                               view_as_real_copy, view_copy)
from ._ops.arrange import vander
from ._ops.sort import histogramdd
from ._dlpack import from_dlpack, to_dlpack
from ._removed import eig, lstsq, matrix_rank, solve, symeig
import math as _math

pi, e, inf, nan = _math.pi, _math.e, _math.inf, _math.nan  # torch.pi & co.: Python floats, as torch's
newaxis = None  # x[:, torch.newaxis], NumPy's spelling
set_default_tensor_type = _legacy.set_default_tensor_type  # (deprecated, as torch's)
is_nonzero, is_signed, is_same_size = _tensor_extras.is_nonzero, _tensor_extras.is_signed, _tensor_extras.is_same_size
narrow_copy, nonzero_static = _tensor_extras.narrow_copy, _tensor_extras.nonzero_static

__version__ = "0.1.0"

_OP_FUNCTIONS = {
    "abs", "absolute", "acos", "add", "addcdiv", "addcmul", "addmm", "all", "allclose", "amax",
    "amin", "any", "arccos", "arcsin", "arctan", "arctan2", "argmax", "argmin", "argsort",
    "argwhere", "asin", "atan", "atan2", "baddbmm", "bernoulli_", "bincount", "bitwise_and",
    "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "bmm",
    "broadcast_shapes", "broadcast_tensors",
    "broadcast_to", "bucketize", "cartesian_prod", "cat", "ceil", "chunk", "clamp", "clamp_max",
    "clamp_min", "clip", "clone", "concat", "concatenate", "contiguous", "copy_", "cos", "cosh",
    "count_nonzero", "cumprod", "cumsum", "diag", "diag_embed", "diagonal", "diagonal_scatter",
    "dist", "div", "divide", "dot", "einsum", "eq", "equal", "erf", "exp", "expand", "expand_as",
    "expm1", "exponential_", "fill_", "fix", "flatten", "flip", "fliplr", "flipud", "float_power",
    "floor", "floor_divide", "fmax", "fmin", "fmod", "frac", "gather", "ge", "ger", "greater",
    "greater_equal", "gt", "histc", "hstack", "hypot", "index_add", "index_copy", "index_fill",
    "index_put", "index_put_", "index_select", "inner", "isclose", "isfinite", "isinf", "isnan",
    "kthvalue", "le", "lerp", "less", "less_equal", "log", "log10", "log1p", "log2", "log_softmax",
    "logaddexp2", "logical_and", "logical_not", "logical_or", "logical_xor", "logsumexp", "lt",
    "masked_fill", "masked_scatter", "masked_select", "matmul", "max", "maximum", "mean", "median",
    "meshgrid", "min", "minimum", "mm", "moveaxis", "movedim", "msort", "mul", "multiply", "mv",
    "nan_to_num", "nanmean", "nansum", "narrow", "ne", "neg", "negative", "positive", "new_empty", "new_full",
    "new_ones", "new_tensor", "new_zeros", "nonzero", "norm", "normal_", "not_equal", "one_hot",
    "outer", "permute", "pow", "prod", "random_", "ravel", "reciprocal", "relu", "remainder",
    "repeat", "repeat_interleave", "reshape", "reshape_as", "roll", "round", "rsqrt", "rsub",
    "scatter", "scatter_add", "searchsorted", "select", "sigmoid", "sign", "sin", "sinh", "softmax",
    "sort", "split", "sqrt", "square", "squeeze", "stack", "std", "std_mean", "sub", "subtract",
    "sum", "sum_to_size", "swapaxes", "swapdims", "t", "take", "take_along_dim", "tan", "tanh",
    "tensor_split", "tensordot", "tile", "to", "topk", "trace", "transpose", "tril", "triu",
    "true_divide", "trunc", "type_", "unbind", "unflatten", "uniform_", "unique",
    "unique_consecutive", "unsqueeze", "var", "var_mean", "vdot", "vector_norm", "view", "view_as",
    "vstack", "where", "zero_"} | {
    "acosh", "arccosh", "arcsinh", "arctanh", "asinh", "atanh", "deg2rad", "digamma", "erfc",
    "erfinv", "exp2", "i0", "igamma", "igammac", "lgamma", "logaddexp", "logit", "polygamma", "rad2deg", "sinc", "xlogy",
    "copysign", "frexp", "gcd", "heaviside", "isneginf", "isposinf", "lcm", "ldexp", "nextafter", "signbit",
    "cummax", "cummin", "cumulative_trapezoid", "diff", "gradient", "logcumsumexp", "trapezoid", "trapz",
    "aminmax", "mode", "nanmedian", "nanquantile", "quantile", "cov", "corrcoef", "cross", "finfo", "iinfo",
    "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "column_stack", "combinations", "dstack",
    "kron", "rot90", "tril_indices", "triu_indices", "addbmm", "addmv", "addr", "cdist", "renorm",
    "index_reduce", "scatter_reduce"}

__all__ = sorted(_OP_FUNCTIONS | {
    "Tensor", "tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "full", "empty",
    "zeros_like", "ones_like", "full_like", "empty_like", "arange", "linspace", "logspace", "eye",
    "rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial", "rand_like",
    "randn_like", "randint_like", "scalar_tensor", "dtype", "float16", "float32", "float64", "half",
    "float", "double", "int8", "int16", "int32", "int64", "short", "int", "long", "uint8", "uint16",
    "uint32", "uint64", "bool", "complex64", "complex128", "cfloat", "cdouble", "adjoint", "angle", "complex", "conj",
    "conj_physical", "imag", "is_conj", "is_neg", "polar", "real", "resolve_conj", "resolve_neg", "sgn",
    "view_as_complex", "view_as_real", "is_complex", "isreal",
    "get_default_dtype", "set_default_dtype", "promote_types", "result_type", "can_cast", "device",
    "Size", "Generator", "poisson", "as_strided", "put", "manual_seed", "seed", "initial_seed", "default_generator", "get_rng_state",
    "set_rng_state", "set_printoptions", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor",
    "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor", "autograd", "no_grad",
    "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled", "linalg", "cuda",
    "backends", "accelerator", "fft", "is_tensor", "numel", "is_floating_point", "save", "load", "nn",
    "optim", "utils", "datasets", "compile", "compiler", "memory_allocated", "max_memory_allocated",
    "reset_peak_memory_stats", "bfloat16", "BFloat16Tensor", "amp", "onnx", "distributed",
    "autocast", "det", "logdet", "slogdet", "inverse", "svd", "qr", "cholesky", "cholesky_solve",
    "cholesky_inverse", "triangular_solve", "pinverse", "matrix_exp", "matrix_power", "lu_unpack",
    "geqrf", "lu", "lu_solve", "orgqr", "ormqr", "special", "sparse", "sparse_coo_tensor", "spmm", "layout", "strided", "sparse_coo",
    "memory_format", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format",
    "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "functional", "stft", "istft",
    "hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window",
    "empty_strided", "frombuffer", "range", "diagflat", "dsplit", "hsplit", "vsplit", "row_stack",
    "select_scatter", "slice_scatter", "split_with_sizes", "unsafe_chunk", "unsafe_split",
    "unsafe_split_with_sizes", "histogram", "unravel_index", "isin", "mvlgamma", "chain_matmul",
    "pca_lowrank", "svd_lowrank",
    "are_deterministic_algorithms_enabled", "get_default_device", "get_deterministic_debug_mode",
    "get_float32_matmul_precision", "get_num_interop_threads", "get_num_threads",
    "is_deterministic_algorithms_warn_only_enabled", "is_warn_always_enabled", "set_default_device",
    "set_deterministic_debug_mode", "set_float32_matmul_precision", "set_num_interop_threads",
    "set_num_threads", "set_warn_always", "use_deterministic_algorithms", "typename", "is_nonzero",
    "is_signed", "is_same_size", "is_inference_mode_enabled", "is_anomaly_enabled", "set_anomaly_enabled",
    "detach", "fill"})


def _assert(condition, message):
    """Raises AssertionError(``message``) when ``condition`` is false: Python's ``assert`` as
    a function, which ``ember.fx`` tracing records as a node (torch._assert)."""
    if not condition:
        raise AssertionError(message)


def is_tensor(obj):
    """True when ``obj`` is an ember Tensor."""
    return isinstance(obj, Tensor)


def numel(input):
    """The number of elements of ``input`` (``input.numel()``)."""
    return input.numel()


def is_floating_point(input):
    """Whether ``input``'s dtype is a floating-point one (float16, bfloat16, float32, float64)."""
    return input.dtype.is_floating_point


def typename(obj):
    """The type name PyTorch prints for ``obj``: ``torch.FloatTensor`` for a float32 tensor, the
    qualified class name otherwise (https://pytorch.org/docs/stable/generated/torch.typename.html)."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    name = getattr(obj, "__qualname__", type(obj).__qualname__)
    if not isinstance(obj, type):
        module, name = type(obj).__module__, type(obj).__qualname__
    return name if module in ("", "builtins") else f"{module}.{name}"


def detach(input):
    """A new tensor sharing ``input``'s storage, with no history (``input.detach()``)."""
    return input.detach()


def fill(input, value):
    """A new tensor shaped like ``input`` filled with ``value`` (out of place ``fill_``)."""
    return full_like(input, value)


def get_device(input):
    """``input.get_device()``: -1, the index torch gives a CPU tensor."""
    return input.get_device()


def is_inference(input):
    """``input.is_inference()``: whether ``input`` was made inside ``inference_mode``."""
    return input.is_inference()


def is_storage(obj):
    """Whether ``obj`` is a storage (``UntypedStorage`` or ``TypedStorage``)."""
    return isinstance(obj, (UntypedStorage, TypedStorage))


def is_complex(input):
    """True when ``input`` has a complex dtype (complex64 or complex128)."""
    return input.dtype.is_complex


_NN_FUNCTIONAL_ALIASES = {  # those whose arguments torch's top-level form shares with nn.functional's
    "alpha_dropout", "avg_pool1d", "adaptive_avg_pool1d", "bilinear", "celu", "channel_shuffle", "conv1d", "conv2d",
    "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "max_pool3d", "cosine_similarity",
    "dropout", "feature_alpha_dropout",
    "group_norm", "hardshrink", "layer_norm", "max_pool1d", "max_pool1d_with_indices", "max_pool2d",
    "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "prelu", "rms_norm", "rrelu", "selu",
    "threshold"}
_IN_PLACE_ALIASES = {
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_", "asin_",
    "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_",
    "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_", "gcd_",
    "i0_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_",
    "negative_", "rad2deg_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_",
    "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_"}


def _in_place(name):
    def apply_in_place(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    apply_in_place.__name__ = apply_in_place.__qualname__ = name
    apply_in_place.__doc__ = f"``input.{name}(...)``: ``input`` changed in place and returned."
    return apply_in_place


def __getattr__(name):
    # The model-building library loads on first use, keeping ``import ember`` light.
    import importlib
    if name in ("nn", "optim", "utils", "datasets", "milestones", "text", "vision", "ao", "profiler",
                "compiler", "_dynamo", "_inductor", "_functorch", "_logging", "_higher_order_ops", "amp", "onnx", "distributed", "course", "fx", "export", "testing",
                "multiprocessing", "distributions", "func", "serialization", "hub", "cpu", "jit", "random",
                "quasirandom", "signal", "overrides", "_C"):
        return importlib.import_module(f"{__name__}.{name}")
    if name in ("cond", "switch", "while_loop"):
        return getattr(importlib.import_module(f"{__name__}._higher_order_ops"), name)
    if name == "vmap":  # torch.vmap is torch.func.vmap
        return importlib.import_module(f"{__name__}.func").vmap
    if name == "compile":
        return importlib.import_module(f"{__name__}.compiler").compile
    if name in ("autocast", "is_autocast_enabled", "get_autocast_dtype"):
        return getattr(importlib.import_module(f"{__name__}.amp.autocast_mode"), name)
    if name in ("qint8", "quint8", "qint32", "per_tensor_affine", "per_channel_affine", "quantize_per_tensor",
                "quantize_per_channel", "per_tensor_symmetric", "per_channel_symmetric"):
        return getattr(importlib.import_module(f"{__name__}.ao.quantization.qtensor"), name)
    if name in _NN_FUNCTIONAL_ALIASES:  # torch.conv2d and the like: nn.functional's, loaded on first use
        return getattr(importlib.import_module(f"{__name__}.nn.functional"), name)
    if name in _IN_PLACE_ALIASES:  # torch.relu_(x) is x.relu_()
        return _in_place(name)
    if name in ("is_anomaly_enabled", "set_anomaly_enabled", "is_anomaly_check_nan_enabled"):
        return getattr(importlib.import_module(f"{__name__}.autograd.anomaly_mode"), name)
    if name == "is_inference_mode_enabled":
        return autograd.is_inference_mode_enabled
    if name in ("save", "load"):
        return getattr(importlib.import_module(f"{__name__}.serialization"), name)
    if name in ("complex32", "chalf"):  # a dtype torch has: say why ember does not
        raise AttributeError(f"module 'ember' has no attribute '{name}': ember has no complex32 (ComplexHalf) "
                             "dtype, as NumPy has no 32-bit complex type; use complex64")
    raise AttributeError(f"module 'ember' has no attribute '{name}'")
