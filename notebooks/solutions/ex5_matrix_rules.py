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
# # Exercise 5: the rules of matrix ops
#
# Words used here are defined in the [glossary](../GLOSSARY.md); [notebook 9](../09_backprop_by_hand.ipynb) derives
# these rules with pictures.
#
# Each task gives a small forward computation and asks for gradients in NumPy. `classroom.check_backward` (this
# package's checker) compares them with the tape's and marks the first wrong one on the graph of the forward code.
# In every task the loss is not a plain sum: a fixed weight matrix `C` (or a mean) makes the upstream gradient
# something other than ones, so a rule that forgets it cannot pass by luck.
#
# First, a wrong answer: the MatMul rule with the product in the wrong order gives the transpose.

# %%
import numpy as np
from IPython.display import display
import autodiff_viz as ad
from autodiff_viz import classroom

rng = np.random.default_rng(3)
X_in = rng.normal(size=(4, 3))
W_in = rng.normal(size=(3, 2))
C = rng.uniform(0.5, 1.5, size=(4, 2))


def matmul_forward(X, W):
    Y = ad.matmul(X, W)
    return dict(Y=Y, loss=ad.reduce_sum(C * Y))


wrong = classroom.check_backward(matmul_forward, dict(X=X_in, W=W_in), lambda v: {"W": C.T @ v.X})
display(wrong)
assert not wrong.passed and "Missing transpose" in wrong.message and wrong.marked_label == "W"

# %% [markdown]
# *Picture description:* the verdict "Not yet" says "Missing transpose: your dW has shape (2, 3), the transpose of W
# (3, 2)", with the upstream × local step (`MatMul` received the upstream $C$ and its rule for `W` is "Aᵀ @
# upstream"). The graph: `X` and `W` into `MatMul` (the box `Y`), then `Mul` with the constant C and the target
# `loss`; `W` is filled light vermillion with a ✗ and the note "dW: expected …, got …".
#
# ## 1. The MatMul rule
#
# $L = \sum_{ij} C_{ij} Y_{ij}$ with $Y = XW$, so $\partial L/\partial Y = C$. Give $\partial L/\partial X$ and
# $\partial L/\partial W$ (shapes (4, 3) and (3, 2): let the shapes tell you where the transposes go).

# %%
def matmul_grads(v):
    # BEGIN SOLUTION
    G = C
    return {"Y": G, "X": G @ v.W.T, "W": v.X.T @ G}
    # END SOLUTION


r = classroom.check_backward(matmul_forward, dict(X=X_in, W=W_in), matmul_grads, required=("Y", "X", "W"))
display(r)
assert r.passed, r.message

# %% [markdown]
# ## 2. A broadcast bias and a mean
#
# $Y = XW + b$ with $b$ of shape (2,), added to every row; $L = \mathrm{mean}(Y^2)$ over all 8 elements. Give
# $\partial L/\partial Y$, $\partial L/\partial b$ and $\partial L/\partial W$.

# %%
def bias_forward(X, W, b):
    Y = ad.matmul(X, W) + b
    return dict(Y=Y, loss=ad.reduce_mean(Y * Y))


def bias_grads(v):
    # BEGIN SOLUTION
    dY = 2 * v.Y / v.Y.size
    return {"Y": dY, "b": dY.sum(axis=0), "W": v.X.T @ dY}
    # END SOLUTION


r = classroom.check_backward(bias_forward, dict(X=X_in, W=W_in, b=np.array([0.5, -0.5])), bias_grads,
                             required=("Y", "b", "W"))
display(r)
assert r.passed, r.message

# %% [markdown]
# ## 3. Softmax + cross-entropy
#
# `ad.nn.softmax_cross_entropy_with_logits(labels=P, logits=Z)` is $-\sum_k P_k \log \mathrm{softmax}(Z)_k$ per
# row, with a row of probabilities $P$ as the label. Here the loss is the **sum** over the rows. Show (on paper)
# that the gradient of one row is $\mathrm{softmax}(Z) - P$ (the labels of a row add up to 1), then give
# $\partial L/\partial Z$.

# %%
P = np.array([[1.0, 0.0, 0.0], [0.2, 0.3, 0.5], [0.0, 0.0, 1.0]])
Z = np.array([[2.0, 1.0, -1.0], [0.5, 0.5, 0.5], [0.0, 3.0, 1.0]])


def xent_forward(Z):
    return dict(loss=ad.reduce_sum(ad.nn.softmax_cross_entropy_with_logits(labels=P, logits=Z)))


def xent_grads(v):
    # BEGIN SOLUTION
    e = np.exp(v.Z - v.Z.max(axis=1, keepdims=True))
    return {"Z": e / e.sum(axis=1, keepdims=True) - P}
    # END SOLUTION


r = classroom.check_backward(xent_forward, dict(Z=Z), xent_grads, required=("Z",))
display(r)
assert r.passed, r.message

# %% [markdown]
# ## 4. Softmax alone: a vector-Jacobian product along the right axis
#
# $S = \mathrm{softmax}(Z)$ per row and $L = \sum C' \odot S$ with a weight matrix $C'$ (so the upstream gradient of
# $S$ is $C'$). The Jacobian of one row is $\mathrm{diag}(s) - s s^\top$, and the vector-Jacobian product works out
# to $s \odot (\bar g - \langle \bar g, s\rangle)$, the inner product taken **per row** (keep the dimension).

# %%
C2 = np.array([[1.0, 0.5, 0.0], [0.2, 1.3, 0.7], [0.9, 0.1, 1.4]])


def softmax_forward(Z):
    S = ad.nn.softmax(Z)
    return dict(S=S, loss=ad.reduce_sum(C2 * S))


def softmax_grads(v):
    # BEGIN SOLUTION
    inner = (C2 * v.S).sum(axis=1, keepdims=True)
    return {"Z": v.S * (C2 - inner)}
    # END SOLUTION


r = classroom.check_backward(softmax_forward, dict(Z=Z), softmax_grads, required=("Z",))
display(r)
assert r.passed, r.message

# %% [markdown]
# ## 5. A least-squares layer
#
# A linear model $p = Xw$ with $w$ of shape (3,), targets $t$, and the mean squared error
# $L = \frac{1}{n}\sum_i (p_i - t_i)^2$. Give $\partial L/\partial p$ and $\partial L/\partial w$.

# %%
t = np.array([1.0, -1.0, 0.5, 2.0])


def lsq_forward(X, w):
    p = ad.linalg.matvec(X, w)
    return dict(p=p, loss=ad.reduce_mean((p - t) ** 2))


def lsq_grads(v):
    # BEGIN SOLUTION
    dp = 2 * (v.p - t) / len(t)
    return {"p": dp, "w": v.X.T @ dp}
    # END SOLUTION


r = classroom.check_backward(lsq_forward, dict(X=X_in, w=np.array([0.3, -0.2, 0.8])), lsq_grads, required=("p", "w"))
display(r)
assert r.passed, r.message
