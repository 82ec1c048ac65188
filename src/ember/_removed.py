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


def removed(name):
    """``torch.<name>``: a function that raises torch's RuntimeError for the removed ``name``."""
    def removed_function(*args, **kwargs):
        raise RuntimeError(_MESSAGES[name])
    removed_function.__name__ = removed_function.__qualname__ = name
    removed_function.__doc__ = "Removed from PyTorch: RuntimeError naming the ``torch.linalg`` replacement."
    return removed_function


symeig, eig, lstsq, solve, matrix_rank = (removed(name) for name in ("symeig", "eig", "lstsq", "solve",
                                                                         "matrix_rank"))
