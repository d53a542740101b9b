"""A backward pass written out for a tape whose records repeat: a training loop's step.

``_tape._backward_values`` reads each record as it goes: its fields, which
gradient it takes and where each input's gradient goes, whether a shape
needs summing back, all asked again on every step of every loop.  A loop
records the same ops on the same shapes every time, so the second time a
tape of that shape is differentiated, its pass is written out once as a
Python function (straight-line code: each record's direct rule called on
the upstream value in a local variable, each input's gradient handed to the
next rule or added up in order) and run from then on.  The function first
checks that the tape is the one it was written for: every record's
primitive, input shapes, output dtype and own rule (in one pass), then where
every input came from (an earlier record, a source by its position, or
nothing the pass reaches) and that no primitive's rule was replaced since.
Any difference, and the general pass runs instead.

It computes exactly what the general pass computes, in the same order (the
bits are the same), lets each record's saved values and each gradient go
once its rule has run (so memory falls as in the general pass), and is used
only where that pass would run on values with the direct rules: a
non-persistent tape, ``gradient(target, sources)`` with one target and
sources a tensor or a list or tuple of them asked once, no tape or
accumulator active, nobody listening, every id the tape watches a source,
and only rules that never leave their case to the op-built rule
(``_direct_rules.ALWAYS``; ``UNLESS_OUTPUT_KEPT`` where the record keeps no
output).  The pass's source is kept as its ``source`` attribute.

State: process-wide, shared by threads: the written passes by a key of the
tape's shape, and how often each key was seen (both bounded; a pass is an
immutable function, and a race only writes one pass twice).

>>> import numpy as np, autodiff_viz as ad
>>> w = ad.Variable(np.float32([1.0, 2.0]))
>>> for step in range(3):  # the second step writes the pass, the third runs it again
...     with ad.GradientTape() as tape:
...         loss = ad.reduce_sum(ad.square(w))
...     g = tape.gradient(loss, [w])[0]
>>> g.numpy().tolist()
[2.0, 4.0]
"""
from __future__ import annotations

import operator as _operator
from typing import Any

import numpy as _np

from . import _direct_rules, _registry
from ._gradient_sums import add_values, unbroadcast_value
from ._backend import _NUMPY_TYPES
from ._record import _LET_GO, FACTS, FLOATING, IN_IDS, IN_SHAPES, INPUTS, OUT_DTYPE, OUT_ID, OUTPUT, PRIM, RULE, released
from ._tensor import _wrap

_CHECKED = _operator.itemgetter(PRIM, IN_SHAPES, OUT_DTYPE, RULE)  # what a pass checks of each record first

_PASSES: dict = {}  # key -> the passes written for it (a few: one key can stand for different tapes)
_SEEN: dict = {}    # key -> how many times a tape of that key was differentiated without a pass that fits
_KEEP = 256         # keys kept before both are emptied
_VARIANTS = 4       # passes kept for one key
_LONGEST = 256      # records a pass is written for, at most (its source grows with the tape)
_RETRY = 1024       # a key whose tape could not be written out is tried again after this many more tapes


def key_of(records: list):
    """The key a tape's passes are kept under, or ``None`` where no pass will be tried for it now (an empty
    tape, or a shape that could not be written out lately: the caller skips the rest of its work)."""
    if not records:
        return None
    last = records[-1]
    key = (len(records), last[PRIM], last[IN_SHAPES])
    seen = _SEEN.get(key, 0)
    if seen < 0 and key not in _PASSES:
        _SEEN[key] = seen + 1  # (a get and a set: another thread may have emptied the dict in between)
        return None
    return key


