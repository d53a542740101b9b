"""GIF and MP4 files from an animation's frames (:class:`.frames.FrameRenderer`).

Frames come from :meth:`FrameRenderer.render` as RGB arrays, composed from
sprites; matplotlib's movie writers (``PillowWriter``, ``FFMpegWriter``) take
frames by saving the whole figure each step, which costs up to five times as
much on a long animation, and ``PillowWriter`` gives each frame its own
palette, so colours would flicker.  So the arrays go straight to Pillow (a GIF with one palette for
every frame) and to ffmpeg (an MP4 through a pipe), with no setting of
matplotlib's changed.

ffmpeg is the one imageio-ffmpeg ships, else one on ``PATH``; it runs under a
time limit (:data:`FFMPEG_START_S` plus :data:`FFMPEG_FRAME_S` a frame), and
is stopped, with an error that says so, when it takes longer.

>>> import autodiff_viz as ad, tempfile, os
>>> from PIL import Image
>>> anim = ad.viz.animate(lambda a, b: a * b, 2.0, 3.0)
>>> path = save_movie(anim.data, os.path.join(tempfile.mkdtemp(), "a.gif"), dpi=40)
>>> Image.open(path).n_frames == len(anim)
True
"""
from __future__ import annotations

import os
import shutil
import subprocess
import threading

import numpy as np

from .frames import K_MIN, FrameRenderer
from .look import DIM, GREY, INK, LIGHT_GREY, PALETTE, TINT

FFMPEG_START_S, FFMPEG_FRAME_S = 60.0, 2.0  # the time limit of one ffmpeg run: start-up, then per frame


def ffmpeg_path() -> str | None:
    """The ffmpeg binary: imageio-ffmpeg's, else one on ``PATH``, else ``None``."""
    try:
        import imageio_ffmpeg

        return imageio_ffmpeg.get_ffmpeg_exe()
    except Exception:  # noqa: BLE001  (not installed, or its binary missing)
        return shutil.which("ffmpeg")


def gif_palette(frames, background="white"):
    """One palette for every frame, so colours do not flicker: the background, white and the look's colours
    exactly, the rest (antialiased edges, faded boxes) by median cut over a few frames."""
    from matplotlib.colors import to_rgb
    from PIL import Image

    exact = [background, "white", INK, GREY, DIM, LIGHT_GREY, *PALETTE.values(), *TINT.values()]
    exact = list(dict.fromkeys(tuple(round(255 * c) for c in to_rgb(x)) for x in exact))
    sample = np.concatenate([f[::2, ::2] for f in frames], axis=0)
    rest = Image.fromarray(sample).quantize(256 - len(exact), method=Image.Quantize.MEDIANCUT,
                                            dither=Image.Dither.NONE)
    found = np.array(rest.getpalette()[:3 * (256 - len(exact))]).reshape(-1, 3)
    # Pillow matches colours in small cubes: a near twin of white would take white's pixels.
    near = (np.abs(found[:, None, :] - np.array(exact)[None, :, :]).max(axis=2) < 12).any(axis=1)
    colours = [c for rgb in exact for c in rgb] + found[~near].ravel().tolist()
    palette = Image.new("P", (1, 1))
    palette.putpalette(colours + [0] * (768 - len(colours)))
    return palette


