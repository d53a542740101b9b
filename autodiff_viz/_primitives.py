"""The table of primitives: each op's forward and gradient rule side by side.

Forward functions take the array namespace ``xp`` and raw arrays.  Gradient
rules take ``(op, grad)`` as TensorFlow's do and use the package's own ops
(``o.*``), so a rule run under an outer tape is itself recorded.  Broadcast
operands need no care here: the tape sums a gradient back to its input's
shape.  Adding an op is one ``defop`` line, its public function in
``_ops``, and its case in the gradient checker's table (``tests/gradcheck.py``;
README, "Adding an op").  The line under each entry, ``jvp=``, is its tangent rule for
forward mode (``ad.autodiff.ForwardAccumulator``): ``(op, tangents)`` to the
output's tangent.  Ops declared not differentiable need none.  The commonest ops
also give ``direct=``: their gradient rule on arrays (``_direct_rules``), which a
backward pass that no tape records runs instead of the ops of ``grad``.
"""
from __future__ import annotations

import math as _math

import numpy as _np

from . import _backend, _conv_kernels as ck, _direct_rules as dr, _kernels as kn, _math_ops as mo, _nn_ops as nno, _ops as o
from . import _xent_ops as xo
from ._registry import NOT_DIFFERENTIABLE as NONE, defop


def _keep(shape, axis):
    """The reduced shape with the reduced axes kept as 1."""
    axes = range(len(shape)) if axis is None else axis
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _reduce_back(op, g):
    """Spread a reduction's gradient back over the reduced axes."""
    shape, axis = op.in_shapes[0], op.attrs["axis"]
    if not op.attrs["keepdims"] and axis is not None:  # (a scalar spreads as it is)
        g = o._reshape(g, _keep(shape, axis))
    return o._broadcast_to(g, shape)


def _count(op):
    return kn.count_of(op.in_shapes[0], op.attrs["axis"])


def _extreme_grad(op, g):
    # Ties share the gradient equally, as TF does.
    x, y = op.inputs[0], op.outputs[0]
    axis = op.attrs["axis"]
    if not op.attrs["keepdims"]:
        y = o.reshape(y, _keep(op.in_shapes[0], axis))
    hit = o.cast(o.equal(x, y), x.dtype)
    share = hit / o.reduce_sum(hit, axis=axis, keepdims=True)
    return (_reduce_back(op, g) * share,)


def _prod_grad(op, g):
    # d prod / d x_i = the product of the others, as TF's _ProdGrad computes it: the reduced axes packed
    # into one, first; then the running products before and after each element (exclusive cumprods),
    # multiplied.  No division, so zeros need no case of their own, and the bits are TF's.
    x, shape = op.inputs[0], op.in_shapes[0]
    axis = op.attrs["axis"]
    reduced = tuple(range(len(shape))) if axis is None else tuple(axis)
    if len(reduced) == 1:  # (one axis: the running products along it are the packed ones, without moving it)
        a = reduced[0]
        others = mo._cumprod(x, a, True, False) * mo._cumprod(x, a, True, True)
        return (_reduce_back(op, g) * others,)
    perm = reduced + tuple(i for i in range(len(shape)) if i not in reduced)
    moved = tuple(shape[i] for i in perm)
    if perm != tuple(range(len(shape))):
        x = o.transpose(x, perm=list(perm))
    packed = o.reshape(x, (_math.prod(moved[:len(reduced)]), _math.prod(moved[len(reduced):])))
    others = o.reshape(mo._cumprod(packed, 0, True, False) * mo._cumprod(packed, 0, True, True), moved)
    if perm != tuple(range(len(shape))):
        others = o.transpose(others, perm=[perm.index(i) for i in range(len(shape))])
    return (_reduce_back(op, g) * others,)


def _mul_grad(op, g):
    # Each input's gradient reads the other input, saved only when needed.
    x, y = op.inputs
    return (None if y is None else o._mul(g, y)), (None if x is None else o._mul(g, x))


def _square_grad(op, g):
    x = op.inputs[0]
    return (o._mul(g, o._mul(o._const(2.0, x), x)),)  # TF's grad * (2 * x), in that order


def _div_grad(op, g):
    x, y = op.inputs
    # TF's order, g · ((−a/b)/b): no b² to overflow or underflow first, and the last digit is TF's
    return g / y, (None if x is None else g * ((-x / y) / y))


def _matmul_grad(op, g):
    # a's gradient reads b and b's reads a; each is saved only when needed.
    a, b = op.inputs
    attrs = op.attrs
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    ga = gb = None
    if b is not None:
        ga = o._matmul(b, g, transpose_a=tb, transpose_b=True) if ta else o._matmul(g, b, transpose_b=not tb)
    if a is not None:
        gb = o._matmul(g, a, transpose_a=True, transpose_b=ta) if tb else o._matmul(a, g, transpose_a=not ta)
    return ga, gb


def _pow_grad(op, g):
    x, p = op.inputs
    z = op.outputs[0]
    # TF's grad * p * x^(p-1); the operands share one dtype (Pow's inputs and its gradient), so the
    # ops go straight to the op table.
    gx = o._mul(o._mul(g, p), o._pow(x, o._sub(p, o._const(1, p))))
    if z is None or not x.dtype.is_floating:
        return gx, None
    positive = o.greater(x, 0.0)
    safe_log = o.where(positive, o.log(o.where(positive, x, o.ones_like(x))), o.zeros_like(x))
    return gx, g * z * safe_log


def _concat_grad(op, g):
    axis = op.attrs["axis"]
    grads, start = [], 0
    for shape in op.in_shapes:
        index = (slice(None),) * axis + (slice(start, start + shape[axis]),)
        grads.append(o.getitem(g, index))
        start += shape[axis]
    return tuple(grads)


def _stack_grad(op, g):
    axis = op.attrs["axis"]
    return tuple(o.getitem(g, (slice(None),) * axis + (i,)) for i in range(len(op.in_shapes)))


def _clip_grad(op, g):
    x, lo, hi = op.inputs
    below, above = o.less(x, lo), o.greater(x, hi)
    zero = o.zeros_like(g)
    inside = o.where(below, zero, o.where(above, zero, g))
    return inside, o.where(below, g, zero), o.where(above, g, zero)


def _cast_grad(op, g):
    src = op.in_dtypes[0]
    if src.is_floating and op.out_dtype.is_floating:
        return (o.cast(g, src),)
    return (None,)


def _softmax_grad(op, g):
    y, axis = op.outputs[0], op.attrs["axis"]
    return ((g - o.reduce_sum(g * y, axis=axis, keepdims=True)) * y,)


def _log_softmax_grad(op, g):
    y, axis = op.outputs[0], op.attrs["axis"]
    return (g - o.exp(y) * o.reduce_sum(g, axis=axis, keepdims=True),)


def _softmax_jvp(op, t):
    # TF transposes _softmax_grad: ṫ·s − Σ(ṫ·s)·s, not (ṫ − Σ(ṫ·s))·s, so the last digit is TF's
    y, axis = op.outputs[0], op.attrs["axis"]
    ts = t[0] * y
    return ts - o.reduce_sum(ts, axis=axis, keepdims=True) * y


def _sigmoid_grad_grad(u, y, b):
    # TF's _SigmoidGradGrad: gb − 2·gb·y with gb = u·b (not u·b·(1 − 2y): another rounding)
    gb = u * b
    return gb - (2.0 * gb) * y


def _minmax_grad(pick_x):
    def rule(op, g):
        x, y = op.inputs
        mask = pick_x(x, y)
        zero = o.zeros_like(g)
        return o.where(mask, g, zero), o.where(mask, zero, g)
    return rule


