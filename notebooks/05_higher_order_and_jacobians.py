# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 5. Higher-order gradients, Jacobians, batch Jacobians and a Hessian
#
# A gradient computed *inside* another tape is itself recorded by that outer tape, so it can be differentiated
# again. That one fact gives second derivatives, Hessians and more, with no new API.

# %%
import numpy as np
import matplotlib.pyplot as plt
import autodiff_viz as ad
from autodiff_viz import classroom

classroom.projector_style()

# %% [markdown]
# ## Second derivatives with nested tapes
#
# For $y = x^3$: $y' = 3x^2$ and $y'' = 6x$. At $x = 1$ that is 3 and 6.

# %%
x = ad.Variable(1.0)

with ad.GradientTape() as t:
    with ad.GradientTape() as t2:
        y = x * x * x
    # computed inside t's block, so t records this backward pass too
    dy_dx = t2.gradient(y, x)
d2y_dx2 = t.gradient(dy_dx, x)

print("dy_dx:", dy_dx.numpy(), " d2y_dx2:", d2y_dx2.numpy())
assert (dy_dx.numpy(), d2y_dx2.numpy()) == (3.0, 6.0)

# %% [markdown]
# Same code at $x = 3$ (27 and 18), and with a watched constant and $y = x^2$ (6 and 2):

# %%
x = ad.Variable(3.0)
with ad.GradientTape() as t1:
    with ad.GradientTape() as t2:
        y = x * x * x
    dy_dx = t2.gradient(y, x)
    d2y_dx2 = t1.gradient(dy_dx, x)   # asked inside t1's block: allowed for the outer tape
assert (dy_dx.numpy(), d2y_dx2.numpy()) == (27.0, 18.0)

x = ad.constant(3.0)
with ad.trace() as tr:
    with ad.GradientTape() as g:
        g.watch(x)
        with ad.GradientTape() as gg:
            gg.watch(x)
            y = x * x
        dy_dx = gg.gradient(y, x)
    d2y_dx2 = g.gradient(dy_dx, x)
assert (dy_dx.numpy(), d2y_dx2.numpy()) == (6.0, 2.0)

# %%
ad.viz.graph(tr)

# %% [markdown]
# *Picture description:* the forward op `y = x·x` (`Mul`, value 9), drawn dimmed because it is not on the path of
# the last gradient call; and, in an orange dashed box "backward pass of T2, recorded by T1", the ops of the inner
# tape's backward pass: two `Mul` nodes (the upstream gradient 1.0 times `x`, once for each use of `x`) and an `Add`
# giving `dy_dx` = 6. The outer tape recorded them as ordinary nodes; differentiating them gives the second
# derivative, shown on `x` as `∂ T1 2.0` under the first derivative `∂ T2 6.0`.
#
# `ad.viz.plot_derivatives` (this package's own, not TensorFlow) stacks tapes like this to draw a function with its
# derivatives:

# %%
fig_derivatives = ad.viz.plot_derivatives(lambda x: ad.sin(x) * x, (-6, 6), order=2)

# %% [markdown]
# *Picture description:* three curves on $[-6, 6]$: $f(x) = x \sin x$ (solid blue), its first derivative
# $\sin x + x\cos x$ (dashed vermillion) and its second derivative $2\cos x - x \sin x$ (dash-dot green).

# %%
xs = fig_derivatives.axes[0].get_lines()[0].get_xdata()
second = fig_derivatives.axes[0].get_lines()[2].get_ydata()
np.testing.assert_allclose(second, 2 * np.cos(xs) - xs * np.sin(xs), atol=1e-4)

# %% [markdown]
# ## Jacobians
#
# `gradient` sums over the target's elements. To keep one row per output element, ask for the **Jacobian**: its
# shape is `target.shape + source.shape`.

# %%
with ad.GradientTape() as g:
    x = ad.constant([1.0, 2.0])
    g.watch(x)
    y = x * x
