"""conv2d forward + backward through a tape, against the same computation written by hand in NumPy (im2col).

The hand version is what a course would write: a stride-trick view of the
padded input's windows, one matrix product forward, two for the gradients
(the filter's: patchesᵀ · g; the input's: g · Wᵀ, added back window by
window).  Both compute the output and its gradients for an upstream ``g``
(``output_gradients=g``), in float32.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/conv.py [--repeat 30]

Pin BLAS to one thread on a shared machine: with its default pool on busy
cores, one and the same matrix product took from 0.1 to 250 ms.

Prints, per shape, the median time of each (the two take turns) and their ratio (the package's
time over the hand version's; the target is within 2x).
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import autodiff_viz as ad

# (batch, height, width, in channels, out channels, kernel, padding)
SHAPES = [(8, 8, 8, 1, 8, 3, "VALID"), (32, 28, 28, 1, 16, 3, "SAME"), (16, 32, 32, 16, 32, 3, "SAME"),
          (8, 16, 16, 32, 64, 5, "SAME")]


def hand_im2col(x, w, g, pad):
    """Forward and both gradients of a stride-1 convolution, by hand."""
    kh, kw, cin, cout = w.shape
    xp = np.pad(x, [(0, 0), (pad, pad), (pad, pad), (0, 0)])
    windows = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(1, 2))  # n, oh, ow, c, kh, kw
    n, oh, ow = windows.shape[:3]
    cols = windows.transpose(0, 1, 2, 4, 5, 3).reshape(n * oh * ow, kh * kw * cin)
    wm = w.reshape(kh * kw * cin, cout)
    y = (cols @ wm).reshape(n, oh, ow, cout)
    gm = g.reshape(n * oh * ow, cout)
    gw = (cols.T @ gm).reshape(w.shape)
    gcols = (gm @ wm.T).reshape(n, oh, ow, kh, kw, cin)
    gx = np.zeros_like(xp)
    for i in range(kh):
        for j in range(kw):
            gx[:, i:i + oh, j:j + ow, :] += gcols[:, :, :, i, j, :]
    return y, gx[:, pad:pad + x.shape[1], pad:pad + x.shape[2], :], gw


def package(x, w, g, padding):
    with ad.GradientTape() as tape:
        tape.watch([x, w])
        y = ad.nn.conv2d(x, w, 1, padding)
    gx, gw = tape.gradient(y, [x, w], output_gradients=g)  # g as the upstream gradient, as the hand version takes it
    return y, gx, gw


def median_times(fns, repeat):
    """Each function's median time, the functions taking turns so a machine that changes speed moves all alike."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, ts in zip(fns, times):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
    return [statistics.median(ts) for ts in times]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'shape (n, h, w, cin -> cout, k, padding)':44} {'package':>10} {'hand':>10} {'ratio':>6}")
    for n, h, wd, cin, cout, k, padding in SHAPES:
        x = rng.normal(size=(n, h, wd, cin)).astype(np.float32)
        w = rng.normal(size=(k, k, cin, cout)).astype(np.float32)
        pad = (k - 1) // 2 if padding == "SAME" else 0
        oh, ow = h + 2 * pad - k + 1, wd + 2 * pad - k + 1
        g = rng.normal(size=(n, oh, ow, cout)).astype(np.float32)
        tx, tw, tg = ad.constant(x), ad.constant(w), ad.constant(g)
        mine, ref = package(tx, tw, tg, padding), hand_im2col(x, w, g, pad)
        for a, b in zip(mine, ref):  # the same numbers, or the timing means nothing
            np.testing.assert_allclose(a.numpy(), b, rtol=1e-3, atol=1e-3)
        t_pkg, t_hand = median_times([lambda: package(tx, tw, tg, padding), lambda: hand_im2col(x, w, g, pad)],
                                     args.repeat)
        label = f"({n}, {h}, {wd}, {cin} -> {cout}, {k}x{k}, {padding})"
        print(f"{label:44} {t_pkg * 1e3:8.2f}ms {t_hand * 1e3:8.2f}ms {t_pkg / t_hand:6.2f}")


if __name__ == "__main__":
    main()