# Tangent rules too long for one line (forward mode, see ``_forward``).
# Pow's and RealDiv's multiply in the order of TF's, which transposes the gradient rule: a zero tangent (an
# input not followed) meets an infinite slope, as NaN, where TF's does, and finite values round as TF's.
def _pow_jvp(op, t):
    x, p = op.inputs
    z = op.outputs[0]
    positive = o.greater(x, 0.0)
    safe_log = o.where(positive, o.log(o.where(positive, x, o.ones_like(x))), o.zeros_like(x))
    return (t[0] * o.pow(x, p - 1.0)) * p + (t[1] * safe_log) * z


def _div_jvp(op, t):
    # ȧ/b + ḃ·((−a/b)/b), not (ȧ − y·ḃ)/b: at b = 0 with ȧ = 0 (1/x, its 1 not followed) TF's 0/0 is NaN
    x, y = op.inputs
    return t[0] / y + t[1] * ((-x / y) / y)


def _extreme_jvp(op, t):
    x, y = op.inputs[0], op.outputs[0]
    axis, keepdims = op.attrs["axis"], op.attrs["keepdims"]
    if not keepdims:
        y = o.reshape(y, _keep(op.in_shapes[0], axis))
    hit = o.cast(o.equal(x, y), x.dtype)
    share = hit / o.reduce_sum(hit, axis=axis, keepdims=True)  # ties share, as in the gradient
    return o.reduce_sum(t[0] * share, axis=axis, keepdims=keepdims)


def _prod_jvp(op, t):
    # sum_i t_i * (product of the others); the gradient rule computes the products.
    (others,) = _prod_grad(op, o.ones_like(op.outputs[0]))
    return o.reduce_sum(t[0] * others, axis=op.attrs["axis"], keepdims=op.attrs["keepdims"])


def _matmul_jvp(op, t):
    a, b = op.inputs
    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    return (o.matmul(t[0], b, transpose_a=ta, transpose_b=tb)
            + o.matmul(a, t[1], transpose_a=ta, transpose_b=tb))


def _clip_jvp(op, t):
    x, lo, hi = op.inputs
    return o.where(o.less(x, lo), t[1], o.where(o.greater(x, hi), t[2], t[0]))


def _cast_jvp(op, t):
    if t[0] is None or not op.out_dtype.is_floating:
        return None
    return o.cast(t[0], op.out_dtype)


def _det_grad(op, g):
    # d det(A) / dA = det(A) · A^-T, one matrix per batch element.
    a, d = op.inputs[0], op.outputs[0]
    scale = o.expand_dims(o.expand_dims(g * d, -1), -1)
    return (scale * o._matrix_t(o.inv(a)),)


def _solve_grad(op, g):
    # X = A^-1 B:  dB = A^-T g,  dA = -dB X^T.
    a, x = op.inputs[0], op.outputs[0]
    gb = o.solve(o._matrix_t(a), g)
    return -o.matmul(gb, x, transpose_b=True), gb


def _pad_inside(op):
    """The slice of a padded tensor that holds the original."""
    return tuple(slice(before, before + d) for d, (before, _) in zip(op.in_shapes[0], op.attrs["paddings"]))


def _einsum_grad(op, g):
    # Each operand's gradient is the einsum of the upstream with the other operands.  Letters only
    # that operand has were summed by the forward pass: the gradient is the same along them.
    ins, out = op.attrs["inputs"], op.attrs["output"]
    grads = []
    for k, letters in enumerate(ins):
        others = [j for j in range(len(ins)) if j != k]
        known = set(out).union(*[ins[j] for j in others])
        keep = "".join(c for c in letters if c in known)
        gk = o.einsum(",".join([out] + [ins[j] for j in others]) + "->" + keep, g, *[op.inputs[j] for j in others])
        if keep != letters:
            sizes = dict(zip(keep, gk.shape))
            gk = o.reshape(gk, tuple(sizes[c] if c in sizes else 1 for c in letters))
            gk = o.broadcast_to(gk, tuple(sizes.get(c, d) for c, d in zip(letters, op.in_shapes[k])))
        grads.append(gk)
    return tuple(grads)


def _einsum_jvp(op, t):
    total = None
    for k, tk in enumerate(t):
        if tk is None:
            continue
        args = list(op.inputs)
        args[k] = tk
        term = o.einsum(op.attrs["equation"], *args)
        total = term if total is None else total + term
    return total


# Elementwise helpers so the forward stays in the array namespace.
_SELU_SCALE = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717
# SeluGrad's own constant (relu_op_functor.h): in float64 it is one unit in the last place above
# _SELU_SCALE * _SELU_ALPHA as Python multiplies them.
_SELU_SCALE_ALPHA = 1.7580993408473768599402175208123
_TWO_OVER_SQRT_PI = 2.0 / _math.sqrt(_math.pi)


# The gradients of Log, Log1p, Tan, Erf and Softplus are computed as TF's (math_grad.py, its SoftplusGrad
# kernel): g · (1/x), not g / x, and so on, so the last digit is TF's; their tangent rules likewise (TF
# transposes the gradient rule, so a tangent takes the upstream's place).
def _erf_times(g, x):
    return (g * _TWO_OVER_SQRT_PI) * o.exp(-o.square(x))


def _softplus_second(x):
    """The denominator of TF's _SoftplusGradGrad: exp(−x) + 2 + exp(x), added in that order."""
    return o.exp(-x) + 2.0 + o.exp(x)


def _softplus_grad_grad(op, u):
    dy, x = op.inputs
    return o._softplus_grad(u, x), (None if dy is None else (u * dy) / _softplus_second(x))


def _erf(xp, x):
    """erf by its series of positive terms: erf(x) = 2/√π · exp(−x²) · Σₙ (2x²)ⁿ·x / (1·3·…·(2n+1)).

    The Array API has no erf.  With all terms of one sign nothing cancels, so
    the sum is good to a few units in the last place; past |x| = 6, erf is ±1
    in double precision.  Computed in float64, returned in x's dtype.
    """
    v = xp.clip(xp.astype(x, xp.float64), -6.0, 6.0)
    two_x2 = 2.0 * v * v
    term = total = v
    for n in range(1, 400):
        term = term * two_x2 / (2.0 * n + 1.0)
        total = total + term
        if n > 8 and float(xp.max(xp.abs(term) - 1e-17 * xp.abs(total))) <= 0.0 if v.size else True:
            break
    return xp.astype(_TWO_OVER_SQRT_PI * xp.exp(-(v * v)) * total, x.dtype)


def _integral(xp, dtype) -> bool:
    return xp.isdtype(dtype, "integral") if hasattr(xp, "isdtype") else dtype.kind in "iu"


def _times_mask(xp, g, mask):
    """``g`` where ``mask`` holds, else 0, as TF's ReLU gradient kernels compute it: ``g`` times the mask.

    (So a NaN upstream stays NaN, as in TF; and on NumPy it is several times
    faster than ``where`` with a zero scalar.)
    """
    return g * (mask if xp is _np else xp.astype(mask, g.dtype))


def _mean(xp, x, axis, keepdims):
    if xp is _np and x.dtype.kind == "f" and x.dtype.itemsize >= 4 and x.size:
        # What np.mean does for float32/64 (a float32 sum, then one division), without its wrapper.
        return _np.add.reduce(x, axis=axis, keepdims=keepdims) / kn.count_of(x.shape, axis)
    if not _integral(xp, x.dtype):
        return xp.mean(x, axis=axis, keepdims=keepdims)
    # TF's integer mean: the sum divided by the count, truncated toward zero (mean([1, 2, 4]) is 2).
    total = xp.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)
    n = kn.count_of(x.shape, axis)
    if n == 0:
        return total
    q = xp.abs(total) // n
    return xp.where(total < 0, -q, q)


