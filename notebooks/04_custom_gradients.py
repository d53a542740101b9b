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
# # 4. Custom gradients and registering a gradient rule
#
# *The words used here are defined in the [glossary](GLOSSARY.md).*
#
# Every op carries a **rule**: given the **upstream gradient** (how the target changes with the op's output), it
# returns how the target changes with each input. Sometimes we want to write that rule ourselves:
#
# * the op has no rule yet (a new op);
# * the default rule is numerically unstable;
# * the backward pass can reuse something expensive from the forward pass;
# * we want to change a value (clip it, round it) without changing its gradient, or the other way round.
#
# Two tools: `@ad.custom_gradient` for one Python function, `@ad.RegisterGradient("OpType")` for every use of an
# op type (the registry is global, so change it with care).

# %%
import numpy as np
import matplotlib.pyplot as plt
from IPython.display import display
import autodiff_viz as ad
from autodiff_viz import classroom

classroom.projector_style()

# %% [markdown]
# ## Clipping the gradient, not the value
#
# This function is the identity going forward; going backward it clips the upstream gradient to norm 0.5.

# %%
@ad.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return ad.clip_by_norm(dy, 0.5)
    return y, backward


v = ad.Variable(2.0)
with ad.trace() as tr:
    with ad.GradientTape() as t:
        output = clip_gradients(v * v)
    g = t.gradient(output, v)
print(g)  # upstream 1 clipped to 0.5, times d(v*v)/dv = 4, gives 2
assert float(g) == 2.0

# %%
ad.viz.graph(tr)

# %% [markdown]
# *Picture description:* `v` feeds a `Mul` node (two arrows, `v*v`), which feeds one node, `output`, with the
# function's name `clip_gradients` in grey beside it: the whole custom-gradient function recorded as a single node
# with its own rule. `v` carries the gradient 2.
#
# ## A numerically stable rule
#
# $\log(1 + e^x)$ (softplus) has derivative $\sigma(x) = 1 - 1/(1 + e^x)$. Computed naively, $e^{100}$ overflows
# and the gradient is `nan`. TensorFlow's guide fixes the gradient with a custom rule but keeps `log(1 + exp(x))` for
# the value, which is still `inf` at $x = 100$ (with an overflow warning). Here both are stable: with
# $e = e^{-|x|}$, which never overflows, the value is $\max(x, 0) + \log(1 + e)$ and the derivative is
# $1/(1 + e)$ for $x \ge 0$ and $e/(1 + e)$ below. The rule reuses `e` from the forward pass (a **saved value**).

# %%
def log1pexp_naive(x):
    return ad.math.log(1 + ad.exp(x))


@ad.custom_gradient
def log1pexp(x):
    e = ad.exp(-ad.abs(x))          # at most 1: cannot overflow
    def grad(upstream):
        return upstream * ad.where(x >= 0.0, 1 / (1 + e), e / (1 + e))
    return ad.maximum(x, 0.0) + ad.math.log(1 + e), grad


def derivative(fn, xs):
    x = ad.constant(xs)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    return tape.gradient(y, x).numpy()


with np.errstate(over="ignore", invalid="ignore"):
    naive = derivative(log1pexp_naive, [0.0, 100.0])
with np.errstate(over="raise", invalid="raise"):   # an overflow or a nan would be an error here
    stable = derivative(log1pexp, [0.0, 100.0])
    stable_value = log1pexp(ad.constant([0.0, 100.0])).numpy()
print("naive:", naive, " custom:", stable, " value:", stable_value)
assert np.isnan(naive[1]) and stable.tolist() == [0.5, 1.0]
np.testing.assert_allclose(stable_value, [np.log(2.0), 100.0], rtol=1e-6)

# %%
xs = np.linspace(0.0, 120.0, 121, dtype=np.float32)
with np.errstate(over="ignore", invalid="ignore"):
    d_naive = derivative(log1pexp_naive, xs)
d_stable = derivative(log1pexp, xs)
first_nan = xs[np.isnan(d_naive)][0]
assert 88 < first_nan <= 90 and np.all(np.isfinite(d_stable))   # float32 exp overflows just above 88.7

fig, ax = plt.subplots()
ax.plot(xs, d_stable, label="custom rule")
ax.plot(xs, np.where(np.isnan(d_naive), -0.1, d_naive), label="default rules (nan drawn at -0.1)")
ax.set_xlabel("x"); ax.set_ylabel("d/dx log(1 + exp(x))"); ax.legend(loc="center right");

# %% [markdown]
# *Picture description:* both curves rise to 1 and agree until x is about 89, where float32 `exp(x)` overflows; the
# default curve then drops to the "nan" marker at -0.1 while the custom rule stays at 1.
#
# ## Changing a value, keeping a gradient: straight-through rounding
#
# `round` is flat almost everywhere, so its true slope is 0 (and undefined at the jumps). The tape still gives `None`,
# not 0: TensorFlow's rule for `Round` is registered to send no gradient at all, as for `Floor` and `Ceil`, so the
# path stops there as if nothing were connected. For quantisation one often pretends it is the identity on the way
# back:

# %%
@ad.custom_gradient
def round_straight_through(x):
    def grad(upstream):
        return upstream
    return ad.round(x), grad


