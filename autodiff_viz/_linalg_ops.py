"""More of ``tf.linalg``: ``svd`` (one primitive), ``diag`` and ``matvec`` (compositions).

>>> import autodiff_viz as ad
>>> s, u, v = ad.linalg.svd(ad.constant([[3.0, 0.0], [0.0, -2.0]]))
>>> s.numpy().tolist()
[3.0, 2.0]
"""
from __future__ import annotations

from . import _ops as o
from ._context import name_scope
from ._registry import PRIMITIVES as _P
from ._tensor import InvalidArgumentError, as_tensor, execute


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """Singular values ``s`` (descending), and ``u``, ``v`` with ``tensor = u @ diag(s) @ vᵀ``, as ``tf.linalg.svd``.

    Returns ``s`` alone when ``compute_uv=False``, else ``(s, u, v)``.  The
    gradient assumes distinct singular values, as TensorFlow's does.
    """
    a = o._matrix(tensor, "Svd")
    m, n = a.shape[-2:]
    if full_matrices and m != n:
        raise InvalidArgumentError(f"Svd: full_matrices=True for a non-square matrix (shape {a.shape}) is not part "
                                   "of autodiff_viz; use the default full_matrices=False")
    packed = execute(_P["Svd"], (a,))
    s = packed[..., m + n, :]
    if not compute_uv:
        return s
    return s, packed[..., :m, :], packed[..., m:m + n, :]


def diag(diagonal, name=None, k=0, num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    """Square matrices with ``diagonal`` ([..., N]) on their main diagonal, as ``tf.linalg.diag``.

    >>> import autodiff_viz as ad
    >>> ad.linalg.diag(ad.constant([1.0, 2.0])).numpy().tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    d = as_tensor(diagonal)
    if k != 0 or num_rows != -1 or num_cols != -1 or padding_value != 0:
        raise InvalidArgumentError("MatrixDiagV3: only the main diagonal of a square matrix (k=0, default rows, "
                                   "columns and padding) is part of autodiff_viz")
    if d.ndim < 1:
        raise InvalidArgumentError(f"MatrixDiagV3: diagonal needs rank >= 1, got shape {d.shape}")
    with name_scope("diag"):
        return o._matrix_diag(d, d.shape[-1], d.shape[-1])


def matvec(a, b, transpose_a=False, adjoint_a=False, name=None):
    """``a @ b`` for matrices ``a`` [..., M, N] and vectors ``b`` [..., N], as ``tf.linalg.matvec``.

    >>> import autodiff_viz as ad
    >>> ad.linalg.matvec(ad.constant([[1.0, 2.0], [3.0, 4.0]]), ad.constant([1.0, 1.0])).numpy().tolist()
    [3.0, 7.0]
    """
    a = as_tensor(a)
    b = as_tensor(b, a, "MatVec")
    if b.ndim < 1:
        raise InvalidArgumentError(f"MatVec: b must be a vector (rank >= 1), got shape {b.shape}")
    with name_scope("matvec"):
        return o.squeeze(o.matmul(a, o.expand_dims(b, -1), transpose_a=transpose_a or adjoint_a), axis=-1)
