"""Convolution and pooling for CNNs (NHWC), as ``tf.nn.conv2d``, ``max_pool2d`` and ``avg_pool2d``.

Arguments are checked and turned into explicit paddings here; the arrays
are computed by ``_conv_kernels`` and each op is one primitive with its
gradient and tangent rules (``_primitives``).

>>> import autodiff_viz as ad
>>> x = ad.reshape(ad.range(16.0), [1, 4, 4, 1])
>>> ad.nn.max_pool2d(x, 2, 2, "VALID")[0, ..., 0].numpy().tolist()
[[5.0, 7.0], [13.0, 15.0]]
"""
from __future__ import annotations

import numbers

from ._registry import PRIMITIVES as _P
from ._tensor import InvalidArgumentError, as_tensor, execute, numeric


def _pair(value, op, what, allow_four=True) -> tuple:
    """TF's spellings of a per-axis setting: an int, ``[h, w]``, ``[v]`` or ``[1, h, w, 1]``."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        values = (int(value),) * 2
    else:
        try:
            items = [int(v) if isinstance(v, numbers.Integral) and not isinstance(v, bool) else None for v in value]
        except TypeError:
            items = [None]
        if None in items or len(items) not in ((1, 2, 4) if allow_four else (1, 2)):
            raise InvalidArgumentError(f"{op}: {what} must be an int or a list of {'1, 2 or 4' if allow_four else '1 or 2'}"
                                       f" ints, got {value!r:.60}")
        if len(items) == 4:
            if items[0] != 1 or items[3] != 1:
                raise InvalidArgumentError(f"{op}: {what} {items} must be 1 in the batch and channel axes (NHWC)")
            items = items[1:3]
        values = tuple(items) * 2 if len(items) == 1 else tuple(items)
    if min(values) < 1:
        raise InvalidArgumentError(f"{op}: {what} must be >= 1, got {value!r}")
    return values


def _paddings(padding, shape, k, strides, dilations, op):
    """``((top, bottom), (left, right))`` for ``"SAME"``, ``"VALID"`` or TF's explicit ``[[0, 0], [t, b], [l, r], [0, 0]]``."""
    if isinstance(padding, str) and padding.upper() == "VALID":
        pads = ((0, 0), (0, 0))
    elif isinstance(padding, str) and padding.upper() == "SAME":
        pads = []
        for a in (0, 1):
            extent = (k[a] - 1) * dilations[a] + 1
            out = -(-shape[1 + a] // strides[a])
            total = max((out - 1) * strides[a] + extent - shape[1 + a], 0)
            pads.append((total // 2, total - total // 2))  # as TF: the odd one goes after
        pads = tuple(pads)
    else:
        try:
            rows = [tuple(int(v) for v in r) for r in padding]
        except (TypeError, ValueError):
            rows = None
        if rows is None or len(rows) != 4 or any(len(r) != 2 for r in rows) or rows[0] != (0, 0) \
                or rows[3] != (0, 0) or min(min(r) for r in rows) < 0:
            raise InvalidArgumentError(f"{op}: padding must be 'SAME', 'VALID' or [[0, 0], [top, bottom], "
                                       f"[left, right], [0, 0]] with sizes >= 0, got {padding!r:.80}")
        pads = (rows[1], rows[2])
    for a, name in ((0, "height"), (1, "width")):
        extent = (k[a] - 1) * dilations[a] + 1
        if shape[1 + a] + sum(pads[a]) < extent:
            raise InvalidArgumentError(f"{op}: the window ({extent} with dilation) is larger than the padded input "
                                       f"{name} {shape[1 + a] + sum(pads[a])} (input shape {shape})")
    return pads


def _images(x, op, data_format):
    if data_format not in ("NHWC", None):
        raise InvalidArgumentError(f"{op}: only data_format='NHWC' is part of autodiff_viz, got {data_format!r}")
    x = numeric(x, op, "real")
    if x.ndim != 4:
        raise InvalidArgumentError(f"{op}: input must be 4-D [batch, height, width, channels], got shape {x.shape}")
    return x


def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):
    """2-D convolution (cross-correlation, as TF): ``input`` [n, h, w, c_in], ``filters`` [kh, kw, c_in, c_out].

    ``padding``: ``"VALID"``, ``"SAME"`` or explicit ``[[0, 0], [top, bottom], [left, right], [0, 0]]``.

    >>> import autodiff_viz as ad
    >>> x = ad.reshape(ad.range(9.0), [1, 3, 3, 1])
    >>> ad.nn.conv2d(x, ad.ones([2, 2, 1, 1]), 1, "VALID")[0, ..., 0].numpy().tolist()
    [[8.0, 12.0], [20.0, 24.0]]
    """
    x = _images(input, "Conv2D", data_format)
    w = as_tensor(filters, x, "Conv2D")
    if w.ndim != 4:
        raise InvalidArgumentError(f"Conv2D: filters must be 4-D [height, width, in_channels, out_channels], got "
                                   f"shape {w.shape}")
    if w.dtype != x.dtype:
        raise InvalidArgumentError(f"Conv2D: input and filters have different dtypes, {x.dtype.name} and "
                                   f"{w.dtype.name}")
    if w.shape[2] != x.shape[3]:
        raise InvalidArgumentError(f"Conv2D: input has {x.shape[3]} channels (shape {x.shape}) but filters expect "
                                   f"{w.shape[2]} (shape {w.shape})")
    strides = _pair(strides, "Conv2D", "strides")
    dilations = _pair(1 if dilations is None else dilations, "Conv2D", "dilations")
    pads = _paddings(padding, x.shape, w.shape[:2], strides, dilations, "Conv2D")
    return _conv2d(x, w, strides, pads, dilations)


def _conv2d(x, w, strides, pads, dilations):
    return execute(_P["Conv2D"], (x, w), {"strides": strides, "pads": pads, "dilations": dilations})


def _conv2d_backprop_input(w, g, input_shape, strides, pads, dilations):
    return execute(_P["Conv2DBackpropInput"], (w, g), {"input_shape": tuple(input_shape), "strides": strides,
                                                       "pads": pads, "dilations": dilations})


def _conv2d_backprop_filter(x, g, filter_shape, strides, pads, dilations):
    return execute(_P["Conv2DBackpropFilter"], (x, g), {"filter_shape": tuple(filter_shape), "strides": strides,
                                                        "pads": pads, "dilations": dilations})


def _pool_args(input, ksize, strides, padding, data_format, op):
    x = _images(input, op, data_format)
    k = _pair(ksize, op, "ksize")
    s = _pair(strides, op, "strides")
    return x, {"ksize": k, "strides": s, "pads": _paddings(padding, x.shape, k, s, (1, 1), op)}


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    """The largest value of each ``ksize`` window, windows ``strides`` apart (``"SAME"`` pads never win)."""
    x, attrs = _pool_args(input, ksize, strides, padding, data_format, "MaxPool")
    return execute(_P["MaxPool"], (x,), attrs)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    """The mean of each ``ksize`` window; with ``"SAME"``, over the window's real (unpadded) inputs, as TF.

    >>> import autodiff_viz as ad
    >>> x = ad.reshape(ad.range(4.0), [1, 2, 2, 1])
    >>> ad.nn.avg_pool2d(x, 2, 1, "SAME")[0, ..., 0].numpy().tolist()
    [[1.5, 2.0], [2.5, 3.0]]
    """
    x, attrs = _pool_args(input, ksize, strides, padding, data_format, "AvgPool")
    return _avg_pool(x, attrs)


def _avg_pool(x, attrs):
    return execute(_P["AvgPool"], (x,), attrs)


def _max_pool_grad(x, y, g, attrs):
    return execute(_P["MaxPoolGrad"], (x, y, g), attrs)


def _max_pool_grad_grad(x, y, u, attrs):
    return execute(_P["MaxPoolGradGrad"], (x, y, u), attrs)


def _avg_pool_grad(g, input_shape, attrs):
    return execute(_P["AvgPoolGrad"], (g,), dict(attrs, input_shape=tuple(input_shape)))


def _pool_attrs(op):
    return {k: op.attrs[k] for k in ("ksize", "strides", "pads")}