def _div_no_nan(xp, x, y):
    """TF's DivNoNan: ``x / y``, and 0 wherever ``y`` is 0 (whatever ``x`` is: NaN and inf too)."""
    zero = y == 0
    q = x / xp.where(zero, xp.ones_like(y), y)
    return xp.where(zero, xp.zeros_like(q), q)


def _reciprocal(xp, x):
    """TF's Reciprocal: ``1/x``; of an integer, C's integer ``1/x`` (±1 for ±1, else 0; 0 is an error)."""
    if _integral(xp, x.dtype):
        _nonzero_divisor(xp, x)
        return xp.where(xp.abs(x) == 1, x, xp.zeros_like(x))
    return xp.reciprocal(x) if hasattr(xp, "reciprocal") else 1.0 / x


def _reciprocal_grad(xp, y, g):
    # −(y·y)·g where g is not 0, and 0 where it is, as TF's kernel (no NaN made there to be thrown away).
    safe = xp.where(g == 0, xp.zeros_like(y), y)
    r = -(safe * safe) * g
    return xp.where(g == 0, xp.zeros_like(r), r)


def _nonzero_divisor(xp, y):
    """As TF, an integer division by zero is an error (NumPy would warn and give 0)."""
    if _integral(xp, y.dtype) and bool(xp.any(y == 0)):
        raise ZeroDivisionError("integer division by zero")
    return y


def _pad(xp, x, paddings, constant_values):
    shape = tuple(before + d + after for d, (before, after) in zip(x.shape, paddings))
    out = xp.full(shape, constant_values, dtype=x.dtype)
    out[tuple(slice(before, before + d) for d, (before, _) in zip(x.shape, paddings))] = x
    return out


def _einsum(xp, *xs, equation, inputs, output):
    if hasattr(xp, "einsum"):
        return xp.einsum(equation, *xs)
    # A namespace without einsum (the strict Array API): line every operand up on all the letters,
    # multiply with broadcasting, sum the letters the output lacks.
    letters = list(output) + sorted({c for s in inputs for c in s} - set(output))
    total = None
    for x, s in zip(xs, inputs):
        order = sorted(range(len(s)), key=lambda i: letters.index(s[i]))
        x = xp.permute_dims(x, tuple(order))
        sizes = dict(zip([s[i] for i in order], x.shape))
        x = xp.reshape(x, tuple(sizes.get(c, 1) for c in letters))
        total = x if total is None else total * x
    summed = tuple(range(len(output), len(letters)))
    return xp.sum(total, axis=summed, dtype=total.dtype) if summed else total


def _diagonal(xp, x):
    linalg = getattr(xp, "linalg", None)
    if linalg is not None and hasattr(linalg, "diagonal"):
        return linalg.diagonal(x)
    return xp.diagonal(x, axis1=-2, axis2=-1)


def _one_hot(xp, indices, depth, on_value, off_value, axis, dtype):
    shape = tuple(depth if i == axis else 1 for i in range(indices.ndim + 1))
    hit = xp.expand_dims(indices, axis=axis) == xp.reshape(xp.arange(depth, dtype=indices.dtype), shape)
    return xp.where(hit, xp.asarray(on_value, dtype=dtype), xp.asarray(off_value, dtype=dtype))


def _sigmoid(xp, x):
    return 0.5 * (xp.tanh(0.5 * x) + 1.0)  # no overflow for large |x|


def _softmax(xp, x, axis):
    e = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
    return e / xp.sum(e, axis=axis, keepdims=True)


def _log_softmax(xp, x, axis):
    s = x - xp.max(x, axis=axis, keepdims=True)
    return s - xp.log(xp.sum(xp.exp(s), axis=axis, keepdims=True))


def _adjust_contrast(xp, images, factor):
    mean = xp.mean(images, axis=(-3, -2), keepdims=True)
    return (images - mean) * factor + mean


def _cumsum(xp, x, axis, exclusive, reverse):
    return _running(xp, x, axis, exclusive, reverse, product=False)


def _cumprod(xp, x, axis, exclusive, reverse):
    return _running(xp, x, axis, exclusive, reverse, product=True)


def _running(xp, x, axis, exclusive, reverse, product):
    """A running sum or product along ``axis``, left to right (or from the end), as TF's Cumsum and Cumprod."""
    if reverse:
        x = xp.flip(x, axis=axis)
    if product:
        total = getattr(xp, "cumulative_prod", None) or xp.cumprod
    else:
        total = getattr(xp, "cumulative_sum", None) or xp.cumsum
    out = total(x, axis=axis, dtype=x.dtype)
    if exclusive:  # shift by one along the axis: the elements before, the empty sum (0) or product (1) first
        head = (xp.ones if product else xp.zeros)(tuple(1 if i == axis else d for i, d in enumerate(x.shape)),
                                                  dtype=x.dtype)
        body = out[tuple(slice(0, -1) if i == axis else slice(None) for i in range(x.ndim))]
        out = xp.concat([head, body], axis=axis)
    return xp.flip(out, axis=axis) if reverse else out


def _cumsum_rule(op, g):
    # The transpose of a running sum is the running sum the other way.
    a = op.attrs
    return (mo._cumsum(g, a["axis"], a["exclusive"], not a["reverse"]),)


def _cumprod_rule(op, g):
    # TF's _CumprodGrad: div_no_nan(cumsum(prod · g) the other way, x), prod the running product itself
    x, a = op.inputs[0], op.attrs
    running = mo._cumsum(op.outputs[0] * g, a["axis"], a["exclusive"], not a["reverse"])
    return (o.divide_no_nan(running, x),)


def _cumprod_jvp(op, t):
    # _CumprodGrad transposed: prod · cumsum(div_no_nan(ẋ, x)) the same way
    a = op.attrs
    return op.outputs[0] * mo._cumsum(o.divide_no_nan(t[0], op.inputs[0]), a["axis"], a["exclusive"], a["reverse"])


def _svd(xp, a):
    """The thin SVD packed in one array ``[..., M + N + 1, K]``: rows U (M), then V (N), then s (1).

    One op, one output: ``ad.linalg.svd`` slices the three parts back out,
    and the slices' gradients arrive here packed the same way.
    """
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    return xp.concat([u, vh.mT, xp.expand_dims(s, axis=-2)], axis=-2)


def _svd_parts(op, packed):
    m, n = op.in_shapes[0][-2:]
    part = lambda lo, hi: o.getitem(packed, (Ellipsis, slice(lo, hi), slice(None)))  # noqa: E731
    return part(0, m), part(m, m + n), o.getitem(packed, (Ellipsis, m + n, slice(None)))


def _svd_f(s):
    """F[i, j] = 1 / (s_j² − s_i²) off the diagonal, 0 on it (distinct singular values, as TF assumes)."""
    s2 = s * s
    diff = o.expand_dims(s2, -2) - o.expand_dims(s2, -1)
    on_diagonal = o.cast(o.eye(s.shape[-1], dtype=s.dtype), "bool")
    return o.where(on_diagonal, o.zeros_like(diff), 1.0 / o.where(on_diagonal, o.ones_like(diff), diff))


