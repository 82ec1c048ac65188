"""The order in which C++'s ``std::sort`` (GCC's libstdc++) leaves a list, replayed in Python:
PyTorch's CPU ``mode`` sorts each slice with it, so which index it reports among equal values,
and where NaNs end up (they compare false with everything), depend on that order.

The algorithm is introsort (Musser, "Introspective Sorting and Selection Algorithms", 1997) as
libstdc++ arranges it: while a range holds more than 16 elements, the median of its second,
middle and last elements is moved to its front and the rest partitioned around it from both
ends (no bounds checks: the pivot stops each scan); the right part is sorted recursively and
the left one by the loop. Past a depth of 2 floor(log2 n) the range is heap-sorted instead.
Then one insertion sort runs over the whole list (stable, so short lists keep equal values in
their input order). Only ``less`` is ever called.

The same steps written in C (``_C``, line for line) run ``mode`` over many slices at once
(:func:`mode_rows`): built by the compiler's toolchain on first use and cached on disk like a
compiled graph; where there is no C compiler, the Python replay runs (about 1 ms per 1000
elements; the C about 30 us).
"""
import ctypes
import functools

import numpy as np

from .._backend import is_bfloat16

__all__ = ["std_sort", "mode_of", "mode_rows"]

_THRESHOLD = 16


def std_sort(items, less):
    """Sorts the list ``items`` in place as ``std::sort(begin, end, less)`` would."""
    n = len(items)
    if n < 2:
        return
    _introsort(items, 0, n, 2 * (n.bit_length() - 1), less)
    _insertion_sort(items, 0, min(n, _THRESHOLD), less)
    for i in range(_THRESHOLD, n):  # the first 16 hold the smallest element: unguarded
        _insert_back(items, i, less)


def mode_of(values):
    """``(value, index)`` as PyTorch's CPU ``mode`` finds them in the list ``values``: pairs
    (value, index) sorted by value with ``std_sort``, then the last pair of the first longest
    run of equal values (NaN equals nothing, so each NaN is a run of its own)."""
    pairs = [(v, i) for i, v in enumerate(values)]
    std_sort(pairs, lambda a, b: a[0] < b[0])
    best, longest, run = pairs[0], 0, 0
    for k, pair in enumerate(pairs):
        run += 1
        if k == len(pairs) - 1 or pair[0] != pairs[k + 1][0]:
            if run > longest:
                best, longest = pair, run
            run = 0
    return best


def mode_rows(rows):
    """The index :func:`mode_of` picks in each row of the 2-D NumPy array ``rows`` (int64)."""
    kind = rows.dtype.kind
    key = (np.int64 if kind in "bi" or kind == "u" and rows.dtype.itemsize < 8 else
           np.float64 if kind == "f" or is_bfloat16(rows.dtype) else None)  # exact
    kernel = None if key is None or not isinstance(rows, np.ndarray) else _c_kernel(key is np.int64)
    if kernel is None:
        return np.array([mode_of(row)[1] for row in rows.tolist()], dtype=np.int64)
    keys = np.ascontiguousarray(rows, dtype=key)
    index = np.empty(len(keys), np.int64)
    work = np.empty(2 * keys.shape[1], np.int64)  # (key, index) pairs, 16 bytes each
    kernel(keys.ctypes.data, len(keys), keys.shape[1], work.ctypes.data, index.ctypes.data)
    return index


@functools.lru_cache(maxsize=None)
def _c_kernel(integer):
    """The C replay's ``mode_rows`` for int64 (or double) keys, built and loaded; None
    without a C compiler."""
    # (the compiler's toolchain, a layer above: loaded only when a slice needs the replay)
    from ember.compiler.backends import toolchain
    argv = toolchain.find_compiler()
    if argv is None:
        return None
    try:
        lib, _, _ = toolchain.build("".join(_C.replace("KEY", key).replace("SFX", sfx)
                                            for key, sfx in (("int64_t", "i64"), ("double", "f64"))), argv)
    except (toolchain.CompileError, OSError, ValueError):
        return None
    kernel = lib.mode_rows_i64 if integer else lib.mode_rows_f64
    kernel.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    kernel.restype = None
    return kernel


