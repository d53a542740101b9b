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
# # 3. Control flow, and when the gradient is `None`
#
# *The words used here are defined in the [glossary](GLOSSARY.md).*
#
# The tape records what actually ran. Python `if`s and loops therefore just work, and are invisible to the gradient.
# When the path from target back to source is broken, `gradient()` returns `None` (as TensorFlow's does).
# `ad.viz.explain`, this package's own (TensorFlow has no such call), says why,
# in words and on the graph, marking **where the path breaks**.

# %%
import numpy as np
import warnings
import autodiff_viz as ad
from autodiff_viz import classroom

classroom.projector_style()

# %% [markdown]
# ## Loops and branches
#
# `f` multiplies by `x` only when the loop counter `i` is 2, 3 or 4, so how many `Mul` nodes get recorded depends
# on `y`.

# %%
def f(x, y):
    output = 1.0
    for i in range(y):
        if i > 1 and i < 5:
            output = ad.multiply(output, x)
    return output


def grad(x, y):
    with ad.GradientTape() as t:
        t.watch(x)
        out = f(x, y)
    return t.gradient(out, x)


x = ad.constant(2.0)
results = {y: grad(x, y).numpy() for y in (6, 5, 4)}
print(results)  # x^3 -> 3x^2 = 12, x^3 -> 12, x^2 -> 2x = 4
assert results == {6: 12.0, 5: 12.0, 4: 4.0}

# %%
with ad.trace() as tr_loop:
    grad(ad.constant(2.0), 6)
ad.viz.graph(tr_loop)

# %% [markdown]
# *Picture description:* a chain of three `Mul` nodes, each taking `x` as one input: only the loop passes that
# multiplied were recorded. The `if` and `for` themselves leave no trace.
#
# With a branch, only the variable on the branch that ran is connected:

# %%
x = ad.constant(1.0)
v0 = ad.Variable(2.0, name="v0")
v1 = ad.Variable(2.0, name="v1")

with ad.GradientTape(persistent=True) as tape:
    tape.watch(x)
    if x > 0.0:
        result = v0
    else:
        result = v1**2

dv0, dv1 = tape.gradient(result, [v0, v1])
print(dv0, dv1)
assert float(dv0) == 1.0 and dv1 is None
assert tape.gradient(result, x) is None   # the condition is not differentiable

# %% [markdown]
# ## The cases where a gradient is `None`
#
# ### Not connected at all
#
# `explain` reads **events**. A non-persistent tape frees its records once `gradient()` has run, so we wrap the
# computation in `ad.trace()` and hand the trace to `explain`: it then sees everything that happened.

# %%
x = ad.Variable(2.0, name="x")
y = ad.Variable(3.0, name="y")

with ad.trace() as tr:
    with ad.GradientTape() as tape:
        z = y * y
    print(tape.gradient(z, x))

why = ad.viz.explain(tr, z, x)
print(why.message)
assert why.reason == "not_read"
why

# %% [markdown]
# *Picture description:* `y` feeds a `Mul` node that produces the target `z`; `x` stands alone, filled light
# vermillion with a ✗ (where the path breaks) and the note "No op on the tape read it.": nothing recorded joins it to
# `z`. The box above the graph gives the same explanation in words.
#
# ### 1. A variable replaced by a tensor
#
# `x = x + 1` makes `x` a new **tensor**, which the next tape does not watch. Use `x.assign_add(1)` to keep the
# variable.

# %%
x = ad.Variable(2.0)
answers = []
for epoch in range(2):
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            y = x + 1
        g = tape.gradient(y, x)
    print(type(x).__name__, ":", g)
    answers.append(g)
    if epoch == 1:
        why = ad.viz.explain(tr, y, x)
    x = x + 1   # should be x.assign_add(1)

assert float(answers[0]) == 1.0 and answers[1] is None
print(why.message)
assert why.reason == "not_watched"
why

# %% [markdown]
# *Picture description:* on the second pass `x` is a plain tensor that no one watched, so `x + 1` used no watched
# value and the tape recorded nothing at all: there is no Add node. The graph is a single box, labelled `source`
# (value 3.0), filled light vermillion with a ✗ and the note "Never watched by this tape."
#
# ### 2. A detour through NumPy
#
# Turning a tensor into a NumPy array leaves the package, and the tape cannot follow.

# %%
x = ad.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=ad.float32, name="x")

