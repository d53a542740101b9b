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
# # Exercise 1: write a gradient rule
#
# *The words used here are defined in the [glossary](../GLOSSARY.md).*
#
# A rule has the signature `rule(op, grad)`: `op.inputs` and `op.outputs` are the node's **saved values**, `grad` is
# the **upstream gradient** (the gradient of the target with respect to the op's output), and the rule returns one
# gradient per input: `grad × ∂output/∂input`; this is how `ad.RegisterGradient` and TensorFlow's own
# `tf.RegisterGradient` take a rule. `classroom.check_rule` (this package's own, not TensorFlow) runs your rule
# inside a small computation and
# compares every number it sends with finite differences, at your inputs and at special points (the origin, ties
# such as `a = b`, a random point). When it is wrong, it says where and why, and marks that node on the graph.
#
# **Why the target's ∂ is not 1 in the pictures:** the checker starts the backward pass from random weights between
# 0.5 and 1.5 (one per element of the result) instead of 1. With a 1 there, a rule that forgets to multiply by `grad`
# could pass by luck; with random weights it cannot.
#
# First, what a wrong answer looks like. This rule for `Sin` uses `sin` where it needs `cos`:

# %%
import numpy as np
from IPython.display import display
import autodiff_viz as ad
from autodiff_viz import classroom

classroom.projector_style()
x = np.array([0.3, 1.2, -0.7])


def sin_rule_wrong(op, grad):
    return grad * ad.sin(op.inputs[0])


wrong = classroom.check_rule("Sin", sin_rule_wrong, lambda x: ad.sin(ad.sin(x)) * x, x)
display(wrong)
assert not wrong.passed and wrong.marked_label == "Sin"

# %% [markdown]
# *Picture description:* the verdict "Not yet" and the message, then the graph `x → Sin → Sin → Mul` (with `x` also
# feeding `Mul`). The outer `Sin` node, the first one the backward pass reaches, is filled light vermillion with a ✗
# before its name and a note giving the gradient the rule sent and the right one; the legend says the mark is "where
# the rule's numbers first differ from the right ones".
#
# Every exercise cell below shows the checker's verdict (and, when it is wrong, the marked graph) before it asserts
# that your answer passed.
#
# ## 1. The rule for `Tanh`
#
# $\frac{d}{dx}\tanh x = 1 - \tanh^2 x$. The output $\tanh x$ is saved as `op.outputs[0]`: use it, rather than
# computing `tanh` again.

# %%
def tanh_rule(op, grad):
    # BEGIN SOLUTION
    y = op.outputs[0]
    return grad * (1.0 - y * y)
    # END SOLUTION


result = classroom.check_rule("Tanh", tanh_rule, lambda x: ad.tanh(ad.tanh(x)) * x, x)
display(result)
assert result.passed, result.message

# %% [markdown]
# ## 2. The rule for `Maximum`
#
# `ad.maximum(a, b)` has two inputs. The upstream gradient goes to whichever input is larger; on a tie (`a = b`)
# send all of it to `a`, as TensorFlow does (finite differences cannot decide there, so the checker follows that
# convention). `ad.where(condition, u, v)` and `ad.zeros_like(t)` will help.

# %%
def maximum_rule(op, grad):
    a, b = op.inputs
    # BEGIN SOLUTION
    a_wins = ad.greater_equal(a, b)
    zeros = ad.zeros_like(grad)
    return ad.where(a_wins, grad, zeros), ad.where(a_wins, zeros, grad)
    # END SOLUTION


a = np.array([0.5, -1.0, 2.0])
b = np.array([1.0, -2.0, 0.0])
result = classroom.check_rule("Maximum", maximum_rule, lambda a, b: ad.maximum(a, b) * a, [a, b])
display(result)
assert result.passed, result.message

# %% [markdown]
# ## 3. Broadcasting: add up the copies
#
# `ad.multiply(m, w)` with a matrix `m` of shape (2, 3) and a vector `w` of shape (3,) uses `w` once per row:
# NumPy's broadcasting copies it. Each copy gets its own gradient, so the gradient of `w` is the **sum over the
# copies**: `grad * m` has shape (2, 3), and `w` needs the sum over axis 0, shape (3,).
#
# In TensorFlow this sum is the rule's job: the tape uses what the rule returns as it is, so every gradient your
# rule returns must already have its input's shape (TensorFlow's own `Mul` rule sums over the broadcast axes
# itself). `check_rule` runs rules that way. (This package's tape would do the sum after a rule that skips it, a
# convenience of its own that TensorFlow does not have; `check_rule(..., exact_shapes=False)` allows it.)
# Write `sum_to_shape(g, shape)`, which sums `g` over the dimensions that broadcasting added (leading ones, and
# those where `shape` has a 1), then use it in the rule for `Mul`. Notebook 2 shows this sum on a graph.

# %%
def sum_to_shape(g, shape):
    # BEGIN SOLUTION
    while len(g.shape) > len(shape):
        g = ad.reduce_sum(g, axis=0)
    for axis, n in enumerate(shape):
        if n == 1 and g.shape[axis] != 1:
            g = ad.reduce_sum(g, axis=axis, keepdims=True)
    return g
    # END SOLUTION


def mul_rule(op, grad):
    a, b = op.inputs
    return sum_to_shape(grad * b, a.shape), sum_to_shape(grad * a, b.shape)


m = np.array([[0.2, -0.4, 0.6], [1.0, 0.8, -1.2]])
w = np.array([0.5, -1.0, 2.0])
result = classroom.check_rule("Mul", mul_rule, lambda m, w: ad.reduce_sum(ad.multiply(m, w) ** 2), [m, w])
display(result)
assert result.passed, result.message
# d/dw sum((m w)²) = 2 w · (sum of m² over the rows): the sum over the copies, by hand
np.testing.assert_allclose(result.theoretical[1].ravel(), 2 * w * (m**2).sum(axis=0), rtol=1e-6)