_C = r"""
#include <stdint.h>
#include <string.h>
typedef struct { KEY v; int64_t i; } pair_SFX;
#define LESS(a, b) ((a).v < (b).v)
static void insert_back_SFX(pair_SFX *v, long i) {
    pair_SFX item = v[i];
    while (LESS(item, v[i - 1])) { v[i] = v[i - 1]; i--; }
    v[i] = item;
}
static void insertion_sort_SFX(pair_SFX *v, long first, long last) {
    for (long i = first + 1; i < last; i++) {
        pair_SFX item = v[i];
        if (LESS(item, v[first])) {
            memmove(v + first + 1, v + first, (size_t)(i - first) * sizeof(pair_SFX));
            v[first] = item;
        } else insert_back_SFX(v, i);
    }
}
static void swap_SFX(pair_SFX *v, long a, long b) { pair_SFX t = v[a]; v[a] = v[b]; v[b] = t; }
static void median_to_front_SFX(pair_SFX *v, long front, long a, long b, long c) {
    long m;
    if (LESS(v[a], v[b])) m = LESS(v[b], v[c]) ? b : LESS(v[a], v[c]) ? c : a;
    else m = LESS(v[a], v[c]) ? a : LESS(v[b], v[c]) ? c : b;
    swap_SFX(v, front, m);
}
static long partition_SFX(pair_SFX *v, long first, long last, long pivot) {
    for (;;) {
        while (LESS(v[first], v[pivot])) first++;
        last--;
        while (LESS(v[pivot], v[last])) last--;
        if (!(first < last)) return first;
        swap_SFX(v, first, last);
        first++;
    }
}
static void adjust_heap_SFX(pair_SFX *v, long base, long hole, long length, pair_SFX item) {
    long top = hole, child = hole;
    while (child < (length - 1) / 2) {
        child = 2 * (child + 1);
        if (LESS(v[base + child], v[base + child - 1])) child--;
        v[base + hole] = v[base + child];
        hole = child;
    }
    if (length % 2 == 0 && child == (length - 2) / 2) {
        child = 2 * (child + 1);
        v[base + hole] = v[base + child - 1];
        hole = child - 1;
    }
    long parent = (hole - 1) / 2;
    while (hole > top && LESS(v[base + parent], item)) {
        v[base + hole] = v[base + parent];
        hole = parent;
        parent = (parent - 1) / 2;
    }
    v[base + hole] = item;
}
static void heap_sort_SFX(pair_SFX *v, long first, long last) {
    long n = last - first;
    for (long parent = (n - 2) / 2; parent >= 0; parent--) adjust_heap_SFX(v, first, parent, n, v[first + parent]);
    for (long end = last - 1; end > first; end--) {
        pair_SFX item = v[end];
        v[end] = v[first];
        adjust_heap_SFX(v, first, 0, end - first, item);
    }
}
static void introsort_SFX(pair_SFX *v, long first, long last, long depth) {
    while (last - first > 16) {
        if (depth == 0) { heap_sort_SFX(v, first, last); return; }
        depth--;
        median_to_front_SFX(v, first, first + 1, first + (last - first) / 2, last - 1);
        long cut = partition_SFX(v, first + 1, last, first);
        introsort_SFX(v, cut, last, depth);
        last = cut;
    }
}
void mode_rows_SFX(const KEY *x, long rows, long n, pair_SFX *v, int64_t *index) {
    long depth = 0;
    for (long m = n; m > 1; m >>= 1) depth += 2;
    for (long r = 0; r < rows; r++) {
        for (long i = 0; i < n; i++) { v[i].v = x[r * n + i]; v[i].i = i; }
        if (n >= 2) {
            introsort_SFX(v, 0, n, depth);
            insertion_sort_SFX(v, 0, n < 16 ? n : 16);
            for (long i = 16; i < n; i++) insert_back_SFX(v, i);
        }
        long best = 0, longest = 0, run = 0;
        for (long k = 0; k < n; k++) {
            run++;
            if (k == n - 1 || v[k].v != v[k + 1].v) {
                if (run > longest) { best = k; longest = run; }
                run = 0;
            }
        }
        index[r] = v[best].i;
    }
}
#undef LESS
"""


def _introsort(v, first, last, depth, less):
    while last - first > _THRESHOLD:
        if depth == 0:
            _heap_sort(v, first, last, less)
            return
        depth -= 1
        _median_to_front(v, first, first + 1, first + (last - first) // 2, last - 1, less)
        cut = _partition(v, first + 1, last, first, less)
        _introsort(v, cut, last, depth, less)
        last = cut


def _median_to_front(v, front, a, b, c, less):
    if less(v[a], v[b]):
        m = b if less(v[b], v[c]) else c if less(v[a], v[c]) else a
    else:
        m = a if less(v[a], v[c]) else c if less(v[b], v[c]) else b
    v[front], v[m] = v[m], v[front]


def _partition(v, first, last, pivot, less):
    while True:
        while less(v[first], v[pivot]):
            first += 1
        last -= 1
        while less(v[pivot], v[last]):
            last -= 1
        if not first < last:
            return first
        v[first], v[last] = v[last], v[first]
        first += 1


def _insertion_sort(v, first, last, less):
    for i in range(first + 1, last):
        item = v[i]
        if less(item, v[first]):
            v[first + 1:i + 1] = v[first:i]
            v[first] = item
        else:
            _insert_back(v, i, less)


def _insert_back(v, i, less):
    item = v[i]
    while less(item, v[i - 1]):
        v[i] = v[i - 1]
        i -= 1
    v[i] = item


def _heap_sort(v, first, last, less):
    n = last - first
    for parent in range((n - 2) // 2, -1, -1):
        _adjust_heap(v, first, parent, n, v[first + parent], less)
    for end in range(last - 1, first, -1):
        item, v[end] = v[end], v[first]
        _adjust_heap(v, first, 0, end - first, item, less)


def _adjust_heap(v, base, hole, length, item, less):
    """Moves the hole at ``hole`` down to a leaf along the larger children, then ``item`` up
    from there to its place (a sift-down as two half-steps)."""
    top, child = hole, hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if less(v[base + child], v[base + child - 1]):
            child -= 1
        v[base + hole] = v[base + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        v[base + hole] = v[base + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and less(v[base + parent], item):
        v[base + hole] = v[base + parent]
        hole, parent = parent, (parent - 1) // 2
    v[base + hole] = item
