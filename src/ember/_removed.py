"""Functions PyTorch removed in 1.9-era releases that old programs still call: ``torch.symeig``,
``torch.eig``, ``torch.lstsq``, ``torch.solve``, ``torch.matrix_rank`` (and the ``Tensor``
methods of the first four). Each raises the RuntimeError torch 2.13 raises, whose message names
the ``torch.linalg`` function that replaces it (https://pytorch.org/docs/stable/linalg.html)."""

_REMOVED = "This function was deprecated since version 1.9 and is now removed."

_MESSAGES = {
    "symeig": (
        f"{_REMOVED} The default behavior has changed from using the upper triangular portion of the matrix by "
        "default to using the lower triangular portion.\n\n"
        "L, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
        "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\n"
        "L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
        "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"),
    "eig": (
        f"{_REMOVED} `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real "
        "tensors mimicking complex tensors.\n\n"
        "L, _ = torch.eig(A) should be replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\n"
        "L, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
        "L_complex, V_complex = torch.linalg.eig(A)"),
    "lstsq": (
        f"{_REMOVED} `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
        "`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition in the returned "
        "tuple (although it returns other information about the problem).\n\n"
        "To get the QR decomposition consider using `torch.linalg.qr`.\n\n"
        "The returned solution in `torch.lstsq` stored the residuals of the solution in the last m - n columns "
        "of the returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field "
        "'residuals' of the returned named tuple.\n\n"
        "The unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\n"
        "should be replaced with:\nX = torch.linalg.lstsq(A, B).solution"),
    "solve": (
        f"{_REMOVED} `torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its "
        "arguments reversed and does not return the LU factorization.\n\n"
        "To get the LU factorization see `torch.lu`, which can be used with `torch.lu_solve` or "
        "`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\n"
        "X = torch.linalg.solve(A, B)"),
    "matrix_rank": (
        f"{_REMOVED}\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was "
        "renamed in `torch.linalg.matrix_rank()` to 'hermitian'."),
}


def _raise(name):
    raise RuntimeError(_MESSAGES[name])


# Each keeps torch 2.13's signature, so a call missing an argument is the TypeError torch raises
# before its RuntimeError.
def symeig(input, eigenvectors=False, upper=True, *, out=None):
    """Removed from PyTorch: RuntimeError naming ``torch.linalg.eigvalsh``/``eigh``."""
    _raise("symeig")


def eig(self, eigenvectors=False, *, e=None, v=None):
    """Removed from PyTorch: RuntimeError naming ``torch.linalg.eig``/``eigvals``."""
    _raise("eig")


def lstsq(input, A, *, out=None):
    """Removed from PyTorch: RuntimeError naming ``torch.linalg.lstsq``."""
    _raise("lstsq")


def solve(input, A, *, out=None):
    """Removed from PyTorch: RuntimeError naming ``torch.linalg.solve``."""
    _raise("solve")


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """Removed from PyTorch: RuntimeError naming ``torch.linalg.matrix_rank``."""
    _raise("matrix_rank")


symeig.__name__ = symeig.__qualname__ = "_symeig"  # torch's function is named so (its TypeError says it)


def _symeig_method(self, eigenvectors=False):
    _raise("symeig")


def _eig_method(self, eigenvectors=False):
    _raise("eig")


def _lstsq_method(self, other):
    _raise("lstsq")


def _solve_method(self, other):
    _raise("solve")


# The Tensor methods, with the signatures of torch's (``Tensor.solve(self, other)``).
TENSOR_METHODS = {}
for _name, _method in (("symeig", _symeig_method), ("eig", _eig_method), ("lstsq", _lstsq_method),
                       ("solve", _solve_method)):
    _method.__name__, _method.__qualname__ = _name, f"Tensor.{_name}"
    _method.__doc__ = f"Removed from PyTorch: RuntimeError naming the ``torch.linalg`` replacement of ``{_name}``."
    TENSOR_METHODS[_name] = _method
