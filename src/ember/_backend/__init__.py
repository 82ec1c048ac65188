"""Array namespaces behind ember's devices, and the few calls that differ between them.

The seam (docs/design.md, "The backend seam"): an op kernel takes its namespace from its
inputs, ``xp = namespace(a, b)``, and computes with ``xp.*`` functions and the array's own
methods and operators; ``xp`` is NumPy for NumPy arrays and, for an array type another
library registers here (CuPy's, or the counting namespace the tests use), that library's
NumPy-compatible module. Allocation from nothing (creation ops) uses the device's namespace.
NumPy's dtypes (``np.float32`` as a tag, ``np.dtype``, ``np.iinfo``/``np.finfo``) and
constants (``np.pi``) are metadata every such library shares, so code may use them directly.
What does not mirror cleanly between libraries lives here and nowhere else.
"""
import ctypes
import functools
import operator
import os
import sys

import numpy as np
import scipy.linalg as _scipy_linalg
from numpy._core.umath import _extobj_contextvar, _make_extobj
from scipy import special as _scipy_special

from .meta import MetaArray
from .sparse import SparseCOO

__all__ = ["ndarray", "namespace", "register", "special", "linalg", "kernel", "as_array", "from_host", "copy_into",
           "broadcast_shapes", "index_add_at", "sliding_windows", "matmul", "row_dot",
           "is_view_of", "wrapped_integer", "where", "expand", "overlaps_itself", "is_floating", "placed_as_torch",
           "empty_at", "cast", "quiet", "restore", "bfloat16", "is_bfloat16", "finfo"]

# The array type kernels return; the dispatcher wraps anything else with ``as_array``.
ndarray = np.ndarray
# Array types of other libraries -> their namespaces (and their SciPy ``special`` and
# ``linalg`` modules). Empty unless one registered, so the NumPy path pays one truthiness
# check per ``namespace``.
_NAMESPACES = {}
_SCIPY = {}


# NumPy (>= 2) keeps its floating-point error state ("warn on overflow, division by zero,
# invalid") in a context variable that np.errstate sets and resets. The dispatcher sets it to
# "ignore" around each kernel: in torch inf and nan are values, not events, so no
# RuntimeWarning may reach a user whatever their warnings filters say ("error" included),
# and their own NumPy code keeps its settings. The variable itself costs a tenth of an
# np.errstate block (about 0.1 us against 1 us per op).
_IGNORE_ERRORS = _make_extobj(all="ignore")


def quiet():
    """Silences NumPy's floating-point warnings in this context; returns the token for
    :func:`restore`."""
    return _extobj_contextvar.set(_IGNORE_ERRORS)


restore = _extobj_contextvar.reset
# the dispatcher's own spelling of quiet(): ``errstate_set(IGNORE_ERRORS)`` without a Python frame
errstate_set, IGNORE_ERRORS = _extobj_contextvar.set, _IGNORE_ERRORS


def register(array_type, xp, special=None, linalg=None):
    """Makes ``xp`` (a module mirroring NumPy's API, as ``cupy``) the namespace of arrays of
    ``array_type``, and ``special`` and ``linalg`` (modules mirroring ``scipy.special`` and
    ``scipy.linalg``, as ``cupyx.scipy.special`` and ``cupyx.scipy.linalg``) their special
    functions and the linear algebra NumPy's ``xp.linalg`` lacks (LU, triangular solves,
    least squares, the matrix exponential)."""
    _NAMESPACES[array_type] = xp
    _SCIPY[array_type] = {"special": special, "linalg": linalg}


def _scipy(x, name, numpy_module):
    if type(x) not in _NAMESPACES:
        return numpy_module
    module = _SCIPY[type(x)][name]
    if module is None:
        raise TypeError(f"no scipy.{name} registered for {type(x).__name__} arrays")
    return module


def special(x):
    """The ``scipy.special`` of the array ``x``'s library (erf, expit...); TypeError naming the
    array type when its library registered none."""
    return _scipy(x, "special", _scipy_special)


