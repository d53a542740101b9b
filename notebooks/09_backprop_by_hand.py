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
# # 9. Backpropagation by hand: the mathematics
#
# *The words used here are defined in the [glossary](GLOSSARY.md).*
#
# The tape has done the calculus so far. This notebook does it on paper, with tensors: the vector chain rule, the
# rule of a matrix product and how to derive such a rule, reverse mode as vector-Jacobian products beside forward
# mode as Jacobian-vector products, why walking the tape newest-first is a correct order, the backward pass of
# softmax with cross-entropy, and why TensorFlow answers `None` rather than 0. Every formula is checked against the
# tape. Exercises 4 to 6 then ask you to write these backward passes yourself.

# %%
import numpy as np
import matplotlib.pyplot as plt
import autodiff_viz as ad
from autodiff_viz import classroom

classroom.projector_style()

# %% [markdown]
# ## The vector chain rule
#
# For numbers, $\frac{dL}{dx} = \frac{dL}{du}\,\frac{du}{dx}$. For vectors, $u = g(x)$ with $x \in \mathbb{R}^n$,
# $u \in \mathbb{R}^m$ and a scalar loss $L$, the derivative $du/dx$ is the $m \times n$ **Jacobian**
# $J_{ij} = \partial u_i/\partial x_j$, and the chain rule reads
#
# $$\frac{\partial L}{\partial x_j} = \sum_i \frac{\partial L}{\partial u_i}\,\frac{\partial u_i}{\partial x_j},
# \qquad\text{that is}\qquad \bar x = J^\top \bar u \quad(\bar x^\top = \bar u^\top J).$$
#
# A row vector times a Jacobian: a **vector-Jacobian product** (VJP). Backpropagation never builds $J$: each op
# knows how to compute $\bar u^\top J$ directly. Below, $u = \tanh(Ax)$ and $L = \sum_i c_i u_i$: by hand
# $\bar u = c$, the Jacobian of $u$ is $\mathrm{diag}(1 - u^2)\,A$, so $\bar x = A^\top\big((1 - u^2) \odot c\big)$.

# %%
A = ad.constant([[1.0, -0.5, 0.2], [0.3, 0.8, -1.0]])
c = ad.constant([2.0, -1.0])
x = ad.constant([0.5, -0.3, 0.9])

with ad.trace() as chain_trace:
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        u = ad.tanh(ad.linalg.matvec(A, x))
        L = ad.reduce_sum(c * u)
    x_bar = tape.gradient(L, x)
J = tape.jacobian(u, x)

by_hand = A.numpy().T @ ((1 - u.numpy() ** 2) * c.numpy())
print("Jacobian of u:\n", np.round(J.numpy(), 4))
print("c^T J      =", np.round(c.numpy() @ J.numpy(), 4))
print("by hand    =", np.round(by_hand, 4))
print("tape       =", np.round(x_bar.numpy(), 4))
np.testing.assert_allclose(x_bar.numpy(), by_hand, rtol=1e-5)
np.testing.assert_allclose(c.numpy() @ J.numpy(), by_hand, rtol=1e-5)
ad.viz.graph(chain_trace, target=L, sources=[x])

# %% [markdown]
# *Picture description:* `x` enters a grey box `matvec` (the ops of `ad.linalg.matvec`: `x → ExpandDims → MatMul →
# Squeeze`, the constant `A` being the other input of `MatMul`), then `Squeeze → u` where `u` is a `Tanh` node;
# `u` and the constant `c` feed a `Mul` node, and a `Sum` node gives the target `L`. `x` carries the gradient printed above as "tape",
# the same three numbers as "by hand" and as $c^\top J$.
#
# ## The rule of a matrix product, derived
#
# $Y = XW$ with $X$ of shape $(n, d)$ and $W$ of shape $(d, m)$: $Y_{ij} = \sum_k X_{ik} W_{kj}$. The tape brings
# $\bar G = \partial L/\partial Y$, of $Y$'s shape $(n, m)$. Which $Y_{ij}$ does $W_{kj}$ touch? Every $Y_{ij}$ in
# column $j$, with slope $X_{ik}$; so
#
# $$\frac{\partial L}{\partial W_{kj}} = \sum_i \bar G_{ij}\,X_{ik} = (X^\top \bar G)_{kj}, \qquad
# \frac{\partial L}{\partial X_{ik}} = \sum_j \bar G_{ij}\,W_{kj} = (\bar G\, W^\top)_{ik}.$$
#
# **The recipe for any matrix op**: write one output element as a sum over indices, ask which outputs an input
# element touches and with what slope, add up upstream × slope over those outputs, and read the sum back as a
# matrix product. The shapes check the answer: $\partial L/\partial W$ must have $W$'s shape $(d, m)$, and
# $X^\top \bar G$ is $(d, n)(n, m) = (d, m)$; $\bar G X^\top$ would not even multiply. The picture shows one element:
# $\partial L/\partial W_{kj}$ is column $k$ of $X$ (row $k$ of $X^\top$) against column $j$ of $\bar G$.

