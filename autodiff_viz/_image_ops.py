"""``tf.image.resize_with_pad``: bilinear resizing built from gathers and weights, then zero padding.

Differentiable through its interpolation: each output pixel is a weighted
sum of four input pixels, recorded as gathers, products and sums.

>>> import autodiff_viz as ad
>>> img = ad.reshape(ad.range(4.0), [2, 2, 1])
>>> ad.image.resize_with_pad(img, 2, 4)[..., 0].numpy().tolist()
[[0.0, 0.0, 1.0, 0.0], [0.0, 2.0, 3.0, 0.0]]
"""
from __future__ import annotations

import numpy as _np

from . import _ops as o
from ._context import name_scope
from ._tensor import InvalidArgumentError, _int_arg, as_tensor


def _weights(in_size: int, out_size: int):
    """TF's half-pixel bilinear weights along one axis: (lower index, upper index, fraction), computed in float32."""
    scale = _np.float32(in_size) / _np.float32(out_size)
    where = (_np.arange(out_size, dtype=_np.float32) + _np.float32(0.5)) * scale - _np.float32(0.5)
    floor = _np.floor(where)
    lower = _np.maximum(floor, 0).astype(_np.int64)
    upper = _np.minimum(_np.ceil(where), in_size - 1).astype(_np.int64)
    return lower, upper, (where - floor).astype(_np.float32)


def _lerp_axis(x, axis, out_size):
    """Resize axis ``axis`` of ``x`` to ``out_size`` by linear interpolation (two gathers and a blend)."""
    lower, upper, frac = _weights(x.shape[axis], out_size)
    pick = (slice(None),) * axis
    shape = [1] * x.ndim
    shape[axis] = out_size
    frac = o.reshape(as_tensor(frac.astype(x.dtype.as_numpy_dtype)), shape)
    low, high = o.getitem(x, pick + (lower,)), o.getitem(x, pick + (upper,))
    return low + (high - low) * frac


def resize_with_pad(image, target_height, target_width, method="bilinear", antialias=False):
    """Scale ``image`` ([h, w, c] or [n, h, w, c]) to fit ``target_height × target_width`` keeping its aspect
    ratio, then pad with zeros around it, as ``tf.image.resize_with_pad`` (bilinear, half-pixel centers).

    The result is float32, as TF's.
    """
    if method != "bilinear" or antialias:
        raise InvalidArgumentError(f"resize_with_pad: only method='bilinear' without antialias is part of "
                                   f"autodiff_viz, got method={method!r}, antialias={antialias!r}")
    images = as_tensor(image)
    if images.ndim not in (3, 4):
        raise InvalidArgumentError(f"resize_with_pad: image must be [height, width, channels] or [batch, height, "
                                   f"width, channels], got shape {images.shape}")
    th = _int_arg(target_height, "resize_with_pad", "target_height")
    tw = _int_arg(target_width, "resize_with_pad", "target_width")
    if th <= 0 or tw <= 0:
        raise InvalidArgumentError(f"resize_with_pad: target size must be positive, got {th}x{tw}")
    batched = images if images.ndim == 4 else o.expand_dims(images, 0)
    h, w = batched.shape[1], batched.shape[2]
    if h == 0 or w == 0:
        raise InvalidArgumentError(f"resize_with_pad: image of shape {images.shape} has no pixels")
    # As TF: sizes and padding in float32, floored.
    f = _np.float32
    ratio = max(f(w) / f(tw), f(h) / f(th))
    rh, rw = f(h) / ratio, f(w) / ratio
    new_h, new_w = int(_np.floor(rh)), int(_np.floor(rw))
    pad_h, pad_w = max(0, int(_np.floor((f(th) - rh) / f(2)))), max(0, int(_np.floor((f(tw) - rw) / f(2))))
    with name_scope("resize_with_pad"):
        x = batched if batched.dtype.is_floating else o.cast(batched, "float32")
        x = o.cast(_resize_bilinear(x, new_h, new_w), "float32")
        x = o.pad(x, [[0, 0], [pad_h, th - new_h - pad_h], [pad_w, tw - new_w - pad_w], [0, 0]])
        return x if images.ndim == 4 else o.squeeze(x, axis=0)


def _resize_bilinear(images, height, width):
    """``images`` [n, h, w, c] resized to ``height × width`` by half-pixel bilinear interpolation, in their dtype."""
    return _lerp_axis(_lerp_axis(images, 1, height), 2, width)
