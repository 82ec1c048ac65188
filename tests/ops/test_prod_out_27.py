"""``torch.prod(input, dim, keepdim=False, *, dtype=None, out=None)``: ``out=`` with a ``dim``
(written, returned, in the ``dtype`` asked), refused without one by the parser, and under
autograd, as torch 2.13's."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dim, keepdim, dtype", [(0, False, None), (1, True, None), (-1, False, "int64"),
                                                 (0, False, "float64")])
def test_prod_writes_out_as_torchs(dim, keepdim, dtype):
    x = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)
    got, want = [], []
    for lib, into in ((ember, got), (torch, want)):
        kind = None if dtype is None else getattr(lib, dtype)
        shape = (2, 3)[:dim % 2] + ((1,) if keepdim else ()) + (2, 3)[dim % 2 + 1:]
        out = lib.empty(shape, dtype=kind or lib.float32)
        result = lib.prod(lib.tensor(x), dim, keepdim, dtype=kind, out=out)
        into.append((result is out, str(out.dtype).split(".")[-1], out.tolist()))
    assert got == want


def test_prod_out_without_dim_or_with_grad_raises_as_torchs():
    for lib in (ember, torch):
        with pytest.raises(TypeError, match=r"prod\(\) received an invalid combination of arguments - got "
                                            r"\(Tensor, out=Tensor\)"):
            lib.prod(lib.ones(2, 3), out=lib.empty(()))
        with pytest.raises(RuntimeError, match=r"^prod\(\): functions with out=\.\.\. arguments don't support "
                                               "automatic differentiation"):
            lib.prod(lib.ones(2, 3, requires_grad=True), 0, out=lib.empty(3))
