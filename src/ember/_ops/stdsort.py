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
"""

__all__ = ["std_sort", "mode_of"]

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
