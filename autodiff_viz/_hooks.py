"""Where the engine announces what it does; the recorder listens here.

The engine calls ``emit(kind, **payload)`` only while ``active`` is true, so
with nobody listening the cost is one attribute test per recorded op.

Listeners are per thread: ``emit`` calls the listeners that the calling
thread added, so a trace opened in one thread never sees another thread's
ops.  ``active`` is the one process-wide fact: "some thread is listening",
which keeps the engine's test to a single attribute read.

Payloads (engine objects; ``autodiff_viz._recording`` turns them into plain events):
- ``tape_begin`` / ``tape_end``: tape
- ``watch``: tape, tensor, auto (True when a variable was watched on read)
- ``op``: tape, node (the tape record), output (the result tensor), inputs (the input tensors)
- ``op_skipped``: tape, op_type, inputs, output, reason ("stop_recording")
- ``leave``: tape, tensor, how ("numpy")
- ``state``: tape, variable, how ("assign_add"...)
- ``gradient_begin``: tape, targets, sources, kind ("gradient"/"jacobian")
- ``backward_step``: tape, node, upstream, input_grads (one tensor or None per input), step
- ``accumulate``: tape, tensor_id, contribution, total, count, node
- ``gradient_end``: tape, sources, results, spent
"""
from __future__ import annotations

import threading


class _ThreadListeners(threading.local):
    def __init__(self):
        self.listeners: list = []


_local = _ThreadListeners()
_lock = threading.Lock()
_count = 0      # listeners over all threads
active = False  # _count > 0: read by the engine before it builds a payload


def listeners() -> list:
    """This thread's listeners (a copy)."""
    return list(_local.listeners)


def emit(kind: str, /, **payload) -> None:
    for listener in list(_local.listeners):
        listener(kind, payload)


def add(listener) -> None:
    global _count, active
    with _lock:
        _local.listeners.append(listener)
        _count += 1
        active = True


def remove(listener) -> None:
    global _count, active
    with _lock:
        if listener in _local.listeners:
            _local.listeners.remove(listener)
            _count -= 1
        active = _count > 0