def linalg(x):
    """The ``scipy.linalg`` of the array ``x``'s library (lu_factor, solve_triangular, lstsq,
    expm); TypeError naming the array type when its library registered none. (NumPy-style
    batched linear algebra is the namespace's own: ``namespace(x).linalg``.)"""
    return _scipy(x, "linalg", _scipy_linalg)


def namespace(*arrays):
    """The array namespace of ``arrays``: the first registered library's among them, else NumPy
    (Python numbers and NumPy arrays both compute with NumPy)."""
    if _NAMESPACES:
        for a in arrays:
            xp = _NAMESPACES.get(type(a))
            if xp is not None:
                return xp
    return np


def kernel(name):
    """The kernel ``xp.<name>(*arrays, **kwargs)`` with ``xp`` the namespace of its inputs, for
    op entries whose forward is one NumPy function (``kernel("exp")``, ``kernel("maximum")``)."""
    numpy_function = getattr(np, name)

    def call(*arrays, **kwargs):
        if _NAMESPACES:
            return getattr(namespace(*arrays), name)(*arrays, **kwargs)
        return numpy_function(*arrays, **kwargs)  # (``namespace`` inlined: the tiny-op path)
    call.__name__ = call.__qualname__ = name
    return call


def as_array(value, *like):
    """A kernel's result (an array, a NumPy scalar or a Python number) as an array of the
    namespace of ``like`` (the kernel's inputs); sparse storage stays as it is."""
    if type(value) in _NAMESPACES or type(value) is SparseCOO or type(value) is MetaArray:
        return value
    return namespace(*like).asarray(value)


def from_host(array, *like):
    """The NumPy ``array`` made on the host (a CPU generator's draw) as an array of the
    namespace of ``like``: the one place host data is copied onto another library's device
    (a no-op for NumPy)."""
    if _NAMESPACES:
        return namespace(*like).asarray(array)
    return array


def copy_into(destination, source):
    """Writes ``source`` into ``destination`` in place, broadcasting and casting as needed
    (an in-place op's write; PyTorch casts without checking, as ``casting="unsafe"``); sparse
    storage takes a sparse source's entries, dense storage a sparse source's dense values."""
    if type(destination) is SparseCOO:
        destination.assign(source)
    else:
        namespace(destination).copyto(destination, source.todense() if type(source) is SparseCOO else source,
                                      casting="unsafe")


def expand(a, shape):
    """``a`` broadcast to ``shape`` without copying: a view that is writable where ``a`` is
    (``np.broadcast_to``'s is always read-only), since torch lets a slice of an expanded tensor
    that does not overlap itself (``x.expand(2, 3)[0]``) be written."""
    view = namespace(a).broadcast_to(a, shape)
    if a.flags.writeable:
        view = np.lib.stride_tricks.as_strided(a, view.shape, view.strides, subok=True)
    return view


def placed_as_torch(array, index):
    """``array[index]`` (basic indexing: ints, slices, None, Ellipsis) with torch's strides and
    address. A dim that None inserts has unsqueeze's stride where it stands in the index: the
    size times the stride of the dim it lands before, as yet unindexed; 1 at the end (``x[None]``
    of a (4, 6) array strides (24, 6, 1), NumPy's (0, 6, 1)): NumPy's reshape inserts a size-1
    dim so. And a view holding no element starts where torch's does: NumPy leaves the data
    pointer where it is along an axis sliced to nothing (``x[2:2]`` of a (4, 6) array starts at
    its first element), torch moves it by the clamped start times the stride there
    (``storage_offset()`` 12)."""
    if type(array) is not np.ndarray:
        return array[index]
    if any(map(_IS_NONE, index)):  # (not ``None in index``: that would compare arrays)
        view = _unsqueezed_first(array, index)
        if view is None:
            return array[index]  # (advanced indexing: a copy)
    else:
        view = array[index]
    if view.size or type(view) is not np.ndarray:  # (ints in every dim: a NumPy scalar)
        return view
    named = [i for i in index if i is not None and i is not Ellipsis]
    if any(not isinstance(i, (int, np.integer, slice)) or isinstance(i, bool) for i in named):
        return view
    full = [i for item in index for i in ([slice(None)] * (array.ndim - len(named)) if item is Ellipsis else [item])]
    shift = 0
    for item, n, stride in zip([i for i in full if i is not None], array.shape, array.strides):
        start = item.indices(n)[0] if isinstance(item, slice) else item + n if item < 0 else item
        shift += start * stride
    return empty_at(array, view.shape, view.strides, view.dtype, shift)


