# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 6. Three ways to differentiate, two modes of automatic differentiation
#
# *The words used here are defined in the [glossary](GLOSSARY.md).*
#
# * **Finite differences**: nudge the input, watch the output. Simple, approximate, one extra run per input.
# * **Symbolic**: apply the rules of calculus to the formula. Exact, but needs a formula (no loops or branches)
#   and expressions can grow large.
# * **Automatic differentiation**: apply the chain rule to the operations the program actually ran, with numbers.
#   Exact up to rounding, works through any control flow. It comes in two modes: **forward** (carry a derivative
#   along with each value) and **reverse** (record, then walk back; what `GradientTape` does).

# %%
import time
import numpy as np
import matplotlib.pyplot as plt
import autodiff_viz as ad
from autodiff_viz import classroom

classroom.projector_style()

# %% [markdown]
# ## One function, three answers
#
# $f(x) = x\cos x$. By hand: $f'(x) = \cos x - x \sin x$.

# %%
def f(x):
    return x * ad.cos(x)


x0 = 1.0
symbolic = np.cos(x0) - x0 * np.sin(x0)

x = ad.constant(x0, dtype=ad.float64)
with ad.GradientTape() as tape:
    tape.watch(x)
    y = f(x)
automatic = float(tape.gradient(y, x))

h = 1e-4
finite = (float(f(ad.constant(x0 + h, dtype=ad.float64))) - float(f(x))) / h

print(f"symbolic  {symbolic:.15f}\nautomatic {automatic:.15f}\nfinite    {finite:.15f}")
assert abs(automatic - symbolic) < 1e-15
assert 1e-6 < abs(finite - symbolic) < 1e-3   # finite differences are only approximate

# %% [markdown]
# ## How small should the step be?
#
# The forward difference has a **truncation** error that shrinks like $h$, and a **rounding** error that grows like
# $\varepsilon/h$ (subtracting two nearly equal numbers). So the error plotted against $h$ makes a V, and no step
# is exact. The central difference $(f(x+h) - f(x-h))/2h$ truncates like $h^2$, so its best step is larger and its
# best error smaller.

# %%
fig = ad.viz.plot_fd_error(f, x=1.0)   # this package's own plot (not TensorFlow)

# %% [markdown]
# *Picture description:* a log-log plot of error against step size $h$ from $10^{-16}$ to 1. Both curves form a V:
# falling to the right of the plot as truncation shrinks, rising to the left as rounding grows. The forward
# difference (vermillion circles) bottoms out near $h \approx 10^{-8}$ with error about $10^{-8}$; the central
# difference (blue squares) between $h \approx 10^{-6}$ and $10^{-5}$ with errors from about $10^{-13}$ to
# $10^{-11}$. A star marks each lowest point. A dotted grey line shows $\varepsilon/h$.
#
# Rounding errors are erratic (the jagged left arms), so the exact lowest point is partly luck: read the stars as
# "about here". Theory says $h \approx \sqrt{\varepsilon} \approx 10^{-8}$ for the forward and
# $h \approx \sqrt[3]{\varepsilon} \approx 6 \cdot 10^{-6}$ for the central difference.

# %%
from autodiff_viz.viz.run.plots import fd_errors   # the numbers behind the plot

hs, fwd, cen, exact = fd_errors(f, 1.0)
best_fwd, best_cen = hs[np.argmin(fwd)], hs[np.argmin(cen)]
print(f"best forward h = {best_fwd:.0e} (error {fwd.min():.1e}); best central h = {best_cen:.0e} (error {cen.min():.1e})")
assert 1e-10 < best_fwd < 1e-6 and 1e-7 < best_cen < 1e-3 and cen.min() < fwd.min()

# %% [markdown]
# ## Forward mode with `ForwardAccumulator`
#
# Forward mode pushes a **tangent** (a direction $\dot x$) through the computation together with the values; at the
# end it has $\dot y = J\,\dot x$, a Jacobian-vector product. Here is a chain with four inputs ($x_1, x_2, x_4, x_6$;
# $x_3$ and $x_5$ are intermediate values), like a small network: $x_3 = \log(x_1 x_2)$, $x_5 = \sqrt{x_3 + x_4}$, $y = \sin(x_5 x_6)$.

# %%
def chain(x1, x2, x4, x6):
    x3 = ad.math.log(x1 * x2)
    x5 = ad.math.sqrt(x3 + x4)
    return ad.sin(x5 * x6)


values = [ad.constant(v) for v in (1.5, 2.0, 0.5, 0.8)]
names = ["x1", "x2", "x4", "x6"]

# forward mode: one pass per input, each giving one partial derivative
forward = []
for i in range(len(values)):
    tangents = [ad.constant(1.0 if k == i else 0.0) for k in range(len(values))]
    with ad.autodiff.ForwardAccumulator(values, tangents) as acc:
        y = chain(*values)
    forward.append(float(acc.jvp(y)))

