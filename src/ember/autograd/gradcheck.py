"""Finite-difference checks of analytical gradients (``torch.autograd.gradcheck``).

The numerical Jacobian uses central differences ``(f(x + eps) - f(x - eps)) / 2 eps`` one
element at a time; inputs should be float64 for the default tolerances to be meaningful.
The Jacobians are assembled and compared on the host, with NumPy, as a test tool reads
values (``.numpy()``), not as array work of a training program.
"""
import numpy as np

from .._tensor import Tensor  # first: it loads the ops, which _creation is written on
from .._creation import zeros_like
from .._memory_format import contiguous_format
from .._sampling import randn
from . import forward_ad
from .engine import grad as _grad
from .grad_mode import enable_grad, no_grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised when analytical and numerical gradients disagree."""


def _tensors(inputs):
    return [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]


def _outputs(fn, inputs):
    out = fn(*inputs)
    return out if isinstance(out, tuple) else (out,)


def _parts(a):
    """An array's values as float64 numbers: complex ones as their real, then imaginary parts."""
    a = a.reshape(-1)
    return np.concatenate([a.real, a.imag]).astype(np.float64) if a.dtype.kind == "c" else a.astype(np.float64)


def _directions(t):
    """The real directions of a tensor's elements: x for real ones, x and iy for complex ones."""
    return (1, 1j) if t.dtype.is_complex else (1,)


def _numerical(fn, inputs, wrt, eps):
    """The Jacobian of every output's real parts with respect to every input's real parts
    (complex numbers count as two reals, x and y), by central differences."""
    jac = []
    with no_grad():
        base = _outputs(fn, inputs)
        for x in wrt:
            array, n = x._data, x._data.size  # (elements in row-major order, whatever its strides)
            cols = [np.zeros((_parts(o._data).size, n * len(_directions(x)))) for o in base]
            for d, step in enumerate(_directions(x)):
                for k, at in enumerate(np.ndindex(array.shape)):
                    orig = array[at].copy()
                    array[at] = orig + eps * step
                    plus = [_parts(o._data) for o in _outputs(fn, inputs)]
                    array[at] = orig - eps * step
                    minus = [_parts(o._data) for o in _outputs(fn, inputs)]
                    array[at] = orig
                    for c, p, m in zip(cols, plus, minus):
                        c[:, d * n + k] = (p - m) / (2 * eps)
            jac.append(cols)
    return jac


def _analytical(fn, inputs, wrt):
    """The same Jacobian from autograd. PyTorch's convention makes the gradient of a complex
    input z = x + iy, seeded with 1 (or i) at one output element, d/dx + i d/dy of that
    element's real (or imaginary) part: one row per seed, split into real columns."""
    outs = _outputs(fn, inputs)
    jac = [[np.zeros((_parts(o._data).size, x.numel() * len(_directions(x)))) for o in outs] for x in wrt]
    for oi, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for p, part in enumerate(_directions(o)):
            for r in range(o.numel()):
                seed = zeros_like(o, memory_format=contiguous_format)  # (row-major: its flat view is its own)
                seed._data.reshape(-1)[r] = part
                grads = _grad(o, wrt, seed, retain_graph=True, allow_unused=True)
                for xi, g in enumerate(grads):
                    if g is not None:
                        jac[xi][oi][p * o.numel() + r, :] = _parts(g._data)
    return jac


def _forward(fn, inputs, wrt):
    """The same Jacobian column by column from forward mode (``autograd.forward_ad``): every
    output's tangent for a unit tangent on one element of one input."""
    with no_grad():
        outs = _outputs(fn, inputs)
    jac = []
    for x in wrt:
        cols = [np.zeros((_parts(o._data).size, x.numel() * len(_directions(x)))) for o in outs]
        for d, step in enumerate(_directions(x)):
            for k in range(x.numel()):
                tangent = zeros_like(x, memory_format=contiguous_format)
                tangent._data.reshape(-1)[k] = step
                with forward_ad.dual_level():
                    args = [forward_ad.make_dual(a.detach(), tangent) if a is x else a for a in inputs]
                    for c, o in zip(cols, _outputs(fn, args)):
                        t = forward_ad.unpack_dual(o).tangent
                        if t is not None:
                            c[:, d * x.numel() + k] = _parts(t.detach()._data)
        jac.append(cols)
    return jac


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, check_forward_ad=False,
              check_backward_ad=True, **kwargs):
    """True when ``func``'s Jacobian from backward mode (``check_backward_ad``) and from forward
    mode (``check_forward_ad``, ``autograd.forward_ad``) matches central differences at
    ``inputs``; GradcheckError (or False with ``raise_exception=False``) otherwise."""
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    wrt = _tensors(inputs)
    numerical = _numerical(func, inputs, wrt, eps)
    checks = ([("analytical", _analytical(func, inputs, wrt))] if check_backward_ad else []) + \
        ([("forward", _forward(func, inputs, wrt))] if check_forward_ad else [])
    for mode, analytical in checks:
        for i, (na, an) in enumerate(zip(numerical, analytical)):
            for j, (n, a) in enumerate(zip(na, an)):
                if not np.allclose(a, n, rtol=rtol, atol=atol):
                    if raise_exception:
                        raise GradcheckError(f"Jacobian mismatch for output {j} with respect to input {i},\n"
                                             f"numerical:{n}\n{mode}:{a}\n")
                    return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  raise_exception=True, **kwargs):
    """Checks second derivatives: gradcheck of ``x -> grad(func(x), x, v)`` for random ``v``."""
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    wrt_idx = [i for i, x in enumerate(inputs) if getattr(x, "requires_grad", False)]
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        grad_outputs = tuple(randn(o.shape, dtype=o.dtype) for o in outs)

    def first_grad(*xs):
        # Recording even where gradcheck's differences run under no_grad (without it, those
        # would differentiate nothing and the check would pass vacuously).
        with enable_grad():
            out = _outputs(func, xs)
            wrt = [xs[i] for i in wrt_idx]
            diff = [(o, v) for o, v in zip(out, grad_outputs) if o.requires_grad]
            gs = _grad([o for o, _ in diff], wrt, [v for _, v in diff], create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)
    return gradcheck(first_grad, inputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception)