_ALL = slice(None)
_IS_NONE = functools.partial(operator.is_, None)


def _unsqueezed_first(array, index):
    """``array[index]`` with each None made a size-1 dim of ``array`` first (NumPy's reshape
    inserts one with unsqueeze's stride), then taken whole; None for an index not basic."""
    named = sum(i is not None and i is not Ellipsis for i in index)
    shape, items, dim, at_end = [], [], 0, False
    for item in index:
        if item is None:
            shape.append(1)
            at_end = at_end or dim == array.ndim
            item = _ALL
        elif item is Ellipsis:
            shape.extend(array.shape[dim:dim + array.ndim - named])
            dim += array.ndim - named
        elif isinstance(item, (int, np.integer, slice)) and not isinstance(item, bool):
            shape.append(array.shape[dim])
            dim += 1
        else:
            return None
        items.append(item)
    view = array.reshape(shape + list(array.shape[dim:]), copy=False)[tuple(items)]
    if array.size and not (at_end and array.ndim and array.strides[-1] != array.itemsize) and 1 not in array.shape:
        return view
    # (at the end unsqueeze's stride is 1, NumPy's the last dim's; an empty array's may be 0;
    # NumPy's reshape gives size-1 dims strides of its own, torch keeps theirs)
    strides = _unsqueezed_strides(view, array, index, named)
    return view if tuple(strides) == view.strides else empty_at(view, view.shape, strides, view.dtype, 0)


def _unsqueezed_strides(view, array, index, named):
    """``view``'s strides (``array[index]``'s) as torch's: unsqueeze's for the dims None inserts,
    ``array``'s (times the step) for the dims it keeps."""
    strides, out, dim = list(view.strides), 0, 0  # the dims of the result and of ``array`` reached
    for item in index:
        if item is None:
            strides[out] = array.shape[dim] * array.strides[dim] if dim < array.ndim else array.itemsize
            out += 1
        elif item is Ellipsis:
            kept = array.ndim - named
            strides[out:out + kept] = array.strides[dim:dim + kept]
            out, dim = out + kept, dim + kept
        else:
            if isinstance(item, slice):
                strides[out] = array.strides[dim] * (item.step or 1)
                out += 1
            dim += 1
    strides[out:] = array.strides[dim:]
    return strides


def empty_at(array, shape, strides, dtype, shift):
    """An array of ``shape`` holding no element that starts ``shift`` bytes after ``array``'s
    first element, even past its end (NumPy refuses that offset), keeping ``array`` as its base;
    also ``array`` seen with other strides where they do not change its elements (size-1 dims)."""
    interface = dict(array.__array_interface__, shape=tuple(shape), strides=tuple(strides), typestr=dtype.str,
                     descr=[("", dtype.str)], data=(array.__array_interface__["data"][0] + shift,
                                                   not array.flags.writeable))
    return np.asarray(_At(interface, array)).view(dtype)


class _At:
    """An array interface (an address) that keeps ``base``, whose memory it lies in, alive: the
    go-between ``np.lib.stride_tricks.as_strided`` makes too."""

    def __init__(self, interface, base):
        self.__array_interface__, self.base = interface, base


def overlaps_itself(a):
    """Whether several elements of ``a`` are one memory location as far as its strides tell (a
    zero stride over a dimension longer than 1, as an expanded tensor has): torch's check for
    writing in place. An empty array has no elements to share (NumPy gives its copies zero
    strides)."""
    return a.size > 0 and any(stride == 0 and size > 1 for stride, size in zip(a.strides, a.shape))


