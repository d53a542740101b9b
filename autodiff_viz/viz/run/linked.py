"""Linked views: the same computation run over a grid of one input, every node's value and derivative.

``animate(f, 3.0)`` runs ``f`` once per grid point (this module runs the
engine, through the public API), builds each run's storyboard with the same
model options, and keeps per point the step texts and, per node, its value,
its derivative from the tape and a central finite difference.

>>> import autodiff_viz as ad
>>> anim = ad.viz.animate(lambda x: x * x, 3.0, points=5)
>>> links = anim.data["linked"]
>>> k = [n["op"] for n in anim.nodes].index("Mul")
>>> base = links["base"]
>>> links["grid"][base], links["val"][base][k], links["dval"][base][k]
(3.0, 9.0, 6.0)
"""
from __future__ import annotations

import math

import numpy as np

from ..model import details as _details
from ..model import build as _build
from ..model import source as _source
from ..model import story as _story
from ..draw import weight as _weight


def story_of_run(f, values, labels, dtype, title=None, keep_tensors=False, details=False, collapse=False,
                 gradient_size=False, **shown):
    """Run ``f`` on ``values`` under a tape; (storyboard, trace, inputs, tape).

    ``details``: add each node's details (:mod:`._details`) to the storyboard; ``shown``:
    ``digits=``, ``max_items=`` as :func:`..model.story.build_story` takes them; ``collapse`` as for
    :func:`..model.build.build`; ``gradient_size``: the edges' widths (:func:`..draw.weight.weigh_story`).
    """
    tr, inputs, tape = _source.run_function(f, values, dtype, keep_tensors=keep_tensors)
    names = {_source.rec.tensor_id(t): lab for t, lab in zip(inputs, labels)}
    model = _build.build(tr.events, names=names, subscripts=True, collapse=collapse)
    story = _story.build_story(tr.events, model, title, **shown)
    if details:
        story["details"] = _details.node_details(model)
    _weight.weigh_story(story, model, gradient_size)
    return story, tr, inputs, tape


def _node_means(f, vals, vary, x, dtype, labels, collapse=False):
    v = list(vals)
    v[vary] = x
    story, tr, _, _ = story_of_run(f, v, labels, dtype, keep_tensors=True, collapse=collapse)
    out = []
    for n in story["nodes"]:
        t = tr.tensors.get(n["tensor"])
        out.append(None if t is None else float(np.mean(np.asarray(t.numpy(), dtype=np.float64))))
    return out


def _finite(v):
    v = float(v)
    return v if math.isfinite(v) else None


def linked_views(f, args, story, vary, span, points, labels, dtype, **shown) -> dict:
    """The linked-views data for ``story`` (the run at ``args``), varying input ``vary``.

    Per grid point it keeps the step texts and each node's details (what a click shows), so the
    player's text and a clicked node's details follow the slider; ``shown`` as for :func:`story_of_run`.
    """
    base = float(args[vary])
    if span is None:
        half = max(2.0, abs(base))
        span = (base - half, base + half)
    grid = np.unique(np.append(np.linspace(float(span[0]), float(span[1]), int(points)), base))
    n_nodes = len(story["nodes"])
    ref_types = [n["op"] for n in story["nodes"]]
    out = {"input": labels[vary], "inputNode": None, "grid": [], "steps": [], "details": [], "val": [], "dval": [],
           "fd": []}
    h = 1e-6 * max(1.0, abs(base))
    for x in grid:
        vals = list(args)
        vals[vary] = float(x)
        sub, tr, inputs, tape = story_of_run(f, vals, labels, dtype, keep_tensors=True, details=True, **shown)
        if [n["op"] for n in sub["nodes"]] != ref_types or len(sub["steps"]) != len(story["steps"]):
            continue  # control flow took another path here: this point is left out
        row_val, row_d = [], []
        for n in sub["nodes"]:
            t = tr.tensors.get(n["tensor"])
            if t is None:
                row_val.append(None)
                row_d.append(None)
                continue
            arr = np.asarray(t.numpy(), dtype=np.float64)
            row_val.append(_finite(arr.mean()))
            g = tape.gradient(t, inputs[vary])  # of the sum; divided by size, it is d(mean)/dx
            row_d.append(None if g is None else _finite(float(np.asarray(g.numpy())) / max(arr.size, 1)))
        plus = _node_means(f, vals, vary, float(x) + h, dtype, labels, shown.get("collapse", False))
        minus = _node_means(f, vals, vary, float(x) - h, dtype, labels, shown.get("collapse", False))
        fd = [None if p is None or m is None else _finite((p - m) / (2 * h)) for p, m in zip(plus, minus)]
        out["grid"].append(float(x))
        # The texts of every step at this point, as deltas like the main storyboard's.
        out["steps"].append([{k: v for k, v in st.items() if k not in ("node", "recv", "edges", "numbers")}
                             for st in sub["steps"]])
        out["details"].append(sub["details"]["nodes"])
        out["val"].append(row_val)
        out["dval"].append(row_d)
        out["fd"].append(fd if len(fd) == n_nodes else [None] * n_nodes)
    out["base"] = int(np.argmin(abs(np.asarray(out["grid"]) - base))) if out["grid"] else 0
    for n in story["nodes"]:
        if n["label"] == labels[vary] and n["kind"] == "leaf":
            out["inputNode"] = n["id"]
    return out
