"""Where every node of an animation goes: Graphviz once, then only restyling.

:func:`layout` asks Graphviz (``dot -Tjson``, through the budgeted runner in
``_graphviz``) for node positions and edge paths.  When Graphviz is missing,
fails, or the graph is past its budget (too many boxes, a variable feeding
ops far apart, too slow, too much memory), a simple layered layout is used
instead, and ``layout["note"]`` says why, for the view to show.
"""
from __future__ import annotations

import json
import math

from . import graphviz as _graphviz

NODE_W, NODE_H = 150.0, 78.0  # points; room for the three lines of text every step shows
LINE_H = 18.0   # points between two lines of a value written over several lines (a matrix)
CHAR_W = 8.5    # points per character of a value line, at the player's text size
MAX_W = 380.0   # points: the widest box; a longer line is squeezed to fit by the renderer
VALUE_Y, GRADIENT_Y = 45.0, 67.0  # baselines of a box's value and gradient lines (one-line values)
NODESEP, RANKSEP = 0.35 * 72, 0.55 * 72  # points, as written into the animation's DOT text

# What ``rankdir="auto"`` fits a picture into (points; a picture is never enlarged past its own size):
SLIDE = (960.0, 540.0)    # a 16:9 slide (13.33 x 7.5 in): static graphs
PLAYER = (880.0, 620.0)   # the player's graph pane, beside its text, in a 1280x800 window: animations
CLEARLY = 1.05            # top to bottom only when it comes out this much larger

# Wall-clock limit for the animation's one dot run.  Shorter than the static graph's: a fallback
# exists.  Its boxes have no text: a chain of 5,000 boxes (the node limit) takes 3 s on an idle
# 2-core machine, the storyboard of a 2,000-op chain 2.7 s; 15 s leaves room for a busy machine.
DOT_TIMEOUT_S = 15.0

# The layered fallback puts at most this many boxes side by side; a wider rank wraps onto more rows
# (10,000 inputs of one op would otherwise make a strip 1.8 million points long).
MAX_LAYER_WIDTH = 24


def layout(story: dict, rankdir: str = "auto", *, timeout: float | None = DOT_TIMEOUT_S, **limits) -> dict:
    """Positions for every node and a path for every edge, from one ``dot -Tjson`` run.

    ``rankdir`` is ``"LR"`` (left to right), ``"TB"`` (top to bottom) or
    ``"auto"``: the rule static graphs follow too (:func:`auto_rankdir`), with
    the player's graph pane as the frame, so a long chain such as a training
    step runs down the page.  The chosen direction is stored as
    ``layout["rankdir"]``.

    ``timeout`` (seconds) and ``limits`` (``memory=``, ``max_nodes=``,
    ``max_edges=``, ``max_span=``): Graphviz's budget, see
    :func:`._graphviz.run_dot`.  Without Graphviz, when it fails, or past the
    budget, a simple layered layout (ranks from the leaves, straight edges) is
    used: ``layout["engine"]`` is then ``"layered"`` and ``layout["note"]``
    says why.
    """
    rankdir = _resolve_rankdir(story, rankdir)
    note = None
    try:
        out = _dot_layout(story, rankdir, timeout=timeout, **limits)
    except _graphviz.LayoutBudgetExceeded as e:
        note = _budget_note(e, story)
    except _graphviz.GraphvizNotFound:
        note = "Graphviz (its dot program) is not installed"
    except (_graphviz.GraphvizFailed, ValueError, KeyError, TypeError) as e:
        note = f"Graphviz could not lay out this graph ({str(e).splitlines()[0][:200] if str(e) else type(e).__name__})"
    if note is not None:
        out = _layered_layout(story, rankdir)
        out["note"] = note + ": a simple layered layout is shown."
    out["rankdir"] = rankdir
    for n in story["nodes"]:
        out["nodes"][n["id"]].update(text_rows(n))
    return out


def node_size(node: dict) -> tuple[float, float]:
    """A storyboard node's box in points: wide enough for its widest value line, tall enough for its
    value and gradient lines (``node["rows"]``: value lines, gradient lines, widest line).

    >>> node_size({"rows": [1, 1, 5]}), node_size({"rows": [2, 3, 20]})
    ((150.0, 78.0), (207.0, 132.0))
    """
    vals, grads, chars = node.get("rows", (1, 1, 0))
    width = min(MAX_W, max(NODE_W, CHAR_W * (chars + 2) + 20))
    return round(width, 1), NODE_H + LINE_H * (vals - 1 + grads - 1)


