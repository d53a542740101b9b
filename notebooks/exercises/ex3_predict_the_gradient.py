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
# # Exercise 3: predict the gradient
#
# *The words used here are defined in the [glossary](../GLOSSARY.md).*
#
# Work each answer out on paper first, then let `classroom.check_prediction` (this package's own, not TensorFlow)
# compare it with the tape. A prediction is one value per input, with the input's shape (a vector's gradient is a
# vector, even when all its elements are equal); `None` predicts that no gradient reaches the input. A wrong answer comes with the graph,
# and a wrong `None` with the explanation of where the path breaks.
#
# Example (deliberately wrong): $y = x^3$ at $x = 2$. Is the slope 6?

# %%
import numpy as np
from IPython.display import display
import autodiff_viz as ad
from autodiff_viz import classroom

classroom.projector_style()

r = classroom.check_prediction(lambda x: x**3, 2.0, 6.0)
display(r)
assert not r.passed and "the tape gives 12.0" in r.message

# %% [markdown]
# *Picture description:* the verdict "Not yet" and the graph `x → Pow`, the `Pow` node being the target; `x` is
# filled light vermillion with a ✗ and the note "You predicted 6.0; the tape gives 12.0.", and the legend says the
# mark is "where your prediction differs from the tape's gradient".
#
# Every cell below shows the verdict (and, when it is wrong, the marked graph or the explanation) before it asserts
# that your prediction was right.
#
# ## 1. A product and a sine
#
# $f(a, b) = a\,b + \sin a$ at $a = 0$, $b = 5$. Predict $\partial f/\partial a$ and $\partial f/\partial b$.

# %%
raise NotImplementedError("TODO: your answer here")
r = classroom.check_prediction(lambda a, b: a * b + ad.sin(a), [0.0, 5.0], prediction)
display(r)
assert r.passed, r.message

# %% [markdown]
# ## 2. A sum over a vector
#
# $f(x) = \sum_i w_i x_i^2$ with $w = (1, 2, 3)$ at $x = (1, 1, -1)$. The prediction is a vector.

# %%
w = ad.constant([1.0, 2.0, 3.0])
raise NotImplementedError("TODO: your answer here")
r = classroom.check_prediction(lambda x: ad.reduce_sum(w * x**2), np.array([1.0, 1.0, -1.0], np.float32),
                               prediction)
display(r)
assert r.passed, r.message

# %% [markdown]
# ## 3. Which gradients are `None`?
#
# Two variables, one of them not trainable; the computation also takes a detour through NumPy for `c`.

# %%
a = ad.Variable(2.0, name="a")
b = ad.Variable(3.0, name="b", trainable=False)
c = ad.Variable(4.0, name="c")


def f(a, b, c):
    via_numpy = ad.constant(np.square(c.numpy()))
    return a * b + via_numpy


raise NotImplementedError("TODO: your answer here")
r = classroom.check_prediction(f, [a, b, c], prediction)
display(r)
assert r.passed, r.message
