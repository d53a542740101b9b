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
# # Exercise 2: a custom gradient that does not blow up
#
# *The words used here are defined in the [glossary](../GLOSSARY.md).*
#
# The length of a vector, $\lVert x \rVert = \sqrt{\sum x_i^2}$, has gradient $x / \lVert x \rVert$, which is $0/0$
# at $x = 0$: the default rules give `nan`, and one `nan` ruins a whole training run.

# %%
import numpy as np
import matplotlib.pyplot as plt
from IPython.display import display
import autodiff_viz as ad
from autodiff_viz import classroom

classroom.projector_style()


def norm(x):
    return ad.sqrt(ad.reduce_sum(x * x))


x = ad.constant([0.0, 0.0])
with ad.GradientTape() as tape:
    tape.watch(x)
    y = norm(x)
with np.errstate(all="ignore"):
    print(tape.gradient(y, x))

# %% [markdown]
# Here is the norm of $(t, 0.5\,t)$ and its slope along $t$, computed with the default rules:

# %%
ts = np.linspace(-1, 1, 41)
slopes = []
for t in ts:
    t_ = ad.constant(t, dtype=ad.float64)
    with ad.GradientTape() as tape:
        tape.watch(t_)
        n = norm(ad.stack([t_, 0.5 * t_]))
    with np.errstate(all="ignore"):
        slopes.append(float(tape.gradient(n, t_)))
fig, ax = plt.subplots()
ax.plot(ts, [np.hypot(t, 0.5 * t) for t in ts], label="norm")
ax.plot(ts, slopes, marker="o", markersize=4, label="slope (default rules)")
ax.set_xlabel("t"); ax.legend();
assert np.isnan(slopes[20])
print(f"slope at t = {ts[0]:.1f}: {slopes[0]:.2f}; at t = {ts[-1]:.1f}: {slopes[-1]:.2f}")

# %% [markdown]
# *Picture description:* a V-shaped curve (the norm) and a step-shaped slope, about −1.12 left of zero and +1.12 right
# of it, with a gap at t = 0 where the slope is `nan`.
#
# ## Your task
#
# Write `safe_norm` with `@ad.custom_gradient`: the same value, and a gradient $\bar{u}\,x/\lVert x\rVert$ that is 0
# where $\lVert x \rVert = 0$. Keep the norm from the forward pass for the rule (a saved value).
# `ad.where(cond, a, b)` chooses elementwise; divide by something that cannot be 0.
#
# The checker compares your rule with finite differences at $x = (3, -4)$ **and at the origin** (and at a random
# point). At the origin the norm has a kink: along any direction $d$ its slope is $\lVert d \rVert$, whichever way you
# go. Finite differences cannot pick one gradient there, so the checker accepts exactly the **subgradients**: the
# vectors $g$ with $g \cdot d \le \lVert d \rVert$ for every direction $d$, that is $\lVert g \rVert \le 1$ (times the
# upstream gradient). $(0, 0)$ is one; $(1, 1)$ is not (its length is $\sqrt 2$, and along $d = (1, 1)$ it climbs
# faster than the norm does), even though each of its elements lies between $-1$ and $+1$; `nan` is not either.
# The task asks for 0, the usual choice. The target's ∂ in its pictures is a random weight, not 1 (see exercise 1).

# %%
@ad.custom_gradient
def safe_norm(x):
    n = ad.sqrt(ad.reduce_sum(x * x))

    def grad(upstream):
        raise NotImplementedError("TODO: your answer here")

    return n, grad


result = classroom.check_rule(safe_norm, np.array([3.0, -4.0]))
display(result)
assert result.passed, result.message

x = ad.constant([0.0, 0.0])
with ad.GradientTape() as tape:
    tape.watch(x)
    y = safe_norm(x)
g = tape.gradient(y, x)
print(g)
assert np.all(g.numpy() == 0.0), f"the task asks for the gradient 0 at the origin; your rule gives {g.numpy()}"
