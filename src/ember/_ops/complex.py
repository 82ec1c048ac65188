"""Complex numbers: building and taking apart complex tensors, conjugation, and the ops torch
refuses on complex inputs (https://pytorch.org/docs/stable/complex_numbers.html).

Gradients follow PyTorch's convention: for a real loss L of z = x + iy, ``z.grad`` is
dL/dx + i dL/dy, the conjugate Wirtinger derivative times 2 (see the autograd note
https://pytorch.org/docs/stable/notes/autograd.html#complex-autograd-doc). Holomorphic ops
get it for free from their real derivative rules (``Op.holomorphic``); the ops here are not
holomorphic and state their rules directly.

``conj`` is a lazy view, as torch's conjugate bit makes it: ``c = t.conj()`` shares ``t``'s
version counter, ``c._base`` is ``t``, and a write into either side shows in the other. NumPy
cannot stride a conjugate, so the view holds its own array, laid out as its source (same strides
and storage offset, in a buffer the size of the source's storage), and ``_backend.conj_views``
keeps the pair: every in-place write (``core.write_into``) that lands in one side is conjugated
into the other. Writes that bypass ember's in-place ops (into the
array ``t.numpy()`` returns, say) do not reach the view. That laying out in a buffer is
NumPy's: another library's arrays get a conjugated copy (``conj`` is then not a view), and
the bookkeeping below (``np.may_share_memory``, buffer addresses) sees NumPy arrays only.
"""
import warnings

import numpy as np

from .. import _backend, _dtype
from .._backend import conj_views
from .args import with_out
from .core import _NAMES, Op, apply, elementwise_rule, link_view, named, real_rule
from . import pointwise_unary


def _check_parts(a, b):
    if a.dtype is not b.dtype or a.dtype not in (_dtype.float16, _dtype.float32, _dtype.float64):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_NAMES[a.dtype.name]} and {_NAMES[b.dtype.name]}")


def complex(real, imag, *, out=None):
    """The complex tensor ``real + i imag`` (broadcast). ``real`` and ``imag`` must share one
    floating dtype (float32 gives complex64, float64 complex128); RuntimeError otherwise
    (https://pytorch.org/docs/stable/generated/torch.complex.html)."""
    _check_parts(real, imag)
    return with_out(apply(Complex, real, imag), out)


class Complex(Op):
    promote = None
    save_inputs = False
    holomorphic = False

    @staticmethod
    def forward(re, im):
        # Assigning the parts keeps infinities exact (re + 1j * im turns inf * 0 into nan).
        out = _backend.namespace(re, im).empty(_backend.broadcast_shapes(re.shape, im.shape),
                                               dtype=np.result_type(re.dtype, 1j))
        out.real, out.imag = re, im
        return out

    @classmethod
    def infer(cls, re, im):
        return elementwise_rule(cls, re, im)[0], re.dtype.to_complex()

    @staticmethod
    def backward(ctx, g):
        return g.real, g.imag


def polar(abs, angle, *, out=None):
    """``abs * (cos(angle) + i sin(angle))``: a complex tensor from magnitudes and angles in
    radians, both of one floating dtype
    (https://pytorch.org/docs/stable/generated/torch.polar.html)."""
    _check_parts(abs, angle)
    return with_out(complex(abs * angle.cos(), abs * angle.sin()), out)


def real(input):
    """The real parts of a complex tensor, as a view (writes show in ``input``); a real tensor
    is returned itself (https://pytorch.org/docs/stable/generated/torch.real.html)."""
    return apply(Real, input) if input.dtype.is_complex else input


def imag(input):
    """The imaginary parts of a complex tensor, as a view. RuntimeError for real tensors
    (https://pytorch.org/docs/stable/generated/torch.imag.html)."""
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return apply(Imag, input)


class Real(Op):
    promote = None
    save_inputs = False
    is_view = True
    holomorphic = False
    forward = staticmethod(lambda z: z.real)
    infer = classmethod(real_rule)

    @staticmethod
    def backward(ctx, g):
        return (g.to(ctx.dtypes[0]),)


class Imag(Real):
    forward = staticmethod(lambda z: z.imag)
    infer = classmethod(real_rule)

    @staticmethod
    def backward(ctx, g):
        return (g * 1j,)