x = ad.constant([0.4, 1.6])
with ad.GradientTape(persistent=True) as tape:
    tape.watch(x)
    plain = ad.reduce_sum(ad.round(x) * 3.0)
    st = ad.reduce_sum(round_straight_through(x) * 3.0)
print(tape.gradient(plain, x), tape.gradient(st, x))
assert tape.gradient(plain, x) is None
np.testing.assert_array_equal(tape.gradient(st, x).numpy(), [3.0, 3.0])
del tape

# %% [markdown]
# ## Custom gradients that use variables
#
# If the function reads variables, the rule is called as `grad_fn(upstream, variables=...)` and returns
# `(gradients for the inputs, gradients for the variables)`.

# %%
scale = ad.Variable(3.0, name="scale")


@ad.custom_gradient
def scaled(x):
    def grad_fn(upstream, variables=None):
        return upstream * scale, [ad.reduce_sum(upstream * x)]
    return x * scale, grad_fn


x = ad.constant([1.0, 2.0])
with ad.GradientTape() as tape:
    tape.watch(x)
    y = ad.reduce_sum(scaled(x))
dx, dscale = tape.gradient(y, [x, scale])
print(dx, dscale)
np.testing.assert_array_equal(dx.numpy(), [3.0, 3.0])
assert float(dscale) == 3.0

# %% [markdown]
# ## Registering a rule for an op type
#
# Notebook 3 met a `LookupError`: `adjust_contrast` (op type `AdjustContrastv2`) has no rule. Per channel it
# computes $y = (x - m)\,c + m$ where $m$ is the mean over height and width. Differentiating:
#
# * with respect to the image: $\bar{x} = c\,\bar{y} + (1 - c)\,\operatorname{mean}(\bar{y})$ (the mean term
#   spreads evenly over the pixels);
# * with respect to the contrast factor: $\bar{c} = \sum \bar{y}\,(x - m)$.
#
# (Here $\bar{y}$ is the upstream gradient.) A rule receives the recorded `op` (its `inputs`, `outputs`, `type`) and
# the upstream `grad`, and returns one gradient per input.

# %%
def _adjust_contrast_grad(op, grad):
    images, factor = op.inputs
    mean = ad.reduce_mean(images, axis=[-3, -2], keepdims=True)
    grad_mean = ad.reduce_mean(grad, axis=[-3, -2], keepdims=True)
    return grad * factor + grad_mean * (1.0 - factor), ad.reduce_sum(grad * (images - mean))


# As in TensorFlow, registering a second rule for an op type raises KeyError, so a re-run of this cell checks first
# (ad.extend.has_rule is this package's own; TensorFlow has no public question for it).
if not ad.extend.has_rule("AdjustContrastv2"):
    ad.RegisterGradient("AdjustContrastv2")(_adjust_contrast_grad)


image = ad.Variable([[[0.5, 0.0, 0.0]]])
delta = ad.Variable(0.1)
with ad.GradientTape() as tape:
    new_image = ad.image.adjust_contrast(image, delta)
d_image, d_delta = tape.gradient(new_image, [image, delta])
print(d_image, d_delta)
# one pixel: the mean is the pixel itself, so the output does not depend on the factor at all
np.testing.assert_allclose(d_image.numpy(), [[[1.0, 1.0, 1.0]]])
assert float(d_delta) == 0.0

# %% [markdown]
# Is the rule right? `classroom.check_rule` (this package's own, not TensorFlow) checks every node that used it, with the upstream gradient it really
# received, against finite differences, then the whole computation (through `ad.test.compute_gradient`), at the given
# inputs and at special points (the origin, a random point). It starts the backward pass from random weights between
# 0.5 and 1.5 instead of 1, so in its pictures the target's ∂ is such a weight: a rule that forgets the upstream
# factor cannot pass by luck.

# %%
rng = np.random.default_rng(0)
images = rng.uniform(size=(2, 2, 1))   # a 2×2 image with one channel: small enough to read every number


def contrast_loss(images, factor):
    return ad.reduce_sum(ad.image.adjust_contrast(images, factor) ** 2)


check = classroom.check_rule("AdjustContrastv2", _adjust_contrast_grad, contrast_loss, [images, 0.4])
display(check)
assert check.passed, check.message

# %% [markdown]
# And a wrong rule (forgetting the mean term) is caught, with the node where the numbers diverge marked:

# %%
def forgot_the_mean(op, grad):
    images, factor = op.inputs
    return grad * factor, ad.reduce_sum(grad * images)


wrong = classroom.check_rule("AdjustContrastv2", forgot_the_mean, contrast_loss, [images, 0.4])
display(wrong)
assert not wrong.passed and wrong.divergence.op_type == "AdjustContrastv2"
assert {n.label for n in wrong.graph().model.nodes} >= {"images", "factor"}   # named as in contrast_loss

# %% [markdown]
# *Picture description:* the verdict "Not yet" in vermillion, the message with the numbers, and the graph
# `images → AdjustContrastv2 → Pow → Sum` (with `factor` as the second input of `AdjustContrastv2`). The
# `AdjustContrastv2` node is filled light vermillion with a ✗ and a note with what the rule sent to `images` and the
# right value; the legend says the mark is "where the rule's numbers first differ from the right ones".
#
# `check_rule` installs the rule only while it checks, so the registry keeps the right rule we registered above.
# To declare an op not differentiable (its gradient is `None`, never an error), use `ad.no_gradient("OpType")`.
