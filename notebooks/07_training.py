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
# # 7. Training: the toy network, then a small MLP
#
# *The words used here are defined in the [glossary](GLOSSARY.md).*
#
# Training is the loop: forward pass on a tape, gradient of the loss with respect to the variables, a small step
# against the gradient ($w \leftarrow w - \eta\,\nabla_w L$), repeat.

# %%
import numpy as np
import matplotlib.pyplot as plt
import autodiff_viz as ad
from autodiff_viz import classroom

classroom.projector_style()

# %% [markdown]
# ## The toy network
#
# One input row $[1, 2]$, a weight column $w = [0.25, 0.15]^T$, output $xw = 0.55$, target 0.75, squared-difference
# loss.

# %%
input = ad.constant([[1.0, 2.0]])
weights = ad.Variable([[0.25], [0.15]])
y_true = ad.constant(0.75)

with ad.trace() as tr:
    with ad.GradientTape() as tape:
        output = ad.linalg.matmul(input, weights)
        loss = ad.math.squared_difference(y_true, output)
    gradients = tape.gradient(loss, weights)
gradients

# %% [markdown]
# By hand: $L = (0.75 - xw)^2$, so $\nabla_w L = -2\,(0.75 - 0.55)\,x^T = [-0.4, -0.8]^T$. The sign matters: the
# output is too small, so increasing the weights lowers the loss, and the gradient points the other way.
# (Some tutorials on this example print these values without their minus sign; the minus sign is right.)

# %%
np.testing.assert_allclose(gradients.numpy(), [[-0.4], [-0.8]], rtol=1e-6)
ad.viz.graph(tr)

# %% [markdown]
# *Picture description:* the constant input and the variable `weights` feed `MatMul` (value 0.55); that and the
# constant 0.75 feed `SquaredDifference` (value 0.04), the target. `weights` carries the gradient [-0.4, -0.8].
#
# A constant weight is not watched, so it gets no gradient unless we `watch` it; a persistent tape then answers twice:

# %%
weights_c = ad.constant([[0.25], [0.15]])
with ad.GradientTape(persistent=True) as tape:
    output = ad.linalg.matmul(input, weights_c)
    loss = ad.math.squared_difference(y_true, output)
assert tape.gradient(loss, weights_c) is None

with ad.GradientTape(persistent=True) as tape:
    tape.watch(weights_c)
    output = ad.linalg.matmul(input, weights_c)
    loss = ad.math.squared_difference(y_true, output)
first, second = tape.gradient(loss, weights_c), tape.gradient(loss, weights_c)
np.testing.assert_array_equal(first.numpy(), second.numpy())
del tape

# %% [markdown]
# ## Training the toy network
#
# Three examples, learning rate 0.01, one gradient-descent step per example, the data fed by `ad.data.Dataset`.

# %%
data = ad.constant([[5.0, 2.0], [3.0, 3.0], [4.0, 1.5]])
w_train = ad.Variable([[0.55], [0.75]], shape=[2, 1])   # its own name: the cells above keep their `weights`
targets = ad.constant([0.75, 0.5, 0.4])
lr = 0.01
dataset = ad.data.Dataset.from_tensor_slices((data, targets))

history = [w_train.numpy().ravel().copy()]
losses = []
for x_i, y_i in dataset:
    with ad.GradientTape() as tape:
        output = ad.linalg.matmul(ad.reshape(x_i, [1, 2]), w_train)
        loss = ad.math.squared_difference(y_i, output)
    step_grad = tape.gradient(loss, w_train)
    w_train.assign_sub(ad.multiply(lr, step_grad))   # assign_sub keeps the variable (x = x - ... would not)
    history.append(w_train.numpy().ravel().copy())
    losses.append(float(ad.reduce_sum(loss)))

w_train

# %%
np.testing.assert_allclose(w_train.numpy(), [[0.02995202], [0.47385702]], rtol=1e-5)
np.testing.assert_allclose(losses, [12.25, 3.7249, 0.4598], rtol=1e-3)   # (0.75 - 4.25)^2 first
print("loss of each example before its step:", np.round(losses, 4))

# %%
path = np.array(history)
fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
axes[0].plot(path[:, 0], path[:, 1], marker="o")
for k, (a, b) in enumerate(path):
    axes[0].annotate(f"step {k}", (a, b), textcoords="offset points", xytext=(8, 4))
axes[0].set_xlabel("w[0]"); axes[0].set_ylabel("w[1]"); axes[0].set_title("weights after each step")
axes[1].bar(range(1, 4), losses, color=classroom.PALETTE[:3])
axes[1].set_xlabel("example"); axes[1].set_ylabel("loss before the step"); axes[1].set_title("loss per example")
fig.tight_layout()