with ad.trace() as tr:
    with ad.GradientTape() as tape:
        x2 = x**2
        y = np.mean(x2, axis=0)           # computed by NumPy
        y = ad.reduce_mean(y, axis=0)     # back in the package, as a new constant
    print(tape.gradient(y, x))

why = ad.viz.explain(tr, y, x)
assert why.reason == "left_numpy"
why

# %% [markdown]
# *Picture description:* `x` feeds a `Pow` node, marked with a ✗; a dashed vermillion arrow labelled "path breaks"
# leads from it to a box "left the package". The final reduce_mean is not drawn at all: its input was a new
# constant that no tape watched, so nothing recorded it.
#
# ### 3. Integers
#
# Only floating-point values have gradients. An integer constant gives `None`, with a warning naming the dtype.

# %%
x = ad.constant(10)

with warnings.catch_warnings(record=True) as caught, ad.trace() as tr:
    warnings.simplefilter("always")
    with ad.GradientTape() as g:
        g.watch(x)
        y = x * x
    print(g.gradient(y, x))
print([str(w.message) for w in caught])
assert any("int32" in str(w.message) for w in caught)
why = ad.viz.explain(tr, y, x)
assert why.reason == "integer_dtype"
print(why.message)

# %% [markdown]
# ### 4. State
#
# A variable has state; reading it gives its current value, not the history that produced it.
# `assign_add` on the tape cuts the path.

# %%
x0 = ad.Variable(3.0, name="x0")
x1 = ad.Variable(0.0, name="x1")

with ad.trace() as tr:
    with ad.GradientTape() as tape:
        x1.assign_add(x0)   # x1 = x1 + x0
        y = x1**2           # (x1 + x0)**2
    print(tape.gradient(y, x0))

why = ad.viz.explain(tr, y, x0)
assert why.reason == "state"
why

# %% [markdown]
# *Picture description:* `x1` feeds a `Pow` node giving `y`; `x1` is marked with a ✗ where the path breaks, with a
# note that `assign_add` changed it on the tape. `x0` is drawn apart, `x0 → Identity` (reading its value for
# `assign_add`), also marked: the arrow ends at that `Identity` box, and nothing joins it to `y`; only `x1`'s new
# value is on the path.
#
# ### 5. Paused recording
#
# Operations run under `stop_recording()` are not on the tape either. `explain` points at the op that was skipped:

# %%
x = ad.constant(2.0)
with ad.trace() as tr:
    with ad.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            y = x * x
        z = y + 1.0
    assert tape.gradient(z, x) is None
why = ad.viz.explain(tr, z, x)
print(why.message)
assert why.reason == "stop_recording"
why

# %% [markdown]
# *Picture description:* the watched `x` feeds, by two dashed arrows, a `Mul` node marked "(skipped)" and "not
# recorded: ran under stop_recording", filled light vermillion with a ✗ as where the path breaks. The final `+ 1.0`
# is not drawn: its input was not on the tape, so it was not recorded either.
#
# A **variable** read only under `stop_recording` is never watched at all: no op on the tape read it, and `explain`
# says so (reason `not_read`):

# %%
v = ad.Variable(2.0, name="v")
with ad.trace() as tr:
    with ad.GradientTape() as tape:
        with tape.stop_recording():
            y = v * v
        z = y + 1.0
    assert tape.gradient(z, v) is None
why = ad.viz.explain(tr, z, v)
print(why.message)
assert why.reason == "not_read"

# %% [markdown]
# ### 6. `stop_gradient`: on purpose
#
# Sometimes a value should count forward but not backward: a target network's output in reinforcement learning, a
# moving average, a straight-through estimator. `ad.stop_gradient(t)` returns `t` unchanged and is recorded like any
# op, but its rule sends nothing back. Where it is the only path the gradient is `None`; where it is one path of
# several, that part simply does not count:

# %%
x = ad.constant(2.0)
with ad.trace() as tr_stop:
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        only_stopped = ad.stop_gradient(x * x)
        partly_stopped = x + ad.stop_gradient(x * x)
    g_only = tape.gradient(only_stopped, x)
    g_partly = tape.gradient(partly_stopped, x)