def _svd_grad(op, g):
    # A = U S Vᵀ:  Ā = U [J S + diag(s̄) + S K] Vᵀ + (I − UUᵀ) Ū S⁻¹ Vᵀ + U S⁻¹ V̄ᵀ (I − VVᵀ),
    # J = F ∘ (UᵀŪ − ŪᵀU), K = F ∘ (VᵀV̄ − V̄ᵀV).
    u, v, s = _svd_parts(op, op.outputs[0])
    gu, gv, gs = _svd_parts(op, g)
    f = _svd_f(s)
    ut_gu, vt_gv = o.matmul(u, gu, transpose_a=True), o.matmul(v, gv, transpose_a=True)
    j = f * (ut_gu - o._matrix_t(ut_gu))
    k = f * (vt_gv - o._matrix_t(vt_gv))
    row, col, inv_row = o.expand_dims(s, -2), o.expand_dims(s, -1), o.expand_dims(1.0 / s, -2)
    inner = j * row + o._matrix_diag(gs, s.shape[-1], s.shape[-1]) + col * k
    ga = o.matmul(o.matmul(u, inner), v, transpose_b=True)
    ga = ga + o.matmul((gu - o.matmul(u, ut_gu)) * inv_row, v, transpose_b=True)
    ga = ga + o.matmul(u, (gv - o.matmul(v, vt_gv)) * inv_row, transpose_b=True)
    return (ga,)


def _svd_jvp(op, t):
    # P = Uᵀ dA V:  ds = diag(P),  dU = U (F ∘ (P S + S Pᵀ)) + (I − UUᵀ) dA V S⁻¹,
    #               dV = V (F ∘ (S P + Pᵀ S)) + (I − VVᵀ) dAᵀ U S⁻¹.
    u, v, s = _svd_parts(op, op.outputs[0])
    da = t[0]
    f = _svd_f(s)
    row, col, inv_row = o.expand_dims(s, -2), o.expand_dims(s, -1), o.expand_dims(1.0 / s, -2)
    da_v, dat_u = o.matmul(da, v), o.matmul(da, u, transpose_a=True)
    p = o.matmul(u, da_v, transpose_a=True)
    pt = o._matrix_t(p)
    du = o.matmul(u, f * (p * row + col * pt)) + (da_v - o.matmul(u, p)) * inv_row
    dv = o.matmul(v, f * (col * p + pt * row)) + (dat_u - o.matmul(v, pt)) * inv_row
    return o.concat([du, dv, o.expand_dims(o.diag_part(p), -2)], axis=-2)


def _conv_attrs(op):
    a = op.attrs
    return a["strides"], a["pads"], a["dilations"]


def _conv_grad(op, g):
    # Each input's gradient reads the other: the input's spreads g back over the windows through the
    # filter (col2im); the filter's is the windows (im2col) times g.
    x, w = op.inputs
    args = _conv_attrs(op)
    gx = None if w is None else nno._conv2d_backprop_input(w, g, op.in_shapes[0], *args)
    gw = None if x is None else nno._conv2d_backprop_filter(x, g, op.in_shapes[1], *args)
    return gx, gw


def _conv_input_grad(op, u):
    # Conv2DBackpropInput(w, g) is linear in each: the transposes are a convolution and a filter gradient.
    w, g = op.inputs
    args = _conv_attrs(op)
    gw = None if g is None else nno._conv2d_backprop_filter(u, g, op.in_shapes[0], *args)
    gg = None if w is None else nno._conv2d(u, w, *args)
    return gw, gg


def _conv_filter_grad(op, u):
    x, g = op.inputs
    args = _conv_attrs(op)
    gx = None if g is None else nno._conv2d_backprop_input(u, g, op.in_shapes[0], *args)
    gg = None if x is None else nno._conv2d(x, u, *args)
    return gx, gg


def _max_pool_grad_rule(op, u):
    # MaxPoolGrad(x, y, g) is linear in g and constant in x and y between ties.
    x, y, _ = op.inputs
    return None, None, nno._max_pool_grad_grad(x, y, u, nno._pool_attrs(op))


def _max_pool_grad_grad_rule(op, u):
    x, y, _ = op.inputs
    return None, None, nno._max_pool_grad(x, y, u, nno._pool_attrs(op))


# ---------------------------------------------------------------------------
#      type               forward                                              gradient rule
# (Arithmetic forwards use the operators: on scalars, NumPy's operators skip the ufunc machinery.)
# ---------------------------------------------------------------------------
# Arithmetic
defop("Add",      lambda xp, x, y: x + y,                        lambda op, g: (g, g),
      jvp=lambda op, t: t[0] + t[1],
      direct=dr.add, show=('a + b', '1', '1'))
defop("AddN",     lambda xp, *xs: _sum_all(xp, xs),              lambda op, g: (g,) * len(op.in_ids),
      jvp=lambda op, t: o.add_n(t),
      show=('a + b + …', '1'))
defop("Sub",      lambda xp, x, y: x - y,                        lambda op, g: (g, o._neg(g)),
      jvp=lambda op, t: t[0] - t[1],
      direct=dr.sub, show=('a − b', '1', '−1'))
defop("Mul",      lambda xp, x, y: x * y,                        _mul_grad, save={0: (1,), 1: (0,)},
      jvp=lambda op, t: t[0] * op.inputs[1] + op.inputs[0] * t[1],
      direct=dr.mul, show=('a · b', 'b', 'a'))
defop("RealDiv",  lambda xp, x, y: x / y,
      _div_grad, save={0: (1,), 1: (0, 1)},
      jvp=_div_jvp,
      show=('a / b', '1/b', '−a/b²'))
defop("DivNoNan", lambda xp, x, y: _div_no_nan(xp, x, y),
      lambda op, g: (o.divide_no_nan(g, op.inputs[1]),
                     None if op.inputs[0] is None else g * o.divide_no_nan(o.divide_no_nan(-op.inputs[0], op.inputs[1]),
                                                                            op.inputs[1])),
      save={0: (1,), 1: (0, 1)},
      jvp=lambda op, t: (o.divide_no_nan(t[0], op.inputs[1])
                         + t[1] * o.divide_no_nan(o.divide_no_nan(-op.inputs[0], op.inputs[1]), op.inputs[1])),
      show=('a / b, 0 where b = 0', '1/b (0 where b = 0)', '−a/b² (0 where b = 0)'))
defop("Neg",      lambda xp, x: -x,                              lambda op, g: (-g,),
      jvp=lambda op, t: -t[0],
      direct=dr.neg, show=('−a', '−1'))
defop("Square",   lambda xp, x: xp.multiply(x, x),               _square_grad, save="all",
      jvp=lambda op, t: (2.0 * op.inputs[0]) * t[0],
      direct=dr.square, show=('a²', '2a'))
defop("Sqrt",     lambda xp, x: xp.sqrt(x),                      lambda op, g: (o._sqrt_grad(op.outputs[0], g),), save_output=True,
      # (not SqrtGrad's kernel: TF transposes SqrtGrad by its gradient, 0.5 · ẋ/√a, so ẋ = 0 at a = 0 is NaN)
      jvp=lambda op, t: 0.5 * (t[0] / op.outputs[0]),
      show=('√a', '1/(2√a)'))
defop("Reciprocal", lambda xp, x: _reciprocal(xp, x),               lambda op, g: (o._reciprocal_grad(op.outputs[0], g),),
      save_output=True,
      # (TF transposes ReciprocalGrad by its gradient: the same kernel, so a zero tangent gives 0 there too)
      jvp=lambda op, t: o._reciprocal_grad(op.outputs[0], t[0]),
      show=('1/a', '−1/a²'))
# TF's kernel: −y²·b, and like it a zero upstream gives 0 (never inf · 0).  (y: the reciprocal's output.)
defop("ReciprocalGrad", lambda xp, y, g: _reciprocal_grad(xp, y, g),
      lambda op, u: (None if op.outputs[0] is None else ((u * -2.0) * op.inputs[1]) * op.inputs[0],
                     o._reciprocal_grad(op.inputs[0], u)),
      save={0: (0, 1), 1: (0,)}, save_output=(0,),
      jvp=lambda op, t: ((t[0] * op.inputs[0]) * op.inputs[1]) * -2.0 + o._reciprocal_grad(op.inputs[0], t[1]),
      show=('−a²·b   (a = 1/x, b: upstream)', '−2ab', '−a²'))