def dense(a):
    """Whether the elements of ``a`` fill the memory they span, without gaps or overlaps, in
    some order of its dims (torch's "non-overlapping and dense": a transposed or permuted
    contiguous array is, a stepped or expanded one is not). Empty arrays count as dense."""
    if a.size == 0 or a.flags.c_contiguous or a.flags.f_contiguous:
        return True
    step = a.itemsize
    for stride, size in sorted((st, n) for st, n in zip(a.strides, a.shape) if n > 1):
        if stride != step:
            return False
        step *= size
    return True


def empty_strided_like(a, strides=None):
    """An array with no elements of ``a``'s shape and dtype whose strides (bytes) are
    ``strides`` (``a``'s by default): NumPy gives a new empty array zero strides, where torch
    keeps those its views and copies carry (``empty(0, 3).t()`` has strides (1, 3)); no memory
    behind it, as torch counts none."""
    return np.lib.stride_tricks.as_strided(np.empty(0, a.dtype), a.shape, a.strides if strides is None else strides)


def is_view_of(out, source):
    """Whether the array ``out``, a view op's result on the array ``source``, shares its memory
    (False: the op had to copy, as ``reshape`` does over strides that forbid a view); one with
    no element counts as a view."""
    base = getattr(out, "base", None)
    if base is not None and (base is source or base is getattr(source, "base", None)):
        return True  # a NumPy view names the array owning its memory: no range check needed
    return not out.size or namespace(out).may_share_memory(out, source)


def wrapped_integer(number, dtype):
    """A Python int as a scalar of the integer ``dtype``, wrapped modulo 2**bits as PyTorch
    casts a scalar operand (``uint8 + -1`` adds 255); NumPy would raise OverflowError."""
    return np.asarray(int_operand(number)).astype(dtype)[()]


INT_MIN, UINT_END = -(1 << 63), 1 << 64  # the Python ints torch holds as a number operand (int64 or uint64)


def int_operand(number):
    """``number``, a Python int; OverflowError worded as torch's outside [-2**63, 2**64)."""
    if not INT_MIN <= number < UINT_END:
        raise OverflowError("int too big to convert" if number > 0 else "can't convert negative int to unsigned")
    return number


_FLOAT32_INF = 2 ** 128 - 2 ** 103  # the least magnitude that rounds to float32's inf


def float32_number(number):
    """A real Python number rounded to a float32 scalar, inf past float32's range as C++'s
    double-to-float conversion gives (NumPy would warn; a large int would raise OverflowError):
    the number a float16/bfloat16 op computes with in PyTorch's float32 ``opmath``; nan stays nan.
    An int outside [-2**63, 2**64) raises torch's OverflowError (:func:`int_operand`)."""
    if type(number) is int:
        int_operand(number)
    if number >= _FLOAT32_INF:
        return np.float32(np.inf)
    if number <= -_FLOAT32_INF:
        return np.float32(-np.inf)
    return np.float32(number)


def broadcast_shapes(*shapes):
    """The shape ``shapes`` broadcast to; ValueError when they do not broadcast."""
    return np.broadcast_shapes(*shapes)


def broadcast_error(shapes):
    """PyTorch's message for the first pair of ``shapes`` that do not broadcast (None if all do)."""
    for i, a in enumerate(shapes):
        for b in shapes[i + 1:]:
            n = max(len(a), len(b))
            for d in range(n - 1, -1, -1):
                sa = a[d - n + len(a)] if d - n + len(a) >= 0 else 1
                sb = b[d - n + len(b)] if d - n + len(b) >= 0 else 1
                if sa != sb and sa != 1 and sb != 1:
                    return (f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                            f"non-singleton dimension {d}")
    return None

# Products smaller than this many multiply-adds run on one BLAS thread. Waking a second
# thread costs more than it saves there, and when another process or another library's
# spinning threads (PyTorch's, in a side-by-side benchmark) hold the other core, the wake-up
# can take a whole scheduler time slice: milliseconds for a microsecond product.
_MULTITHREAD_MACS = 1 << 26


# bfloat16's NumPy dtype comes from the ml_dtypes package, which costs more CPU to import
# (~0.6 s: it computes its float8 types' limits) than the rest of ``import ember`` but numpy's
# own: it is imported on the first use of bfloat16. Before that no array can have the dtype
# (ml_dtypes registers it with NumPy when imported), so the checks need not import it.
_BFLOAT16 = []


