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
# # 2. Intermediate results, persistent tapes and non-scalar targets
#
# *The words used here are defined in the [glossary](GLOSSARY.md).*
#
# The tape remembers every watched computation, so we can ask for gradients with respect to values in the middle
# of it, ask several questions of one recording, and differentiate targets that are whole tensors.

# %%
import numpy as np
import matplotlib.pyplot as plt
import autodiff_viz as ad
from autodiff_viz import classroom

classroom.projector_style()

# %% [markdown]
# ## Gradients with respect to intermediate values
#
# With $y = x^2$ and $z = y^2$, the derivative of $z$ with respect to the *intermediate* $y$ is $2y = 18$ at $x = 3$.

# %%
x = ad.constant(3.0)

with ad.GradientTape() as tape:
    tape.watch(x)
    y = x * x
    z = y * y

dz_dy = tape.gradient(z, y)
print(dz_dy.numpy())
assert dz_dy.numpy() == 18.0

# %% [markdown]
# ## One recording, several questions: `persistent=True`
#
# A normal tape frees what it recorded as soon as `gradient()` returns, so a second call raises an error.
# A **persistent** tape keeps its records until the tape object is deleted.

# %%
x = ad.constant([1, 3.0])
with ad.trace() as tr:
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    dz_dx = tape.gradient(z, x)   # 4 x^3
    dy_dx = tape.gradient(y, x)   # 2 x

print(dz_dx.numpy(), dy_dx.numpy())
np.testing.assert_allclose(dz_dx.numpy(), [4.0, 108.0])
np.testing.assert_allclose(dy_dx.numpy(), [2.0, 6.0])
del tape  # drop the reference: the records are freed

# %%
g = ad.viz.graph(tr, gradient=0)   # which gradient call to highlight, counted from 0 like a list index
assert "T1#1 [4.0, 108.0]" in g.source and "T1#2 [2.0, 6.0]" in g.source
g

# %% [markdown]
# *Picture description:* `x = [1, 3]` feeds a `Mul` node (both of its inputs are `x`, so two arrows), which feeds a
# second `Mul` node giving `z`, the highlighted target of the first gradient call. Each box lists the gradient from
# both calls, tagged `T1#1` and `T1#2` (tape T1's first and second call): `x` carries `∂ T1#1 [4.0, 108.0]` and
# `∂ T1#2 [2.0, 6.0]`. The arrows show what the first call sent along them, `[2.0, 54.0]` into the first `Mul`.
#
# A non-persistent tape refuses a second question:

# %%
x = ad.constant(3.0)
with ad.GradientTape() as tape:
    tape.watch(x)
    y = x * x
    z = y * y
print(tape.gradient(z, x))  # 108 = 4 * 3**3
try:
    tape.gradient(y, x)
except RuntimeError as e:
    print("RuntimeError:", e)
else:
    raise AssertionError("a non-persistent tape answers only once")

# %% [markdown]
# ## What recording costs
#
# * Each operation on a tape costs a little extra time, so keep the `with` block around only the code you
#   differentiate.
# * The tape keeps **saved values**: the inputs or outputs each rule will need in the backward pass. `Mul` needs both
#   inputs ($\partial(ab)/\partial a = b$); `Relu` needs only its output; `Add` needs nothing. A non-persistent tape
#   drops each saved value as soon as its rule has run; a persistent tape keeps them all until it is deleted, so its
#   peak memory is higher.
#
# ## Stop recording, or start over
#
# `tape.stop_recording()` pauses the tape (for example to compute a gradient inside the block without recording
# that computation too). `tape.reset()` forgets everything recorded so far.

# %%
x = ad.Variable(2.0)
y = ad.Variable(3.0)

with ad.GradientTape(persistent=True) as t:
    y_sq = y * y
    with t.stop_recording():
        inner = t.gradient(y_sq, y)   # computed, but not recorded
    print("y_sq with respect to y:", inner)
    t.reset()                         # forget y_sq
    z = x + y_sq

print("z with respect to y after reset:", t.gradient(z, y))
assert float(inner) == 6.0 and t.gradient(z, y) is None
print("z with respect to x:", t.gradient(z, x))
del t

# %% [markdown]
# ## Non-scalar targets: gradients of a sum
#
# A gradient answers "how does *one number* change". Given several targets, or a target with many elements, the tape
# differentiates their **sum**.

# %%
x = ad.Variable(2.0)
with ad.GradientTape(persistent=True) as tape:
    y0 = x**2
    y1 = 1 / x