# %%
rng = np.random.default_rng(0)
X = rng.normal(size=(4, 3)).round(1)
W = rng.normal(size=(3, 2)).round(1)
G = rng.uniform(0.5, 1.5, size=(4, 2)).round(1)   # the upstream gradient, dL/dY

Xc, Wc = ad.constant(X), ad.constant(W)
with ad.GradientTape() as tape:
    tape.watch([Xc, Wc])
    Y = ad.matmul(Xc, Wc)
dX, dW = tape.gradient(Y, [Xc, Wc], output_gradients=ad.constant(G))
np.testing.assert_allclose(dW.numpy(), X.T @ G, rtol=1e-5)
np.testing.assert_allclose(dX.numpy(), G @ W.T, rtol=1e-5)
k, j = 1, 0
print(f"dL/dW[{k},{j}] = X[:, {k}] · G[:, {j}] = {X[:, k] @ G[:, j]:.2f}; the tape: {dW.numpy()[k, j]:.2f}")

fig, axes = plt.subplots(1, 3, figsize=(11, 4), gridspec_kw={"width_ratios": [4, 2, 2]})
# each panel: the matrix, its title, and the outlined part as (first column, first row, width, height)
panels = [(X.T, "Xᵀ  (3 × 4)", (0, k, 4, 1)), (G, "Ḡ = dL/dY  (4 × 2)", (j, 0, 1, 4)),
          (X.T @ G, "dL/dW = Xᵀ·Ḡ  (3 × 2)", (j, k, 1, 1))]
for ax, (m, title, (c0, r0, width, height)) in zip(axes, panels):
    ax.imshow(m, cmap="cividis", vmin=-2, vmax=2)
    ax.set_title(title); ax.set_xticks([]); ax.set_yticks([]); ax.grid(False)
    for (r, q), value in np.ndenumerate(m):
        ax.text(q, r, f"{value:.2g}", ha="center", va="center", color="white" if value < 0.3 else "black")
    ax.add_patch(plt.Rectangle((c0 - 0.5, r0 - 0.5), width, height, fill=False, lw=3, ec="#D55E00"))
fig.tight_layout()

# %% [markdown]
# *Picture description:* three grids of numbers. Left, $X^\top$ (3 rows, 4 columns) with its row 1 outlined in
# vermillion; middle, $\bar G$ (4 rows, 2 columns) with its column 0 outlined; right, the product $X^\top\bar G$ (3
# rows, 2 columns), the gradient of $W$, with the element in row 1, column 0 outlined: it is the outlined row
# times the outlined column, the number printed above.
#
# ## Reverse mode and forward mode, side by side
#
# Take $f(x_1, x_2) = x_1 x_2 + \sin x_1$ as an evaluation trace: $u = x_1 x_2$, $s = \sin x_1$, $f = u + s$.
#
# | | forward mode (JVP): a tangent per value | reverse mode (VJP): an adjoint per value |
# | --- | --- | --- |
# | carries | $\dot v = \partial v/\partial t$ along a direction $\dot x$ | $\bar v = \partial f/\partial v$ |
# | runs | with the program, inputs first | after it, output first, on the tape |
# | rule of $u = x_1 x_2$ | $\dot u = \dot x_1 x_2 + x_1 \dot x_2$ | $\bar x_1 \mathrel{+}= \bar u\, x_2$, $\bar x_2 \mathrel{+}= \bar u\, x_1$ |
# | rule of $s = \sin x_1$ | $\dot s = \cos(x_1)\,\dot x_1$ | $\bar x_1 \mathrel{+}= \bar s \cos x_1$ |
# | one pass gives | $J\dot x$: one column of $J$ per direction | $\bar f^\top J$: one row of $J$ per output |
#
# Both use the same local derivatives; they only multiply the chain from opposite ends. For a loss (one output,
# many inputs) reverse mode gets the whole gradient in one pass, which is why training uses it.

# %%
x1, x2 = ad.constant(2.0), ad.constant(3.0)
with ad.autodiff.ForwardAccumulator([x1, x2], [ad.constant(1.0), ad.constant(0.0)]) as acc:
    u_f = x1 * x2
    s_f = ad.sin(x1)
    f_f = u_f + s_f
