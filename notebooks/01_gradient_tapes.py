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
# # 1. Gradient tapes and what they watch
#
# *The words used here are defined in the [glossary](GLOSSARY.md).*
#
# Training a model means asking, again and again: *if I nudge this number, how much does the loss change?*
# That rate of change is the **gradient**. Automatic differentiation computes it for us, exactly, from the
# code we already wrote.
#
# This notebook uses `autodiff_viz`, which speaks TensorFlow's `GradientTape` language. Guide code runs
# unchanged with `import autodiff_viz as tf`; here we write `ad`.
#
# ### Which parts are TensorFlow and which are this package
#
# * **TensorFlow's API, with TensorFlow's numbers and errors:** `GradientTape` (`watch`, `gradient`, `jacobian`,
#   `batch_jacobian`, `stop_recording`, `reset`), `Variable`, `constant`, the math ops (`ad.math`, `ad.nn`, ...),
#   `custom_gradient`, `stop_gradient`, `RegisterGradient`, `ad.autodiff.ForwardAccumulator`, `ad.function` and
#   the small Keras subset. Code written with these runs in TensorFlow as it is (with `import tensorflow as tf`).
# * **This package's own, not in TensorFlow:** `ad.trace()` and its events, everything under `ad.viz` (graphs,
#   players, animations, plots, `explain`), `autodiff_viz.classroom` (`check_rule`, `check_prediction`,
#   `projector_style`, ...), `ad.extend` and `ad.set_backend`. They look at what the tape did; TensorFlow has no
#   such calls, so remove them before running the code in TensorFlow. The course says "this package's own" where
#   it first uses one.
#
# The idea in one sentence: while your code runs forward, a **tape** writes down every operation it does
# (each one becomes a **node** of a graph); afterwards, `tape.gradient(...)` walks that record backwards,
# applying each node's derivative **rule** to the **upstream gradient** that reaches it. Notebook 0 built such a
# tape in 30 lines and defines these words in its glossary.

# %%
import numpy as np
import autodiff_viz as ad
from autodiff_viz import classroom

classroom.projector_style()  # this package's own (not TensorFlow): large fonts, colour-blind-safe colours

# %% [markdown]
# ## A first gradient
#
# Record $y = x^2$ on a tape, then ask for $dy/dx$. The answer should be $2x = 6$ at $x = 3$.

# %%
x = ad.Variable(3.0)

with ad.GradientTape() as tape:
    y = x**2

dy_dx = tape.gradient(y, x)
dy_dx

# %%
assert float(dy_dx) == 6.0

# %% [markdown]
# ## Seeing what the tape recorded
#
# `ad.trace()` listens while code runs and keeps a plain list of **events** (watch, op, backward step...).
# `ad.viz.graph` draws them. Both are this package's own, not TensorFlow: they watch the tape from outside. The source `x` has a double blue border, the target a thick border,
# and each box shows its value and, in vermillion after the `∂` sign, the gradient of the target with respect to it.

# %%
x = ad.Variable(3.0)
with ad.trace() as tr_square:
    with ad.GradientTape() as tape:
        y = x**2
    tape.gradient(y, x)

ad.viz.graph(tr_square)

# %% [markdown]
# *Picture description:* the variable `x` (value 3) feeds a `Pow` node whose value is 9; its other input, the
# exponent 2, is a dimmed constant box. `x` is marked with the gradient 6.

# %%
[e.kind for e in tr_square.events]

# %% [markdown]
# ## Constants have to be watched
#
# A tape automatically follows **trainable variables** that are read inside it. Anything else, such as a constant
# tensor, must be pointed out with `tape.watch(x)`. This works on whole tensors too: the gradient has the
# shape of the source.

# %%
x = ad.constant(3.0)
with ad.GradientTape() as t:
    t.watch(x)
    y = x * x
assert float(t.gradient(y, x)) == 6.0

x = ad.constant([3.0, 3.0])
with ad.GradientTape() as t:
    t.watch(x)
    z = ad.multiply(x, x)
dz_dx = t.gradient(z, x)
print(z)
print(dz_dx)
np.testing.assert_allclose(dz_dx.numpy(), [6.0, 6.0])

# %% [markdown]
# ## A tape records only inside its `with` block
#
# In TensorFlow the tape's record is made when the `with` block starts, so a tape used without `with` has
# nothing to write to. Some articles show `tape = tf.GradientTape()` followed by `tape.watch(x)` and a gradient;
# in TensorFlow 2.21 that code raises at `tape.watch` (`AttributeError: 'NoneType' object has no attribute
# '_tape'`). This package raises the same error type, with a message that shows the fix:

# %%
x = ad.constant(3.0)
y = ad.constant(2.0)
tape = ad.GradientTape()
try:
    tape.watch(x)
except AttributeError as error:
    print(type(error).__name__ + ":", error)
else:
    raise AssertionError("a tape used outside `with` must fail, as in TensorFlow")

# %% [markdown]
# The fix is the `with` block: watch and compute inside it, ask for the gradient after it.

# %%
x = ad.constant(3.0)
y = ad.constant(2.0)
with ad.GradientTape() as tape:
    tape.watch(x)
    z = x * y
gradient = tape.gradient(z, x)
assert gradient.numpy() == 2.0
gradient.numpy()

# %% [markdown]
# ## Many sources at once, in any structure
#
# Real models have many variables. Pass them as a list or a dictionary and the gradients come back in the
# same structure, each with its source's shape.