def _ml_dtypes():
    import ml_dtypes
    return ml_dtypes


def bfloat16():
    """bfloat16's NumPy dtype (ml_dtypes'), importing ml_dtypes on the first call."""
    if not _BFLOAT16:
        _BFLOAT16.append(np.dtype(_ml_dtypes().bfloat16))
    return _BFLOAT16[0]


def is_bfloat16(dtype):
    """Whether the NumPy dtype ``dtype`` is bfloat16's, without importing ml_dtypes: its dtype
    has kind "V" and exists only once ml_dtypes is loaded (by ember or the user's program)."""
    return dtype.kind == "V" and "ml_dtypes" in sys.modules and dtype == bfloat16()


def finfo(dtype):
    """The machine limits of the floating NumPy dtype ``dtype`` (``np.finfo``'s fields;
    bfloat16's from ml_dtypes, whose finfo knows it)."""
    if is_bfloat16(dtype):
        return _ml_dtypes().finfo(dtype)
    return np.finfo(dtype)


def is_floating(dtype):
    """Whether the array dtype ``dtype`` is a real floating-point one. bfloat16's NumPy dtype
    (from ml_dtypes) has kind "V", not "f", so ``dtype.kind == "f"`` alone misses it."""
    return dtype.kind == "f" or is_bfloat16(dtype)


def sixteen_bit(dtype):
    """Whether the array dtype ``dtype`` is float16's or bfloat16's."""
    return dtype == np.float16 or is_bfloat16(dtype)


def at_float32(forward):
    """Op kernel ``forward`` computing float16/bfloat16 at float32 as torch's ``opmath_t``: its arrays
    (of the first's 16-bit dtype, None kept) widened, the result rounded once to that dtype, the
    attributes (elu's alpha) never rounded to 16 bits. What ``Op.at_float32`` applies."""
    @functools.wraps(forward)
    def kernel(*arrays, **attrs):
        dtype = arrays[0].dtype
        if dtype.itemsize != 2 or not sixteen_bit(dtype):  # (the size first: cheaper for float32)
            return forward(*arrays, **attrs)
        return forward(*(None if a is None else a.astype(np.float32) for a in arrays), **attrs).astype(dtype)
    return kernel


def cast(x, dtype):
    """``x.astype(dtype)`` converted as PyTorch's CPU converts: into float16 or bfloat16 through
    float32, since c10's ``Half`` and ``BFloat16`` are built from a float (float64
    1.19677734375 - 2**-40 becomes float16 1.19727, where one rounding gives 1.19629; int64
    2**24 + 2**16 + 1 becomes bfloat16 2**24), and from bfloat16 to an integer through float32
    too (ml_dtypes' own cast saturates, torch's wraps as float's does)."""
    source = x.dtype
    if is_bfloat16(source) and dtype.kind in "iu":
        return x.astype(np.float32).astype(dtype)
    if (source.kind == "f" or is_bfloat16(source)) and dtype.kind in "fV" and (source.itemsize > 4 or sixteen_bit(dtype)):
        with np.errstate(over="ignore"):  # past the narrower dtype's range (float32's, float16's): inf, silently as torch's
            if sixteen_bit(dtype):
                x = x.astype(np.float32, copy=False)
            return x.astype(dtype)
    if sixteen_bit(dtype) and source.itemsize >= 4 and source != np.float32 and source.kind != "f":
        with np.errstate(over="ignore"):  # (int32, int64, complex: as c10's, through float)
            return x.astype(np.float32).astype(dtype)
    return x.astype(dtype)


def _list_blas_libraries():
    """threadpoolctl's controllers of the BLAS libraries loaded now (NumPy's and SciPy's: both
    are imported above), or () without threadpoolctl. Listing inspects every loaded library
    (1.7 ms): done once, at import; the compiler's C backend reuses this list."""
    try:
        from threadpoolctl import ThreadpoolController
        return tuple(ThreadpoolController().lib_controllers)
    except Exception:  # no threadpoolctl, or it failed to inspect: threads left alone
        return ()


