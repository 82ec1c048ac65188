"""ember: a deep-learning framework with PyTorch's API, small enough to read.

``import ember as torch`` runs PyTorch programs that use the parts ember has. The map of the
code is DESIGN.md; each op is defined once in ``_ops``.
"""
from . import _ops  # registers every op entry before the Tensor methods are built
from ._tensor import Tensor
from . import _functional
from ._functional import *  # noqa: F401,F403  (the curated op functions; see __all__ below)
from ._functional import (max, min, sum, all, any, abs, round, pow)  # noqa: F401  shadow builtins on purpose
from ._creation import (tensor, as_tensor, asarray, from_numpy, zeros, ones, full, empty, zeros_like,
                        ones_like, full_like, empty_like, arange, linspace, logspace, eye, rand, randn,
                        randint, randperm, normal, bernoulli, multinomial, rand_like, randn_like,
                        randint_like, scalar_tensor)
from ._dtype import (dtype, float16, float32, float64, half, float, double, int8, int16, int32, int64,
                     short, int, long, uint8, bool, get_default_dtype, set_default_dtype,
                     promote_types, result_type, can_cast)
from ._device import device
from ._size import Size
from ._random import Generator, manual_seed, seed, initial_seed, default_generator, get_rng_state, set_rng_state
from ._print import set_printoptions
from ._legacy import (FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor,
                      CharTensor, ByteTensor, BoolTensor)
from . import autograd
from .autograd import no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled
from . import linalg, cuda, backends, accelerator
from ._memory import memory_allocated, max_memory_allocated, reset_peak_memory_stats

__version__ = "0.1.0"

_OP_FUNCTIONS = [n for n in dir(_functional) if not n.startswith("_") and callable(getattr(_functional, n))
                 and getattr(getattr(_functional, n), "__module__", None) == _functional.__name__]

__all__ = sorted(set(_OP_FUNCTIONS) | {
    "Tensor", "tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "full", "empty",
    "zeros_like", "ones_like", "full_like", "empty_like", "arange", "linspace", "logspace", "eye",
    "rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial", "rand_like",
    "randn_like", "randint_like", "scalar_tensor", "dtype", "float16", "float32", "float64", "half",
    "float", "double", "int8", "int16", "int32", "int64", "short", "int", "long", "uint8", "bool",
    "get_default_dtype", "set_default_dtype", "promote_types", "result_type", "can_cast", "device",
    "Size", "Generator", "manual_seed", "seed", "initial_seed", "default_generator", "get_rng_state",
    "set_rng_state", "set_printoptions", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor",
    "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor", "autograd", "no_grad",
    "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled", "linalg", "cuda",
    "backends", "accelerator", "is_tensor", "numel", "is_floating_point", "save", "load", "nn",
    "optim", "utils", "datasets", "compile", "compiler", "memory_allocated", "max_memory_allocated",
    "reset_peak_memory_stats"})


def is_tensor(obj):
    """True when ``obj`` is an ember Tensor."""
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def is_floating_point(input):
    return input.dtype.is_floating_point


def __getattr__(name):
    # The model-building library loads on first use, keeping ``import ember`` light.
    import importlib
    if name in ("nn", "optim", "utils", "datasets", "milestones", "text", "vision", "ao", "profiler",
                "compiler", "_dynamo"):
        return importlib.import_module(f"{__name__}.{name}")
    if name == "compile":
        return importlib.import_module(f"{__name__}.compiler").compile
    if name in ("qint8", "quint8", "qint32", "per_tensor_affine", "per_channel_affine", "quantize_per_tensor",
                "quantize_per_channel", "per_tensor_symmetric", "per_channel_symmetric"):
        return getattr(importlib.import_module(f"{__name__}.ao.quantization.qtensor"), name)
    if name in ("save", "load"):
        return getattr(importlib.import_module(f"{__name__}.serialization"), name)
    raise AttributeError(f"module 'ember' has no attribute '{name}'")
