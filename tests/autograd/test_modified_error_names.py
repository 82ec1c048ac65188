"""The node torch 2.13's "modified by an inplace operation" error names ("which is output 0 of
Exp"): an op's node without ``Backward0`` (``Pow1`` for ``PowBackward1``, ``MyFn`` for a custom
Function), a view's ``AsStrided`` (torch regenerates a written view's grad_fn as an
as_strided), other nodes with their C++ namespace; compared with torch on the same programs."""
import pytest
import torch

import ember


def _mul(L, b):
    return b * b


def _written_under_no_grad(make, read=_mul, write=lambda b: b.add_(1)):
    def program(L):
        x = L.randn(3, 2, requires_grad=True)
        b = make(L, x)
        y = read(L, b)
        with L.no_grad():
            write(b)
        y.sum().backward()
    return program


def _written(make, read=_mul, write=lambda b: b.mul_(2)):
    def program(L):
        x = L.randn(3, 2, requires_grad=True)
        b = make(L, x)
        y = read(L, b)
        write(b)
        y.sum().backward()
    return program


def _custom_function(L):
    """A custom Function of L that doubles its input."""
    return type("MyFn", (L.autograd.Function,), {"forward": staticmethod(lambda ctx, x: x * 2),
                                                 "backward": staticmethod(lambda ctx, g: g * 2)})


PROGRAMS = {
    "slice-of-leaf": _written_under_no_grad(lambda L, x: x[1:], write=lambda b: b._base.mul_(2)),
    "t-of-leaf": _written_under_no_grad(lambda L, x: x.t(), write=lambda b: b._base.mul_(2)),
    "t-written-itself": _written_under_no_grad(lambda L, x: x.t()),
    "view-of-leaf": _written_under_no_grad(lambda L, x: x.view(6), write=lambda b: b._base.mul_(2)),
    "t-of-product": _written(lambda L, x: (x * 1).t(), write=lambda b: b._base.mul_(2)),
    "select-written-itself": _written(lambda L, x: (x * 1)[0]),
    "squeeze-noop": _written_under_no_grad(lambda L, x: x[0].squeeze()),
    "product": _written(lambda L, x: x * 1),
    "exp-output": _written(lambda L, x: x.exp(), read=lambda L, b: b.exp(), write=lambda b: b.add_(1)),
    "exp-then-sigmoid_": _written(lambda L, x: x.exp(), read=lambda L, b: b.exp(), write=lambda b: b.sigmoid_()),
    "exp-input": _written_under_no_grad(lambda L, x: x.exp()),
    "pow1": _written_under_no_grad(lambda L, x: L.pow(x.exp(), x)),
    "copy-slices": _written_under_no_grad(lambda L, x: _set_row(x * 1)),
    "sum": _written_under_no_grad(lambda L, x: x.sum()),
    "mean": _written_under_no_grad(lambda L, x: x.mean()),
    "clone": _written_under_no_grad(lambda L, x: x.clone()),
    "mm": _written_under_no_grad(lambda L, x: L.nn.functional.linear(x, x)),
    "custom-function": _written_under_no_grad(lambda L, x: _custom_function(L).apply(x)),
    "set_": _written_under_no_grad(lambda L, x: L.zeros(3).set_(x * 1)),
}


def _set_row(b):
    b[0] = 2.0  # a write through a view: b's node is CopySlices
    return b


def message(L, program):
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as error:
        program(L)
    return str(error.value).split("operation: ")[1]


@pytest.mark.parametrize("name", PROGRAMS)
def test_modified_error_names_the_node_as_torch(name):
    assert message(ember, PROGRAMS[name]) == message(torch, PROGRAMS[name])
