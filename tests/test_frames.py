"""GIF/MP4 frames (viz/draw/frames.py, sprites.py, movie.py): cropped to their content, text inside the frame,
a colour key, readable large graphs, fast frames that show the same pixels as the figure, and the movie
writers (one frame per step, exact colours, ffmpeg under a time limit, no matplotlib setting changed)."""
import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz import tour

pytest.importorskip("matplotlib")
from matplotlib.colors import to_rgb
from matplotlib.text import Text
from PIL import Image

from autodiff_viz.viz.draw.frames import FrameRenderer

LONG_NAME = "the_activation_of_the_second_hidden_layer_before_dropout"


def chain(n):
    """``n`` scalar ops, ``* 1.1`` and ``sin`` alternating: 2n + 3 steps."""
    x = ad.constant(0.5)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x
            for i in range(n):
                y = ad.sin(y) if i % 2 else y * 1.1
        tape.gradient(y, x)
    return ad.viz.animate(tr, names={"x": x})


@pytest.fixture(scope="module")
def chain36():
    return chain(36)


@pytest.fixture(scope="module")
def sum_rule():
    return tour.animation_sum_rule()


def renderer(anim, dpi=80):
    import matplotlib.pyplot as plt

    r = FrameRenderer(anim.data, dpi=dpi)
    yield r
    plt.close(r.fig)


def ink_box(img):
    """Rows and columns (first, last) holding anything that is not white."""
    ink = (img < 250).any(axis=2)
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    return rows[0], rows[-1], cols[0], cols[-1]


def rgb(colour):
    return np.array([round(255 * c) for c in to_rgb(colour)])


def test_frames_are_cropped_to_their_content(chain36, sum_rule):
    for anim in (sum_rule, chain36):
        for r in renderer(anim):
            used = None
            for i in range(len(anim)):
                img = r.render(i)
                h, w = img.shape[:2]
                top, bottom, left, right = ink_box(img)
                # the blank border around the content is a thin margin on every side (a quarter inch at most)
                assert max(top, h - 1 - bottom, left, w - 1 - right) <= 0.25 * r.dpi, i
                ink = (img < 250).any(axis=2)
                used = ink if used is None else used | ink
            # every part of the frame is used by some step: no blank band of rows or columns wider than
            # half an inch (the frame is as large as its largest step, and no larger)
            for axis in (1, 0):
                blank = ~used.any(axis=axis)
                edges = np.flatnonzero(np.diff(np.r_[0, blank.astype(int), 0]))
                assert (edges[1::2] - edges[::2]).max(initial=0) <= 0.5 * r.dpi


