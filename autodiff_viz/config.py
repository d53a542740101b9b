"""``ad.config``: the devices this process can compute on (as ``tf.config``), and ``ad.device``.

NumPy computes on the CPU; the CuPy backend (``ad.set_backend("cupy")``)
on a GPU.  ``list_physical_devices("GPU")`` lists GPUs only where CuPy is
installed and sees one, so guide code that asks before using a GPU takes
the CPU branch everywhere else.

>>> import autodiff_viz as ad
>>> ad.config.list_physical_devices("CPU")
[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]
"""
from __future__ import annotations

import contextlib
import importlib.util
import re
import sys
from typing import NamedTuple

from . import _backend
from ._missing import missing_api as _missing_api


class PhysicalDevice(NamedTuple):
    """A device, named as TensorFlow names it."""

    name: str
    device_type: str


def _gpu_count() -> int:
    if "cupy" not in sys.modules and importlib.util.find_spec("cupy") is None:
        return 0
    try:
        return int(_backend._load("cupy").cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001  (CuPy without a usable CUDA driver: no GPU)
        return 0


def list_physical_devices(device_type=None) -> list:
    """``[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU'), ...GPUs]``, filtered by ``device_type``."""
    if device_type is not None and (not isinstance(device_type, str) or device_type.upper() not in ("CPU", "GPU")):
        raise ValueError(f"list_physical_devices: device_type must be 'CPU', 'GPU' or None, got {device_type!r}")
    devices = [PhysicalDevice("/physical_device:CPU:0", "CPU")]
    devices += [PhysicalDevice(f"/physical_device:GPU:{i}", "GPU") for i in range(_gpu_count())]
    return [d for d in devices if device_type is None or d.device_type == device_type.upper()]


def list_logical_devices(device_type=None) -> list:
    """As ``list_physical_devices``, named ``/device:CPU:0`` (TF's logical devices)."""
    return [PhysicalDevice(d.name.replace("/physical_device:", "/device:"), d.device_type)
            for d in list_physical_devices(device_type)]


_DEVICE = re.compile(r"^(/job:[\w-]+)?(/replica:\d+)?(/task:\d+)?(/?(device:)?(?P<kind>CPU|GPU):(?P<index>\d+))?$",
                     re.IGNORECASE)


@contextlib.contextmanager
def device(device_name):
    """``with ad.device("CPU:0"):`` as in TF: a placement for the ops inside.

    Placement here follows the backend (``ad.backend("cupy")`` puts tensors on
    the GPU), so the block checks the name and runs its ops where they would
    run anyway, as TF's soft placement does when the device is missing.
    """
    if device_name is None:
        yield
        return
    if not isinstance(device_name, str) or not _DEVICE.match(device_name.strip()):
        raise ValueError(f"device: {device_name!r} is not a device name such as 'CPU:0', '/GPU:0' or "
                         "'/job:localhost/replica:0/task:0/device:CPU:0'")
    yield


def run_functions_eagerly(run_eagerly) -> None:
    """Accepted for TensorFlow code: ``ad.function`` always runs its Python function eagerly, whatever the flag."""
    if not isinstance(run_eagerly, bool):
        raise TypeError(f"run_functions_eagerly: expected True or False, got {run_eagerly!r}")


def functions_run_eagerly() -> bool:
    """Always True: there are no graphs here."""
    return True


__getattr__ = _missing_api(__name__)