print(g_only, g_partly)    # None, and 1.0 instead of 1 + 2x = 5
assert g_only is None and float(g_partly) == 1.0
why = ad.viz.explain(tr_stop, only_stopped, x)
assert why.reason == "stop_gradient"
print(why.message)
part = ad.viz.explain(tr_stop, partly_stopped, x)
assert part.reason == "connected" and "StopGradient is not counted" in part.message
print(part.message)
part

# %% [markdown]
# *Picture description:* the tape recorded both targets. For the second one, `x` feeds a `Mul` node, then a
# `StopGradient` node, filled light vermillion with a ✗ (the legend: "a part that passes no gradient back"); `x` also
# feeds the final `Add` directly, and that arrow alone is highlighted as the path, carrying the gradient 1.0. The
# first target's `Mul` and `StopGradient` are drawn dimmed. The box above says the gradient is not `None`, gives its
# value 1.0, and says the part through `StopGradient` is not counted.
#
# ### No gradient registered: an error, not `None`
#
# Some ops are declared not differentiable (comparisons, `round`, casts to integers) and give `None`. An op that is
# differentiable in principle but has **no rule registered** raises a `LookupError`, so the mistake cannot go
# unnoticed. `ad.image.adjust_contrast` is such an op; notebook 4 writes its rule.

# %%
image = ad.Variable([[[0.5, 0.0, 0.0]]])
delta = ad.Variable(0.1)

with ad.GradientTape() as tape:
    new_image = ad.image.adjust_contrast(image, delta)

try:
    print(tape.gradient(new_image, [image, delta]))
    raise AssertionError("this should not happen")
except LookupError as e:
    print(f"{type(e).__name__}: {e}")
    assert "AdjustContrastv2" in str(e)

# %% [markdown]
# ### Why `None` and not 0?
#
# A gradient of 0 and no gradient are different facts. 0 means a recorded path joins the source to the target and
# the slope along it is 0 at this point: `relu` below 0, the branch `where` did not choose, a `tanh` saturated so
# far that its slope rounds to 0 in float32. Nudge the source a little and the target does not move, here. `None` means the tape found no path at all: nothing
# it recorded read the source, or a rule on the only path sends nothing back (`StopGradient`, `Round`). That is
# most often a mistake (a value not watched, a detour through NumPy, an integer dtype), so TensorFlow says `None`
# instead of quietly handing an optimizer a gradient of zeros, which would train nothing without a word.
# [Notebook 9](09_backprop_by_hand.ipynb) comes back to this with the rules of the backward pass.
#
# ### Zeros instead of `None`
#
# When "not connected" should simply mean zero, ask for it:

# %%
x = ad.Variable([2.0, 2.0])
y = ad.Variable(3.0)

with ad.GradientTape() as tape:
    z = y**2
zeros = tape.gradient(z, x, unconnected_gradients=ad.UnconnectedGradients.ZERO)
print(zeros)
np.testing.assert_array_equal(zeros.numpy(), [0.0, 0.0])

# %% [markdown]
# ## NaN, zero and vanishing gradients
#
# A gradient that is not `None` can still be useless: **NaN** or **inf** (one bad number, and every update
# after it is bad too), exactly **0** (nothing learns), or **tiny** (almost nothing learns). `explain` answers
# these as it answers `None`: what the number is, which op made it so, and why.
#
# ### NaN: traced to its origin
#
# Cross-entropy `-Σ y·log p` with a predicted probability of exactly 0. `log 0 = -inf`, and `0 · (-inf)` is NaN.

# %%
y_true = ad.constant([0.0, 1.0])
p = ad.constant([0.0, 0.5])
with ad.trace() as tr_nan, np.errstate(divide="ignore", invalid="ignore"):
    with ad.GradientTape() as tape:
        tape.watch(p)
        loss = -ad.reduce_sum(y_true * ad.math.log(p))
    g_nan = tape.gradient(loss, p)
print(loss, g_nan)
assert np.isnan(float(loss)) and np.isnan(g_nan.numpy()[0]) and g_nan.numpy()[1] == -1 / 0.5
why_nan = ad.viz.explain(tr_nan, loss, p)
assert why_nan.reason == "not_finite"
print(why_nan.message)
why_nan