BLAS_LIBRARIES = _list_blas_libraries()


def _blas_thread_functions():
    """(set-thread-count function, get-thread-count function, thread count now) of the
    OpenBLAS NumPy ships, or (None, None, None)."""
    try:
        for lib in BLAS_LIBRARIES:
            if lib.internal_api == "openblas" and "numpy" in lib.filepath:
                # the library's own getter where OpenBLAS runs its own threads (0.5 against
                # threadpoolctl's 1.6 us a call): matmul asks before every product
                get = lib.get_num_threads if lib.threading_layer == "openmp" else lib._get_symbol("openblas_get_num_threads")
                return lib._real_set_num_threads, get, get()
    except Exception:  # no threadpoolctl, or a BLAS it cannot drive: leave threads alone
        pass
    return None, None, None


_set_threads, _get_threads, _max_threads = _blas_thread_functions()


def set_num_threads(n):
    """At most ``n`` BLAS threads from now on: NumPy's (the eager products) and every other
    library threadpoolctl drives (SciPy's BLAS, which compiled code calls)."""
    global _max_threads
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(n)
    except ImportError:  # without threadpoolctl the libraries keep their own counts
        pass
    _max_threads = n


def get_num_threads():
    """The most BLAS threads the products use (None when the BLAS is not one ember drives)."""
    return _max_threads