def backward(key, records: list, reach, target_id: int, asked: tuple, seed):
    """The sources' gradients (tensors, or ``None``: in the order asked) by a written pass, or ``None``
    (then nothing was done).

    ``key``: from :func:`key_of`; ``asked``: the sources' ids in the order asked; ``seed``: the target's
    starting gradient (its value).
    """
    if _NUMPY_TYPES.get(type(seed)) is not _np:
        return None
    n = len(records)
    passes = _PASSES.get(key)
    if passes is not None:
        for run in passes:
            out = run(records, reach, target_id, asked, seed)
            if out is not None:
                return out
    seen = _SEEN.get(key, 0) + 1
    _SEEN[key] = seen
    if seen < 2 or n > _LONGEST or (passes is not None and len(passes) >= _VARIANTS):
        return None
    run = write(records, reach, target_id, asked)
    if run is None:
        _SEEN[key] = 2 - _RETRY  # (a tape that could not be written: another of its key may be, later)
        return None
    if len(_PASSES) >= _KEEP:
        _PASSES.clear()
        _SEEN.clear()
    _PASSES.setdefault(key, []).append(run)
    return run(records, reach, target_id, asked, seed)


def write(records: list, reach, target_id: int, asked: tuple):
    """The pass for tapes shaped as ``records`` (differentiated for ``target_id`` and ``asked``), or ``None``
    where one cannot be written: a rule without an always-direct twin, a record's own rule, a source
    the pass would not find by position."""
    n = len(records)
    produced = {}
    for k in range(n):
        produced[records[k][OUT_ID]] = k
    position: dict = {}
    for j, s in enumerate(asked):
        position.setdefault(s, j)
    if target_id not in produced or records[produced[target_id]][OUT_DTYPE].__class__ not in FLOATING:
        return None
    for s in position:  # every source comes into the pass as an input or as a result: else nothing checks it
        if s not in produced and not any(s in rec[IN_IDS] for rec in records):
            return None
    env = {"released": released, "LET_GO": _LET_GO, "wrap": _wrap, "fix": unbroadcast_value, "add": add_values,
           "sum_leading": _direct_rules.sum_leading, "CHECKED": _CHECKED}
    facts = []  # each record's primitive, input shapes, output dtype and own rule: compared in one pass (in C)
    tests = []  # where each input came from, each source, and that no rule was registered since
    rules: dict = {}  # primitive -> the rule it had when the pass was written
    for k in range(n):
        (prim, in_ids, out_id, attrs, in_shapes, in_dtypes, out_shape, out_dtype, scope, rid, saved, output,
         own_rule) = records[k]
        direct = _registry.DIRECT.get(prim.grad)
        if own_rule is not None or direct not in _direct_rules.ALWAYS:
            if own_rule is not None or direct not in _direct_rules.UNLESS_OUTPUT_KEPT or output is not None:
                return None
            tests.append(f"r{k}[{OUTPUT}] is not None")  # (and none may be kept when the pass runs)
        rules.setdefault(prim, prim.grad)
        facts.append((prim, in_shapes, out_dtype, None))
        for i, tid in enumerate(in_ids):
            p = produced.get(tid)
            if p is not None and p < k:
                tests.append(f"r{k}[{IN_IDS}][{i}] != r{p}[{OUT_ID}]")
            elif tid in position and tid in reach:
                tests.append(f"r{k}[{IN_IDS}][{i}] != asked[{position[tid]}]")
            elif tid not in reach:
                tests.append(f"r{k}[{IN_IDS}][{i}] in reach")
            else:
                return None  # watched, not asked: the general pass decides
    env["EXPECTED"] = tuple(facts)
    for m, (prim, grad) in enumerate(rules.items()):  # a rule registered since: this pass is not its
        env[f"Q{m}"], env[f"G{m}"] = prim, grad
        tests.append(f"Q{m}.grad is not G{m}")
    tests.append(f"r{produced[target_id]}[{OUT_ID}] != target_id")
    for s, j in position.items():
        if s in produced:
            tests.append(f"asked[{j}] != r{produced[s]}[{OUT_ID}]")
        elif s in reach:
            tests.append(f"asked[{j}] not in reach")
    names = ", ".join(f"r{k}" for k in range(n))
    check = [f"    if len(records) != {n} or len(asked) != {len(asked)} or tuple(map(CHECKED, records)) != EXPECTED:",
             "        return None",
             f"    {names}{',' if n == 1 else ''} = records",
             "    if (" + "\n            or ".join(tests) + "):",
             "        return None"]
    body = _sweep(records, reach, target_id, asked, position, env)
    source = "def run(records, reach, target_id, asked, seed):\n" + "\n".join(check + body) + "\n"
    exec(compile(source, "<autodiff_viz backward pass>", "exec"), env)  # (the source written just above)
    run: Any = env["run"]
    run.source = source  # (to read it: what the pass does, step by step)
    return run


