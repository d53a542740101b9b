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
# # Exercise 4: backpropagation by hand
#
# Words used here are defined in the [glossary](../GLOSSARY.md); the rules are derived in
# [notebook 9](../09_backprop_by_hand.ipynb).
#
# One training step of a small two-layer network (an MLP), and you write its backward pass yourself, one tensor at a
# time, in NumPy: first $\partial L/\partial\,\text{logits}$, then the second layer, then back through the `relu`
# to the first layer. `classroom.check_backward` (this package's checker; TensorFlow has none) runs the forward
# code below on a tape, compares each of your tensors with the tape's in the order the backward pass reaches them,
# and marks the first wrong one on the graph of this forward code, with what it expected, what you gave, and the
# upstream gradient and local rule that make the right answer. It names the usual slips: a missing transpose, no
# sum over the batch, a forgotten $1/n$ of a mean, a sum over the wrong axis.
#
# The network: $z_1 = X W_1 + b_1$, $h = \mathrm{relu}(z_1)$, $\text{logits} = h W_2 + b_2$ and the loss is the
# mean over the batch of the softmax cross-entropy with the integer labels $y$.
#
# The values arrive as `v.X`, `v.h`, `v.logits`... (NumPy arrays). Shapes: a batch of $n = 4$ examples with 3
# features, 5 hidden units, 3 classes.

# %%
import numpy as np
from IPython.display import display
import autodiff_viz as ad
from autodiff_viz import classroom

rng = np.random.default_rng(7)
inputs = dict(X=rng.normal(size=(4, 3)), y=np.array([0, 2, 1, 2]), W1=rng.normal(size=(3, 5)) * 0.7,
              b1=rng.normal(size=5) * 0.3, W2=rng.normal(size=(5, 3)) * 0.7, b2=rng.normal(size=3) * 0.3)


def forward(X, y, W1, b1, W2, b2):
    z1 = ad.matmul(X, W1) + b1
    h = ad.nn.relu(z1)
    logits = ad.matmul(h, W2) + b2
    loss = ad.reduce_mean(ad.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    return dict(z1=z1, h=h, logits=logits, loss=loss)


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# A deliberately wrong first answer: softmax minus the one-hot labels, without the 1/n of the mean.
wrong = classroom.check_backward(forward, inputs, lambda v: {"logits": softmax(v.logits) - np.eye(3)[v.y]})
display(wrong)
assert not wrong.passed and wrong.marked_label == "logits" and "forgot the 1/n of a mean (n = 4)" in wrong.message

# %% [markdown]
# *Picture description:* the verdict "Not yet" names the slip ("you forgot the 1/n of a mean (n = 4)") and the
# upstream × local step that makes the right answer (the cross-entropy op's upstream, 0.25 for each of the 4
# examples, times its rule "softmax(a) − onehot(b)"). Below it, the graph of the forward code: `X` and `W1` into
# `MatMul`, then `z1`, `h`, a second `MatMul` with `W2`, then `logits`, then the cross-entropy as one op, as in
# TensorFlow (`SparseSoftmaxCrossEntropyWithLogits`), and `loss`. The
# `logits` box is filled light vermillion with a ✗ and the note "dlogits: expected …, got …"; the legend says the
# mark is "where your backward pass first differs from the tape's".
#
# Every cell below shows the verdict (and, when something is wrong, the marked graph) before it asserts that your
# answer passed.
#
# ## 1. The gradient of the logits
#
# For one example, the derivative of $-\log \mathrm{softmax}(z)_y$ with respect to $z$ is
# $\mathrm{softmax}(z) - \mathrm{onehot}(y)$. The loss is the **mean** over $n$ examples.

# %%
def grad_logits(v):
    # BEGIN SOLUTION
    n = len(v.y)
    return (softmax(v.logits) - np.eye(3)[v.y]) / n
    # END SOLUTION


r = classroom.check_backward(forward, inputs, lambda v: {"logits": grad_logits(v)})
display(r)
assert r.passed, r.message

# %% [markdown]
# ## 2. The second layer: $\partial L/\partial W_2$ and $\partial L/\partial b_2$
#
# $\text{logits} = h W_2 + b_2$. The MatMul rule gives $\partial L/\partial W_2 = h^\top \bar G$ where
# $\bar G = \partial L/\partial\,\text{logits}$. $b_2$ is added to every row (broadcast over the batch), so its
# gradient adds up the rows.

# %%
def grad_layer2(v, dlogits):
    # BEGIN SOLUTION
    dW2 = v.h.T @ dlogits
    db2 = dlogits.sum(axis=0)
    # END SOLUTION
    return dW2, db2


def answer_layer2(v):
    dW2, db2 = grad_layer2(v, grad_logits(v))
    return {"logits": grad_logits(v), "W2": dW2, "b2": db2}


r = classroom.check_backward(forward, inputs, answer_layer2)
display(r)
assert r.passed, r.message

# %% [markdown]
# ## 3. Back to the hidden layer: $\partial L/\partial h$
#
# The other half of the MatMul rule: $\partial L/\partial h = \bar G\, W_2^\top$.

# %%
def grad_hidden(v, dlogits):
    # BEGIN SOLUTION
    return dlogits @ v.W2.T
    # END SOLUTION


r = classroom.check_backward(forward, inputs, lambda v: {"h": grad_hidden(v, grad_logits(v))})
display(r)
assert r.passed, r.message

# %% [markdown]
# ## 4. Through the `relu`: $\partial L/\partial z_1$
#
# $\mathrm{relu}(z) = \max(z, 0)$ passes the gradient where $z > 0$ and blocks it elsewhere.

# %%
def grad_relu(v, dh):
    # BEGIN SOLUTION
    return dh * (v.z1 > 0)
    # END SOLUTION


r = classroom.check_backward(forward, inputs, lambda v: {"z1": grad_relu(v, grad_hidden(v, grad_logits(v)))})
display(r)
assert r.passed, r.message

# %% [markdown]
# ## 5. The first layer: $\partial L/\partial W_1$ and $\partial L/\partial b_1$, and the whole pass
#
# The same two rules as in task 2, one layer down. The cell checks your whole backward pass, all seven tensors.

# %%
def grad_layer1(v, dz1):
    # BEGIN SOLUTION
    dW1 = v.X.T @ dz1
    db1 = dz1.sum(axis=0)
    # END SOLUTION
    return dW1, db1


def whole_backward(v):
    dlogits = grad_logits(v)
    dW2, db2 = grad_layer2(v, dlogits)
    dh = grad_hidden(v, dlogits)
    dz1 = grad_relu(v, dh)
    dW1, db1 = grad_layer1(v, dz1)
    return dict(logits=dlogits, W2=dW2, b2=db2, h=dh, z1=dz1, W1=dW1, b1=db1)


r = classroom.check_backward(forward, inputs, whole_backward)
display(r)
assert r.passed, r.message
