"""Module 01, tensors: shape inference for view/reshape and strides, against torch."""
import torch

import ember

from . import check, raises_like, same

SHAPES = [((2, 3, 4), (6, 4)), ((2, 3, 4), (-1,)), ((2, 3, 4), (4, -1)), ((2, 3, 4), (-1, 2, 2)),
          ((0, 3), (-1, 3)), ((0, 3), (3, 0)), ((5,), (5, 1, -1)), ((), (1, -1)), ((1,), ())]
BAD = [((2, 3), (4, -1)), ((2, 3), (-1, -1)), ((2, 3), (7,)), ((2, 3), (-2, 3)), ((0, 3), (-1, 0))]


@check("01/infer-shape", points=2)
def infer_shape():
    for shape, target in SHAPES:
        same(f"zeros{shape}.view{target}.shape", tuple(ember.zeros(shape).view(target).shape),
             tuple(torch.zeros(shape).view(target).shape))
    for shape, target in BAD:
        try:
            torch.zeros(shape).view(target)
        except Exception as exc:
            raises_like(f"zeros{shape}.view{target}", lambda: ember.zeros(shape).view(target), type(exc))


@check("01/strides", points=2)
def strides():
    for shape in ((2, 3, 4), (5,), (), (3, 0, 2), (1, 7)):
        same(f"zeros{shape}.stride()", ember.zeros(shape).stride(), torch.zeros(shape).stride())
    same("(zeros(3, 0, 2) + 1).stride()", (ember.zeros(3, 0, 2) + 1).stride(), (torch.zeros(3, 0, 2) + 1).stride())
    # results with no element whose NumPy strides are all 0 (a reduction's, a product's, a join's)
    for make, what in ((lambda L: L.zeros(0, 3, 2).sum(2), "zeros(0, 3, 2).sum(2)"),
                       (lambda L: L.zeros(0, 3) @ L.zeros(3, 4), "zeros(0, 3) @ zeros(3, 4)"),
                       (lambda L: L.cat([L.zeros(0, 3), L.zeros(0, 3)]), "cat of two zeros(0, 3)")):
        same(f"{what}.stride()", make(ember).stride(), make(torch).stride())
    cases = (lambda L: L.zeros(2, 3, 4).transpose(0, 2), lambda L: L.zeros(4, 6)[::2, 1::3],
             lambda L: L.zeros(3, 4).t(), lambda L: L.zeros(2, 3, 4).permute(1, 2, 0))
    for make, what in zip(cases, ("transpose(0, 2)", "[::2, 1::3]", "t()", "permute(1, 2, 0)")):
        same(f"stride() of a {what} view", make(ember).stride(), make(torch).stride())
        same(f"stride(-1) of a {what} view", make(ember).stride(-1), make(torch).stride(-1))