def sized(frame: np.ndarray, size, background="white") -> np.ndarray:
    """``frame`` scaled to fit ``size`` (width, height in pixels) keeping its shape, centred on
    ``background``; ``size=None`` leaves it as it is.

    >>> sized(np.zeros((10, 20, 3), np.uint8), (40, 40)).shape
    (40, 40, 3)
    """
    if size is None:
        return frame
    from PIL import Image

    (w, h), (fh, fw) = size, frame.shape[:2]
    scale = min(w / fw, h / fh)
    inner = Image.fromarray(frame).resize((max(1, round(fw * scale)), max(1, round(fh * scale))),
                                          Image.Resampling.LANCZOS)
    from matplotlib.colors import to_rgb

    canvas = Image.new("RGB", (w, h), tuple(round(255 * c) for c in to_rgb(background)))
    canvas.paste(inner, ((w - inner.width) // 2, (h - inner.height) // 2))
    return np.asarray(canvas)


class _Frames:
    """The frames a movie shows: the steps ``steps`` of a renderer, each ``size`` pixels (or its own)."""

    def __init__(self, r: FrameRenderer, steps, size):
        self.r, self.steps, self.size = r, list(steps), size
        self.width, self.height = size if size is not None else (r.width, r.height)

    def __len__(self):
        return len(self.steps)

    def render(self, k: int) -> np.ndarray:
        return sized(self.r.render(self.steps[k]), self.size, self.background)

    @property
    def background(self):
        """The renderer's background, as matplotlib gives it (RGBA from 0 to 1)."""
        return self.r.fig.get_facecolor()


def _write_gif(r, n: int, path: str, fps: float):
    from PIL import Image

    palette = gif_palette([r.render(i) for i in sorted({0, n // 2, n - 1})], r.background)
    frames = [Image.fromarray(r.render(i)).quantize(palette=palette, dither=Image.Dither.NONE) for i in range(n)]
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=round(1000.0 / fps), loop=0)


def _write_mp4(r, n: int, path: str, fps: float, exe: str):
    cmd = [exe, "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
           "-s", f"{r.width}x{r.height}", "-r", f"{fps:g}", "-i", "-", "-c:v", "libx264",
           "-preset", "veryfast", "-tune", "stillimage", "-pix_fmt", "yuv420p", path]
    limit = FFMPEG_START_S + FFMPEG_FRAME_S * n
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stopped = threading.Event()

    def stop():
        stopped.set()
        proc.kill()

    watchdog = threading.Timer(limit, stop)  # a write to a stuck ffmpeg would wait for ever
    watchdog.start()
    try:
        try:
            for i in range(n):
                proc.stdin.write(r.render(i).tobytes())
        except BrokenPipeError:
            pass
        finally:
            _, err = proc.communicate()
    finally:
        watchdog.cancel()
    if stopped.is_set():
        raise RuntimeError(f"ffmpeg took more than {limit:g} s writing {path} ({n} frames) and was stopped")
    if proc.returncode:
        raise RuntimeError(f"ffmpeg failed writing {path}: {err.decode(errors='replace').strip()[-500:]}")


def renderer(data: dict, dpi: int, fit: str, size, background="white") -> FrameRenderer:
    """The frames' renderer; ``fit="auto"`` with a ``size``: the whole graph when its text, scaled down
    to that size, stays readable (:data:`.frames.K_MIN` points a layout unit), else the window."""
    r = FrameRenderer(data, dpi=dpi, fit="graph" if fit == "auto" and size is not None else fit, background=background)
    if fit == "auto" and size is not None and r.k * min(1.0, size[0] / r.width, size[1] / r.height) < K_MIN:
        import matplotlib.pyplot as plt

        plt.close(r.fig)
        r = FrameRenderer(data, dpi=dpi, fit="follow", background=background)
    return r


def save_movie(data: dict, path: str, fps: float = 1.0, dpi: int = 100, fit: str = "auto", size=None,
               frames=None, background: str = "white") -> str:
    """One frame per step of the storyboard ``data`` (or per step in ``frames``): ``.gif`` with Pillow,
    ``.mp4`` with ffmpeg, on ``background``.  ``fit``: see :class:`.frames.FrameRenderer`; ``size``:
    ``(width, height)`` pixels (even, for video), each frame scaled to fit and centred on the background."""
    import matplotlib.pyplot as plt

    ext = os.path.splitext(path)[1].lower()
    exe = None
    if ext == ".mp4":
        exe = ffmpeg_path()
        if not exe:
            raise RuntimeError("saving .mp4 needs ffmpeg: pip install imageio-ffmpeg (it ships one), or install "
                               "ffmpeg with your system's package manager; .gif and .html need neither")
    r = renderer(data, dpi, fit, size, background)
    shown = _Frames(r, range(len(data["steps"])) if frames is None else frames, size)
    try:
        if ext == ".mp4":
            _write_mp4(shown, len(shown), path, fps, exe)
        else:
            _write_gif(shown, len(shown), path, fps)
    finally:
        plt.close(r.fig)
    return path
