"""Where the window onto a large graph stands at each step of an animation's frames.

A graph too large to read whole on a slide is shown through a window (see
:mod:`.frames`); :func:`plan_cameras` places it for every step at once, from
what each step is about, so it moves seldom and never mid-step.

>>> rects = {"a": (0, 0, 50, 50), "b": (900, 0, 950, 50)}
>>> plan_cameras([{("a", True)}, {("a", True)}, {("b", True)}], rects.get, (1000, 100), (400, 100), 10)
[(0, 0), (0, 0), (600, 0)]
"""
from __future__ import annotations


def plan_cameras(focus: list, rect_of, graph_px: tuple, window: tuple, margin: float) -> list:
    """The window's top-left corner (whole pixels of the graph) at each step.

    ``focus[i]`` holds ``(node id, is the current node)`` for what step ``i`` is about, ``rect_of(id)``
    a node's ``(x0, y0, x1, y1)`` in pixels of the whole graph (``graph_px``, width and height), and
    ``window`` the window's size.  The window moves only when what a step is about (or at least its
    current node) comes closer than ``margin`` to its edge, and then to show as many of the following
    steps as it can.
    """
    (gw, gh), (ww, wh), m = graph_px, window, margin

    def box(ids):
        rects = [rect_of(i) for i, _ in ids]
        u = (min(r[0] for r in rects), min(r[1] for r in rects), max(r[2] for r in rects),
             max(r[3] for r in rects))
        if u[2] - u[0] + 2 * m > ww or u[3] - u[1] + 2 * m > wh:  # too large: just the current node
            u = next((rect_of(i) for i, cur in ids if cur), u)
        return u

    def fits(u):
        return u[2] - u[0] + 2 * m <= ww and u[3] - u[1] + 2 * m <= wh

    def shows(cam, u):
        return (u[0] >= cam[0] + m and u[2] <= cam[0] + ww - m and u[1] >= cam[1] + m
                and u[3] <= cam[1] + wh - m)

    cams, cam = [], None
    for i, ids in enumerate(focus):
        if ids:
            u = box(ids)
            if cam is None or not shows(cam, u):
                for later in focus[i + 1:]:  # take in the following steps while they fit
                    if later:
                        v = box(later)
                        v = (min(u[0], v[0]), min(u[1], v[1]), max(u[2], v[2]), max(u[3], v[3]))
                        if not fits(v):
                            break
                        u = v
                cam = (int(max(0, min(gw - ww, round((u[0] + u[2] - ww) / 2)))),
                       int(max(0, min(gh - wh, round((u[1] + u[3] - wh) / 2)))))
        cams.append(cam)
    first = next((c for c in cams if c is not None), (0, 0))
    return [c if c is not None else first for c in cams]