def conj(input):
    """The complex conjugate as a lazy view of ``input`` (writes to either show in the other);
    ``input`` itself when it is not complex. The result reports ``is_conj()``; the conjugate of
    a conjugate does not (https://pytorch.org/docs/stable/generated/torch.conj.html)."""
    if not input.dtype.is_complex:
        return input
    out = apply(Conj, input)
    link_view(out, input, Conj, {})
    if type(input._data) is not np.ndarray:
        return out
    out._data.flags.writeable = input._data.flags.writeable
    conj_views.register(out._data, input._data, not is_conj(input))
    return out


def conj_physical(input, *, out=None):
    """The complex conjugate, computed now into new memory (``is_conj()`` False); a real
    ``input`` itself (https://pytorch.org/docs/stable/generated/torch.conj_physical.html)."""
    return with_out(apply(ConjPhysical, input) if input.dtype.is_complex else input, out)


class Conj(Op):
    """The values of ``conj``'s view: a conjugated copy laid out in memory as its input is."""
    promote = None
    save_inputs = False
    holomorphic = False
    untracked_view = True  # conj() makes the result a view kept in step by copies
    pointwise = False  # laid out as its input by the kernel: the write-back follows that layout
    infer = classmethod(elementwise_rule)

    @staticmethod
    def forward(z):
        if type(z) is not np.ndarray:  # (see the module's docstring: conj views are NumPy's)
            return _backend.namespace(z).conjugate(z)
        return np.conjugate(z, out=conj_views.laid_out_like(z))

    @staticmethod
    def backward(ctx, g):
        return (apply(ConjPhysical, g),)


class ConjPhysical(Conj):
    untracked_view = False  # new memory, not a view
    forward = staticmethod(_backend.kernel("conjugate"))


def is_conj(input):
    """True for a complex view made by :func:`conj` (or a view of one): torch's conjugate bit
    (https://pytorch.org/docs/stable/generated/torch.is_conj.html)."""
    if not conj_views.VIEWS or not input.dtype.is_complex or type(input._data) is not np.ndarray:
        return False
    return any(bit and np.may_share_memory(view, input._data) for view, _, bit in conj_views.live())


def resolve_conj(input):
    """``input`` with its conjugate bit cleared: a copy when :func:`is_conj`, else ``input``
    (https://pytorch.org/docs/stable/generated/torch.resolve_conj.html)."""
    return input.clone() if is_conj(input) else input


def is_neg(input):
    """True for the imaginary part of a :func:`conj` view (or a view of it): torch's negative
    bit, which ``t.conj().imag`` carries as a lazily negated view of ``t.imag``
    (https://pytorch.org/docs/stable/generated/torch.is_neg.html). ember's conj view holds the
    conjugated values, so its imaginary part already is the negation; this tells it apart
    from the real part by where it lies within the complex elements."""
    if not conj_views.VIEWS or input.dtype.is_complex or type(input._data) is not np.ndarray:
        return False
    data = input._data
    for view, _, bit in conj_views.live():
        if bit and view.itemsize == 2 * data.itemsize and np.may_share_memory(view, data):
            return (conj_views.address(data) - conj_views.address(view)) % view.itemsize == data.itemsize
    return False


def resolve_neg(input):
    """``input`` with its negative bit cleared: a copy when :func:`is_neg`, else ``input``
    (https://pytorch.org/docs/stable/generated/torch.resolve_neg.html)."""
    return input.clone() if is_neg(input) else input


def isreal(input):
    """True where an element has no imaginary part (everywhere for real tensors)
    (https://pytorch.org/docs/stable/generated/torch.isreal.html)."""
    if not input.dtype.is_complex:
        return input.new_ones(input.shape, dtype=_dtype.bool)
    return apply(Imag, input) == 0


def adjoint(input):
    """The conjugate transpose of the last two dims (``input.mH``)."""
    return conj(input.transpose(-2, -1))


def conj_transpose(input):
    """``Tensor.H``: the conjugate transpose of a matrix (torch's TransposeBackward0 node, or
    ConjBackward0 for complex); a 0-d tensor's conjugate, with torch's warning; RuntimeError for
    another rank."""
    if input.ndim == 0:
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=2)
        return conj(input)
    if input.ndim != 2:
        message = f"tensor.H is only supported on matrices (2-D tensors). Got {input.ndim}-D tensor."
        raise RuntimeError(message + (" For batches of matrices, consider using tensor.mH" if input.ndim > 2 else ""))
    return conj(input.transpose(0, 1))


def angle(input, *, out=None):
    """The argument of each element in radians, in (-pi, pi]: ``atan2(imag, real)`` for complex
    inputs, 0 or pi by the sign of real ones (nan stays nan); float result
    (https://pytorch.org/docs/stable/generated/torch.angle.html)."""
    return with_out(apply(Angle, input), out)