def text_rows(node: dict) -> dict:
    """Where a box's value (``vy``) and gradient (``gy``) start, from its top, in points; every renderer
    places them here."""
    vals = node.get("rows", (1, 1, 0))[0]
    return {"vy": VALUE_Y, "gy": GRADIENT_Y + LINE_H * (vals - 1), "line": LINE_H}


def _budget_note(e: "_graphviz.LayoutBudgetExceeded", story) -> str:
    n, m = len(story["nodes"]), len(story["edges"])
    if e.limit == "time":
        return f"Graphviz took longer than {e.budget:g} s to lay out this graph ({n:,} boxes, {m:,} edges)"
    if e.limit == "memory":
        return f"Graphviz needed more than {e.budget / (1 << 20):,.0f} MiB to lay out this graph ({n:,} boxes)"
    if e.limit == "span":
        return (f"This graph is too big for Graphviz: one value is used by many ops far apart, whose edges "
                f"would need {e.value:,} segments (the limit is {e.budget:,})")
    what = "boxes" if e.limit == "nodes" else "edges"
    return f"This graph is too big for Graphviz: {e.value:,} {what} (the limit is {e.budget:,})"


def _graph_of(story):
    """``(ids, index, edges)``: node ids in order, id -> position, edges as position pairs."""
    ids = [n["id"] for n in story["nodes"]]
    index = {gid: i for i, gid in enumerate(ids)}
    pairs = [(index[e["from"]], index[e["to"]]) for e in story["edges"]]
    return ids, index, pairs


def _topological(n: int, pairs) -> tuple[list[int], list[list[int]], list[int]]:
    """Kahn's order of ``range(n)`` over ``pairs``; returns ``(order, successors, in-degrees)``.

    Nodes on (or after) a cycle are missing from the order.
    """
    out: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for a, b in pairs:
        out[a].append(b)
        indeg[b] += 1
    n_in = indeg[:]
    order = [i for i in range(n) if indeg[i] == 0]
    k = 0
    while k < len(order):
        for b in out[order[k]]:
            indeg[b] -= 1
            if indeg[b] == 0:
                order.append(b)
        k += 1
    return order, out, n_in


def _cycle_node(n: int, pairs, order) -> int:
    """A node on a cycle, given that Kahn's ``order`` missed some: walk back along unordered edges."""
    done = [False] * n
    for i in order:
        done[i] = True
    pred: dict[int, int] = {}
    for a, b in pairs:
        if not done[a] and not done[b]:
            pred.setdefault(b, a)
    i = next(i for i in range(n) if not done[i] and i in pred)
    seen = set()
    while i not in seen:  # every unordered node has an unordered predecessor, so this reaches a cycle
        seen.add(i)
        i = pred[i]
    return i


def _ranks(story) -> dict:
    """Each node's rank: the length of the longest path reaching it from a leaf.

    Linear in the size of the graph (Kahn's topological order).  Raises
    ``ValueError`` naming a node on a cycle: a recorded computation has none,
    so a cycle means a hand-made or damaged storyboard.
    """
    ids, _index, pairs = _graph_of(story)
    order, out, _ = _topological(len(ids), pairs)
    if len(order) < len(ids):
        node = ids[_cycle_node(len(ids), pairs, order)]
        raise ValueError(f"the storyboard's graph has a cycle through node {node!r}: it cannot be laid out")
    return dict(zip(ids, _longest_paths(len(ids), order, out)))


def _longest_paths(n: int, order, out) -> list[int]:
    """The length of the longest path reaching each node, along a topological ``order``."""
    rank = [0] * n
    for a in order:
        for b in out[a]:
            if rank[b] < rank[a] + 1:
                rank[b] = rank[a] + 1
    return rank


def dot_ranks(ids, pairs) -> list[int]:
    """Each node's rank as ``dot`` forms it, estimated in linear time: the longest path from a leaf,
    then each leaf (a node without inputs) moved next to its first consumer.

    ``ids``: the nodes' names; ``pairs``: edges as ``(from, to)`` positions in
    ``ids``.  Raises ``ValueError`` naming a node on a cycle.

    >>> dot_ranks("abcd", [(0, 1), (1, 2), (3, 2)])  # the leaf d sits just before the op that uses it
    [0, 1, 2, 1]
    """
    n = len(ids)
    order, out, n_in = _topological(n, pairs)
    if len(order) < n:
        node = ids[_cycle_node(n, pairs, order)]
        raise ValueError(f"the graph has a cycle through node {node!r}: it cannot be laid out")
    rank = _longest_paths(n, order, out)
    for a in range(n):
        if not n_in[a] and out[a]:
            rank[a] = min(rank[b] for b in out[a]) - 1
    return rank