def _keep_freed_heap():
    """Have glibc's malloc keep freed array memory for reuse instead of returning it.

    By default glibc hands blocks of a few MiB back to the kernel on free (unmapping them, or
    trimming the heap top past a threshold that only grows to twice the largest freed block),
    so the next array of that size is faulted in again page by page: a GPT training step
    spent a sixth of its time zero-filling pages. Fixed thresholds (blocks up to 32 MiB from
    the heap, which keeps up to 256 MiB of free space at its top) end that churn; the
    ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` environment variables, when set,
    are left in charge.
    """
    if not sys.platform.startswith("linux") or any(
            name in os.environ for name in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")):
        return
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return
    m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's <malloc.h> parameter numbers
    mallopt(m_mmap_threshold, 32 << 20)
    mallopt(m_trim_threshold, 256 << 20)


_keep_freed_heap()


def matmul(a, b, out=None):
    """``np.matmul(a, b, out=out)`` on as many BLAS threads as the product's size is worth.

    NumPy runs a stacked product as one BLAS call per matrix, so a contiguous ``(*, K)``
    input times a ``(K, N)`` matrix (a linear layer on a batch of sequences) is folded into
    one ``(prod(*), K) @ (K, N)`` product first, and the thread count follows the size of a
    single BLAS call: waking a second thread for each of many small calls costs more than the
    products themselves.
    """
    if type(a) is not np.ndarray or type(b) is not np.ndarray:
        return namespace(a, b).matmul(a, b, out=out)  # the BLAS thread settings below are NumPy's
    if a.dtype.kind == "V" and is_bfloat16(a.dtype) and is_bfloat16(b.dtype) and out is None:  # (kind: no call)
        # NumPy has no bfloat16 BLAS (its fallback loop is slow and returns float32): as on
        # PyTorch's CPU, the products accumulate in float32 and round once to bfloat16.
        product = matmul(a.astype(np.float32), b.astype(np.float32))
        if a.shape[-1] == 1:  # (its sums start at +0.0: no -0.0 of an outer product, as float32's gemm has)
            product += np.float32(0.0)
        return product.astype(a.dtype)
    shape = None
    # (A single matrix in the stack is left as it is: the reshapes would cost more than
    # NumPy's own batch loop of one.)
    if a.ndim > 2 and b.ndim == 2 and a.size > a.shape[-2] * a.shape[-1] and a.flags.c_contiguous and out is None:
        shape = a.shape[:-1] + b.shape[-1:]
        a = a.reshape(-1, a.shape[-1])
    if a.ndim > 1 < b.ndim and a.shape[-1] == 1 and 1 < a.shape[-2] == a.size and 1 < b.shape[-1] == b.size \
            and (b.ndim == 2 or a.size * b.size >= 400) and a.dtype.kind in "fc" and a.dtype.itemsize >= 4 \
            and a.dtype == b.dtype:
        # an outer product (inner size 1) of one matrix each, real or complex: each product itself (-0.0 for -1 * 0) as torch's
        # gemm (NumPy adds it to +0.0); torch's gemv (m or n 1), bmm (also 2-d @ 3-d) of several or below m*n*k = 400: +0.0
        out = np.multiply(a, b, out=out)
        return out if shape is None else out.reshape(shape)
    if _set_threads is not None and _max_threads > 1:
        macs = a.shape[-2] * a.shape[-1] * b.shape[-1] if a.ndim > 1 and b.ndim > 1 else 0
        want = _max_threads if macs >= _MULTITHREAD_MACS else 1
        # asked, not remembered: compiled graphs set the same count (em_blas_threads)
        if want != _get_threads():
            _set_threads(want)
    out = np.matmul(a, b, out=out)
    return out if shape is None else out.reshape(shape)


# Below this many elements np.where's own loop is faster than the five passes of the bit masks.
_BRANCHLESS_WHERE_SIZE = 1 << 13


def where(condition, input, other):
    """``np.where(condition, input, other)``, made with bit masks where that is faster.

    NumPy's loop branches on each element, which costs several nanoseconds an element when the
    condition is unpredictable (a ReLU's mask is about half true, at random): 630 us for 150k
    float32 against 95 us for ``other ^ ((input ^ other) & -condition)`` on the integer views of
    operands of one dtype. The bits are copied, so NaN payloads and signed zeros survive.
    When one side is a scalar +0 (a ReLU's or a mask's derivative) and the other has the
    condition's shape, the mask itself is the result's frame: ``(condition - 1) & other`` or
    ``-condition & input``, three passes (150k float32: 151 -> 49 us, loaded Xeon).
    """
    a, b = input, other
    if (type(a) is not np.ndarray or type(b) is not np.ndarray or condition.dtype != np.bool_
            or a.dtype != b.dtype or a.dtype.kind not in "biuf" or a.dtype.itemsize > 8
            or condition.size < _BRANCHLESS_WHERE_SIZE):
        # (Python numbers keep NumPy's weak-scalar promotion)
        return namespace(condition, a, b).where(condition, a, b)
    dtype, bits = a.dtype, np.dtype(f"i{a.dtype.itemsize}")
    a, b = a.view(bits), b.view(bits)
    if a.ndim == 0 and not a and b.shape == condition.shape:  # where(condition, 0, other)
        mask = condition.view(np.int8).astype(bits)
        np.subtract(mask, 1, out=mask)  # 0 where the zero is taken, all ones elsewhere
        return np.bitwise_and(mask, b, out=mask).view(dtype)
    if b.ndim == 0 and not b and a.shape == condition.shape:  # where(condition, input, 0)
        mask = condition.view(np.int8).astype(bits)
        np.negative(mask, out=mask)
        return np.bitwise_and(mask, a, out=mask).view(dtype)
    mask = condition.astype(bits)
    np.negative(mask, out=mask)
    out = np.bitwise_and(np.bitwise_xor(a, b), mask)
    np.bitwise_xor(out, b, out=out)
    return out.view(dtype)


def index_add_at(out, index, values):
    """``out[index] += values`` with repeated indices each adding (unbuffered)."""
    parts = index if isinstance(index, tuple) else (index,)
    if all(p is None or p is Ellipsis or isinstance(p, (int, slice, np.integer)) for p in parts):
        out[index] += values  # basic indexing never repeats an element: the fast in-place add
    else:
        namespace(out).add.at(out, index, values)


def sliding_windows(x, window_shape, axis):
    """Read-only strided view of all windows of ``window_shape`` over ``axis`` (no copy)."""
    return namespace(x).lib.stride_tricks.sliding_window_view(x, window_shape, axis=axis)


def row_dot(a, b):
    """``sum(a * b, axis=-1)`` as one pass of dot products, without the product array."""
    return namespace(a, b).vecdot(a, b)