# Fused as in TF, and like TF's kernel a zero upstream gives 0, never 0/0:
# ``where(x > 0, sqrt(x), 0)`` has a finite gradient at x <= 0.  (y: sqrt's output.)
defop("SqrtGrad", lambda xp, y, g: 0.5 * g / xp.where(g == 0, xp.ones_like(y), y),
      lambda op, u: (None if op.outputs[0] is None else -(u / op.inputs[0]) * op.outputs[0], 0.5 * (u / op.inputs[0])),
      save={0: (0, 1)}, save_output=(0,),
      jvp=lambda op, t: (0.5 * t[1] - t[0] * op.outputs[0]) / op.inputs[0],
      show=('b / (2a)   (a = √x, b: upstream)', '−b/(2a²)', '1/(2a)'))
defop("Pow",      kn.power,                                          _pow_grad, save={0: (0, 1), 1: (0, 1)}, save_output=(1,),
      jvp=_pow_jvp,
      direct=dr.power, show=('a^b', 'b·a^(b−1)', 'a^b·ln a'))
defop("SquaredDifference", lambda xp, x, y: xp.square(x - y),
      lambda op, g: ((2.0 * g) * (op.inputs[0] - op.inputs[1]), (-2.0 * g) * (op.inputs[0] - op.inputs[1])), save="all",
      jvp=lambda op, t: 2.0 * ((t[0] - t[1]) * (op.inputs[0] - op.inputs[1])),
      show=('(a − b)²', '2(a − b)', '−2(a − b)'))
defop("Maximum",  lambda xp, x, y: xp.maximum(x, y),             _minmax_grad(lambda x, y: o.greater_equal(x, y)), save="all",
      jvp=lambda op, t: o.where(o.greater_equal(op.inputs[0], op.inputs[1]), t[0], t[1]),
      show=('max(a, b)', '1 where a ≥ b, else 0', '1 where b > a, else 0'))
defop("Minimum",  lambda xp, x, y: xp.minimum(x, y),             _minmax_grad(lambda x, y: o.less_equal(x, y)), save="all",
      jvp=lambda op, t: o.where(o.less_equal(op.inputs[0], op.inputs[1]), t[0], t[1]),
      show=('min(a, b)', '1 where a ≤ b, else 0', '1 where b < a, else 0'))
defop("Abs",      lambda xp, x: xp.abs(x),                       lambda op, g: (g * o.sign(op.inputs[0]),), save="all",
      jvp=lambda op, t: t[0] * o.sign(op.inputs[0]),
      show=('|a|', 'sign(a)'))
defop("Sign",     lambda xp, x: xp.sign(x),                      lambda op, g: (o.zeros_like(g),),
      jvp=lambda op, t: o.zeros_like(op.outputs[0]),
      show=('sign(a)', '0'))
defop("Round",    lambda xp, x: xp.round(x),                     NONE,
      show=('round(a)',))
defop("Floor",    lambda xp, x: xp.floor(x),                     NONE,
      show=('⌊a⌋',))
defop("Ceil",     lambda xp, x: xp.ceil(x),                      NONE,
      show=('⌈a⌉',))
defop("FloorDiv", lambda xp, x, y: xp.floor_divide(x, _nonzero_divisor(xp, y)), NONE,
      show=('⌊a / b⌋',))
defop("FloorMod", lambda xp, x, y: xp.remainder(x, _nonzero_divisor(xp, y)),
      lambda op, g: (g, -g * o.floordiv(op.inputs[0], op.inputs[1])), save="all",
      jvp=lambda op, t: t[0] - t[1] * o.floordiv(op.inputs[0], op.inputs[1]),
      show=('a mod b = a − ⌊a / b⌋·b', '1', '−⌊a / b⌋'))
# Transcendental
defop("Erf",      _erf,                                          lambda op, g: (_erf_times(g, op.inputs[0]),), save="all",
      jvp=lambda op, t: _erf_times(t[0], op.inputs[0]),
      show=('erf(a)', '(2/√π)·exp(−a²)'))
defop("Exp",      lambda xp, x: xp.exp(x),                       lambda op, g: (g * op.outputs[0],), save_output=True,
      jvp=lambda op, t: t[0] * op.outputs[0],
      show=('exp(a)', 'exp(a)'))
defop("Log",      lambda xp, x: xp.log(x),                       lambda op, g: (g * o.reciprocal(op.inputs[0]),), save="all",
      jvp=lambda op, t: t[0] * o.reciprocal(op.inputs[0]),
      show=('log(a)', '1/a'))
defop("Log1p",    lambda xp, x: xp.log1p(x),                     lambda op, g: (g * o.reciprocal(1.0 + op.inputs[0]),), save="all",
      jvp=lambda op, t: t[0] * o.reciprocal(1.0 + op.inputs[0]),
      show=('log(1 + a)', '1/(1 + a)'))
defop("Sin",      lambda xp, x: xp.sin(x),                       lambda op, g: (o._mul(g, o.cos(op.inputs[0])),), save="all",
      jvp=lambda op, t: t[0] * o.cos(op.inputs[0]),
      direct=dr.sin, show=('sin(a)', 'cos(a)'))
defop("Cos",      lambda xp, x: xp.cos(x),                       lambda op, g: (o._mul(o._neg(g), o.sin(op.inputs[0])),), save="all",
      jvp=lambda op, t: -t[0] * o.sin(op.inputs[0]),
      direct=dr.cos, show=('cos(a)', '−sin(a)'))
defop("Sinh",     lambda xp, x: xp.sinh(x),                      lambda op, g: (g * mo.cosh(op.inputs[0]),), save="all",
      jvp=lambda op, t: t[0] * mo.cosh(op.inputs[0]),
      show=('sinh(a)', 'cosh(a)'))
defop("Cosh",     lambda xp, x: xp.cosh(x),                      lambda op, g: (g * mo.sinh(op.inputs[0]),), save="all",
      jvp=lambda op, t: t[0] * mo.sinh(op.inputs[0]),
      show=('cosh(a)', 'sinh(a)'))
defop("Tan",      lambda xp, x: xp.tan(x),                       lambda op, g: (g * o.square(o.reciprocal(o.cos(op.inputs[0]))),),
      save="all", jvp=lambda op, t: t[0] * o.square(o.reciprocal(o.cos(op.inputs[0]))),
      show=('tan(a)', '1/cos²(a)'))
defop("Tanh",     lambda xp, x: xp.tanh(x),                      lambda op, g: (o._tanh_grad(op.outputs[0], g),), save_output=True,
      jvp=lambda op, t: o._tanh_grad(op.outputs[0], t[0]),
      direct=dr.tanh, show=('tanh(a)', '1 − tanh²(a)'))
defop("Sigmoid",  _sigmoid,                                      lambda op, g: (o._sigmoid_grad(op.outputs[0], g),), save_output=True,
      jvp=lambda op, t: o._sigmoid_grad(op.outputs[0], t[0]),
      direct=dr.sigmoid, show=('σ(a)', 'σ(a)·(1 − σ(a))'))