class Angle(Op):
    promote = "float"
    holomorphic = False

    @staticmethod
    def forward(x):
        xp = _backend.namespace(x)
        if x.dtype.kind == "c":
            return xp.angle(x)
        return xp.where(x < 0, np.pi, xp.where(xp.isnan(x), x, 0)).astype(x.dtype)

    @classmethod
    def infer(cls, x):
        return real_rule(cls, x)

    @staticmethod
    def backward(ctx, g):
        z = ctx.input(0)
        if not z.dtype.is_complex:
            return (g * 0,)
        # d angle = (x dy - y dx) / |z|^2, so the gradient is g * i z / |z|^2 (0 at z = 0).
        r2 = z.abs().square()
        return (g * 1j * z / r2.masked_fill(r2 == 0, 1.0),)


def abs_for_in_place(input):
    """``abs`` as ``Tensor.abs_`` computes it: RuntimeError for complex ``input``, whose real
    magnitudes could not be written back into it (torch refuses the same way)."""
    if input.dtype.is_complex:
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return pointwise_unary.abs(input)


abs_for_in_place.__name__ = "abs"  # Tensor.abs_'s name, made from this one


def sgn(input, *, out=None):
    """``input / |input|`` for complex inputs (0 at 0), ``sign(input)`` for real ones
    (https://pytorch.org/docs/stable/generated/torch.sgn.html)."""
    if not input.dtype.is_complex:
        return named(pointwise_unary.sign(input, out=out), "SgnBackward0")
    return with_out(apply(Sgn, input), out)


class Sgn(Op):
    promote = None
    holomorphic = False
    save_output = True
    infer = classmethod(elementwise_rule)

    @staticmethod
    def forward(z):
        xp = _backend.namespace(z)
        r = xp.abs(z)
        return xp.divide(z, r, out=xp.zeros_like(z), where=r != 0)

    @staticmethod
    def backward(ctx, g):
        # s = z/|z|: ds/dz = 1/(2|z|), ds/dz* = -s^2/(2|z|); PyTorch's sgn_backward.
        z, s = ctx.input(0), ctx.output
        r = z.abs()
        two_r = 2 * r.masked_fill(r == 0, 1.0)
        return (((g - s * s * g.conj()) / two_r).masked_fill(r == 0, 0.0),)


def view_as_real(input):
    """A real view of a complex tensor with a trailing dim of 2 (real, imaginary parts).
    RuntimeError for real tensors and for unresolved conjugates
    (https://pytorch.org/docs/stable/generated/torch.view_as_real.html)."""
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if is_conj(input):
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To "
                           "resolve the conjugate tensor so you can view it as real, use "
                           "self.resolve_conj()")
    return apply(ViewAsReal, input)


class ViewAsReal(Op):
    promote = None
    save_inputs = False
    is_view = True
    untracked_view = True  # a view of another dtype: the compiler's capture follows its writes itself
    holomorphic = False

    @staticmethod
    def forward(z):
        # a trailing axis of one complex number, reinterpreted as two reals (any strides; a
        # tenth of as_strided's time)
        return z[..., None].view(z.real.dtype)

    @classmethod
    def infer(cls, z):
        return tuple(z.shape) + (2,), z.dtype.to_real()

    @staticmethod
    def backward(ctx, g):
        return (apply(ViewAsComplex, g.contiguous()),)


def view_as_complex(input):
    """A complex view of a float tensor whose last dim holds (real, imaginary) pairs: size 2,
    stride 1, other strides even. RuntimeError otherwise
    (https://pytorch.org/docs/stable/generated/torch.view_as_complex.html)."""
    if input.dtype not in (_dtype.float16, _dtype.float32, _dtype.float64):
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, but "
                           f"got a tensor of scalar type: {_NAMES[input.dtype.name]}")
    if input.dtype is _dtype.float16:
        raise RuntimeError("view_as_complex: ember has no complex32 (ComplexHalf) dtype")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    strides = input.stride()
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return apply(ViewAsComplex, input)


class ViewAsComplex(Op):
    promote = None
    save_inputs = False
    is_view = True
    holomorphic = False

    @staticmethod
    def forward(x):
        return x.view(np.result_type(x, 1j))[..., 0]

    @classmethod
    def infer(cls, x):
        return tuple(x.shape[:-1]), x.dtype.to_complex()

    @staticmethod
    def backward(ctx, g):
        return (apply(ViewAsReal, g),)