with ad.trace() as modes_trace:
    with ad.GradientTape(persistent=True) as tape:
        tape.watch([x1, x2])
        u_r = x1 * x2
        s_r = ad.sin(x1)
        f_r = u_r + s_r
    adjoints = tape.gradient(f_r, [f_r, u_r, s_r, x1, x2])
rows = [("x1", x1, 1.0), ("x2", x2, 0.0), ("u", u_f, acc.jvp(u_f)), ("s", s_f, acc.jvp(s_f)), ("f", f_f, acc.jvp(f_f))]
bars = dict(zip(["f", "u", "s", "x1", "x2"], adjoints))
print(f"{'value':>8} {'':>8} {'tangent (x1 direction)':>24} {'adjoint df/dv':>14}")
for name, value, tangent in rows:
    print(f"{name:>8} {float(value):8.4f} {float(tangent):24.4f} {float(bars[name]):14.4f}")
assert np.isclose(float(acc.jvp(f_f)), float(bars["x1"]))   # the same number, df/dx1, from both ends
ad.viz.graph(modes_trace, target=f_r, sources=[x1, x2])

# %% [markdown]
# *Picture description:* `x1` and `x2` feed a `Mul` node (`u_r`, 6.0); `x1` also feeds a `Sin` node (`s_r`, 0.9093);
# both feed the `Add` node `f_r`, the target. `x1` carries the adjoint 2.584 (the sum of 3.0 from `Mul` and -0.4161
# from `Sin`, written on its two arrows) and `x2` carries 2.0. In the table, the tangent of f in the direction of
# x1 is 2.584 as well: forward mode reached by one column what reverse mode reached by one row.
#
# The cost differs with the shape of the Jacobian. A function from 3 inputs to 2 outputs has a $2 \times 3$
# Jacobian: forward mode needs 3 passes (one per column), reverse mode 2 (one per row):

# %%
def g3(v):
    return ad.stack([v[0] * v[1], ad.sin(v[2]) + v[0]])


v0 = ad.constant([0.5, -1.0, 2.0])
columns = []
for e in np.eye(3, dtype=np.float32):
    with ad.autodiff.ForwardAccumulator(v0, ad.constant(e)) as acc3:
        out = g3(v0)
    columns.append(acc3.jvp(out).numpy())
rows_of_J = []
for e in np.eye(2, dtype=np.float32):
    with ad.GradientTape() as tape:
        tape.watch(v0)
        out = g3(v0)
    rows_of_J.append(tape.gradient(out, v0, output_gradients=ad.constant(e)).numpy())
print("3 JVPs, as columns:\n", np.round(np.stack(columns, axis=1), 4))
print("2 VJPs, as rows:\n", np.round(np.stack(rows_of_J), 4))
np.testing.assert_allclose(np.stack(columns, axis=1), np.stack(rows_of_J), rtol=1e-6)

# %% [markdown]
# ## Why the tape's reverse order is a correct one
#
# A node's adjoint is complete only when **every** node that used its output has sent its share: $\bar v =
# \sum_{\text{consumers } c} \bar c\, \partial c/\partial v$. So a backward pass must run each consumer's rule before
# the rule of the node it consumes: the reverse of a **topological order** (an order where every node comes after
# the nodes it reads). The tape records ops in the order they ran, and an op can only run after its inputs exist:
# the recording order is a topological order, and walking it newest-first is a valid backward order. No sorting is
# needed. Below, $h_0$ feeds two nodes; the printed order shows both consumers' rules run before $h_0$'s producer.
# (This package walks its tape newest-first. TensorFlow's tape reaches a valid order another way: it counts, for
# each tensor, the uses whose rules have not run yet, and runs an op's rule once that count is 0 for all its
# outputs. Both are reverse topological orders, and every such order gives the same gradients.)

# %%
w0 = ad.constant(0.7)
with ad.trace() as order_trace:
    with ad.GradientTape() as tape:
        tape.watch(w0)
        h0 = ad.exp(w0)            # used twice below
        a0 = ad.sin(h0)
        b0 = h0 * h0
        out0 = a0 + b0
    tape.gradient(out0, w0)
ops = {e.output: e for e in order_trace.events if e.kind == "op"}
steps = [e for e in order_trace.events if e.kind == "backward_step"]
print("recorded:", [ops[k].op_type for k in ops])
print("backward:", [s.op_type for s in steps])
when = {s.output: i for i, s in enumerate(steps)}
for s in steps:   # every consumer of s's output ran its rule before s
    consumers = [when[e.output] for e in ops.values() if s.output in e.inputs]
    assert all(c < when[s.output] for c in consumers)
ad.viz.graph(order_trace)