# Fused backward ops, as in TF: one op instead of three in every Tanh/Sigmoid
# rule.  Their own rules give the second derivatives.  (y: the forward output,
# g: the upstream gradient.)
defop("TanhGrad", kn.tanh_grad,
      lambda op, u: (None if op.inputs[1] is None else -2.0 * u * op.inputs[1] * op.inputs[0],
                     o._tanh_grad(op.inputs[0], u)), save={0: (0, 1), 1: (0,)},
      jvp=lambda op, t: o._tanh_grad(op.inputs[0], t[1]) + ((t[0] * op.inputs[0]) * op.inputs[1]) * -2.0,
      show=('b·(1 − a²)   (a = tanh(x), b: upstream)', '−2ab', '1 − a²'))
defop("SigmoidGrad", kn.sigmoid_grad,
      lambda op, u: (None if op.inputs[1] is None else _sigmoid_grad_grad(u, op.inputs[0], op.inputs[1]),
                     o._sigmoid_grad(op.inputs[0], u)), save={0: (0, 1), 1: (0,)},
      jvp=lambda op, t: o._sigmoid_grad(op.inputs[0], t[1]) + (t[0] - 2.0 * (t[0] * op.inputs[0])) * op.inputs[1],
      show=('b·a·(1 − a)   (a = σ(x), b: upstream)', 'b·(1 − 2a)', 'a·(1 − a)'))
# Neural-network
defop("Relu",     lambda xp, x: xp.maximum(x, 0),
      lambda op, g: (o._relu_grad(g, op.outputs[0]),), save_output=True,
      jvp=lambda op, t: o._relu_grad(t[0], op.outputs[0]),
      show=('relu(a) = max(a, 0)', '1 where a > 0, else 0'))
# Fused as in TF (one op where a rule would take two); its own rule gives relu's second
# derivative, 0 and never None, at 0 too.  (g: upstream, y: relu's output.)
defop("ReluGrad", lambda xp, g, y: _times_mask(xp, g, y > 0),
      lambda op, u: (o._relu_grad(u, op.inputs[1]), o.zeros_like(op.inputs[1])), save=(1,),
      jvp=lambda op, t: o._relu_grad(t[0], op.inputs[1]),
      show=('a where b > 0, else 0   (a: upstream, b = relu(x))', '1 where b > 0, else 0', '0'))
defop("Relu6",    lambda xp, x: xp.minimum(xp.maximum(x, 0), 6),
      lambda op, g: (o._relu6_grad(g, op.outputs[0]),), save_output=True,
      jvp=lambda op, t: o._relu6_grad(t[0], op.outputs[0]),
      show=('min(max(a, 0), 6)', '1 where 0 < a < 6, else 0'))
defop("Relu6Grad", lambda xp, g, y: _times_mask(xp, g, xp.logical_and(y > 0, y < 6)),
      lambda op, u: (o._relu6_grad(u, op.inputs[1]), o.zeros_like(op.inputs[1])), save=(1,),
      jvp=lambda op, t: o._relu6_grad(t[0], op.inputs[1]),
      show=('a where 0 < b < 6, else 0   (a: upstream, b = relu6(x))', '1 where 0 < b < 6, else 0', '0'))
defop("LeakyRelu", lambda xp, x, alpha: xp.where(x > 0, x, x * alpha),
      lambda op, g: (o._leaky_relu_grad(g, op.inputs[0], op.attrs["alpha"]),), save="all",
      jvp=lambda op, t: o._leaky_relu_grad(t[0], op.inputs[0], op.attrs["alpha"]),
      show=('a where a > 0, else α·a', '1 where a > 0, else α'))
defop("LeakyReluGrad", lambda xp, g, x, alpha: xp.where(x > 0, g, g * alpha),
      lambda op, u: (o._leaky_relu_grad(u, op.inputs[1], op.attrs["alpha"]), o.zeros_like(op.inputs[1])),
      save=(1,),
      jvp=lambda op, t: o._leaky_relu_grad(t[0], op.inputs[1], op.attrs["alpha"]),
      show=('a where b > 0, else α·a   (a: upstream, b = x)', '1 where b > 0, else α', '0'))
defop("Elu",      lambda xp, x: xp.where(x > 0, x, xp.expm1(xp.minimum(x, xp.zeros_like(x)))),
      lambda op, g: (o.where(o.less(op.outputs[0], 0.0), g * (op.outputs[0] + 1.0), g),), save_output=True,
      jvp=lambda op, t: o.where(o.less(op.outputs[0], 0.0), t[0] * (op.outputs[0] + 1.0), t[0]),
      show=('a where a > 0, else exp(a) − 1', '1 where a > 0, else exp(a)'))
defop("Selu",     lambda xp, x: _SELU_SCALE * xp.where(x > 0, x, _SELU_ALPHA * xp.expm1(xp.minimum(x, xp.zeros_like(x)))),
      lambda op, g: (o.where(o.less(op.outputs[0], 0.0), g * (op.outputs[0] + _SELU_SCALE_ALPHA),
                             g * _SELU_SCALE),), save_output=True,
      jvp=lambda op, t: o.where(o.less(op.outputs[0], 0.0), t[0] * (op.outputs[0] + _SELU_SCALE_ALPHA),
                                t[0] * _SELU_SCALE),
      show=('λ·a where a > 0, else λα·(exp(a) − 1)', 'λ where a > 0, else λα·exp(a)'))
defop("Softsign", lambda xp, x: x / (1 + xp.abs(x)),
      lambda op, g: (g / o.square(1.0 + o.abs(op.inputs[0])),), save="all",
      jvp=lambda op, t: t[0] / o.square(1.0 + o.abs(op.inputs[0])),
      show=('a / (1 + |a|)', '1 / (1 + |a|)²'))
defop("Softplus", lambda xp, x: xp.logaddexp(x, xp.zeros_like(x)), lambda op, g: (o._softplus_grad(g, op.inputs[0]),),
      save="all", jvp=lambda op, t: o._softplus_grad(t[0], op.inputs[0]),
      show=('log(1 + exp(a))', 'σ(a)'))
# Fused as in TF (its SoftplusGrad kernel, g / (exp(−x) + 1)); its own rule is TF's _SoftplusGradGrad.
defop("SoftplusGrad", lambda xp, g, x: g / (xp.exp(-x) + 1.0), _softplus_grad_grad, save={0: (1,), 1: (0, 1)},
      jvp=lambda op, t: o._softplus_grad(t[0], op.inputs[1]) + (t[1] / _softplus_second(op.inputs[1])) * op.inputs[0],
      show=('a / (exp(−b) + 1)   (a: upstream, b = x)', '1 / (exp(−b) + 1)', 'a / (exp(−b) + 2 + exp(b))'))
defop("Softmax",  _softmax,                                      _softmax_grad, save_output=True,
      jvp=_softmax_jvp,
      show=('softmax(a)', 'diag(s) − s·sᵀ (s = softmax(a))'))
defop("LogSoftmax", _log_softmax,                                _log_softmax_grad, save_output=True,
      jvp=lambda op, t: t[0] - o.reduce_sum(o.exp(op.outputs[0]) * t[0], axis=op.attrs["axis"], keepdims=True),
      show=('log softmax(a)', 'I − softmax(a) per row'))
# Fused as in TF (nn_grad.py): the gradient is the kernel's softmax(a) − b, not the chain rule through log softmax
defop("SoftmaxCrossEntropyWithLogits", xo.loss,                  xo.grad, save="all",
      jvp=xo.jvp,
      show=('Σ b·(log Σ exp(a) − a)   (a: logits, b: labels)', 'softmax(a) − b', '−log softmax(a)'))
defop("SparseSoftmaxCrossEntropyWithLogits", xo.sparse_loss,     xo.grad, save="all",
      jvp=xo.jvp,
      show=('log Σ exp(a) − a[b]   (a: logits, b: the label)', 'softmax(a) − onehot(b)', 'none (class indices)'))