def test_long_step_titles_wrap_and_no_text_leaves_the_frame():
    x = ad.constant(3.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = ad.sin(x * x)
        tape.gradient(y, x)
    anim = ad.viz.animate(tr, names={"x": x, LONG_NAME: y})
    for r in renderer(anim):
        rend = r.fig.canvas.get_renderer()
        frame = r.fig.bbox
        wrapped = 0
        for i, step in enumerate(anim.steps):
            r.draw(i)
            titles = [t for t in r._slots["title"] if t.get_visible() and t.get_text()]
            said = "" if step["phase"] == "start" else step["title"]   # the first: in the frame's heading
            assert "".join(t.get_text() for t in titles).replace(" ", "") == said.replace(" ", "")  # no cut
            wrapped += len(titles) > 1
            for t in r.fig.findobj(Text):
                if t.get_visible() and t.get_text():
                    b = t.get_window_extent(rend)
                    assert frame.x0 <= b.x0 and b.x1 <= frame.x1 and frame.y0 <= b.y0 and b.y1 <= frame.y1, \
                        (i, t.get_text())
        assert wrapped >= 2  # "Forward 2/2: <the long name>" and "Backward step 1: <the long name>"


def test_colour_key_lists_what_the_animation_shows(chain36, sum_rule):
    # sum rule: x and y are watched (sources), z is the target, no constants, no outer tape
    for r in renderer(sum_rule):
        labels = [label for _, label in r.key]
        assert labels == ["op running (forward)", "rule running (backward)", "just received a gradient",
                          "source", "target", "tensor passed to tape.watch", "not computed yet"]
        shown = {t.get_text() for t in r.fig.findobj(Text) if t.get_visible()}
        assert set(labels) <= shown
        borders = {label: look[1] for look, label in r.key}
        assert borders["target"] == "#D55E00" and borders["just received a gradient"] == "#56B4E9"  # vermillion, sky
        # every key swatch's border colour is in the picture's key row, exactly
        img = r.render(0)
        key_row = img[-round(0.6 * r.dpi):]
        for look, label in r.key:
            if look[4] == 1.0:
                assert (key_row == rgb(look[1])).all(axis=2).any(), label
    for r in renderer(chain36):
        assert "constant (not watched)" in [label for _, label in r.key]  # the 1.1 of every * 1.1


def test_36_op_chain_is_readable_and_follows_the_current_node(chain36):
    anim = chain36
    assert len(anim) == 75
    for r in renderer(anim):
        sizes = [lab.get_fontsize() for (_n, _box, lab, *_rest) in r.nodes]
        assert min(sizes) >= 10  # points
        assert min(sizes) * r.dpi / 72 >= 11  # pixels, viewed at 100%
        # slide-sized: no wider than 1920 pixels at 80 dpi, 16:9-ish
        assert r.width <= 1920 and r.height <= 1080 and 1.3 <= r.width / r.height <= 2.0
        rend = r.fig.canvas.get_renderer()
        window = r.ax.get_window_extent(rend)
        for i, step in enumerate(anim.steps):
            if step["node"] is None:
                continue
            r.draw(i)
            (_n, box, lab, *_rest) = r.nodes[r._index[step["node"]]]
            b = box.get_window_extent(rend)
            assert window.x0 <= b.x0 and b.x1 <= window.x1 and window.y0 <= b.y0 and b.y1 <= window.y1, i


def test_fast_frames_show_what_the_figure_shows(chain36):
    for anim, steps in ((chain36, (0, 1, 20, 40, 74)), (tour.animation_second_derivative(), (0, 5, 10, 21))):
        for r in renderer(anim):
            for i in steps:
                fast = r.render(i).astype(int)
                r.draw(i)
                r.fig.canvas.draw()
                slow = np.asarray(r.fig.canvas.buffer_rgba())[:, :, :3].astype(int)
                diff = np.abs(fast - slow).max(axis=2)
                # the same picture: rounding aside (a faded sprite's opacity is a whole 255th: 64/255 for 0.25,
                # a level off on faded fills), only an edge's letter redrawn over its hot edge differs
                assert diff.mean() < 0.15 and (diff > 3).mean() < 5e-4, i


def test_gif_one_frame_per_step_in_exact_colours(sum_rule, tmp_path):
    path = sum_rule.save(tmp_path / "a.gif", fps=2.0, dpi=80)
    for r in renderer(sum_rule):
        with Image.open(path) as im:
            assert im.n_frames == len(sum_rule)
            assert im.size == (r.width, r.height)
            assert im.info["duration"] == 500
            for i in range(im.n_frames):
                im.seek(i)
                frame = np.asarray(im.convert("RGB")).astype(int)
                assert (frame[0, 0] == 255).all()  # white stays white
                assert np.abs(frame - r.render(i)).mean() < 1.0


def test_mp4_has_one_frame_per_step(sum_rule, tmp_path):
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
    path = sum_rule.save(tmp_path / "a.mp4", fps=2.0, dpi=80)
    frames, seconds = imageio_ffmpeg.count_frames_and_secs(path)
    assert frames == len(sum_rule) and seconds == pytest.approx(len(sum_rule) / 2.0, abs=0.6)
    reader = imageio_ffmpeg.read_frames(path)
    meta = next(reader)
    first = np.frombuffer(next(reader), np.uint8).reshape(meta["size"][1], meta["size"][0], 3)
    reader.close()
    for r in renderer(sum_rule):
        assert tuple(meta["size"]) == (r.width, r.height) and r.width % 2 == 0 and r.height % 2 == 0
        assert np.abs(first.astype(int) - r.render(0)).mean() < 4  # lossy video, the same picture


def test_mp4_leaves_matplotlib_settings_alone(sum_rule, tmp_path):
    pytest.importorskip("imageio_ffmpeg")
    import matplotlib

    before = dict(matplotlib.rcParams)
    sum_rule.save(tmp_path / "a.mp4", fps=2.0, dpi=40)
    assert dict(matplotlib.rcParams) == before


def test_a_stuck_ffmpeg_is_stopped_at_its_time_limit(sum_rule, tmp_path, monkeypatch):
    import os
    import stat

    from autodiff_viz.viz.draw import movie

    stuck = tmp_path / "ffmpeg"
    stuck.write_text("#!/bin/sh\nexec sleep 60\n")  # reads nothing: the frames fill the pipe and wait
    os.chmod(stuck, stuck.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(movie, "ffmpeg_path", lambda: str(stuck))
    monkeypatch.setattr(movie, "FFMPEG_START_S", 1.0)
    monkeypatch.setattr(movie, "FFMPEG_FRAME_S", 0.0)
    with pytest.raises(RuntimeError, match=r"ffmpeg took more than 1 s writing .*a\.mp4 \(9 frames\) and was stopped"):
        sum_rule.save(tmp_path / "a.mp4", fps=2.0, dpi=80)  # the message only the watchdog's stop gives


def test_a_long_animation_renders_every_frame_when_the_sprite_cache_is_full(monkeypatch):
    # The cache lets go of the sprites used longest ago; a frame's own sprites were once let go of
    # while they were still needed (a 30-step loop failed at its 155th frame).
    from autodiff_viz.viz.draw import sprites
    from autodiff_viz.viz.draw.frames import FrameRenderer

    monkeypatch.setattr(sprites, "SPRITES", 40)

    def f(x):
        y = x
        for _ in range(6):
            y = ad.sin(y) * x + y
        return y

    anim = ad.viz.animate(f, 0.5, linked=False)
    r = FrameRenderer(anim.data, dpi=30)
    last = None
    for i in range(len(anim)):
        last = r.render(i)
    assert last.shape == (r.height, r.width, 3) and len(r._compositor._sprites) <= 40
