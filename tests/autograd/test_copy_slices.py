"""A write through a basic index (``y[0] = v``, ``y[:, 1] += 1``) is torch's: a copy into the
view the index selects, so the written tensor's grad_fn is ``CopySlices`` linked to its old
history and to the value (issue 8, docs/pytorch-parity.md), with torch's values, gradients and
errors; a write without recording goes into the view (no copy of the whole tensor)."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def tree(node):
    """The type names of ``node`` and everything behind it, depth first, in edge order."""
    if node is None:
        return None
    return [type(node).__name__] + [tree(n) for n, _ in node.next_functions]


WRITES = {
    "int": lambda L, y, v: y.__setitem__(0, 5.0),
    "int-int": lambda L, y, v: y.__setitem__((1, 2), 5.0),
    "slice-step": lambda L, y, v: y.__setitem__((slice(None), slice(0, 4, 2)), 5.0),
    "none": lambda L, y, v: y.__setitem__(None, 5.0),
    "row-tensor": lambda L, y, v: y.__setitem__(1, v),
    "row-tensor-leading-one": lambda L, y, v: y.__setitem__(1, v.reshape(1, 4)),
    "other-dtype": lambda L, y, v: y.__setitem__(2, L.ones(4, dtype=L.float32)),
    "on-a-view": lambda L, y, v: y[1:].__setitem__((0, slice(1, 3)), v[:2]),
}


@pytest.mark.parametrize("write", WRITES, ids=list(WRITES))
def test_basic_index_writes_record_copy_slices(write):
    results = []
    for L in (ember, torch):
        x = L.arange(12.0, dtype=L.float64).reshape(3, 4).requires_grad_()
        v = (L.arange(4.0, dtype=L.float64) - 1.5).requires_grad_()
        y = x * 2
        WRITES[write](L, y, v)
        (y * L.arange(12.0, dtype=L.float64).reshape(3, 4) ** 2).sum().backward()
        results.append((tree(y.grad_fn), y.detach().numpy(), x.grad.numpy(),
                        None if v.grad is None else v.grad.numpy()))
    (e_tree, *e), (t_tree, *t) = results
    assert e_tree == t_tree and e_tree[0] == "CopySlices"
    for a, b in zip(e, t):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(a, b)


def test_an_in_place_op_on_an_indexed_view_shows_copy_slices():
    # ``y[:, 1] += 1`` is getitem, an in-place add on the view, and setitem of that view
    names, grads = [], []
    for L in (ember, torch):
        x = L.arange(12.0).reshape(3, 4).requires_grad_()
        y = x * 2
        y[:, 1] += 1
        y[0, :2].mul_(3)
        names.append(type(y.grad_fn).__name__)
        (y * y).sum().backward()
        grads.append(x.grad.numpy())
    assert names == ["CopySlices", "CopySlices"]
    np.testing.assert_array_equal(*grads)


def test_writes_without_recording_and_their_errors_are_torchs():
    for L in (ember, torch):
        x = L.zeros(3, 4)
        x[1:][0, 1:3] = L.tensor([5.0, 6.0])
        x[2] = 7
        x[0, -1] = L.tensor(8)  # an int64 value into float32
        assert x.tolist() == [[0, 0, 0, 8], [0, 5, 6, 0], [7, 7, 7, 7]] and x._version == 3
    messages = []
    for L in (ember, torch):
        row = []
        for bad in (lambda: L.zeros(3, 4).__setitem__(0, L.ones(3)),
                    lambda: L.zeros(3, 4).__setitem__(3, 1.0),
                    lambda: L.ones(3, requires_grad=True).__setitem__(0, 0.0),
                    lambda: L.zeros(3).expand(2, 3).__setitem__((slice(None), 0), 1.0)):
            with pytest.raises((RuntimeError, IndexError)) as info:
                bad()
            row.append((info.type, str(info.value)))
        messages.append(row)
    assert messages[0] == messages[1]


WHOLE_WRITES = {
    "colon-number": lambda L, y, v: y.__setitem__(slice(None), 5.0),
    "ellipsis-0d": lambda L, y, v: y.__setitem__(Ellipsis, v[1]),
    "ellipsis-tensor": lambda L, y, v: y.__setitem__(Ellipsis, v),
    "colon-broadcast-row": lambda L, y, v: y.__setitem__(slice(None), v[:1]),
    "ellipsis-leading-ones": lambda L, y, v: y.__setitem__(Ellipsis, v.reshape(1, 1, 4)),
}


@pytest.mark.parametrize("write", WHOLE_WRITES, ids=list(WHOLE_WRITES))
def test_whole_tensor_writes_are_fill_or_copy_of_self(write):
    # torch: y[:] = 2 is y.fill_ (FillBackward3), y[...] = v is y.copy_ (CopyBackwards, from
    # v's expand where v broadcasts), not an index_put. (A value of another dtype shows one
    # ToCopyBackward0 more than torch's, whose copy_ casts inside its node.)
    results = []
    for L in (ember, torch):
        x = L.arange(12.0, dtype=L.float64).reshape(3, 4).requires_grad_()
        v = (L.arange(4.0, dtype=L.float64) - 1.5).requires_grad_()
        y = x * 2
        WHOLE_WRITES[write](L, y, v)
        (y * L.arange(12.0, dtype=L.float64).reshape(3, 4) ** 2).sum().backward()
        results.append((tree(y.grad_fn), y.detach().numpy(), x.grad.numpy(), v.grad))
    (e_tree, *e), (t_tree, *t) = results
    assert e_tree == t_tree and e_tree[0] in ("FillBackward3", "CopyBackwards")
    for a, b in zip(e, t):
        np.testing.assert_array_equal(np.asarray(a if a is None else getattr(a, "numpy", lambda: a)()),
                                      np.asarray(b if b is None else getattr(b, "numpy", lambda: b)()))
