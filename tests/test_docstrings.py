"""Every docstring example in the package runs and prints what it says."""
import doctest
import importlib
import pkgutil

import pytest

import autodiff_viz
from autodiff_viz.extend import PRIMITIVES

# Modules whose examples need optional parts (a browser, nbconvert) are left to their own tests.
SKIP = {"autodiff_viz.nbconvert"}
MODULES = sorted(m.name for m in pkgutil.walk_packages(autodiff_viz.__path__, "autodiff_viz.")
                 if m.name not in SKIP)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    pytest.importorskip("matplotlib")
    module = importlib.import_module(name)
    before = set(PRIMITIVES)
    try:
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    finally:
        for op_type in set(PRIMITIVES) - before:  # an example that defines an op (extend) leaves no trace
            del PRIMITIVES[op_type]
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed"
