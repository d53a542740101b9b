"""Fast frames: a frame of an animation composed from pictures drawn once (:mod:`.frames`).

Most of a frame repeats from step to step.  Each node in each look it takes,
and each line of the side panel, is drawn once by matplotlib into a small
picture (a *sprite*); a frame is the picture of what never changes (one per
window position, a *base*) with the sprites laid over it: the same pixels as
drawing the whole figure (``tests/test_frames.py`` compares them), up to five
times faster.

>>> import autodiff_viz as ad
>>> from autodiff_viz.viz.draw.frames import FrameRenderer
>>> r = FrameRenderer(ad.viz.animate(lambda x: x * x, 3.0).data, dpi=40)
>>> Compositor(r).frame(1).shape == (r.height, r.width, 3)
True
"""
from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np

from ..model.forward import TANGENT_MARK
from . import panel as P
from . import tangent_part as _tangent

SPRITES, BASES = 1500, 6  # pictures kept for reuse (each sprite is a few tens of kB, each base a frame)


class Compositor:
    """Frames of ``fr`` (a :class:`.frames.FrameRenderer`) as RGB arrays, from sprites its artists draw."""

    def __init__(self, fr):
        self.fr = fr
        self._sprites: OrderedDict = OrderedDict()
        self._bases: OrderedDict = OrderedDict()
        self._static_region = None

    def _agg(self):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        fr = self.fr
        if not isinstance(fr.fig.canvas, FigureCanvasAgg):
            FigureCanvasAgg(fr.fig)
        return fr.fig.canvas

    def _dynamic(self):
        """Every artist that changes from step to step (left out of the backgrounds)."""
        fr = self.fr
        for _, box, lab, val, grad, badge, bt in fr.nodes:
            yield from (box, lab, val, grad, badge, bt)
        yield from fr._tangents.values()
        for line, head in fr.hot_edges:
            yield line
            if head is not None:
                yield head
        for group in fr._slots.values():
            yield from group
        yield fr.counter
        if fr.overview is not None:
            yield from (fr.overview, fr.viewport)

    def _static(self):
        """The frame without the graph's window and anything that changes (drawn once)."""
        fr = self.fr
        if self._static_region is None:
            canvas = self._agg()
            for a in self._dynamic():
                a.set_visible(False)
            fr.ax.set_visible(False)
            canvas.draw()
            fr.ax.set_visible(True)
            fr._renderer = canvas.get_renderer()
            self._static_region = canvas.copy_from_bbox(fr.fig.bbox)
        return self._static_region

    def _base(self, cam):
        """The frame without anything that changes, with the window at ``cam`` (kept for reuse)."""
        fr = self.fr
        if cam in self._bases:
            self._bases.move_to_end(cam)
            return self._bases[cam]
        canvas = self._agg()
        canvas.restore_region(self._static())
        for a in self._dynamic():
            a.set_visible(False)
        fr._set_camera(cam)
        (ww, wh), r = fr.window, fr._edge_rects
        outside = ((r[:, 2] < cam[0]) | (r[:, 0] > cam[0] + ww) | (r[:, 3] < cam[1]) | (r[:, 1] > cam[1] + wh)).tolist()
        hidden = [a for out, (line, head), label in zip(outside, fr.edges, fr._edge_labels) if out
                  for a in (line, head, label) if a is not None]
        for a in hidden:  # what the window does not show costs nothing
            a.set_visible(False)
        fr.ax.draw(fr._renderer)
        for a in hidden:
            a.set_visible(True)
        region = canvas.copy_from_bbox(fr.fig.bbox)
        self._bases[cam] = region
        if len(self._bases) > BASES:
            self._bases.popitem(last=False)
        return region

    def _keep(self, key, sprite):
        self._sprites[key] = sprite  # (trimmed once the frame that needs it is laid: see frame)

    @staticmethod
    def _cut(buf, r0, r1, c0, c1):
        """What was drawn (on a cleared canvas) inside rows ``r0:r1``, columns ``c0:c1``, cropped to its
        pixels: ``(rgba, col, row)``; the region is cleared again."""
        H, W = buf.shape[:2]
        r0, r1, c0, c1 = max(0, r0), min(H, r1), max(0, c0), min(W, c1)
        region = buf[r0:r1, c0:c1]
        alpha = region[:, :, 3]
        rows, cols = np.flatnonzero(alpha.any(axis=1)), np.flatnonzero(alpha.any(axis=0))
        if not rows.size:
            return np.zeros((0, 0, 4), np.uint8), c0, r0
        rgba = region[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1].copy()
        region[...] = (255, 255, 255, 0)
        return rgba, c0 + int(cols[0]), r0 + int(rows[0])

    def _layers(self, j: int, look) -> list:
        """Node ``j``'s pictures in drawing order: ``(key, artists, alpha to lay it with)``: its box, its
        texts (drawn opaque once, faded when laid), its badge."""
        fr = self.fr
        (face, edge, width, style, alpha), val, grad, order = look
        nd, box, lab, val_t, grad_t, badge, bt = fr.nodes[j]
        out = [(("box", j, face, edge, width, style, alpha), [box], 1.0), (("lab", j), [lab], alpha)]
        if val:
            tangent = [_tangent.text_of(fr, j)] if TANGENT_MARK in val else []  # forward mode's ẋ, in its colour
            out.append((("val", j, val), [val_t, *tangent], alpha))
        if grad:
            out.append((("grad", j, grad), [grad_t], alpha))
        if order:
            out.append((("badge", j, order), [badge, bt], 1.0))
        return out

    def _make_sprites(self, cam, looks, visible, plan, buf):
        """Draw, once each, the node pictures and text lines this frame needs that are not drawn yet."""
        fr = self.fr
        renderer, (gx, gy), (ww, wh) = fr._renderer, fr._graph_at, fr.window
        missing = {}
        kept = self._sprites
        for j in visible:
            for layer in self._layers(j, looks[j]):
                if layer[0] in kept:
                    kept.move_to_end(layer[0])  # used now: the cache lets go of the longest unused first
                else:
                    missing.setdefault(j, []).append(layer)
        lines = []
        for p in plan:
            if ("t", p[1], p[2]) in kept:
                kept.move_to_end(("t", p[1], p[2]))
            else:
                lines.append(p)
        if not missing and not lines:
            return
        renderer.clear()
        for j, layers in missing.items():
            x0, y0, x1, y1 = fr._rects[j]
            at = cam
            if not (x0 >= cam[0] and x1 <= cam[0] + ww and y0 >= cam[1] and y1 <= cam[1] + wh):
                at = (round((x0 + x1 - ww) / 2), round((y0 + y1 - wh) / 2))  # the node whole, mid-window
            fr._set_camera(at)
            fr._apply_node(j, looks[j])
            # where the node lies on the canvas, with room for a value wider than its box
            rows = (gy + math.floor(y0) - at[1], gy + math.ceil(y1) - at[1])
            cols = (gx + math.floor(2 * x0 - x1) - at[0], gx + math.ceil(2 * x1 - x0) - at[0])
            for key, artists, _ in layers:
                if key[0] in ("lab", "val", "grad"):
                    for a in artists:
                        a.set_alpha(1.0)
                for a in artists:
                    a.draw(renderer)
                rgba, c, r = self._cut(buf, *rows, *cols)
                self._keep(key, (rgba, c - gx + at[0], r - gy + at[1]))
        for slot, style, text, x, y in lines:
            fr._place(slot, style, text, x, y)
            slot.draw(renderer)
            size = P.LINE_STYLE[style][0] * fr._px
            cols = (0, x + 4) if slot.get_horizontalalignment() == "right" else (x - 4, fr.width)
            rgba, c, r = self._cut(buf, y - math.ceil(1.4 * size), y + math.ceil(0.6 * size), *cols)
            self._keep(("t", style, text), (rgba, c - x, r - y))

    def frame(self, i: int) -> np.ndarray:
        """Step ``i`` as an RGB array, ``height`` by ``width`` pixels (the same pixels as :meth:`draw` and
        ``fig.savefig``; frames in order cost least)."""
        fr = self.fr
        i = fr._step(i)
        st = fr._state(i)
        canvas = self._agg()
        cam = fr._cams[i]
        (ww, wh), (gx, gy) = fr.window, fr._graph_at
        r = fr._rect_array
        visible = np.flatnonzero((r[:, 2] > cam[0]) & (r[:, 0] < cam[0] + ww) & (r[:, 3] > cam[1])
                                 & (r[:, 1] < cam[1] + wh)).tolist()
        looks = dict(zip(visible, fr._looks(st, visible)))
        plan = fr._plan(i)
        base = self._base(cam)
        buf = np.asarray(canvas.buffer_rgba())
        self._make_sprites(cam, looks, visible, plan, buf)
        fr._set_camera(cam)
        canvas.restore_region(base)
        fr._draw_edges(st, show_only=True)
        fr._colour_overview(st, draw_now=True)
        out = np.array(buf[:, :, :3])
        clip = (gx, gy, gx + ww, gy + wh)
        for j in visible:
            for key, _, alpha in self._layers(j, looks[j]):
                rgba, c, r = self._sprites[key]
                _over(out, rgba, c - cam[0] + gx, r - cam[1] + gy, clip, alpha)
        frame = (0, 0, fr.width, fr.height)
        for _slot, style, text, x, y in plan:
            rgba, c, r = self._sprites[("t", style, text)]
            _over(out, rgba, c + x, r + y, frame)
        kept = self._sprites
        while len(kept) > SPRITES:  # the longest unused first; never one this frame needs, as it is laid
            kept.popitem(last=False)
        return out


def _over(out: np.ndarray, rgba: np.ndarray, col: int, row: int, clip, alpha: float = 1.0):
    """Lay the picture ``rgba`` over ``out`` with its top-left corner at ``(col, row)``, inside ``clip``,
    its opacity times ``alpha``."""
    h, w = rgba.shape[:2]
    c0, r0 = max(col, clip[0]), max(row, clip[1])
    c1, r1 = min(col + w, clip[2]), min(row + h, clip[3])
    if c0 >= c1 or r0 >= r1:
        return
    src = rgba[r0 - row:r1 - row, c0 - col:c1 - col]
    a = src[:, :, 3:4].astype(np.uint16)
    if alpha != 1.0:
        a = (a * alpha + 0.5).astype(np.uint16)
    dst = out[r0:r1, c0:c1]
    dst[...] = (src[:, :, :3] * a + dst * (255 - a) + 127) // 255