# %% [markdown]
# *Picture description:* left, the path of the two weights: from (0.55, 0.75) in three steps to about (0.03, 0.47),
# the first step being by far the largest. Right, bars with the loss of each example before its step: 12.25 (the
# output 4.25 is far from 0.75), then about 3.7 and 0.46.
#
# ## A small MLP with a loss curve
#
# Now a real fit: learn $y = \sin(x)$ on $[-3, 3]$ with two `Dense` layers, `Adam`, and mini-batches. Each layer's
# ops run inside its name scope, so the graph can fold a layer into one box.

# %%
class MLP(ad.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.hidden = ad.keras.layers.Dense(hidden, activation="tanh")
        self.out = ad.keras.layers.Dense(1)

    def __call__(self, x):
        return self.out(self.hidden(x))


ad.random.set_seed(0)   # the layers' initial weights: the same on every run of this cell
rng = np.random.default_rng(0)
x_train = rng.uniform(-3, 3, size=(128, 1)).astype(np.float32)
y_train = np.sin(x_train).astype(np.float32)
train = ad.data.Dataset.from_tensor_slices((x_train, y_train)).batch(32)

model = MLP()
optimizer = ad.keras.optimizers.Adam(learning_rate=0.01)


def mse(pred, target):
    return ad.reduce_mean(ad.square(pred - target))


curve = []
for epoch in range(600):
    for xb, yb in train:
        with ad.GradientTape() as tape:
            loss = mse(model(xb), yb)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    curve.append(float(mse(model(ad.constant(x_train)), ad.constant(y_train))))

print(f"loss: start {curve[0]:.4f}, end {curve[-1]:.5f}; {len(model.trainable_variables)} variables")
assert curve[0] > 0.1 and curve[-1] < 1e-3 and curve[-1] < curve[0] / 100

# %%
grid = np.linspace(-3, 3, 200, dtype=np.float32)[:, None]
fit = model(ad.constant(grid)).numpy()
error = np.abs(fit - np.sin(grid)).ravel()
print(f"largest distance between the fit and sin(x) on [-3, 3]: {error.max():.3f} (at x = {grid[error.argmax(), 0]:.2f})")
assert error.max() < 0.05   # the description below says "about 0.04"

fig2, axes2 = plt.subplots(1, 2, figsize=(11, 4.5))
axes2[0].semilogy(range(1, len(curve) + 1), curve)
axes2[0].set_xlabel("epoch"); axes2[0].set_ylabel("mean squared error"); axes2[0].set_title("loss curve")
axes2[1].plot(grid, np.sin(grid), label="sin(x)", zorder=1)
axes2[1].plot(grid, fit, label="MLP", zorder=2)
axes2[1].scatter(x_train, y_train, s=22, facecolor="white", edgecolor="black", linewidth=1.0, zorder=3,
                 label="training points")
axes2[1].set_xlabel("x"); axes2[1].legend(); axes2[1].set_title("fit")
fig2.tight_layout()

# %% [markdown]
# *Picture description:* left, the training loss on a logarithmic scale, falling over 600 epochs from about 0.2 to
# about 0.0002: quickly at first, then in slower stretches. Right, $\sin(x)$ and the learned curve on $[-3, 3]$: they never
# differ by more than the printed largest distance, about 0.04, so the two lines overlap almost everywhere; the 128
# training points are drawn on top as small white circles with black edges.
#
# One training step as a graph, with each layer folded into one box (`collapse=True`):

# %%
with ad.trace() as tr_step:
    with ad.GradientTape() as tape:
        loss = mse(model(ad.constant(x_train[:4])), ad.constant(y_train[:4]))
    grads = tape.gradient(loss, model.trainable_variables)
g = ad.viz.graph(tr_step, collapse=True)
assert "MatMul" in ad.viz.graph(tr_step).source
g

# %% [markdown]
# *Picture description:* the input batch flows through two boxes, one per Dense layer (each folding its `MatMul`,
# `Add` and, for the hidden layer, `Tanh`), with the kernels and biases as inputs carrying their gradients; then
# `Sub`, `Square` and `Mean` give the loss.
#
# ## A trap with `watch_accessed_variables=False`
#
# A layer creates its variables on its first call. Watch `a.variables` before that and you watch an empty list, so
# every gradient is `None`. Watch after the layer is built and it works:

# %%
a = ad.keras.layers.Dense(4)
b = ad.keras.layers.Dense(4)
inputs = ad.constant([[1.0, 2.0]])
with ad.GradientTape(watch_accessed_variables=False) as tape:
    tape.watch(a.variables)      # empty: a is not built yet
    result = b(a(inputs))
grads = tape.gradient(result, a.variables)   # a.variables exists now, but was not watched
print(grads)
assert grads == [None, None]

with ad.GradientTape(watch_accessed_variables=False) as tape:
    tape.watch(a.variables)      # built now: kernel and bias
    result = b(a(inputs))
assert all(g is not None for g in tape.gradient(result, a.variables))