def _sweep(records, reach, target_id, asked, position, env) -> list:
    """The lines of the pass: ``_tape._backward_values``'s sweep with every decision taken now."""
    holds = {target_id: "seed"}  # id -> the local variable holding its gradient so far
    lines = []
    count = 0
    for k in range(len(records) - 1, -1, -1):
        (prim, in_ids, out_id, attrs, in_shapes, in_dtypes, out_shape, out_dtype, scope, rid, saved, output,
         own_rule) = records[k]
        var = holds.get(out_id)
        if var is None:  # not on a path from a source to the target
            lines.append(f"    records[{k}] = released(r{k})")
            lines.append(f"    del r{k}")
            continue
        kept = out_id in position  # (a source's gradient is handed back: the others go once their rule has run)
        if not kept:
            del holds[out_id]
        pad = "    "
        if var != "seed":  # (a gradient that may not have come: the record is then let go, as in the general pass)
            lines.append(f"    if {var} is None:")
            lines.append(f"        records[{k}] = released(r{k})")
            lines.append("    else:")
            pad = "        "
        env[f"R{k}"] = _registry.DIRECT[prim.grad]
        lines.append(f"{pad}o = R{k}(r{k}, {var}, reach)")
        if not kept:
            lines.append(f"{pad}{var} = None")  # (memory falls as the pass goes, as in the general pass)
        for i, tid in enumerate(in_ids):
            if tid not in reach:
                continue
            lines.append(f"{pad}g = o[{i}]")
            lines.append(f"{pad}if g is not None:")
            shape = in_shapes[i]
            if shape != out_shape:  # (only then can an always-direct rule give another shape: a broadcast operand's)
                env[f"S{k}_{i}"] = shape
                extra = len(out_shape) - len(shape)
                if extra > 0 and out_shape[extra:] == shape:  # (a bias: the gradient has the output's shape)
                    env[f"O{k}"] = out_shape
                    lines.append(f"{pad}    if g.shape == O{k}:")
                    lines.append(f"{pad}        g = sum_leading(g, {extra})")
                    lines.append(f"{pad}    elif g.shape != S{k}_{i}:")
                else:
                    lines.append(f"{pad}    if g.shape != S{k}_{i}:")
                env[f"T{k}"] = prim.type
                lines.append(f"{pad}        g = fix(g, S{k}_{i}, T{k})")
            have = holds.get(tid)
            if have is None:
                count += 1
                holds[tid] = have = f"v{count}"
                lines.insert(0, f"    {have} = None")  # (None until a gradient comes)
                lines.append(f"{pad}    {have} = g")
            else:
                lines.append(f"{pad}    {have} = g if {have} is None else {have} + g if {have}.dtype is g.dtype "
                             f"else add({have}, g)")
        lines.append(f"{pad}if r{k}[{INPUTS}] is not None or r{k}[{OUTPUT}] is not None:")  # (released, inline)
        lines.append(f"{pad}    records[{k}] = r{k}[:{FACTS}] + LET_GO")
        lines.append(f"    del r{k}")  # (its saved values go with the record)
    lines.append("    o = g = None")
    results = ", ".join(f"None if {holds[s]} is None else wrap({holds[s]})" if s in holds else "None" for s in asked)
    lines.append(f"    return [{results}]")
    return lines
