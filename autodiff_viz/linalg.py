"""``ad.linalg``: matrix products, inverses, determinants, solves, norms (as ``tf.linalg``).

>>> import autodiff_viz as ad
>>> a = ad.constant([[2.0, 0.0], [0.0, 4.0]])
>>> ad.linalg.solve(a, ad.constant([[2.0], [2.0]])).numpy().tolist()
[[1.0], [0.5]]
"""
from ._missing import missing_api as _missing_api
from ._ops import det, diag_part, einsum, inv, matmul, matrix_transpose, norm, solve, trace, transpose  # noqa: F401

from ._linalg_ops import diag, matvec, svd  # noqa: F401
from ._array_ops import tensordot  # noqa: F401

adjoint = matrix_transpose  # real matrices: the adjoint is the transpose

__getattr__ = _missing_api(__name__)