# reverse mode: one pass gives all of them
with ad.GradientTape() as tape:
    tape.watch(values)
    y = chain(*values)
reverse = [float(g) for g in tape.gradient(y, values)]

print(dict(zip(names, np.round(forward, 6))))
np.testing.assert_allclose(forward, reverse, rtol=1e-6)

# %%
with ad.trace() as tr:
    with ad.GradientTape() as tape:
        tape.watch(values)
        y = chain(*values)
    tape.gradient(y, values)
ad.viz.graph(tr, names=dict(zip(names, values)))   # the guide's names x1, x2, x4, x6 (default: x, y, z, u)

# %% [markdown]
# *Picture description:* the chain as a graph: `x1` and `x2` into `Mul` then `Log`; that and `x4` into `Add` then
# `Sqrt`; that and `x6` into `Mul` then `Sin`, the target `y`. Every input carries its gradient (`x6` the largest,
# 0.67), all from one backward pass.
#
# ## Forward mode, drawn
#
# The same chain in forward mode, with the direction $\dot x = (1, 0, 0, 0)$ (along `x1` only). Every box now
# carries its tangent $\dot v$ (in blue) under its value: how fast that value moves when `x1` does. There is no
# backward pass: the tangents are computed in the same pass as the values, left to right.

# %%
direction = [ad.constant(v) for v in (1.0, 0.0, 0.0, 0.0)]
with ad.trace() as ftr:
    with ad.autodiff.ForwardAccumulator(values, direction) as acc:
        y = chain(*values)
forward_graph = ad.viz.graph(ftr, names=dict(zip(names, values)))
forward_graph

# %% [markdown]
# *Picture description:* the same boxes as above, without gradients: each carries its value and, in blue, its
# tangent ẋ. `x1` starts with ẋ 1.0 and the other inputs with ẋ 0.0; `Mul` (x1·x2 = 3.0) has ẋ 2.0 (that is
# x2 · 1.0), `Log` ẋ 0.6667 (2.0 / 3.0), `Add` keeps 0.6667, `Sqrt` ẋ 0.2636, `Mul` ẋ 0.2109 and the result `y`
# ẋ 0.1119: the same number as the gradient's `x1` entry above, ∂y/∂x1.

# %%
tangent_of = {}
for n in forward_graph.model.nodes:   # the numbers in the boxes (the first Mul is x1 · x2)
    tangent_of.setdefault(n.label, n.tangent.head[0])
np.testing.assert_allclose([tangent_of[k] for k in ("Mul", "Log", "Sqrt", "y")],
                           [2.0, 2.0 / 3.0, (2.0 / 3.0) / (2 * np.sqrt(np.log(3.0) + 0.5)), reverse[0]], rtol=1e-5)

# %% [markdown]
# Step through it: each step writes the tangent rule with the numbers,
# $\dot y = \frac{\partial y}{\partial a}\,\dot a + \frac{\partial y}{\partial b}\,\dot b$, and the side panel
# is the textbook's **evaluation trace**: one row per value, its expression, its primal and its tangent.

# %%
player = ad.viz.animate(ftr, names=dict(zip(names, values)))
player

# %%
from autodiff_viz.viz.model.story import states   # the player's steps as data: the text the description quotes

steps = list(states(player.data))
assert steps[1]["lines"][-1] == "  = 2.0 · 1.0 + 1.5 · 0.0 = 2.0"
assert [(r["expr"], r["value"], r["tangent"]) for r in steps[-1]["trace"]][4] == ("x1 · x2", "3.0", "2.0")
assert (steps[-1]["trace"][-1]["value"], steps[-1]["trace"][-1]["tangent"]) == ("0.8476", "0.1119")

# %% [markdown]
# *Picture description:* a step-through player of the chain. Step 2 shows `Mul` with
# "ẏ = ∂(a · b)/∂a · ȧ + ∂(a · b)/∂b · ḃ = b · ȧ + a · ḃ = 2.0 · 1.0 + 1.5 · 0.0 = 2.0" (checked below); the table beside it
# ("Evaluation trace (forward mode)") gains one row per step, `x1 · x2` with primal 3.0 and tangent 2.0, and ends
# with `y`: primal 0.8476, tangent 0.1119.
#
# Forward over backward: an accumulator around a tape differentiates the backward pass itself. The tangent of
# the gradient is a Hessian-vector product $H\dot x$, and the picture shows both numbers in each box: ∂ (the
# gradient, vermillion) and ẋ (the tangent, blue).

# %%
p = ad.constant([1.0, 2.0])
with ad.trace() as htr:
    with ad.autodiff.ForwardAccumulator(p, ad.constant([1.0, 0.0])) as acc:
        with ad.GradientTape() as tape:
            tape.watch(p)
            cube = ad.reduce_sum(p * p * p)
        grad = tape.gradient(cube, p)