# Reductions (axis: a tuple of non-negative ints or None)
defop("Sum",      kn.reduce_sum,
      lambda op, g: (_reduce_back(op, g),),
      jvp=lambda op, t: o.reduce_sum(t[0], axis=op.attrs["axis"], keepdims=op.attrs["keepdims"]),
      direct=dr.reduce_sum, show=('Σ a', '1 for every element'))
defop("Mean",     _mean,
      lambda op, g: (_reduce_back(op, o._div(g, o._const(float(_count(op)), g))),),  # divide, then spread: n times less work
      jvp=lambda op, t: o.reduce_sum(o._div(t[0], o._const(float(_count(op)), t[0])), axis=op.attrs["axis"],
                                     keepdims=op.attrs["keepdims"]),  # TF's transpose: each t/n, then the sum
      direct=dr.reduce_mean, show=('mean(a)', '1/n for every element'))
defop("Max",      lambda xp, x, axis, keepdims: xp.max(x, axis=axis, keepdims=keepdims),   _extreme_grad, save="all", save_output=True,
      jvp=_extreme_jvp,
      show=('max(a)', '1 at the maximum (ties share)'))
defop("Min",      lambda xp, x, axis, keepdims: xp.min(x, axis=axis, keepdims=keepdims),   _extreme_grad, save="all", save_output=True,
      jvp=_extreme_jvp,
      show=('min(a)', '1 at the minimum (ties share)'))
defop("Prod",     lambda xp, x, axis, keepdims: xp.prod(x, axis=axis, keepdims=keepdims, dtype=x.dtype),
      _prod_grad, save="all",
      jvp=_prod_jvp,
      show=('Π a', 'product of the other elements'))
defop("Cumsum",   _cumsum,                                       _cumsum_rule,
      jvp=lambda op, t: mo._cumsum(t[0], op.attrs["axis"], op.attrs["exclusive"], op.attrs["reverse"]),
      show=('cumsum(a): a₀, a₀ + a₁, …', 'the running sum of the upstream, run the other way'))
defop("Cumprod",  _cumprod,                                      _cumprod_rule, save="all", save_output=True,
      jvp=_cumprod_jvp,
      show=('cumprod(a): a₀, a₀·a₁, …', 'the running sum of upstream · output, run the other way, over a'))
defop("ArgMax",   lambda xp, x, axis: xp.astype(xp.argmax(x, axis=axis), xp.int64),      NONE,
      show=('argmax(a)',))
defop("ArgMin",   lambda xp, x, axis: xp.astype(xp.argmin(x, axis=axis), xp.int64),      NONE,
      show=('argmin(a)',))
# Linear algebra and shapes
defop("MatMul",   kn.matmul,                                       _matmul_grad, save={0: (1,), 1: (0,)},
      jvp=_matmul_jvp,
      direct=dr.matmul, show=('A @ B', 'upstream @ Bᵀ', 'Aᵀ @ upstream'))
defop("Transpose", lambda xp, x, perm: xp.permute_dims(x, perm),
      lambda op, g: (o.transpose(g, perm=[op.attrs["perm"].index(i) for i in range(len(op.attrs["perm"]))]),),
      jvp=lambda op, t: o.transpose(t[0], perm=op.attrs["perm"]),
      show=('aᵀ', 'transpose back'))
defop("Reshape",  kn.reshape,     lambda op, g: (o.reshape(g, op.in_shapes[0]),),
      jvp=lambda op, t: o.reshape(t[0], op.attrs["shape"]),
      show=('reshape(a)', 'reshape back'))
defop("Squeeze",  lambda xp, x, axis: xp.reshape(x, _squeezed(x.shape, axis)), lambda op, g: (o.reshape(g, op.in_shapes[0]),),
      jvp=lambda op, t: o.reshape(t[0], op.out_shape),
      show=('squeeze(a)', 'reshape back'))
defop("ExpandDims", lambda xp, x, axis: xp.expand_dims(x, axis=axis), lambda op, g: (o.reshape(g, op.in_shapes[0]),),
      jvp=lambda op, t: o.expand_dims(t[0], op.attrs["axis"]),
      show=('expand_dims(a)', 'reshape back'))
defop("BroadcastTo", kn.broadcast_to,                               lambda op, g: (g,),
      jvp=lambda op, t: o.broadcast_to(t[0], op.attrs["shape"]),
      direct=dr.pass_on, show=('broadcast(a)', '1, summed over the broadcast axes'))   # the tape sums g back
defop("ConcatV2", lambda xp, *xs, axis: xp.concat(xs, axis=axis), _concat_grad,
      jvp=lambda op, t: o.concat(t, axis=op.attrs["axis"]),
      show=('concat(a, b, …)', 'the matching slice'))
defop("Pack",     lambda xp, *xs, axis: xp.stack(xs, axis=axis),  _stack_grad,
      jvp=lambda op, t: o.stack(t, axis=op.attrs["axis"]),
      show=('stack(a, b, …)', 'the matching slice'))
defop("StridedSlice", lambda xp, x, index: _backend.shim(xp).getitem(x, index),
      lambda op, g: (o._slice_grad(g, op.attrs["index"], op.in_shapes[0]),),
      jvp=lambda op, t: o.getitem(t[0], op.attrs["index"]),
      show=('a[index]', '1 inside the slice, 0 elsewhere'))
defop("StridedSliceGrad", lambda xp, g, index, shape: _backend.shim(xp).scatter_add(g, index, shape),
      lambda op, g: (o.getitem(g, op.attrs["index"]),),
      jvp=lambda op, t: o._slice_grad(t[0], op.attrs["index"], op.attrs["shape"]),
      show=('zeros with a placed at [index]', 'the slice [index]'))
defop("SelectV2",  lambda xp, c, x, y: xp.where(c, x, y),
      lambda op, g: (None, o.where(op.inputs[0], g, o.zeros_like(g)), o.where(op.inputs[0], o.zeros_like(g), g)), save=(0,),
      jvp=lambda op, t: o.where(op.inputs[0], t[1], t[2]),
      show=('where(c, a, b)', 'none (a condition)', '1 where c, else 0', '1 where not c, else 0'))
defop("ClipByValue", lambda xp, x, lo, hi: xp.minimum(xp.maximum(x, lo), hi), _clip_grad, save="all",
      jvp=_clip_jvp,
      show=('clip(a, lo, hi)', '1 inside [lo, hi], else 0', '1 below lo', '1 above hi'))
defop("Identity", lambda xp, x: x,                               lambda op, g: (g,),
      jvp=lambda op, t: t[0],
      show=('a', '1'))
defop("StopGradient", lambda xp, x: x,                           NONE,
      show=('stop_gradient(a)',))
defop("PadV2",    _pad,                                          lambda op, g: (o.getitem(g, _pad_inside(op)),),
      jvp=lambda op, t: o.pad(t[0], op.attrs["paddings"]),
      show=('pad(a)', '1 inside the padding, cut back out'))
defop("Einsum",   _einsum,                                       _einsum_grad, save="all",
      jvp=_einsum_jvp,
      show=('einsum(equation, a, b, …)', 'einsum of the upstream with the other operands'))
# Convolution and pooling (NHWC; attrs: strides, pads ((top, bottom), (left, right)), dilations, ksize)
defop("Conv2D",   lambda xp, x, w, strides, pads, dilations: ck.conv2d(xp, x, w, strides, pads, dilations),
      _conv_grad, save={0: (1,), 1: (0,)},
      jvp=lambda op, t: (nno._conv2d(t[0], op.inputs[1], *_conv_attrs(op))
                         + nno._conv2d(op.inputs[0], t[1], *_conv_attrs(op))),
      show=('conv2d(x, W): each output Σ patch · W', 'upstream spread back over each patch, through W',
            'Σ over positions: patch ⊗ upstream'))
