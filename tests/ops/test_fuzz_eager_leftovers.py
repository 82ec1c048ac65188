"""The eager fuzzer's leftovers (docs/pytorch-parity.md, "Still open" until session 12), each a
standalone program run with torch 2.13 and with ember and compared as the fuzzer compares
(test_fuzz_eager.check: the exception's builtin class, values, dtypes, requires_grad, and the
strides of view results and their gradients)."""
import pytest

from test_fuzz_eager import check

GRADS = """
o = result if isinstance(result, torch.Tensor) else result[0]
w = torch.arange(o.numel(), dtype=o.dtype).reshape(o.shape).sin() + 0.5
g = torch.autograd.grad(o, leaves, w, create_graph=True, allow_unused=True)
result = [result, list(g), [gi is not None and gi.requires_grad for gi in g]]
gs = [(gi * torch.arange(gi.numel(), dtype=gi.dtype).reshape(gi.shape).cos()).sum()
      for gi in g if gi is not None and gi.requires_grad]
if gs:
    result.append(list(torch.autograd.grad(sum(gs), leaves, allow_unused=True)))
"""


class Program:
    """A fuzzer case made by hand: ``source`` leaves ``result``; ``views`` compares strides."""

    def __init__(self, name, source, views=False):
        self.seed, self.family, self.op = name, "leftover", name
        self.views, self.oracle, self._source = views, False, source

    def source(self):
        return self._source


def _x(values, grad=True):
    return f"torch.tensor({values!r}, dtype=torch.float64{', requires_grad=True' if grad else ''})"


