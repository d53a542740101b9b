"""Convolution and pooling on raw NHWC arrays, written with slicing and ``matmul`` only.

Every kernel here works in any array namespace ``xp`` (NumPy, CuPy, a strict
Array-API library): a window position ``(i, j)`` of the kernel is one strided
slice of the padded input (a "tap"), so a convolution gathers its taps into
patches (im2col) and multiplies once, and each adjoint adds the taps back
(col2im).  ``pads`` is ``((top, bottom), (left, right))``.
"""
from __future__ import annotations

import numpy as _np


def out_size(size, k, stride, dilation, before, after) -> int:
    """How many outputs an axis of ``size`` gives: windows of ``k`` taps ``dilation`` apart, ``stride`` apart."""
    return (size + before + after - ((k - 1) * dilation + 1)) // stride + 1


def _taps(kh, kw, strides, dilations, oh, ow):
    """``(row slice, column slice)`` of the padded input for each kernel position, row-major."""
    (sh, sw), (dh, dw) = strides, dilations
    for i in range(kh):
        for j in range(kw):
            yield (slice(i * dh, i * dh + sh * (oh - 1) + 1, sh), slice(j * dw, j * dw + sw * (ow - 1) + 1, sw))


def _pad(xp, x, pads, value):
    (top, bottom), (left, right) = pads
    if not (top or bottom or left or right):
        return x
    n, h, w, c = x.shape
    out = xp.full((n, h + top + bottom, w + left + right, c), value, dtype=x.dtype)
    out[:, top:top + h, left:left + w, :] = x
    return out


def _crop(x, pads, shape):
    (top, _), (left, _) = pads
    return x[:, top:top + shape[1], left:left + shape[2], :]


def _sizes(shape, k, strides, dilations, pads):
    return tuple(out_size(shape[1 + a], k[a], strides[a], dilations[a], *pads[a]) for a in (0, 1))


def _patches(xp, x, kh, kw, strides, dilations, pads):
    """im2col: ``[n · oh · ow, kh · kw · c]``, each row one output position's window."""
    n, c = x.shape[0], x.shape[3]
    oh, ow = _sizes(x.shape, (kh, kw), strides, dilations, pads)
    padded = _pad(xp, x, pads, 0)
    if xp is _np:  # one gather by strides: a view, copied once by the reshape
        view = _np.lib.stride_tricks.sliding_window_view(padded, ((kh - 1) * dilations[0] + 1,
                                                                  (kw - 1) * dilations[1] + 1), axis=(1, 2))
        view = view[:, ::strides[0], ::strides[1], :, ::dilations[0], ::dilations[1]][:, :oh, :ow]
        return view.transpose(0, 1, 2, 4, 5, 3).reshape(n * oh * ow, kh * kw * c), (oh, ow)
    taps = [padded[:, r, q, :] for r, q in _taps(kh, kw, strides, dilations, oh, ow)]
    return xp.reshape(xp.stack(taps, axis=3), (n * oh * ow, kh * kw * c)), (oh, ow)


def conv2d(xp, x, w, strides, pads, dilations):
    kh, kw, cin, cout = w.shape
    cols, (oh, ow) = _patches(xp, x, kh, kw, strides, dilations, pads)
    return xp.reshape(cols @ xp.reshape(w, (kh * kw * cin, cout)), (x.shape[0], oh, ow, cout))


def conv2d_backprop_input(xp, w, g, input_shape, strides, pads, dilations):
    """The gradient of ``conv2d`` with respect to its input: each output's gradient spread back over its window."""
    kh, kw, cin, cout = w.shape
    n, oh, ow = g.shape[0], g.shape[1], g.shape[2]
    cols = xp.reshape(g, (n * oh * ow, cout)) @ xp.reshape(w, (kh * kw * cin, cout)).T
    cols = xp.reshape(cols, (n, oh, ow, kh * kw, cin))
    (top, bottom), (left, right) = pads
    dx = xp.zeros((n, input_shape[1] + top + bottom, input_shape[2] + left + right, cin), dtype=g.dtype)
    for t, (r, q) in enumerate(_taps(kh, kw, strides, dilations, oh, ow)):
        dx[:, r, q, :] = dx[:, r, q, :] + cols[:, :, :, t, :]
    return _crop(dx, pads, input_shape)


