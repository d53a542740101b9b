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
# # 10. A small CNN, and one convolution's backward pass
#
# *The words used here are defined in the [glossary](GLOSSARY.md).*
#
# A convolution slides one small kernel over an image: each output is one *patch* of the input multiplied cell by
# cell with the kernel and summed. This notebook trains a tiny convolutional network (Conv2D → max pooling →
# Flatten → Dense) to tell horizontal bars from vertical ones, then slows one training step down and looks at a
# single output position of the convolution: forward, which patch and kernel made it; backward, where its gradient
# goes: spread back over the same patch through the kernel (∂input), and into the kernel through the patch
# (∂kernel). The words (node, upstream gradient, rule, accumulate) are those of notebook 0's glossary.

# %%
import re

import numpy as np
import autodiff_viz as ad
from autodiff_viz import classroom

classroom.projector_style()

# %% [markdown]
# ## The data: horizontal and vertical bars
#
# 64 images of 8×8 pixels with a little noise. Label 0: a horizontal bar of six pixels in a random row; label 1:
# a vertical bar in a random column. No single pixel tells the two apart (every pixel is on a bar of either kind in
# some image); a 3×3 kernel that looks for "bright row above dark row" does.

# %%
def bars(n, seed):
    """``n`` noisy 8×8 images, each with one bar: horizontal (label 0) or vertical (label 1)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 0.1, size=(n, 8, 8, 1)).astype(np.float32)
    labels = rng.integers(0, 2, size=n).astype(np.int32)
    where = rng.integers(1, 7, size=n)
    for i in range(n):
        if labels[i] == 0:
            x[i, where[i], 1:7, 0] += 1.0
        else:
            x[i, 1:7, where[i], 0] += 1.0
    return x, labels


images, labels = bars(64, seed=0)
print(images.shape, "labels:", labels[:8])
for row in images[0, :, :, 0]:
    print(" ".join("#" if v > 0.5 else "." for v in row))
assert images.shape == (64, 8, 8, 1) and set(labels) == {0, 1}

# %% [markdown]
# The first image, drawn with `#` for bright pixels: a vertical bar (label 1).
#
# ## The model and one training step
#
# `Conv2D(4, 3)` has four 3×3 kernels; on an 8×8 image without padding it gives 6×6 outputs per kernel. Max pooling
# keeps the largest value of each 2×2 window (3×3 left), `Flatten` makes a vector of 3·3·4 = 36 numbers, and a
# `Dense` layer gives two logits. A training step is the tape of notebook 7: the loss on the tape, its gradient
# with respect to every weight, one Adam update.

# %%
ad.random.set_seed(1)
model = ad.keras.Sequential([
    ad.keras.layers.Conv2D(4, 3, activation="relu", name="conv"),
    ad.keras.layers.MaxPooling2D(2, name="pool"),
    ad.keras.layers.Flatten(name="flatten"),
    ad.keras.layers.Dense(2, name="dense"),
])
loss_fn = ad.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = ad.keras.optimizers.Adam(0.02)


def loss_and_gradients(x, y):
    with ad.GradientTape() as tape:
        loss = loss_fn(y, model(x))
    return loss, tape.gradient(loss, model.trainable_variables)


model(images[:1])  # builds the weights
print([(v.name, tuple(v.shape)) for v in model.trainable_variables])
assert [tuple(v.shape) for v in model.trainable_variables] == [(3, 3, 1, 4), (4,), (36, 2), (2,)]

# %% [markdown]
# ## Training: the loss falls
#
# Ten passes over the 64 images in batches of 8. The very first step is recorded with `ad.trace()` so that we can
# step through it afterwards; the other 79 run as they are.

# %%
batches = [(images[k:k + 8], labels[k:k + 8]) for k in range(0, 64, 8)]
with ad.trace() as first_step:
    loss, grads = loss_and_gradients(*batches[0])
optimizer.apply_gradients(zip(grads, model.trainable_variables))
losses = [float(loss)]
for epoch in range(10):
    for k, (x, y) in enumerate(batches):
        if epoch == 0 and k == 0:
            continue  # (the recorded step above)
        loss, grads = loss_and_gradients(x, y)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    print(f"pass {epoch + 1:2d}: mean loss of its batches {np.mean(losses[-8:]):.4f}")
accuracy = np.mean(np.argmax(model(images).numpy(), axis=1) == labels)
print(f"first step's loss {losses[0]:.4f}, last pass {np.mean(losses[-8:]):.4f}, accuracy {accuracy:.2f}")
assert len(losses) == 80 and np.mean(losses[-8:]) < 0.1 * losses[0] and accuracy == 1.0

# %% [markdown]
# The loss starts near log 2 ≈ 0.69 (two classes, no idea yet) and falls more than ten times; every training
# image ends up classified right.
#
# ## One convolution's backward pass
#
# The player below steps through the recorded first step: ten ops forward on a batch of 8 images, their rules
# backward. Click the
# `Conv2D` node (or step to it) for the picture this notebook is about.

# %%
anim = ad.viz.animate(first_step, title="The first training step of the small CNN")
anim

# %% [markdown]
# *Picture description:* an interactive player. The graph runs from the images and the kernel through `Conv2D`,
# `Add` (the bias), `Relu`, `MaxPool`, `Reshape` (Flatten), `MatMul` and `Add` (the Dense layer) to the loss: one
# fused `SparseSoftmaxCrossEntropyWithLogits` op, as in TensorFlow, then `Sum` and `RealDiv` for the batch's mean;
# buttons, a slider, and beside the graph the current step's text and the table of gradients accumulated so far.
#
# The convolution's forward step shows one output position and the numbers that made it:

# %%
titles = [s["title"] for s in anim.steps]
forward = anim.steps[titles.index("Forward 1/10: Conv2D")]
print("\n".join(forward["lines"][3:]))

# %% [markdown]
# It says which output it picked (image 0, its row and column, filter 0: the position whose gradient will be the
# largest), which input rows and columns its 3×3 window covers (stride 1, no padding), the patch of the image beside
# kernel 0, and that the sum of their cell-by-cell products is the output there (before the bias and the ReLU).
# The same numbers, computed here with NumPy:

# %%
conv_op = next(e for e in first_step.events if e.kind == "op" and e.op_type == "Conv2D")
kernel0 = conv_op.in_values[1].array()[:, :, 0, 0]  # kernel 0 as the step used it (before the update)
text = "\n".join(forward["lines"])
r, c = (int(v) for v in re.search(r"image 0, row (\d+), col (\d+), filter 0", text).groups())
patch = images[0, r:r + 3, c:c + 3, 0]
print("patch:\n", patch.round(3), "\nkernel:\n", kernel0.round(3), "\nΣ patch · kernel =", (patch * kernel0).sum())
shown = float(re.search(r"the output there is (\S+)\.", text).group(1))
np.testing.assert_allclose(shown, (patch * kernel0).sum(), rtol=1e-3, atol=1e-4)

# %% [markdown]
# Now the convolution's backward step, drawn as a still frame:

# %%
backward_index = titles.index("Backward step 10: Conv2D")
fig = anim.frame(backward_index)

# %% [markdown]
# *Picture description:* the same graph at backward step 10: the `Conv2D` node is highlighted and numbered 10 (the
# last rule to run), and `conv/kernel` has just received its gradient. The text beside it gives the rule (each
# output is Σ patch · W; the kernel's gradient sums patch ⊗ upstream over the positions), says that `const₁` (the
# images, which are not a source) gets nothing and that 3×3×1×4 values go to `conv/kernel`, then follows the one
# output of the forward step: the upstream gradient g it received, a note that its input share is drawn although
# the tape sends the images nothing, and two 3×3 grids side by side: `∂patch += g · kernel`, the share of ∂input
# on the patch's cells, and `∂kernel += g · patch`, its share of the kernel's gradient. The table under it lists
# the gradients accumulated so far, ending with `conv/kernel`.
#
# The same text, and the numbers checked against the tape: the gradient of that single output, times g, is
# exactly these two grids.

# %%
backward = anim.steps[backward_index]
share_at = next(k for k, t in enumerate(backward["lines"]) if t.startswith("The output at"))
print("\n".join(backward["lines"][share_at:]))
g = float(re.search(r"received upstream g = (\S+)\.", backward["lines"][share_at]).group(1))

x0 = ad.constant(images[:1])
kernel = ad.constant(conv_op.in_values[1].array().astype(np.float32))
with ad.GradientTape() as tape:
    tape.watch([x0, kernel])
    one_output = ad.nn.conv2d(x0, kernel, 1, "VALID")[0, r, c, 0]
d_input, d_kernel = tape.gradient(one_output, [x0, kernel])
print("g · kernel (from the tape):\n", (g * d_input.numpy()[0, r:r + 3, c:c + 3, 0]).round(5))
print("g · patch (from the tape):\n", (g * d_kernel.numpy()[:, :, 0, 0]).round(5))
np.testing.assert_allclose(d_input.numpy()[0, r:r + 3, c:c + 3, 0], kernel0, rtol=1e-6)
np.testing.assert_allclose(d_kernel.numpy()[:, :, 0, 0], patch, rtol=1e-6)

# %% [markdown]
# That is the whole rule for one position: its gradient g goes back over *its own patch*, each cell getting g
# times the kernel weight it was multiplied by, and into the kernel, each weight getting g times the pixel it
# saw. The full ∂input and ∂kernel add these shares over every position (and every image): a pixel covered by
# nine windows collects nine shares, and the kernel's gradient is the sum of g · patch over all 6·6 positions of
# all 8 images of the batch.
#
# ## The pooling step: all of the gradient to the maximum
#
# Max pooling's rule is simpler still: each window's gradient goes whole to the cell that held the maximum; the
# other three cells of the window get 0 (so most of the convolution's outputs receive no gradient at all in this
# step).

# %%
pool_step = anim.steps[titles.index("Backward step 7: MaxPool")]
share_at = next(k for k, t in enumerate(pool_step["lines"]) if t.startswith("The output at"))
print("\n".join(pool_step["lines"][share_at:]))
pool_text = "\n".join(pool_step["lines"])
assert f"All of g goes to the window's maximum (row {r}, col {c})" in pool_text  # the convolution's position
assert float(re.search(r"received upstream g = (\S+)\.", pool_text).group(1)) == g  # and the same g
fig = anim.frame(titles.index("Backward step 7: MaxPool"))

# %% [markdown]
# *Picture description:* the graph at backward step 7, with the `MaxPool` node highlighted and `Relu` just
# receiving its gradient. Its text gives the rule (1 at each window's first maximum, 0 elsewhere), names one pooled
# output (image 0, filter 0) and the upstream gradient g it received, then the 2×2 window of `Relu`'s output it read
# as a grid: the maximum, in brackets, receives g; the other three cells 0. It is the same g that the convolution's
# step above spreads: the convolution's output position is the maximum of this window.
#
# Clicking a node in the player (or in `ad.viz.graph(first_step).inspect()`) shows the same pictures in its
# details, with two more grids for the convolution: its whole ∂input on the patch (every window that covers a cell
# adds its share) and its whole ∂kernel.
#
# ## Your turn
#
# * Change `padding="same"` in the `Conv2D` layer: which positions now have padding cells (`·`) in their window,
#   and what do those cells receive in the backward step?
# * Replace `MaxPooling2D` by `AveragePooling2D`: how is the gradient of a window shared now?