defop("Conv2DBackpropInput", ck.conv2d_backprop_input,         _conv_input_grad, save={0: (1,), 1: (0,)},
      jvp=lambda op, t: (nno._conv2d_backprop_input(t[0], op.inputs[1], op.attrs["input_shape"], *_conv_attrs(op))
                         + nno._conv2d_backprop_input(op.inputs[0], t[1], op.attrs["input_shape"], *_conv_attrs(op))),
      show=('each b (upstream) spread over its patch through W = a', 'Σ over positions: u-patch ⊗ b',
            'conv2d(u, a)'))
defop("Conv2DBackpropFilter", ck.conv2d_backprop_filter,       _conv_filter_grad, save={0: (1,), 1: (0,)},
      jvp=lambda op, t: (nno._conv2d_backprop_filter(t[0], op.inputs[1], op.attrs["filter_shape"], *_conv_attrs(op))
                         + nno._conv2d_backprop_filter(op.inputs[0], t[1], op.attrs["filter_shape"],
                                                       *_conv_attrs(op))),
      show=('Σ over positions: patch of a ⊗ b (upstream)', 'u spread back over each patch, through b',
            'conv2d(a, u)'))
defop("MaxPool",  ck.max_pool,
      lambda op, g: (nno._max_pool_grad(op.inputs[0], op.outputs[0], g, nno._pool_attrs(op)),),
      save="all", save_output=True,
      jvp=lambda op, t: nno._max_pool_grad_grad(op.inputs[0], op.outputs[0], t[0], nno._pool_attrs(op)),
      show=('max of each window', '1 at each window\'s (first) maximum, 0 elsewhere'))
defop("MaxPoolGrad", ck.max_pool_grad,                           _max_pool_grad_rule, save=(0, 1),
      jvp=lambda op, t: nno._max_pool_grad(op.inputs[0], op.inputs[1], t[2], nno._pool_attrs(op)),
      show=('c (upstream) placed at each window\'s maximum (a: input, b: its max pool)', '0', '0',
            'the value at each window\'s maximum'))
defop("MaxPoolGradGrad", ck.max_pool_grad_grad,                  _max_pool_grad_grad_rule, save=(0, 1),
      jvp=lambda op, t: nno._max_pool_grad_grad(op.inputs[0], op.inputs[1], t[2], nno._pool_attrs(op)),
      show=('c at each window\'s maximum (a: input, b: its max pool)', '0', '0', 'placed back at the maximum'))
defop("AvgPool",  ck.avg_pool,
      lambda op, g: (nno._avg_pool_grad(g, op.in_shapes[0], nno._pool_attrs(op)),),
      jvp=lambda op, t: nno._avg_pool(t[0], nno._pool_attrs(op)),
      show=('mean of each window', '1/n over each window (n: its real inputs)'))
defop("AvgPoolGrad", ck.avg_pool_grad,
      lambda op, u: (nno._avg_pool(u, nno._pool_attrs(op)),),
      jvp=lambda op, t: nno._avg_pool_grad(t[0], op.attrs["input_shape"], nno._pool_attrs(op)),
      show=('a (upstream) shared 1/n over each window', 'the mean of each window'))
defop("MatrixDiagPartV3", lambda xp, x: _diagonal(xp, x),
      lambda op, g: (o._matrix_diag(g, op.in_shapes[0][-2], op.in_shapes[0][-1]),),
      jvp=lambda op, t: o.diag_part(t[0]),
      show=('diag(A)', '1 on the diagonal, 0 elsewhere'))
defop("MatrixInverse", lambda xp, a: xp.linalg.inv(a),
      lambda op, g: (-o.matmul(op.outputs[0], o.matmul(g, op.outputs[0], transpose_b=True), transpose_a=True),),
      save_output=True,
      jvp=lambda op, t: -o.matmul(o.matmul(op.outputs[0], t[0]), op.outputs[0]),  # TF's transpose: (A⁻¹·ȧ)·A⁻¹
      show=('A⁻¹', '−A⁻ᵀ · upstream · A⁻ᵀ'))
defop("MatrixDeterminant", lambda xp, a: xp.linalg.det(a),     _det_grad, save="all", save_output=True,
      jvp=lambda op, t: op.outputs[0] * o.reduce_sum(o._matrix_t(o.inv(op.inputs[0])) * t[0], axis=(-2, -1)),
      show=('det(A)', 'det(A)·A⁻ᵀ'))
defop("MatrixSolve", lambda xp, a, b: xp.linalg.solve(a, b),     _solve_grad, save="all", save_output=True,
      jvp=lambda op, t: o.solve(op.inputs[0], t[1] - o.matmul(t[0], op.outputs[0])),
      show=('A⁻¹·B (X solving A·X = B)', '−A⁻ᵀ·upstream·Xᵀ', 'A⁻ᵀ·upstream'))
defop("Svd",      _svd,                                          _svd_grad, save_output=True,
      jvp=_svd_jvp,
      show=('svd(A) = U·diag(s)·Vᵀ (packed [U; V; s])',
            'U [F∘(UᵀŪ − ŪᵀU) S + diag(s̄) + S F∘(VᵀV̄ − V̄ᵀV)] Vᵀ + the parts outside U and V'))
defop("OneHot",   _one_hot,                                      NONE,
      show=('one_hot(a)',))
defop("Cast",     lambda xp, x, dtype: xp.astype(x, dtype),      _cast_grad,
      jvp=_cast_jvp,
      show=('cast(a)', '1 (cast back)'))
# One record stands for a whole custom_gradient function; each such record carries its own rule.
defop("IdentityN", lambda xp, *xs: xs[0],
      show=("f(a, …) with a custom gradient", "given by its grad_fn"))
defop("AdjustContrastv2", _adjust_contrast,
      show=('(a − mean)·f + mean',))                      # no gradient registered, as in TF
# Comparisons and logic: boolean results, not differentiable
defop("Less",         lambda xp, x, y: xp.less(x, y),          NONE,
      show=('a < b',))
defop("LessEqual",    lambda xp, x, y: xp.less_equal(x, y),    NONE,
      show=('a ≤ b',))
defop("Greater",      lambda xp, x, y: xp.greater(x, y),       NONE,
      show=('a > b',))
defop("GreaterEqual", lambda xp, x, y: xp.greater_equal(x, y), NONE,
      show=('a ≥ b',))
defop("Equal",        lambda xp, x, y: xp.equal(x, y),         NONE,
      show=('a == b',))
defop("NotEqual",     lambda xp, x, y: xp.not_equal(x, y),     NONE,
      show=('a ≠ b',))
defop("LogicalAnd",   lambda xp, x, y: xp.logical_and(x, y),   NONE,
      show=('a and b',))
defop("LogicalOr",    lambda xp, x, y: xp.logical_or(x, y),    NONE,
      show=('a or b',))
defop("LogicalNot",   lambda xp, x: xp.logical_not(x),         NONE,
      show=('not a',))


defop("IsNan",        lambda xp, x: xp.isnan(x),               NONE,
      show=('a is NaN',))
defop("IsInf",        lambda xp, x: xp.isinf(x),               NONE,
      show=('a is ±∞',))
defop("IsFinite",     lambda xp, x: xp.isfinite(x),            NONE,
      show=('a is finite',))


def _sum_all(xp, xs):
    total = xs[0]
    for x in xs[1:]:
        total = total + x
    return total


def _squeezed(shape, axis):
    if axis is None:
        return tuple(d for d in shape if d != 1)
    return tuple(d for i, d in enumerate(shape) if i not in axis)
