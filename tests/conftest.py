"""Shared test setup.

Backend: the engine suite also runs with every new tensor created by another
array namespace, to prove the engine assumes nothing NumPy-specific::

    AUTODIFF_VIZ_BACKEND=array_api_strict pytest tests/test_guides.py ...
    pytest --backend array_api_strict ...

Tests that compare with NumPy go through ``.numpy()``, which returns a host
array on every backend.
"""
import os

import pytest

import autodiff_viz as ad
from browser_util import browser  # noqa: F401  (a fixture: one headless Chromium per test module)


def pytest_addoption(parser):
    parser.addoption("--backend", default=os.environ.get("AUTODIFF_VIZ_BACKEND", "numpy"),
                     help="array namespace for new tensors: numpy (default), array_api_strict or cupy "
                          "(also read from AUTODIFF_VIZ_BACKEND)")


def pytest_configure(config):
    # Set before collection, so tensors built at import time of a test module use it too.
    ad.set_backend(config.getoption("--backend"))


def pytest_report_header(config):
    return f"autodiff_viz backend: {config.getoption('--backend')}"


@pytest.fixture(autouse=True)
def _session_backend(request):
    """Every test starts on the chosen backend, whatever the previous test left behind."""
    name = request.config.getoption("--backend")
    ad.set_backend(name)
    yield name
    ad.set_backend(name)


@pytest.fixture
def backend_name(request):
    """The backend this run uses ("numpy", "array_api_strict", "cupy")."""
    return request.config.getoption("--backend")


@pytest.fixture(autouse=True)
def _no_open_figures():
    """Figures a test made (``Animation.frame`` hands its figure to the caller) are closed after it."""
    yield
    import sys

    plt = sys.modules.get("matplotlib.pyplot")  # (only where a test loaded it: the engine tests never do)
    if plt is not None:
        plt.close("all")