np.testing.assert_allclose(acc.jvp(grad).numpy(), [6.0, 0.0])   # H = diag(6p), so H·(1, 0) = (6, 0)
ad.viz.graph(htr, names={"p": p, "grad": grad})

# %% [markdown]
# *Picture description:* the graph of `Σ p³` with `p` (= [1.0, 2.0], ẋ [1.0, 0.0], ∂ [3.0, 12.0]) and the
# backward pass of the tape in a shaded box "run inside the ForwardAccumulator" (its boxes grey: they are not on
# the path from `cube` back to `p`). The gradient `grad` at its end carries ẋ [6.0, 0.0]: the Hessian-vector
# product.
#
# ## Which mode costs less?
#
# * Forward mode gives one **column** of the Jacobian per pass (one input direction).
# * Reverse mode gives one **row** per pass (one output).
#
# A loss is one number computed from many parameters: one row, so reverse mode wins, and the more inputs the more
# it wins. For one input and many outputs it is the other way round. Let us count passes and time them for
# $f:\mathbb{R}^n \to \mathbb{R}$, $f(x) = \sum \sin(x)\,x$.

# %%
def loss(x):
    return ad.reduce_sum(ad.sin(x) * x)


def full_gradient_forward(xv):
    """n forward passes, each with a one-hot tangent."""
    n = xv.shape[0]
    out = np.zeros(n)
    for i in range(n):
        with ad.autodiff.ForwardAccumulator(xv, ad.constant(np.eye(n, dtype=np.float32)[i])) as acc:
            y = loss(xv)
        out[i] = float(acc.jvp(y))
    return out, n


def full_gradient_reverse(xv):
    with ad.GradientTape() as tape:
        tape.watch(xv)
        y = loss(xv)
    return tape.gradient(y, xv).numpy(), 1


def timed(fn, xv, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        result, passes = fn(xv)
        best = min(best, time.perf_counter() - t0)
    return result, passes, best


sizes = [1, 2, 4, 8, 16, 32, 64]
rows = []
rng = np.random.default_rng(0)
for n in sizes:
    xv = ad.constant(rng.normal(size=n).astype(np.float32))
    g_f, p_f, t_f = timed(full_gradient_forward, xv)
    g_r, p_r, t_r = timed(full_gradient_reverse, xv)
    np.testing.assert_allclose(g_f, g_r, rtol=1e-5, atol=1e-6)
    rows.append((n, p_f, p_r, t_f, t_r))
    print(f"n={n:3d}: forward {p_f:3d} passes {1e3 * t_f:7.2f} ms | reverse {p_r} pass {1e3 * t_r:6.2f} ms")

# %%
ns, pf, pr, tf_, tr_ = map(np.array, zip(*rows))
fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
axes[0].plot(ns, pf, marker="o", label="forward mode")
axes[0].plot(ns, pr, marker="s", label="reverse mode")
axes[0].set_xlabel("number of inputs n"); axes[0].set_ylabel("passes for the full gradient"); axes[0].legend()
axes[1].loglog(ns, 1e3 * tf_, marker="o", label="forward mode")
axes[1].loglog(ns, 1e3 * tr_, marker="s", label="reverse mode")
axes[1].set_xlabel("number of inputs n"); axes[1].set_ylabel("time (ms)"); axes[1].legend()
fig.tight_layout()

# %% [markdown]
# *Picture description:* left, passes needed against the number of inputs: a straight rising line for forward mode
# (n passes) and a flat line at 1 for reverse mode. Right, measured time on log-log axes: forward mode grows roughly in
# proportion to n, reverse mode stays nearly flat.

# %%
assert list(pf) == sizes and set(pr) == {1}   # the counts are exact; the times are only shown

# %% [markdown]
# The price of reverse mode is memory: it must keep the **saved values** of the forward pass until the backward pass
# uses them. Forward mode keeps nothing; it only carries one tangent next to each value.
#
# Forward mode shines when there are few inputs and many outputs. One input, $m$ outputs: one forward pass gives the
# whole Jacobian column, where reverse mode would need $m$ passes (one per row, which `jacobian` does for you).

# %%
t = ad.constant(0.7)
with ad.autodiff.ForwardAccumulator(t, ad.constant(1.0)) as acc:
    curve = ad.stack([ad.cos(t), ad.sin(t), t * t])
column = acc.jvp(curve).numpy()
with ad.GradientTape() as tape:
    tape.watch(t)
    curve = ad.stack([ad.cos(t), ad.sin(t), t * t])
np.testing.assert_allclose(column, tape.jacobian(curve, t).numpy(), rtol=1e-6)
np.testing.assert_allclose(column, [-np.sin(0.7), np.cos(0.7), 1.4], rtol=1e-6)
