"""The engine modules a compiled build turns into C extensions, and whether this install is one.

``pip install .`` gives the pure-Python package.  ``AUTODIFF_VIZ_COMPILE=1 pip
install .`` (not an editable install) compiles :data:`MODULES` with mypyc: the
same source, as C extensions, after mypy has checked it with
:data:`MYPY_FLAGS` (a module that does not check does not build).  A training
step of a small MLP then takes about 13% less time; ``benchmarks/bench.py``
times both builds side by side.  These modules hold functions and constants
only: every class stays interpreted, with Python's semantics (subclasses,
``object.__new__``, attributes set on instances).  What differs in a compiled
module: its functions make no Python frames (a traceback, or a warning NumPy
raises in one, names the caller's line instead), and a name patched on the
module is not seen by the module's own calls.

State: none.

>>> from autodiff_viz import _compiled
>>> "_record" in _compiled.MODULES and set(_compiled.compiled()) <= set(_compiled.MODULES)
True
"""
from __future__ import annotations

import importlib
import importlib.machinery

# The hot path of recording and of a pass on values (see README's module table).
MODULES = ("_record", "_direct_rules", "_kernels", "_replay", "_gradient_sums")
# mypy's view of them: every function body checked, the rest of the package read for its types only.
MYPY_FLAGS = ("--check-untyped-defs", "--follow-imports=silent", "--ignore-missing-imports")


def compiled() -> tuple:
    """The modules of :data:`MODULES` that this install loaded as compiled extensions (none: a pure install)."""
    out = []
    for name in MODULES:
        module = importlib.import_module(f"{__package__}.{name}")
        if isinstance(getattr(module, "__loader__", None), importlib.machinery.ExtensionFileLoader):
            out.append(name)
    return tuple(out)