def conv2d_backprop_filter(xp, x, g, filter_shape, strides, pads, dilations):
    """The gradient of ``conv2d`` with respect to its filter: patches transposed times the output's gradient."""
    kh, kw, cin, cout = filter_shape
    cols, (oh, ow) = _patches(xp, x, kh, kw, strides, dilations, pads)
    return xp.reshape(cols.T @ xp.reshape(g, (x.shape[0] * oh * ow, cout)), (kh, kw, cin, cout))


_LOWEST = -float("inf")  # max pooling pads with it: padding never wins a max


def max_pool(xp, x, ksize, strides, pads):
    oh, ow = _sizes(x.shape, ksize, strides, (1, 1), pads)
    padded = _pad(xp, x, pads, _LOWEST)
    out = None
    for r, q in _taps(ksize[0], ksize[1], strides, (1, 1), oh, ow):
        out = padded[:, r, q, :] if out is None else xp.maximum(out, padded[:, r, q, :])
    return out


def _first_max(xp, x, y, ksize, strides, pads):
    """For each tap, where it holds its window's maximum and no earlier tap did (TF routes ties to the first)."""
    padded = _pad(xp, x, pads, _LOWEST)
    taken = xp.zeros(y.shape, dtype=xp.bool)
    for r, q in _taps(ksize[0], ksize[1], strides, (1, 1), y.shape[1], y.shape[2]):
        hit = xp.logical_and(padded[:, r, q, :] == y, xp.logical_not(taken))
        taken = xp.logical_or(taken, hit)
        yield r, q, hit


def max_pool_grad(xp, x, y, g, ksize, strides, pads):
    """Each window's gradient to the position of its maximum."""
    (top, bottom), (left, right) = pads
    dx = xp.zeros((x.shape[0], x.shape[1] + top + bottom, x.shape[2] + left + right, x.shape[3]), dtype=g.dtype)
    zero = xp.zeros((), dtype=g.dtype)
    for r, q, hit in _first_max(xp, x, y, ksize, strides, pads):
        dx[:, r, q, :] = dx[:, r, q, :] + xp.where(hit, g, zero)
    return _crop(dx, pads, x.shape)


def max_pool_grad_grad(xp, x, y, u, ksize, strides, pads):
    """The value of ``u`` (shaped as the input) at each window's maximum: max pooling's tangent."""
    padded_u = _pad(xp, u, pads, 0)
    out = xp.zeros(y.shape, dtype=u.dtype)
    for r, q, hit in _first_max(xp, x, y, ksize, strides, pads):
        out = xp.where(hit, padded_u[:, r, q, :], out)
    return out


def _counts(xp, shape, ksize, strides, pads, dtype):
    """How many real (unpadded) inputs each window covers: TF's average pooling divides by this."""
    ones = _pad(xp, xp.ones((1, shape[1], shape[2], 1), dtype=dtype), pads, 0)
    oh, ow = _sizes(shape, ksize, strides, (1, 1), pads)
    total = None
    for r, q in _taps(ksize[0], ksize[1], strides, (1, 1), oh, ow):
        total = ones[:, r, q, :] if total is None else total + ones[:, r, q, :]
    return total


def avg_pool(xp, x, ksize, strides, pads):
    oh, ow = _sizes(x.shape, ksize, strides, (1, 1), pads)
    padded = _pad(xp, x, pads, 0)
    total = None
    for r, q in _taps(ksize[0], ksize[1], strides, (1, 1), oh, ow):
        total = padded[:, r, q, :] if total is None else total + padded[:, r, q, :]
    return total / _counts(xp, x.shape, ksize, strides, pads, x.dtype)


def avg_pool_grad(xp, g, input_shape, ksize, strides, pads):
    """Each window's gradient shared equally among the real inputs it covers, in the order of TF's kernel.

    TF's AvgPoolGrad multiplies by the reciprocal of the count (``1.0 / n`` in
    double, then the dtype), not dividing by it, and adds the shares into the
    inputs output position by output position, row-major: for one input that is
    the windows' taps from the last to the first, so the taps run backwards here.
    """
    counts = _counts(xp, input_shape, ksize, strides, pads, g.dtype)
    share = g * xp.astype(1.0 / xp.astype(counts, xp.float64), g.dtype)
    (top, bottom), (left, right) = pads
    dx = xp.zeros((g.shape[0], input_shape[1] + top + bottom, input_shape[2] + left + right, g.shape[3]),
                  dtype=g.dtype)
    for r, q in reversed(list(_taps(ksize[0], ksize[1], strides, (1, 1), g.shape[1], g.shape[2]))):
        dx[:, r, q, :] = dx[:, r, q, :] + share
    return _crop(dx, pads, input_shape)
