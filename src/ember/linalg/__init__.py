"""``ember.linalg``: linear algebra as ``torch.linalg``
(https://pytorch.org/docs/stable/linalg.html) for float32/float64 tensors, on LAPACK through
NumPy/SciPy. Decompositions live in :mod:`.factorizations`, solves and matrix functions in
:mod:`.solvers`, norms and products in :mod:`.norms`."""
from ._common import LinAlgError
from .factorizations import (cholesky, cholesky_ex, eig, eigh, eigvals, eigvalsh,
                             householder_product, ldl_factor, ldl_factor_ex, ldl_solve, lu,
                             lu_factor, lu_factor_ex, lu_solve, matrix_sqrth, polar, qr, svd,
                             svdvals)
from .norms import (cond, cross, diagonal, matmul, matrix_norm, multi_dot, norm, vander, vecdot,
                    vector_norm)
from .solvers import (det, inv, inv_ex, lstsq, matrix_exp, matrix_power, matrix_rank, pinv,
                      slogdet, solve, solve_ex, solve_triangular, tensorinv, tensorsolve)

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig",
           "eigh", "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor",
           "ldl_factor_ex", "ldl_solve", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve",
           "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "matrix_sqrth",
           "multi_dot", "norm", "pinv", "polar", "qr", "slogdet", "solve", "solve_ex",
           "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot",
           "vector_norm"]