def extent(layers, rankdir: str, nodesep: float, ranksep: float, spread: float = 1.0) -> tuple[float, float]:
    """Estimated ``(width, height)`` in points of boxes laid out in ranks (``layers``: one list of
    ``(width, height)`` per rank, in order) along ``rankdir``; ``spread``: how much wider than its boxes
    a rank comes out."""
    if not layers:
        return 0.0, 0.0
    along = [max((w if rankdir in ("LR", "RL") else h) for w, h in layer) for layer in layers]
    across = [sum((h if rankdir in ("LR", "RL") else w) for w, h in layer) + nodesep * (len(layer) - 1)
              for layer in layers]
    length, breadth = sum(along) + ranksep * (len(layers) - 1), max(across) * spread
    return (length, breadth) if rankdir in ("LR", "RL") else (breadth, length)


def auto_rankdir(size_of, frame) -> str:
    """The one rule of ``rankdir="auto"``, for static graphs and animations: ``"LR"`` or ``"TB"``.

    ``size_of(direction)``: the picture's estimated ``(width, height)`` in
    points laid out ``"LR"`` or ``"TB"``; ``frame``: ``(width, height)`` of
    what shows it (:data:`SLIDE`, :data:`PLAYER`).  Each is fitted into the
    frame, never enlarged; top to bottom is chosen when it comes out clearly
    larger (by :data:`CLEARLY`), so long chains run down the page and a graph
    that fits either way stays left to right.

    >>> auto_rankdir({"LR": (3000.0, 80.0), "TB": (150.0, 1500.0)}.get, SLIDE)
    'TB'
    >>> auto_rankdir({"LR": (400.0, 80.0), "TB": (150.0, 300.0)}.get, SLIDE)
    'LR'
    """
    scale = {}
    for direction in ("LR", "TB"):
        w, h = size_of(direction)
        scale[direction] = min(frame[0] / w, frame[1] / h, 1.0) if w > 0 and h > 0 else 1.0
    return "TB" if scale["TB"] > scale["LR"] * CLEARLY else "LR"


def _resolve_rankdir(story, rankdir) -> str:
    choice = str(rankdir).upper()
    if choice == "AUTO":
        ids, _index, pairs = _graph_of(story)
        layers: dict[int, list] = {}
        for r, n in zip(dot_ranks(ids, pairs), story["nodes"]):
            layers.setdefault(r, []).append(node_size(n))
        ranked = [layers[r] for r in sorted(layers)]
        return auto_rankdir(lambda d: extent(ranked, d, NODESEP, RANKSEP), PLAYER)
    if choice not in ("LR", "TB"):
        raise ValueError(f"rankdir must be 'auto', 'LR' or 'TB', not {rankdir!r}")
    return choice


def _dot_source(story, rankdir):
    w, h = NODE_W / 72.0, NODE_H / 72.0
    lines = ["digraph G {", f"  rankdir={rankdir}; nodesep={NODESEP / 72:g}; ranksep={RANKSEP / 72:g};",
             f'  node [shape=box, fixedsize=true, width={w:.3f}, height={h:.3f}, label=""];']
    for n in story["nodes"]:
        nw, nh = node_size(n)
        size = f' [width={nw / 72.0:.3f}, height={nh / 72.0:.3f}]' if (nw, nh) != (NODE_W, NODE_H) else ""
        lines.append(f'  "{n["id"]}"{size};')
    for e in story["edges"]:
        lines.append(f'  "{e["from"]}" -> "{e["to"]}" [id="{e["id"]}"];')
    lines.append("}")
    return "\n".join(lines)


def _dot_layout(story, rankdir, **limits):
    ids, _index, pairs = _graph_of(story)
    size = (len(ids), len(pairs), _graphviz._span(len(ids), pairs))
    # refused before its DOT text is even written (run_dot checks again, as it does for every caller)
    _graphviz.check_size(*size, **{k: v for k, v in limits.items() if k in ("max_nodes", "max_edges", "max_span")})
    out = _graphviz.run_dot(_dot_source(story, rankdir), "json", size=size, wasm=False, **limits)
    data = json.loads(out)
    x0, y0, x1, y1 = (float(v) for v in data["bb"].split(","))
    height = y1 - y0
    pos = {}
    for obj in data.get("objects", []):
        if "pos" not in obj:
            continue
        x, y = (float(v) for v in obj["pos"].split(","))
        pos[obj["name"]] = {"x": x - x0, "y": height - (y - y0), "w": float(obj["width"]) * 72, "h": float(obj["height"]) * 72}
    paths = {}
    for edge in data.get("edges", []):
        pts, head = None, None
        for d in edge.get("_draw_", []):
            if d.get("op") in ("b", "B"):
                pts = [[p[0] - x0, height - (p[1] - y0)] for p in d["points"]]
        for d in edge.get("_hdraw_", []):
            if d.get("op") in ("P", "p"):
                head = [[p[0] - x0, height - (p[1] - y0)] for p in d["points"]]
        if pts:
            paths[edge.get("id")] = {"points": pts, "head": head or []}
    if set(pos) != set(ids) or len(paths) != len(story["edges"]):
        raise ValueError("dot output does not cover the graph")
    return {"width": x1 - x0, "height": height, "nodes": pos, "edges": paths, "engine": "dot"}


