"""``ad.image``: image ops: ``adjust_contrast`` (no gradient, as in TF) and ``resize_with_pad`` (bilinear)."""
from .extend import as_tensor, execute
from .extend import PRIMITIVES as _P
from ._missing import missing_api as _missing_api
from ._image_ops import resize_with_pad  # noqa: F401


def adjust_contrast(images, contrast_factor):
    """``(x - mean) * contrast_factor + mean`` per channel, over the last three axes [h, w, c]."""
    images = as_tensor(images)
    if images.ndim < 3:
        raise ValueError(f"adjust_contrast: images need rank >= 3 [..., height, width, channels], got shape {images.shape}")
    factor = as_tensor(contrast_factor, images, "AdjustContrastv2")
    return execute(_P["AdjustContrastv2"], (images, factor))

__getattr__ = _missing_api(__name__)