print(tape.gradient(y0, x).numpy(), tape.gradient(y1, x).numpy())
total = tape.gradient({"y0": y0, "y1": y1}, x)
print(total.numpy())  # 4 + (-0.25)
assert total.numpy() == 3.75

# %%
x = ad.Variable(2.0)
with ad.GradientTape() as tape:
    y = x * [3.0, 4.0]
assert tape.gradient(y, x).numpy() == 7.0   # 3 + 4

# %% [markdown]
# ## Broadcasting: a gradient adds up the copies
#
# That last example broadcast the scalar `x` to both elements of `[3.0, 4.0]`, and its gradient was the sum
# $3 + 4$. The same holds for any broadcast. Below, `w` (shape (3,)) is multiplied with every row of `m` (shape
# (2, 3)): each element of `w` is used twice, once per row, so its gradient is the sum of the gradients of its two
# copies, the column sums of the upstream gradient times `m`. The rule of `Mul` does that sum itself: it
# multiplies the upstream gradient by `m` (shape (2, 3)) and sums over axis 0, down to `w`'s shape, so what it
# sends to `w` already has shape (3,). In TensorFlow every rule sums over the axes broadcasting added; the tape
# does not. (Exercise 1 asks you to write that sum yourself.)

# %%
m = ad.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
w = ad.constant([0.5, -1.0, 2.0])
with ad.trace() as tr_broadcast:
    with ad.GradientTape() as tape:
        tape.watch([m, w])
        total = ad.reduce_sum(m * w)
    dtotal_dm, dtotal_dw = tape.gradient(total, [m, w])
print(dtotal_dw)                     # column sums of m: [1 + 4, 2 + 5, 3 + 6]
np.testing.assert_allclose(dtotal_dw.numpy(), [5.0, 7.0, 9.0])
np.testing.assert_allclose(dtotal_dm.numpy(), [[0.5, -1.0, 2.0], [0.5, -1.0, 2.0]])   # w, once per row
step = next(e for e in tr_broadcast.events if e.kind == "backward_step" and e.op_type == "Mul")
assert step.grads[1].shape == (3,)   # what reached w was already summed down to w's shape
ad.viz.graph(tr_broadcast, names={"m": m, "w": w, "total": total})

# %% [markdown]
# *Picture description:* `m` (shape (2, 3)) and `w` (shape (3,)) feed a `Mul` node of shape (2, 3), which feeds the
# `Sum` node `total`. `m`'s box carries the gradient [[0.5, -1.0, 2.0], [0.5, -1.0, 2.0]] (`w`, repeated for each
# row) and `w`'s box the gradient [5.0, 7.0, 9.0]: each element's two copies, one per row, added up.
#
# Weights other than one can be given with `output_gradients`: the result is $\sum_i w_i\,\partial y_i/\partial x$.

# %%
x = ad.Variable(2.0)
with ad.GradientTape() as tape:
    y = x * [3.0, 4.0]
weighted = tape.gradient(y, x, output_gradients=ad.constant([1.0, 0.5]))
assert weighted.numpy() == 5.0   # 3*1 + 4*0.5

# %% [markdown]
# For an **elementwise** function each output depends only on its own input, so the gradient of the sum is
# exactly the derivative at every point. One tape call draws a whole derivative curve:

# %%
x_grid = ad.linspace(-10.0, 10.0, 200 + 1)

with ad.GradientTape() as tape:
    tape.watch(x_grid)
    y = ad.nn.sigmoid(x_grid)

dsigmoid = tape.gradient(y, x_grid)
fig, ax = plt.subplots()
ax.plot(x_grid, y, label="y = sigmoid(x)")
ax.plot(x_grid, dsigmoid, label="dy/dx")
print(f"largest slope {float(ad.reduce_max(dsigmoid)):.2f} at x = {float(x_grid.numpy()[np.argmax(dsigmoid.numpy())]):.2f}")
ax.legend()
ax.set_xlabel("x");

# %% [markdown]
# *Picture description:* the S-shaped sigmoid rises from 0 to 1; its derivative is a bump that peaks at 0.25 when
# x = 0 and falls to nearly 0 on both sides.

# %%
s = 1 / (1 + np.exp(-x_grid.numpy()))
np.testing.assert_allclose(dsigmoid.numpy(), s * (1 - s), atol=1e-6)
assert abs(dsigmoid.numpy().max() - 0.25) < 1e-6
