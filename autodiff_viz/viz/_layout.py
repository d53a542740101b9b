"""Where every node of an animation goes: Graphviz once, then only restyling.

Moved out of ``_animate`` so the layout can be budgeted and tested on its own.
"""

from __future__ import annotations

import json

# ---------------------------------------------------------------------------
# Layout: Graphviz once, then only restyling
# ---------------------------------------------------------------------------
NODE_W, NODE_H = 150.0, 78.0  # points; room for the three lines of text every step shows


MAX_LR_RANKS = 8  # longer chains than this are laid out top to bottom by ``rankdir="auto"``


def layout(story: dict, rankdir: str = "auto") -> dict:
    """Positions for every node and a path for every edge, from one ``dot -Tjson`` run.

    ``rankdir`` is ``"LR"`` (left to right), ``"TB"`` (top to bottom) or
    ``"auto"``: top to bottom when the graph has more than ``MAX_LR_RANKS``
    ranks (a long chain, such as a training step, would be a wide strip),
    left to right otherwise.  The chosen direction is stored as
    ``layout["rankdir"]``.  Without Graphviz a simple layered layout (longest
    path from the leaves) is used, with straight edges.
    """
    rankdir = _resolve_rankdir(story, rankdir)
    try:
        out = _dot_layout(story, rankdir)
    except (OSError, ValueError, KeyError, json.JSONDecodeError):
        out = _layered_layout(story, rankdir)
    out["rankdir"] = rankdir
    return out


def _ranks(story) -> dict:
    """Each node's rank: the length of the longest path reaching it from a leaf."""
    rank = {n["id"]: 0 for n in story["nodes"]}
    # Edges come in recording order, so the first pass settles every rank; the loop only guards
    # against a hand-made storyboard in another order (a graph has no cycles, so it ends).
    changed = True
    while changed:
        changed = False
        for e in story["edges"]:
            if rank[e["to"]] < rank[e["from"]] + 1:
                rank[e["to"]] = rank[e["from"]] + 1
                changed = True
    return rank


def _resolve_rankdir(story, rankdir) -> str:
    choice = str(rankdir).upper()
    if choice == "AUTO":
        n_ranks = 1 + max(_ranks(story).values(), default=0)
        return "TB" if n_ranks > MAX_LR_RANKS else "LR"
    if choice not in ("LR", "TB"):
        raise ValueError(f"rankdir must be 'auto', 'LR' or 'TB', not {rankdir!r}")
    return choice


def _dot_source(story, rankdir):
    w, h = NODE_W / 72.0, NODE_H / 72.0
    lines = ["digraph G {", f"  rankdir={rankdir}; nodesep=0.35; ranksep=0.55;",
             f'  node [shape=box, fixedsize=true, width={w:.3f}, height={h:.3f}, label=""];']
    for n in story["nodes"]:
        lines.append(f'  "{n["id"]}";')
    for e in story["edges"]:
        lines.append(f'  "{e["from"]}" -> "{e["to"]}" [id="{e["id"]}"];')
    lines.append("}")
    return "\n".join(lines)


def _dot_layout(story, rankdir):
    import shutil
    import subprocess

    exe = shutil.which("dot")
    if exe is None:
        raise OSError("Graphviz 'dot' not found")
    out = subprocess.run([exe, "-Tjson"], input=_dot_source(story, rankdir), capture_output=True, text=True,
                         timeout=60, check=True).stdout
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
    if set(pos) != {n["id"] for n in story["nodes"]} or len(paths) != len(story["edges"]):
        raise ValueError("dot output does not cover the graph")
    return {"width": x1 - x0, "height": height, "nodes": pos, "edges": paths, "engine": "dot"}


def _layered_layout(story, rankdir):
    rank = _ranks(story)
    layers: dict[int, list] = {}
    for n in story["nodes"]:
        layers.setdefault(rank[n["id"]], []).append(n["id"])
    gap_r, gap_c = 60.0, 30.0
    pos = {}
    lr = rankdir == "LR"
    for r, ids in layers.items():
        for j, gid in enumerate(ids):
            along = r * ((NODE_W if lr else NODE_H) + gap_r) + (NODE_W if lr else NODE_H) / 2
            across = j * ((NODE_H if lr else NODE_W) + gap_c) + (NODE_H if lr else NODE_W) / 2
            x, y = (along, across) if lr else (across, along)
            pos[gid] = {"x": x, "y": y, "w": NODE_W, "h": NODE_H}
    width = max(p["x"] + p["w"] / 2 for p in pos.values()) + 4 if pos else NODE_W
    height = max(p["y"] + p["h"] / 2 for p in pos.values()) + 4 if pos else NODE_H
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
