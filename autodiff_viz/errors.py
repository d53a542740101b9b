"""``ad.errors``: TensorFlow's exception classes (``tf.errors``).

TensorFlow code catches ``tf.errors.InvalidArgumentError`` when an op gets
shapes or values it cannot work with.  Each class here also subclasses the
Python exception this package raised before it had them, so older code that
catches ``ValueError`` or ``TypeError`` keeps working:

- ``InvalidArgumentError`` is a ``ValueError``;
- ``DTypeMismatchError`` (this package's own) is an ``InvalidArgumentError``
  that is also a ``TypeError``: two tensors of different dtypes in one op;
- ``UnimplementedError`` is a ``NotImplementedError``, ``FailedPreconditionError``
  a ``RuntimeError``, ``NotFoundError`` a ``LookupError``, ``OutOfRangeError``
  an ``IndexError``, ``ResourceExhaustedError`` a ``MemoryError``.

>>> import autodiff_viz as ad
>>> try:
...     ad.reshape(ad.constant([1.0, 2.0, 3.0]), (2, 2))
... except ad.errors.InvalidArgumentError as e:
...     print(type(e).__name__, isinstance(e, ValueError), e.error_code)
InvalidArgumentError True 3
"""
from __future__ import annotations
from ._missing import missing_api as _missing_api

# TensorFlow's error codes (``tf.errors.INVALID_ARGUMENT``...).
OK, CANCELLED, UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND, ALREADY_EXISTS = range(7)
PERMISSION_DENIED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION, ABORTED, OUT_OF_RANGE = range(7, 12)
UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS, UNAUTHENTICATED = range(12, 17)


class OpError(Exception):
    """An op failed.  ``OpError(message)``, or TensorFlow's ``OpError(node_def, op, message)``.

    ``e.message`` is the text, ``e.op`` and ``e.node_def`` what TF's
    constructor was given (``None`` when only a message was), ``e.error_code``
    the class's code.
    """

    error_code = UNKNOWN

    def __init__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs:
            node_def, op, message = None, None, args[0]
        else:
            names = ("node_def", "op", "message", "error_code")
            given = dict(zip(names, args), **kwargs)
            if "message" not in given:
                raise TypeError(f"{type(self).__name__}: expected (message) or (node_def, op, message), got {args!r}")
            node_def, op, message = given.get("node_def"), given.get("op"), given["message"]
        super().__init__(message)
        self._message, self._op, self._node_def = message, op, node_def

    @property
    def message(self) -> str:
        return str(self._message)

    @property
    def op(self):
        return self._op

    @property
    def node_def(self):
        return self._node_def

    def __reduce__(self):
        return type(self), (self._message,)


class CancelledError(OpError):
    error_code = CANCELLED


class UnknownError(OpError):
    error_code = UNKNOWN


class InvalidArgumentError(OpError, ValueError):
    """An op was given inputs it cannot work with (shapes, dtypes, values)."""

    error_code = INVALID_ARGUMENT


class DTypeMismatchError(InvalidArgumentError, TypeError):
    """Operands of one op have different dtypes: TF's ``InvalidArgumentError``, and a ``TypeError``."""


class DeadlineExceededError(OpError):
    error_code = DEADLINE_EXCEEDED


class NotFoundError(OpError, LookupError):
    error_code = NOT_FOUND


class AlreadyExistsError(OpError):
    error_code = ALREADY_EXISTS


class PermissionDeniedError(OpError):
    error_code = PERMISSION_DENIED


class UnauthenticatedError(OpError):
    error_code = UNAUTHENTICATED


class ResourceExhaustedError(OpError, MemoryError):
    error_code = RESOURCE_EXHAUSTED


class FailedPreconditionError(OpError, RuntimeError):
    error_code = FAILED_PRECONDITION


class AbortedError(OpError):
    error_code = ABORTED


class OutOfRangeError(OpError, IndexError):
    error_code = OUT_OF_RANGE


class UnimplementedError(OpError, NotImplementedError):
    error_code = UNIMPLEMENTED


class InternalError(OpError):
    error_code = INTERNAL


class UnavailableError(OpError):
    error_code = UNAVAILABLE


class DataLossError(OpError):
    error_code = DATA_LOSS


__all__ = [
    "OpError", "CancelledError", "UnknownError", "InvalidArgumentError", "DeadlineExceededError", "NotFoundError",
    "AlreadyExistsError", "PermissionDeniedError", "UnauthenticatedError", "ResourceExhaustedError",
    "FailedPreconditionError", "AbortedError", "OutOfRangeError", "UnimplementedError", "InternalError",
    "UnavailableError", "DataLossError", "DTypeMismatchError",
]

__getattr__ = _missing_api(__name__)