PROGRAMS = {
    # as_strided addresses the storage an expanded tensor views (NumPy hides it behind a helper)
    "as_strided-of-expanded": (f"a = {_x([1.0, 2.0])}\nleaves = [a]\n"
                               "result = a.expand(3, 2).as_strided((2,), (1,))" + GRADS, True),
    "storage_offset-of-expanded": ("result = torch.tensor([torch.tensor([1.0, 2.0])[1:].expand(3, 1)"
                                   ".storage_offset()])", False),
    # the gradient of as_strided has its input's strides; an input element sharing memory
    # with others (an expanded input) gets its share of the storage's gradient
    "as_strided-gradient-strides": (f"a = {_x([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])}\nx = (a * a).t()\n"
                                    "leaves = [x]\nresult = x.as_strided((2, 2), (1, 2), 1)" + GRADS, True),
    "as_strided-of-overlapping-input": (f"a = {_x([1.0, 2.0])}\nx = (a * a).expand(3, 2)\nleaves = [x, a]\n"
                                        "result = x.as_strided((2,), (1,))" + GRADS, True),
    # reductions allocate their results contiguous (expand's gradient is a sum)
    "permute-of-expanded-gradient": (f"a = {_x([[[0.5], [-1.0], [2.0], [1.5]], [[3.0], [-2.5], [-1.5], [0.25]], [[-2.0], [-1.0], [-1.5], [-0.5]]])}\n"
                                     "leaves = [a]\nresult = a.expand((3, 4, 4)).permute(1, 2, 0)" + GRADS, True),
    "sum-of-permuted-strides": ("x = torch.ones(4, 4, 3).permute(2, 0, 1)\n"
                                "result = [x.sum(2), x.sum(2, keepdim=True), x.amax(1), x.prod(2), "
                                "x.cumsum(2), x.all(2), x.mean(2)]", True),
    # over all dims with no degrees of freedom left, var's gradient is torch's constant
    # (nan at an element equal to the mean, inf elsewhere), which requires no grad
    "var-0d-no-dof": (f"a = {_x(0.5)}\nleaves = [a]\nresult = a.var(dim=-1)" + GRADS, False),
    "var-no-dof": (f"a = {_x([1.5, 2.0, float('nan')])}\nb = {_x([1.5])}\nleaves = [a, b]\n"
                   "result = [a[:2].var(correction=2), b.var(), a[2:].var(), torch.var_mean(a[:2], correction=3)[0]]\n"
                   "result = torch.stack(result)" + GRADS, False),
    # var_mean's mean is torch's Welford update: an inf followed by another element gives nan
    "var_mean-welford-mean": (f"a = {_x([[1.0, 2.0, -float('inf')], [float('inf'), 3.0, 4.0], [5.0, 6.0, 7.0]])}\n"
                              "leaves = [a]\nresult = torch.stack([torch.var_mean(a, 1)[1], torch.var_mean(a, 0)[1], "
                              "torch.std_mean(a.t(), 0, keepdim=True)[1][0], torch.var_mean(a)[1].expand(3)])" + GRADS, False),
    # complex silu computes (torch refuses only to differentiate it)
    "complex-silu": ("x = torch.tensor([1 + 2j, -0.5 + 0.25j, 3 - 1j])\n"
                     "result = [F.silu(x), torch.nn.SiLU()(x), F.silu(x.clone(), inplace=True)]", False),
    "complex-silu-recorded": ("result = F.silu(torch.tensor([1 + 2j], requires_grad=True))", False),
    # complex //, fmod and % by zero: the kernel's NotImplementedError, not ZeroDivisionError
    "complex-floor-divide-by-zero": ("result = torch.tensor([1 + 2j]) // torch.tensor([0j])", False),
    "complex-fmod-by-zero": ("result = torch.fmod(torch.tensor([1 + 2j]), 0)", False),
    "complex-remainder-by-false": ("result = torch.remainder(torch.tensor(-1.25 - 2j), torch.tensor(False))", False),
    # second derivatives at inf are torch's: its first-derivative formulas, differentiated
    "logaddexp-second-derivative-at-inf": (
        f"a = {_x([float('inf'), 1.0, float('inf'), -float('inf'), 2.0, 800.0, 1.0])}\n"
        f"b = {_x([1.0, float('inf'), float('inf'), 1.0, -float('inf'), 1.0, 800.0])}\n"
        "leaves = [a, b]\nresult = torch.logaddexp(a, b)" + GRADS, False),
    "div-second-derivative-at-inf": (f"a = {_x([float('inf'), 1.0, 2.0, 1e300])}\nb = {_x([1.0, float('inf'), 0.0, 1e-300])}\n"
                                     "leaves = [a, b]\nresult = torch.div(a, b)" + GRADS, False),
    "copysign-second-derivative-at-zero": (f"a = {_x([-2.375, 0.0, 1.5])}\nb = {_x([-2.0])}\n"
                                           "leaves = [a, b]\nresult = torch.copysign(a, b.expand(3))" + GRADS, False),
    # cumprod along a dim of one element (or of an empty tensor) hands its gradient on as it is
    "cumprod-of-one-element": (f"a = {_x([[-1.75, 1.375, 2.125]])}\nleaves = [a]\n"
                               "result = torch.cat([a.cumprod(0), a.t().cumprod(-1).t()])" + GRADS, False),
    # an integer among advanced indices selects first, in setitem as in getitem: an index_put
    # into that view (shape [2, 1, 1, 1] here, not NumPy's [1, 2, 1, 1]), so y's grad_fn is
    # torch's CopySlices
    "setitem-int-among-advanced": (f"a = {_x([[[0.0, -3.0, -1.25], [1.75, -1.125, 0.125]], [[0.125, -1.375, 0.625], [0.375, -2.375, 1.875]]])}\n"
                                   "leaves = [a]\ny = a * 1\ni = (slice(None), None, 0, None, torch.tensor([2]))\n"
                                   "y[i] = torch.arange(2.0, dtype=torch.float64).reshape(y[i].shape)\n"
                                   "y[1, [0]] = 5.0\ny[torch.tensor([1, 0]), 1, 1:] = -1.0\n"
                                   "name = type(y.grad_fn).__name__\nresult = y" + GRADS + "result.append(name)", False),
    # index arrays that do not broadcast: torch's IndexError before its dtype check
    "setitem-unbroadcastable-indices-other-dtype": (
        "y = torch.zeros(3, 1, dtype=torch.bfloat16)\n"
        "y[torch.tensor([True, True, False]), torch.tensor([], dtype=torch.long)] = torch.tensor(-2.125 - 2.75j)\n"
        "result = y", False),
    "setitem-unbroadcastable-masks-other-dtype": (
        "y = torch.zeros(2, 4, dtype=torch.bool)\n"
        "y[torch.tensor([True, True]), torch.tensor([False, True, True, True])] = torch.tensor(7)\nresult = y", False),
    # a one-element value through one boolean mask converts as a number (torch's masked_fill):
    # refused where it overflows the destination
    "setitem-mask-value-overflows": ("y = torch.zeros(4, 2, dtype=torch.uint8)\n"
                                     "y[-1:4, torch.tensor([True, True])] = torch.tensor(2 ** 63 - 1)\nresult = y", False),
    "setitem-mask-negative-float-into-uint8": ("y = torch.zeros(1, 4, 2, dtype=torch.uint8)\n"
                                               "y[torch.tensor([True]), 1:3] = torch.tensor(-2.375, dtype=torch.float64)\n"
                                               "result = y", False),
    "setitem-mask-complex-into-int": ("y = torch.zeros(4, 3, dtype=torch.int64)\n"
                                      "y[3, torch.tensor([True, True, False])] = torch.tensor(-1.375 + 2.25j)\nresult = y", False),
    "setitem-mask-fitting-value": ("y = torch.zeros(3, dtype=torch.uint8)\nm = torch.tensor([True, False, True])\n"
                                   "y[m] = torch.tensor(-1)\nz = torch.zeros(3)\nz[m] = torch.tensor([2.5], dtype=torch.float64)\n"
                                   "result = [y, z]", False),
    # a complex number into bool is its truth (no overflow), as torch's fill
    "setitem-complex-into-bool": ("y = torch.zeros(2, 2, dtype=torch.bool)\ny[None] = 1 + 2j\nz = torch.ones(3, dtype=torch.bool)\n"
                                  "z[1:] = 0j\nz[0, None] = 2j\nresult = [y, z, torch.full((2,), 3j, dtype=torch.bool)]", False),
    # bfloat16 to integers wraps as torch's (through float), where ml_dtypes' cast saturated
    "bfloat16-to-integers": ("x = torch.tensor([-1.25, -3.0, -200.0, 300.5, -0.5, 255.9, 70000.0], dtype=torch.bfloat16)\n"
                             "y = torch.zeros((), dtype=torch.uint8)\ny[...] = x[0]\n"
                             "result = [x.to(torch.uint8), x.to(torch.int8), x.to(torch.int16), x.int(), y]", False),
    # where's number arguments convert to the result dtype as torch's checked conversion
    "where-number-overflows-uint8": ("x = torch.tensor([2, 0], dtype=torch.uint8)\nresult = torch.where(x > 0, x, 300)", False),
    "where-number-fits": ("x = torch.tensor([2, 0], dtype=torch.uint8)\n"
                          "result = [torch.where(x > 0, x, -1), torch.where(x > 0, 2.5, x), torch.where(x > 0, x, True)]", False),
    "hardtanh-uint8-negative-bound": ("result = F.hardtanh(torch.tensor([1, 2], dtype=torch.uint8))", False),
    "hardtanh-uint8": ("x = torch.tensor([1, 2, 9], dtype=torch.uint8)\nresult = [F.hardtanh(x, 0.0, 1.0), F.relu6(x)]", False),
    # pow by a False exponent differentiates by the formula (torch's zeros are for a number 0);
    # bfloat16 ** -0.5 is torch's rsqrt (nan at -inf)
    "pow-false-exponent": (f"a = {_x([2.5, float('nan'), -3.0])}\nleaves = [a]\nresult = torch.pow(a, False)" + GRADS, False),
    "pow-zero-exponent": (f"a = {_x([2.5, float('nan'), -3.0])}\nleaves = [a]\nresult = torch.pow(a, 0)" + GRADS, False),
    "bfloat16-rsqrt-power": ("result = torch.tensor([-float('inf'), 0.875, -0.0], dtype=torch.bfloat16) ** -0.5", False),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_matches_torch(name):
    source, views = PROGRAMS[name]
    check(Program(name, source + "\n", views))
