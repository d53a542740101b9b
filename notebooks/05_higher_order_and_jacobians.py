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
# # 5. Higher-order gradients, Jacobians, batch Jacobians and a Hessian
#
# *The words used here are defined in the [glossary](GLOSSARY.md).*
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
# ### One backward pass per row
#
# A backward pass starts from *one* number. To get the Jacobian, the tape runs one backward pass per element of the
# target: pass $i$ seeds $y_i$ with 1 and every other element with 0, so what reaches `x` is row $i$,
# $\partial y_i / \partial x$. The passes are separate: nothing from row 1 is added into row 2. The graph draws the
# whole matrix in `x`'s box:

# %%
xr = ad.constant([1.0, 2.0])
with ad.trace() as tr_jac:
    with ad.GradientTape() as g:
        g.watch(xr)
        yr = xr * xr
    jacobian_rows = g.jacobian(yr, xr)
ad.viz.graph(tr_jac, names={"x": xr, "y": yr})

# %% [markdown]
# *Picture description:* `x` = [1.0, 2.0] (green, double blue border: the source) with two arrows into `y · Mul` =
# [1.0, 4.0] (thick vermillion border: the target). Under `x`, in vermillion, the Jacobian `∂ [[2.0, 0.0], [0.0,
# 4.0]]`: row 1 from the pass of `y[0]`, row 2 from the pass of `y[1]`. Under `y`, `∂ [[1.0, 0.0], [0.0, 1.0]]`:
# each pass's seed, one row each. The legend reads `∂ [[…]] Jacobian`, and the grey note says `jacobian()` spent the
# tape.

# %%
boxes = {n.label: n.grad.array() for n in ad.viz.graph(tr_jac, names={"x": xr, "y": yr}).model.nodes}
np.testing.assert_array_equal(boxes["x"], jacobian_rows.numpy())
np.testing.assert_array_equal(boxes["x"], [[2.0, 0.0], [0.0, 4.0]])
np.testing.assert_array_equal(boxes["y"], np.eye(2))

# %% [markdown]
# The player steps through the passes one after the other. Each pass begins with a step "Row *i* of 2" and its
# backward steps say "row *i* of 2"; its table of gradients starts empty, so every sum it writes adds only that
# pass's contributions (row 2: `x` is reached twice, [0.0, 2.0] + [0.0, 2.0] = [0.0, 4.0]). Under the table the
# Jacobian fills in row by row.

# %%
anim_jac = ad.viz.animate(tr_jac, names={"x": xr, "y": yr})
anim_jac

# %% [markdown]
# *Picture description:* an interactive player with the same two boxes. Its steps: the forward `Mul`; "Backward pass
# begins"; "Row 1 of 2: the backward pass of y[0]"; "Backward step 1, row 1 of 2: y"; "Row 2 of 2: the backward pass
# of y[1]"; "Backward step 1, row 2 of 2: y"; "Done: the Jacobian from tape T1's 2 backward passes". Below the
# table, "∂y/∂x row by row:" lists row 1 = [2.0, 0.0] and row 2 = … until its pass has run.
#
# The storyboard is plain data, so we check that the description matches it:

# %%
titles = [s["title"] for s in anim_jac.steps]
print("\n".join(titles))
assert titles[2:] == ["Backward pass begins", "Row 1 of 2: the backward pass of y[0]",
                      "Backward step 1, row 1 of 2: y", "Row 2 of 2: the backward pass of y[1]",
                      "Backward step 1, row 2 of 2: y", "Done: the Jacobian from tape T1's 2 backward passes"]
row2 = anim_jac.steps[titles.index("Backward step 1, row 2 of 2: y")]
assert "x: reached again, += [0.0, 2.0]: [0.0, 2.0] + [0.0, 2.0] = [0.0, 4.0]" in row2["lines"]
assert row2["results"] == ["∂y/∂x row by row:", "  row 1, ∂y[0]/∂x = [2.0, 0.0]", "  row 2, ∂y[1]/∂x = …"]
assert anim_jac.steps[-1]["results"][-1] == "∂y/∂x = [[2.0, 0.0], [0.0, 4.0]]"

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

# %% [markdown]
# The Hessian is drawn the same way: `outer.jacobian` runs one backward pass per element of `grad`, through the ops
# the outer tape recorded while the inner tape computed `grad`. Each pass gives one row of the Hessian.

# %%
xh = ad.Variable([1.0, 2.0, 3.0], name="x")
with ad.trace() as tr_hess:
    with ad.GradientTape() as outer:
        with ad.GradientTape() as inner:
            fh = ad.reduce_sum(xh**3) + xh[0] * xh[1] * xh[2]
        grad_h = inner.gradient(fh, xh)
    hessian_rows = outer.jacobian(grad_h, xh)
np.testing.assert_allclose(hessian_rows.numpy(), expected, rtol=1e-6)
anim_hess = ad.viz.animate(tr_hess, names={"grad": grad_h})
anim_hess

# %% [markdown]
# *Picture description:* the player of both tapes. After the inner tape's pass ("Done: gradients of tape T2",
# ∂target/∂x = [9.0, 15.0, 29.0]) come three passes of tape T1, "Row 1 of 3", "Row 2 of 3", "Row 3 of 3", each
# starting with an empty table. At the end the list under the table holds the three rows of the Hessian, [6.0, 3.0,
# 2.0], [3.0, 12.0, 1.0] and [2.0, 1.0, 18.0], then a line for the whole 3×3 matrix.

# %%
titles = [s["title"] for s in anim_hess.steps]
assert [t for t in titles if t.startswith("Row ")] == [f"Row {i} of 3: the backward pass of grad[{i - 1}] (tape T1)"
                                                      for i in (1, 2, 3)]
assert "∂target/∂x = [9.0, 15.0, 29.0]" in anim_hess.steps[titles.index("Done: gradients of tape T2")]["results"]
rows = [r.split(" = ")[1] for r in anim_hess.steps[-1]["results"] if r.startswith("  row ")]
assert rows == ["[6.0, 3.0, 2.0]", "[3.0, 12.0, 1.0]", "[2.0, 1.0, 18.0]"]

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
