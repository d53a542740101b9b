"""``ad.Module``: a named container that finds the variables it holds."""
from __future__ import annotations

import re

from ._tape import name_scope as _name_scope
from ._tensor import ResourceVariable

_name_counts: dict = {}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")  # tf.Module's rule for names (ASCII only)


def unique_name(base: str) -> str:
    """``dense``, then ``dense_1``, ``dense_2``... (as Keras names layers)."""
    n = _name_counts.get(base, 0)
    _name_counts[base] = n + 1
    return base if n == 0 else f"{base}_{n}"


def _snake_case(name: str) -> str:
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


def _leaves(values):
    """Items of nested lists, tuples and dicts (keys sorted), in order; each container once."""
    containers = set()
    stack = list(reversed(values))
    while stack:
        value = stack.pop()
        if isinstance(value, (list, tuple, dict)):
            if id(value) in containers:
                continue
            containers.add(id(value))
            if isinstance(value, dict):
                stack.extend(value[k] for k in sorted(value, key=str, reverse=True))
            else:
                stack.extend(reversed(value))
        else:
            yield value


class Module:
    """A named container for variables and other modules.

    ``variables`` finds every variable held in an attribute, directly or in
    lists, tuples, dicts and sub-modules: as ``tf.Module``, the module's own
    attributes in sorted order first (list items in order, dict keys sorted),
    then each sub-module found there, walked the same way; each variable once.

    >>> import autodiff_viz as ad
    >>> class Linear(ad.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = ad.Variable([[1.0], [2.0]], name="w")
    ...         self.b = ad.Variable([0.0], name="b", trainable=False)
    ...     def __call__(self, x):
    ...         with self.name_scope:
    ...             return x @ self.w + self.b
    >>> m = Linear()
    >>> [v.name for v in m.variables], [v.name for v in m.trainable_variables]
    (['b:0', 'w:0'], ['w:0'])
    """

    def __init__(self, name: str | None = None):
        if name is None:
            name = unique_name(_snake_case(type(self).__name__))
        else:
            self._check_name(name)
        self._name = name

    def _check_name(self, name) -> None:
        """As ``tf.Module``: a name must be a Python identifier in ASCII (``'dense_1'``, not ``'bad name'``)."""
        if not isinstance(name, str):  # (TF's pattern match raises TypeError on these)
            raise TypeError(f"{type(self).__name__}: name must be a string, got {name!r:.60} ({type(name).__name__})")
        if not _IDENTIFIER.match(name):
            raise ValueError(f"{type(self).__name__}: {name!r} is not a valid module name; module names must be "
                             "valid Python identifiers (letters, digits and _, not starting with a digit)")

    @property
    def name(self) -> str:
        # A subclass whose __init__ never calls Module.__init__ (as TF's guides allow) still has a name.
        name = self.__dict__.get("_name")
        if name is None:
            name = self._name = unique_name(_snake_case(type(self).__name__))
        return name

    @property
    def name_scope(self):
        """A context manager labelling the ops run inside with this module's name."""
        return _name_scope(self.name)

    def _tracked_values(self) -> list:
        """What to search for variables and modules, in order (attributes sorted by name)."""
        attrs = vars(self)
        return [attrs[k] for k in sorted(attrs)]

    def _walk(self):
        """Yield every variable and sub-module reachable from here, each once.

        As ``tf.Module``: a module's own attributes first, then each sub-module
        found there, in order, walked the same way.
        """
        seen = {id(self)}
        modules = [self]
        while modules:
            found = []
            for value in _leaves(modules.pop()._tracked_values()):
                if isinstance(value, (ResourceVariable, Module)) and id(value) not in seen:
                    seen.add(id(value))
                    yield value
                    if isinstance(value, Module):
                        found.append(value)
            modules.extend(reversed(found))

    @property
    def variables(self) -> tuple:
        """Every variable of this module and its sub-modules."""
        return tuple(v for v in self._walk() if isinstance(v, ResourceVariable))

    @property
    def trainable_variables(self) -> tuple:
        """The variables created with ``trainable=True``."""
        return tuple(v for v in self.variables if v.trainable)

    @property
    def submodules(self) -> tuple:
        """Every module reachable from this one (not itself)."""
        return tuple(m for m in self._walk() if isinstance(m, Module))

    def __repr__(self):
        return f"<{type(self).__name__} '{self.name}'>"

