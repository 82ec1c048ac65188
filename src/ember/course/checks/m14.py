"""Module 14, profiling: the FLOP formulas of matrix products, against torch's FlopCounterMode."""
import ember
import torch
from torch.utils.flop_counter import FlopCounterMode as TorchCounter

from . import check, same


def _counts(lib, counter_cls, fn):
    counter = counter_cls(display=False)
    with counter:
        fn(lib)
    return {str(k).split(".")[-1]: v for k, v in counter.get_flop_counts()["Global"].items()}


def _compare(what, fn):
    got = _counts(ember, ember.utils.flop_counter.FlopCounterMode, fn)
    expected = _counts(torch, TorchCounter, fn)
    same(what, got, expected)


@check("14/matmul-flops", points=2)
def matmul_flops():
    for a, b in (((4, 5), (5, 3)), ((2, 4, 5), (2, 5, 3)), ((7, 3), (3, 1)), ((2, 3, 4, 5), (5, 6))):
        _compare(f"FLOPs of matmul {a} @ {b}",
                 lambda L, a=a, b=b: L.matmul(L.ones(a), L.ones(b)))


@check("14/linear-flops", points=2)
def linear_flops():
    # with a bias: addmm, this exercise's formula (without one Linear is a matmul, 14/matmul-flops')
    for batch in ((8,), (2, 8), ()):
        def run(L, batch=batch):
            layer = L.nn.Linear(6, 4)
            with L.no_grad():
                layer(L.ones(*batch, 6))
        _compare(f"FLOPs of Linear(6, 4) on input {(*batch, 6)}", run)