# %% [markdown]
# *Picture description:* the box at the top is vermillion, not grey: the gradient is NaN. `p` (value [0.0, 0.5])
# feeds `Log`, drawn with a thick purple border and a ⚠ before its name: there the first NaN/inf appeared. Its
# value [-inf, -0.6931] is written in bold purple, as every NaN and inf in the picture is: `Mul` = [nan, -0.6931],
# `Sum` = nan, `loss` = nan, and `p`'s gradient ∂ [nan, -2.0]. The notes under `Log` give both causes: in the
# forward pass, log of 0 is -inf; in the backward pass, log's slope 1/a is inf at a = 0, and the upstream gradient
# there is 0, so 0 · inf. The legend says what the purple border means: "NaN or inf first appears here".
#
# The step-by-step player shows the local derivative before the product, so you see where the inf comes from:

# %%
steps = ad.viz.animate(tr_nan, linked=False).data["steps"]
log_step = next(s for s in steps if s["phase"] == "backward" and s["title"].endswith("Log"))
print("\n".join(log_step["lines"]))
assert "∂(log(a))/∂a = 1/a = [inf, 2.0]" in log_step["lines"]

# %% [markdown]
# The cure is to keep `log` away from 0 (or to compute the loss from logits with a stable formula, as
# `ad.nn.softmax_cross_entropy_with_logits` does):

# %%
with ad.GradientTape() as tape:
    tape.watch(p)
    safe = -ad.reduce_sum(y_true * ad.math.log(ad.clip_by_value(p, 1e-7, 1.0)))
g_safe = tape.gradient(safe, p)
print(g_safe)
assert np.all(np.isfinite(g_safe.numpy())) and g_safe.numpy()[1] == -1 / 0.5

# %% [markdown]
# ### Zero: a relu below 0, and the branch `where` did not choose
#
# A gradient of exactly 0 is a true derivative, but it teaches nothing. `relu` is flat below 0; `where` sends
# the gradient only into the branch it chose.

# %%
x = ad.constant(3.0)
with ad.trace() as tr_where:
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.where(x > 5, x * x, 1.0)
    g_where = tape.gradient(y, x)
print(g_where)
assert float(g_where) == 0.0
why_where = ad.viz.explain(tr_where, y, x)
assert why_where.reason == "zero"
print(why_where.message)
why_where

# %% [markdown]
# *Picture description:* `x` (value 3.0) feeds a `Mul` node by two arrows (x · x = 9.0) and a `Greater` node
# (with the constant 5.0; value False). `Mul`, `Greater` and the constant 1.0 feed the `where` node, `y`
# (SelectV2), which is marked with a ✗ and the note "where chose the false branch: the other one gets gradient
# 0." `Greater` is not marked: a comparison passes no gradient, but the zero comes from the branch. The arrows
# from `x` carry ∂ 0.0. The box above says the condition was False, so `where` took its false branch.
#
# The same for a relu whose input is below 0:

# %%
x = ad.constant(-2.0)
with ad.trace() as tr_relu:
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.nn.relu(x)
    g_relu = tape.gradient(y, x)
assert float(g_relu) == 0.0
why_relu = ad.viz.explain(tr_relu, y, x)
assert why_relu.reason == "zero"
print(why_relu.message)
#
# ### Vanishing: a product of many small slopes
#
# Each sigmoid multiplies the gradient by its slope σ(1 − σ), at most 0.25. Ten of them in a row:

# %%
x = ad.constant(1.0)
with ad.trace() as tr_chain:
    with ad.GradientTape() as tape:
        tape.watch(x)
        h = x
        for layer in range(10):
            h = ad.sigmoid(h)
    g_chain = tape.gradient(h, x)
slopes, s = [], 1.0
value = 1.0
for layer in range(10):
    s = 1 / (1 + np.exp(-value))
    slopes.append(s * (1 - s))
    value = s
print(g_chain, np.prod(slopes))       # the tape's number and the product of the slopes
assert np.isclose(float(g_chain), np.prod(slopes), rtol=1e-4)
why_chain = ad.viz.explain(tr_chain, h, x)
assert why_chain.reason == "tiny"
print(why_chain.message)
why_chain

# %% [markdown]
# *Picture description:* a chain of ten `Sigmoid` boxes from `x` to `h`, every one marked with a ✗ (the legend:
# "where the gradient shrinks"): each multiplies the gradient by a slope below 1 (0.2 to 0.22). The ∂ under the
# boxes shrinks from right to left, as the backward pass runs: 1.0 at `h`, 0.2247, 0.05049, 0.01135, … and
# 2.785e-7 at `x`. The box above says the gradient is tiny because it is a product of 10 local slopes below 1.
