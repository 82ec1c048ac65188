"""Dtype rules of the products and sample-based ops against torch 2.13: integer ``addmm``/
``baddbmm`` truncate a float ``beta``/``alpha`` (in place too), bool operands of the product
kernels (``mm``, ``matmul``, ``dot``, ``vdot``, ``inner``, ``mv``, ``bmm``, ``addmm``,
``addmv``, ``addbmm``, ``baddbmm``, ``tensordot``), bool ``searchsorted``/``bucketize``
boundaries, float16/bfloat16 ``cdist`` and bool ``gradient``/``trapezoid`` are refused with
torch's error class, while ``addr``, ``outer`` and ``kron`` keep their bool forms."""
import pytest
import torch

import ember


def _env(lib):
    return {"torch": lib, "I": lib.arange(4, dtype=lib.int64).reshape(2, 2) - 1,
            "I1": lib.tensor([2, -3]), "I3": lib.arange(8, dtype=lib.int32).reshape(2, 2, 2),
            "B1": lib.tensor([True, False]), "B2": lib.tensor([[True, False], [True, True]]),
            "B3": lib.ones(2, 2, 2, dtype=lib.bool), "H2": lib.ones(2, 2, dtype=lib.float16),
            "BF2": lib.ones(2, 2, dtype=lib.bfloat16)}


SAME = ["torch.addmm(I, I, I, beta=0.5)", "torch.addmm(I, I, I, alpha=2.5)", "I.addmm(I, I, beta=1.5, alpha=2.5)",
        "I.clone().addmm_(I, I, beta=0.5)", "I.clone().addmm_(I, I, alpha=-1.5)",
        "torch.baddbmm(I3, I3, I3, beta=0.5, alpha=2.5)", "I3.clone().baddbmm_(I3.clone(), I3.clone(), alpha=1.5)",
        "torch.addmv(I1, I, I1, beta=0.5)", "torch.addbmm(I, I3.long(), I3.long(), alpha=0.5)",
        "torch.addr(B2, B1, B1)", "torch.outer(B1, B1)", "torch.kron(B1, B1)", "torch.searchsorted(I1.sort().values, B1)",
        "torch.trapezoid(I1)", "torch.gradient(I1)[0]", "torch.cdist(H2.float(), H2.float())"]
REFUSED = ["torch.mm(B2, B2)", "torch.matmul(B2, B2)", "B2 @ B1", "torch.dot(B1, B1)", "torch.vdot(B1, B1)",
           "torch.inner(B1, B1)", "torch.mv(B2, B1)", "torch.bmm(B3, B3)", "torch.matmul(B3, B2)",
           "torch.addmm(B2, B2, B2)", "torch.addmv(B1, B2, B1)", "torch.addbmm(B2, B3, B3)",
           "torch.baddbmm(B3, B3, B3)", "torch.tensordot(B2, B2, 1)", "torch.addmv(I, I, I1)",
           "torch.searchsorted(B1, B1)", "torch.bucketize(B1, B1)", "torch.cdist(H2, H2)", "torch.cdist(BF2, BF2)",
           "torch.gradient(B1)", "torch.trapezoid(B1)", "torch.trapz(B2)", "torch.cumulative_trapezoid(B1)"]


@pytest.mark.parametrize("call", SAME)
def test_values_and_dtypes_equal_torch(call):
    want, got = eval(call, _env(torch)), eval(call, _env(ember))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], call
    assert got.tolist() == want.tolist(), call


@pytest.mark.parametrize("call", REFUSED)
def test_refused_with_torchs_error_class(call):
    with pytest.raises(Exception) as want:
        eval(call, _env(torch))
    with pytest.raises(type(want.value)):
        eval(call, _env(ember))