def _layered_layout(story, rankdir):
    """Boxes in rows by rank, straight edges; linear in the graph's size apart from sorting each row.

    Ranks are the longest path from a leaf, with every node that has at least
    as many edges out as in moved down to just before its first successor (a
    constant sits next to the op that uses it, not among the leaves).  A row
    is ordered by where its nodes' inputs are, and a rank wider than
    ``MAX_LAYER_WIDTH`` wraps onto more rows.
    """
    ids, _index, pairs = _graph_of(story)
    n = len(ids)
    order, out, n_in = _topological(n, pairs)
    if len(order) < n:
        _ranks(story)  # raises, naming a node on the cycle
    rank = _longest_paths(n, order, out)
    for a in reversed(order):
        if out[a] and len(out[a]) >= n_in[a]:
            rank[a] = min(rank[b] for b in out[a]) - 1
    preds: list[list[int]] = [[] for _ in range(n)]
    for a, b in pairs:
        preds[b].append(a)
    layers: dict[int, list[int]] = {}
    for i in order:  # topological, so a node's inputs are placed before it
        layers.setdefault(rank[i], []).append(i)

    lr = rankdir == "LR"
    sizes = [node_size(nd) for nd in story["nodes"]]
    big = (max((w for w, _ in sizes), default=NODE_W), max((h for _, h in sizes), default=NODE_H))
    along_size, across_size = big if lr else big[::-1]
    gap_r, gap_c = 60.0, 30.0
    slot = [0] * n  # column of each placed node, for ordering the next rows
    pos = {}
    along = 0.0
    for r in sorted(layers):
        row = layers[r]
        # Order by the mean slot of each node's inputs (the ones already placed); stable, so ties keep recording order.
        keyed = []
        for i in row:
            placed = [slot[p] for p in preds[i]]
            keyed.append((sum(placed) / len(placed) if placed else -1.0, i))
        keyed.sort(key=lambda t: t[0])
        for j, (_key, i) in enumerate(keyed):
            sub, col = divmod(j, MAX_LAYER_WIDTH)
            a = along + sub * (along_size + gap_r) + along_size / 2
            c = col * (across_size + gap_c) + across_size / 2
            x, y = (a, c) if lr else (c, a)
            pos[ids[i]] = {"x": x, "y": y, "w": sizes[i][0], "h": sizes[i][1]}
            slot[i] = col
        along += math.ceil(len(keyed) / MAX_LAYER_WIDTH) * (along_size + gap_r)
    width = max((p["x"] + p["w"] / 2 for p in pos.values()), default=NODE_W - 4) + 4
    height = max((p["y"] + p["h"] / 2 for p in pos.values()), default=NODE_H - 4) + 4
    paths = {}
    for e in story["edges"]:
        a, b = pos[e["from"]], pos[e["to"]]
        if lr:
            p0, p3 = [a["x"] + a["w"] / 2, a["y"]], [b["x"] - b["w"] / 2 - 8, b["y"]]
        else:
            p0, p3 = [a["x"], a["y"] + a["h"] / 2], [b["x"], b["y"] - b["h"] / 2 - 8]
        mid1 = [p0[0] + (p3[0] - p0[0]) / 3, p0[1] + (p3[1] - p0[1]) / 3]
        mid2 = [p0[0] + 2 * (p3[0] - p0[0]) / 3, p0[1] + 2 * (p3[1] - p0[1]) / 3]
        tip = [b["x"] - b["w"] / 2, b["y"]] if lr else [b["x"], b["y"] - b["h"] / 2]
        head = ([[p3[0], p3[1] - 4], tip, [p3[0], p3[1] + 4]] if lr else [[p3[0] - 4, p3[1]], tip, [p3[0] + 4, p3[1]]])
        paths[e["id"]] = {"points": [p0, mid1, mid2, p3], "head": head}
    return {"width": width, "height": height, "nodes": pos, "edges": paths, "engine": "layered"}
