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
# # Exercise 6: both modes by hand, and a vanishing gradient
#
# Words used here are defined in the [glossary](../GLOSSARY.md); [notebook 9](../09_backprop_by_hand.ipynb) puts
# the two modes side by side.
#
# The function is $f(x_1, x_2) = x_1 x_2 + \sin x_1$ at $x_1 = 2$, $x_2 = 3$, written as an evaluation trace:
# $u = x_1 x_2$, $s = \sin x_1$, $f = u + s$. **Forward mode** carries a tangent (a dot, $\dot u$) along with
# each value, from the inputs to the output: it computes a Jacobian-vector product. **Reverse mode** carries an
# adjoint (a bar, $\bar u = \partial f/\partial u$) from the output back to the inputs: a vector-Jacobian product.
#
# First, a wrong reverse-mode answer: $\bar x_1$ without the path through $\sin$.

# %%
import numpy as np
from IPython.display import display
import autodiff_viz as ad
from autodiff_viz import classroom

point = dict(x1=2.0, x2=3.0)


def f_trace(x1, x2):
    u = x1 * x2
    s = ad.sin(x1)
    return dict(u=u, s=s, f=u + s)


wrong = classroom.check_backward(f_trace, point, {"u": 1.0, "s": 1.0, "x1": 3.0, "x2": 2.0}, target="f")
display(wrong)
assert not wrong.passed and wrong.marked_label == "x1" and "gradient through Mul only" in wrong.message

# %% [markdown]
# *Picture description:* the verdict "Not yet" says "dx1 is not right: expected 2.584, got 3.0", that this is the
# gradient through `Mul` only, and that `x1` is used 2 times (by `Mul` and by `Sin`), so the tape adds the
# gradients of its uses. The graph: `x1` and `x2` into
# `Mul` (the box `u`), `x1` into `Sin` (the box `s`), both into `Add` (the target `f`); `x1` is filled light
# vermillion with a ✗ and the note "dx1: expected 2.584, got 3.0; = the sum over 2 uses".
#
# ## 1. Reverse mode by hand (a vector-Jacobian product)
#
# Start from $\bar f = 1$ and go backwards: $\bar u$, $\bar s$, then $\bar x_1$ (two uses: add them) and
# $\bar x_2$.

# %%
def adjoints(v):
    # BEGIN SOLUTION
    u_bar, s_bar = 1.0, 1.0
    return {"u": u_bar, "s": s_bar, "x1": u_bar * v.x2 + s_bar * np.cos(v.x1), "x2": u_bar * v.x1}
    # END SOLUTION


r = classroom.check_backward(f_trace, point, adjoints, target="f", required=("u", "s", "x1", "x2"))
display(r)
assert r.passed, r.message

# %% [markdown]
# ## 2. Forward mode by hand (a Jacobian-vector product)
#
# Push the tangent $(\dot x_1, \dot x_2) = (1, 0)$ forwards: $\dot u = \dot x_1 x_2 + x_1 \dot x_2$,
# $\dot s = \cos(x_1)\,\dot x_1$, $\dot f = \dot u + \dot s$. The cell compares your tangents with
# `ad.autodiff.ForwardAccumulator` (TensorFlow's forward mode, `tf.autodiff.ForwardAccumulator`), line by line.

# %%
def tangents(x1, x2, dx1, dx2):
    # BEGIN SOLUTION
    du = dx1 * x2 + x1 * dx2
    ds = np.cos(x1) * dx1
    return {"u": du, "s": ds, "f": du + ds}
    # END SOLUTION


x1, x2 = ad.constant(2.0), ad.constant(3.0)
with ad.autodiff.ForwardAccumulator([x1, x2], [ad.constant(1.0), ad.constant(0.0)]) as acc:
    traced = f_trace(x1, x2)
mine = tangents(2.0, 3.0, 1.0, 0.0)
for name, value in traced.items():
    print(f"d{name}: yours {float(mine[name]):.4f}, ForwardAccumulator {float(acc.jvp(value)):.4f}")
assert all(np.isclose(mine[k], float(acc.jvp(traced[k])), rtol=1e-5) for k in traced), "a tangent differs"

# %% [markdown]
# ## 3. Both modes give the same directional derivative
#
# For the direction $d = (0.6, -0.8)$, forward mode gives $\dot f = J d$ in one pass; reverse mode gives the whole
# gradient $\bar x = J^\top \cdot 1$ in one pass, and then $\bar x \cdot d$. Predict the number (use `tangents`),
# and the cell checks it against the tape's gradient dotted with $d$.

# %%
d = np.array([0.6, -0.8])
# BEGIN SOLUTION
prediction = tangents(2.0, 3.0, d[0], d[1])["f"]
# END SOLUTION
r = classroom.check_prediction(lambda t: f_trace(2.0 + t * d[0], 3.0 + t * d[1])["f"], 0.0, prediction)
display(r)
assert r.passed, r.message

# %% [markdown]
# ## 4. A vanishing gradient: predict it
#
# Ten sigmoids in a row, $y = \sigma(\sigma(\cdots\sigma(x)))$, at $x = 0$. Each layer multiplies the gradient by
# $\sigma'(a) = \sigma(a)(1 - \sigma(a)) \le 1/4$ at its own input $a$. Predict $dy/dx$ (a loop in NumPy is fine).

# %%
def sigmoid_chain(x, depth=10):
    for _ in range(depth):
        x = ad.sigmoid(x)
    return x


# BEGIN SOLUTION
a, prediction = 0.0, 1.0
for _ in range(10):
    s = 1 / (1 + np.exp(-a))
    prediction *= s * (1 - s)
    a = s
# END SOLUTION
r = classroom.check_prediction(sigmoid_chain, 0.0, prediction)
display(r)
assert r.passed, r.message
print(f"ten sigmoids: dy/dx = {prediction:.3g}, less than 0.25**10 = {0.25**10:.3g}")

# %% [markdown]
# ## 5. Does `tanh` vanish too?
#
# The same chain with $\tanh$ at $x = 0$. $\tanh(0) = 0$ and $\tanh'(0) = 1$: predict $dy/dx$ for ten layers,
# then for the same chain at $x = 2$ (where $\tanh' < 1$ at the first layer).

# %%
def tanh_chain(x, depth=10):
    for _ in range(depth):
        x = ad.tanh(x)
    return x


# BEGIN SOLUTION
at_zero = 1.0
a, at_two = 2.0, 1.0
for _ in range(10):
    at_two *= 1 - np.tanh(a) ** 2
    a = np.tanh(a)
# END SOLUTION
r = classroom.check_prediction(tanh_chain, 0.0, at_zero)
display(r)
assert r.passed, r.message
r = classroom.check_prediction(tanh_chain, 2.0, at_two)
display(r)
assert r.passed, r.message