# %%
ad.random.set_seed(0)  # each cell that draws random numbers seeds them itself: re-running it gives the same numbers
w = ad.Variable(ad.random.normal((3, 2)), name="w")
b = ad.Variable(ad.zeros(2, dtype=ad.float32), name="b")
x_row = [[1.0, 2.0, 3.0]]

with ad.GradientTape(persistent=True) as tape_wb:
    y_wb = x_row @ w + b
    loss_wb = ad.reduce_mean(y_wb**2)

[dl_dw, dl_db] = tape_wb.gradient(loss_wb, [w, b])
print(w.shape, dl_dw.shape)
assert dl_dw.shape == w.shape and dl_db.shape == b.shape

# %%
grad_wb = tape_wb.gradient(loss_wb, {"w": w, "b": b})
grad_wb["b"]

# %% [markdown]
# We can check this by hand: with two outputs, $\text{loss} = (y_1^2 + y_2^2)/2$, so
# $\partial\,\text{loss}/\partial b_j = y_j$ and $\partial\,\text{loss}/\partial w_{ij} = x_i\,y_j$.

# %%
np.testing.assert_allclose(grad_wb["b"].numpy(), y_wb.numpy()[0], rtol=1e-5)
np.testing.assert_allclose(grad_wb["w"].numpy(), np.outer(x_row[0], y_wb.numpy()[0]), rtol=1e-5)

# %%
with ad.trace() as tr_wb:
    with ad.GradientTape() as tape:
        y = x_row @ w + b
        loss = ad.reduce_mean(y**2)
    tape.gradient(loss, [w, b])
ad.viz.graph(tr_wb)

# %% [markdown]
# *Picture description:* the constant input and the variable `w` feed a `MatMul` node; its output and `b` feed an
# `Add` node, then a `Pow` and a `Mean` node give the loss. `w` and `b` are the sources and carry their gradients.
# The constant x is not watched, so no gradient is computed for it.
#
# ## Gradients of a model
#
# Layers and modules collect their variables in `trainable_variables`, so "the gradient of the loss with respect
# to every parameter" is one line.

# %%
ad.random.set_seed(1)
layer = ad.keras.layers.Dense(2, activation="relu")
x = ad.constant([[1.0, 2.0, 3.0]])

with ad.GradientTape() as tape:
    y = layer(x)
    loss = ad.reduce_mean(y**2)

grad = tape.gradient(loss, layer.trainable_variables)
for var, g in zip(layer.trainable_variables, grad):
    print(f"{var.name}, shape: {g.shape}")
assert [tuple(g.shape) for g in grad] == [(3, 2), (2,)]

# %% [markdown]
# ## Controlling what the tape watches
#
# Why not record everything? The tape keeps intermediate values (the **saved values** each rule needs), so recording
# costs memory; and what we usually want is the gradient with respect to the model's trainable variables.
# So the default is: trainable variables read on the tape are watched, nothing else is.

# %%
x0 = ad.Variable(3.0, name="x0")                  # a trainable variable
x1 = ad.Variable(3.0, name="x1", trainable=False)  # not trainable
x2 = ad.Variable(2.0, name="x2") + 1.0             # variable + tensor is a tensor
x3 = ad.constant(3.0, name="x3")                   # a constant tensor

with ad.trace() as tr_watch:
    with ad.GradientTape() as tape:
        y = (x0**2) + (x1**2) + (x2**2)
    grad = tape.gradient(y, [x0, x1, x2, x3])

for g in grad:
    print(g)
assert float(grad[0]) == 6.0 and grad[1:] == [None, None, None]
print([var.name for var in tape.watched_variables()])
assert [var.name for var in tape.watched_variables()] == ["x0:0"]

# %%
g = ad.viz.graph(tr_watch)
assert g.source.count(">Pow<") == 1   # only x0**2 is on the tape
g

# %% [markdown]
# *Picture description:* one `Pow` node (`x0` squared, value 9) followed by two `Add` nodes; this path from `x0` is
# highlighted and carries the gradient 6. The tape recorded only the square of `x0`: x1 (not trainable) and the
# tensor x2 were not watched, so `x1**2` and `x2**2` were computed off the tape and enter the `Add` nodes as dimmed
# constants (value 9 each), with no path back to x1 or x2.
#
# To follow only chosen variables, switch off automatic watching with `watch_accessed_variables=False`
# and call `watch` yourself:

# %%
x0 = ad.Variable(0.0)
x1 = ad.Variable(10.0)

with ad.GradientTape(watch_accessed_variables=False) as tape:
    tape.watch(x1)
    y0 = ad.math.sin(x0)
    y1 = ad.nn.softplus(x1)
    y = y0 + y1
    ys = ad.reduce_sum(y)

grad = tape.gradient(ys, {"x0": x0, "x1": x1})
print("dy/dx0:", grad["x0"])
print("dy/dx1:", grad["x1"].numpy())
assert grad["x0"] is None
np.testing.assert_allclose(grad["x1"].numpy(), 1 / (1 + np.exp(-10.0)), rtol=1e-6)  # sigmoid(10) = 0.9999546

# %% [markdown]
# ## What to remember
#
# * A tape records operations whose inputs it **watches**; `gradient(target, sources)` walks back over them.
# * Trainable variables are watched when read; constants need `tape.watch`.
# * Sources can be any nested list or dict: the answer has the same structure and shapes.