jacobian = g.jacobian(y, x)
print(jacobian)
np.testing.assert_array_equal(jacobian.numpy(), [[2.0, 0.0], [0.0, 4.0]])

# %% [markdown]
# A Jacobian with respect to a layer's kernel: 4 examples times 3 outputs, for a 2×3 kernel.

# %%
ad.random.set_seed(1)
layer = ad.keras.layers.Dense(3, activation="sigmoid")
x = ad.random.normal((4, 2))
with ad.GradientTape() as tape:
    y = layer(x)
j = tape.jacobian(y, layer.kernel)
print(y.shape, layer.kernel.shape, j.shape)
assert tuple(j.shape) == (4, 3, 2, 3)
# summing the Jacobian over the target's axes gives the gradient
with ad.GradientTape() as tape:
    y = layer(x)
np.testing.assert_allclose(ad.reduce_sum(j, axis=[0, 1]).numpy(), tape.gradient(y, layer.kernel).numpy(), rtol=1e-5)

# %% [markdown]
# ## Batch Jacobians
#
# When example $i$ of the target depends only on example $i$ of the source, most of the full Jacobian is zero.
# `batch_jacobian` keeps only the per-example blocks: shape `[batch] + target.shape[1:] + source.shape[1:]`.

# %%
with ad.GradientTape() as g:
    x = ad.constant([[1.0, 2.0], [3.0, 4.0]], dtype=ad.float32)
    g.watch(x)
    y = x * x
batch_jacobian = g.batch_jacobian(y, x)
print(batch_jacobian)
np.testing.assert_array_equal(batch_jacobian.numpy(), [[[2, 0], [0, 4]], [[6, 0], [0, 8]]])

# %%
with ad.GradientTape(persistent=True) as g:
    x = ad.constant([[1.0, 2.0], [3.0, 4.0]])
    g.watch(x)
    y = x * x
full = g.jacobian(y, x)          # shape (2, 2, 2, 2): mostly zeros
blocks = g.batch_jacobian(y, x)  # shape (2, 2, 2)
print(full.shape, blocks.shape)
for i in range(2):
    np.testing.assert_array_equal(full.numpy()[i, :, i, :], blocks.numpy()[i])
del g

# %% [markdown]
# ## A Hessian
#
# The Hessian is the Jacobian of the gradient. Take $f(x) = \sum_i x_i^3 + x_0 x_1 x_2$: its Hessian is
# $\operatorname{diag}(6x) $ plus the mixed terms $x_k$ off the diagonal.

# %%
x = ad.Variable([1.0, 2.0, 3.0])
with ad.GradientTape() as outer:
    with ad.GradientTape() as inner:
        f = ad.reduce_sum(x**3) + x[0] * x[1] * x[2]
    grad = inner.gradient(f, x)
hessian = outer.jacobian(grad, x)
print(hessian.numpy())

a, b, c = 1.0, 2.0, 3.0
expected = np.array([[6 * a, c, b], [c, 6 * b, a], [b, a, 6 * c]])
np.testing.assert_allclose(hessian.numpy(), expected, rtol=1e-6)

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 4))
for ax, m, title in ((axes[0], jacobian.numpy(), "Jacobian of x*x"), (axes[1], hessian.numpy(), "Hessian of f")):
    im = ax.imshow(m, cmap="cividis")
    for (i, k), v in np.ndenumerate(m):
        ax.text(k, i, f"{v:g}", ha="center", va="center", color="white" if v < m.max() / 2 else "black")
    ax.set_title(title); ax.set_xticks(range(m.shape[1])); ax.set_yticks(range(m.shape[0])); ax.grid(False)
fig.tight_layout()

# %% [markdown]
# *Picture description:* two heat maps with their numbers written in each cell. Left, the 2×2 Jacobian of `x*x`:
# 2 and 4 on the diagonal, 0 elsewhere. Right, the symmetric 3×3 Hessian: 6, 12, 18 on the diagonal and 3, 2, 1 off
# it. The colour map (cividis) reads the same for colour-blind viewers and in greyscale.