# %% [markdown]
# *Picture description:* `w0` feeds an `Exp` node `h0`; `h0` feeds a `Sin` node `a0` and a `Mul` node `b0` (two
# arrows into `Mul`); `a0` and `b0` feed the `Add` node `out0`. The printed backward order is `Add`, `Mul`, `Sin`,
# `Exp`: both users of `h0` ran their rules before `Exp`.
#
# ## Softmax with cross-entropy
#
# Logits $z \in \mathbb{R}^K$, probabilities $p = \mathrm{softmax}(z)$, label $y$: $L = -\log p_y = -z_y +
# \log\sum_k e^{z_k}$. Differentiate the second form: $\partial L/\partial z_k = -[k = y] + e^{z_k}/\sum_j e^{z_j}$,
#
# $$\frac{\partial L}{\partial z} = p - \mathrm{onehot}(y).$$
#
# The long way gives the same: softmax's Jacobian is $\mathrm{diag}(p) - p p^\top$, the upstream gradient of
# $-\log p_y$ is $-\mathrm{onehot}(y)/p_y$, and their product collapses to $p - \mathrm{onehot}(y)$. Over a batch
# with a **mean** loss each row is divided by $n$: exercise 4 starts there. The gradient pushes the true class's
# logit up (its entry is $p_y - 1 < 0$) and every other logit down, each by its probability.

# %%
z = ad.constant([[2.0, 1.0, 0.1]])
label = ad.constant([0])
with ad.GradientTape() as tape:
    tape.watch(z)
    xent = ad.nn.sparse_softmax_cross_entropy_with_logits(labels=label, logits=z)
dz = tape.gradient(xent, z).numpy()[0]
p = ad.nn.softmax(z).numpy()[0]
print("p =", np.round(p, 4), " p - onehot =", np.round(p - [1, 0, 0], 4), " tape =", np.round(dz, 4))
np.testing.assert_allclose(dz, p - [1.0, 0.0, 0.0], rtol=1e-5, atol=1e-7)

fig2, ax2 = plt.subplots(figsize=(8, 3.8))
classes = np.arange(3)
ax2.bar(classes - 0.2, p, width=0.4, label="p = softmax(z)")
ax2.bar(classes + 0.2, dz, width=0.4, label="dL/dz = p − onehot(y)")
ax2.axhline(0, color="black", lw=1)
ax2.set_xticks(classes, ["class 0 (the label)", "class 1", "class 2"]); ax2.legend(loc="upper right")
ax2.set_ylabel("value");

# %% [markdown]
# *Picture description:* a bar chart with two bars per class. The probabilities are 0.659, 0.2424 and 0.0986; the
# gradient bars are the same except for class 0, the label, where the gradient is -0.341 (the probability minus
# 1), the only bar below zero.
#
# ## Why `None` and not 0
#
# A zero gradient is a fact about slopes: a recorded path joins source and target, and along it the slope is 0 here
# (a `relu` below 0). `None` is a fact about the graph: no path at all. For `round`, the slope is 0 almost
# everywhere, yet TensorFlow registers a rule for `Round` that sends nothing back, so the tape says `None`, the
# same answer as for an input nothing read. TensorFlow keeps the two apart because the second is usually a bug (a
# value not watched, a detour through NumPy): a silent 0 would train nothing without a word. Ask for zeros with
# `unconnected_gradients=ad.UnconnectedGradients.ZERO` when that is what you mean (notebook 3).

# %%
q = ad.Variable(-1.5, name="q")
with ad.GradientTape(persistent=True) as tape:
    through_relu = ad.nn.relu(q)
    through_round = ad.round(q)
    unrelated = ad.constant(2.0) * 3.0
answers = {name: tape.gradient(t, q) for name, t in
           [("relu(q) at q = -1.5", through_relu), ("round(q)", through_round), ("a value that never read q", unrelated)]}
for name, g in answers.items():
    print(f"{name:28s} -> {g if g is None else float(g)}")
assert float(answers["relu(q) at q = -1.5"]) == 0.0
assert answers["round(q)"] is None and answers["a value that never read q"] is None

# %% [markdown]
# ## Now by hand
#
# * [Exercise 4](exercises/ex4_backprop_by_hand.ipynb): the backward pass of a two-layer network, tensor by tensor,
#   checked by `classroom.check_backward` on the graph of the forward code.
# * [Exercise 5](exercises/ex5_matrix_rules.ipynb): the MatMul rule, a broadcast bias, softmax with cross-entropy,
#   softmax alone, least squares.
# * [Exercise 6](exercises/ex6_modes_and_depth.ipynb): reverse and forward mode by hand, and predicting a vanishing
#   gradient.
