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
# # 8. Backpropagation, step by step
#
# *The words used here are defined in the [glossary](GLOSSARY.md).*
#
# Everything so far came down to two passes over a small graph. Notebook 0 built them by hand and showed the
# step-through once; this notebook slows them down, reads the events behind each step, and exports the step-through
# for slides. The words (node, event, saved values, upstream gradient, rule, accumulate) are those of notebook 0's
# glossary.

# %%
import numpy as np
import autodiff_viz as ad
from autodiff_viz import classroom

classroom.projector_style()

# %% [markdown]
# ## The example
#
# $z = x\,y + \sin x$ at $x = 3$, $y = 2$. By hand: $\partial z/\partial x = y + \cos x = 2 + \cos 3 \approx 1.01$
# and $\partial z/\partial y = x = 3$. Note that $x$ is used twice, so its gradient has two contributions.

# %%
x, y = ad.constant(3.0), ad.constant(2.0)

with ad.trace() as tr:
    with ad.GradientTape() as tape:
        tape.watch([x, y])
        z = x * y + ad.sin(x)
    dz_dx, dz_dy = tape.gradient(z, [x, y])

print(dz_dx.numpy(), dz_dy.numpy())
np.testing.assert_allclose([dz_dx.numpy(), dz_dy.numpy()], [2 + np.cos(3.0), 3.0], rtol=1e-6)

# %% [markdown]
# The trace holds the events, in order. The forward pass records three ops; the backward pass runs three rules,
# newest node first, and accumulates into `x` twice.

# %%
for e in tr.events:
    if e.kind in ("op", "backward_step"):
        print(f"{e.seq:2d} {e.kind:14s} {e.op_type}")
kinds = [e.kind for e in tr.events]
assert kinds.count("op") == 3 and kinds.count("backward_step") == 3
assert [e.op_type for e in tr.events if e.kind == "backward_step"] == ["Add", "Sin", "Mul"]

# %% [markdown]
# ## The step-through widget
#
# Press **step ▶** to advance one event at a time (or **▶ play**, or drag the slider). Each step highlights the
# current node, shows the rule with its numbers, and the table underneath lists the gradients accumulated so far.
# Stepping runs in the browser, so it also works in an exported page with no Python behind it.

# %%
anim = ad.viz.animate(tr, names={"x": x, "y": y})
anim

# %% [markdown]
# *Picture description:* an interactive player. A graph with inputs `x` and `y`, a `Mul` node, a `Sin` node and an
# `Add` node giving the target; buttons (first, back, play, step, last), a slider and a speed menu; a caption for the
# current step, the rule with its numbers, and a table "Gradients accumulated so far" with one row per input.
#
# The storyboard is plain data, so we can check what the widget will show:

# %%
print(len(anim), "steps")
for s in anim.steps:
    print(s["title"])
titles = [s["title"] for s in anim.steps]
assert "Forward 1/3: Mul" in titles and "Backward step 3: Mul" in titles

# %% [markdown]
# One step drawn as a still picture (handy for handouts):

# %%
step = titles.index("Backward step 3: Mul")
fig = anim.frame(step)

# %% [markdown]
# *Picture description:* the same graph frozen at backward step 3: the `Mul` node is highlighted and numbered 3 (the
# order in which rules ran). The text beside it reads: upstream gradient 1.0; ∂(a·b)/∂a = b = 2.0, so 2.0 is sent to
# `x`; ∂(a·b)/∂b = a = 3.0, so 3.0 is sent to `y`; `x` is reached again, −0.99 + 2.0 = 1.01. The table "Gradients
# accumulated so far" lists `x` = 1.01 (= −0.99 + 2.0) and `y` = 3.0.
#
# ## Putting the step-through into slides
#
# `anim.save` writes two files a teacher can take anywhere:
#
# * **HTML**: one self-contained page (script and styles inside, no network, no Python). Open it in a browser
#   during the lecture, or embed it in HTML slides (reveal.js, Quarto, Jupyter slides) with
#   `<iframe src="backprop.html" width="100%" height="600"></iframe>`.
# * **GIF**: one frame per step, which plays in PowerPoint, Keynote, Google Slides or any web page: insert it
#   as a picture. (A PDF shows only its first frame; for a printed handout use `anim.frame(step)` stills.) (Use `fps=` to change the speed; `.mp4` works too for video-capable tools.)

# %%
html_path = anim.save("backprop.html")
gif_path = anim.save("backprop.gif", fps=1.0)

import os
from PIL import Image

assert os.path.getsize(html_path) > 1000 and "<script" in open(html_path, encoding="utf-8").read()
assert Image.open(gif_path).n_frames == len(anim)
print(html_path, gif_path)

# %% [markdown]
# The files sit next to this notebook: [backprop.html](backprop.html) (open it in a new browser tab) and the GIF:
#
# ![Animated GIF: the forward pass records Mul, Sin and Add; the backward pass runs their rules from the target back,
# and x's gradient collects 2 from Mul and cos 3 from Sin, totalling about 1.01, while y receives 3.](backprop.gif)
#
# For a projector, the widget and the exported page use large type and the colour-blind-safe Okabe-Ito colours;
# every node also carries a text label, so nothing depends on colour alone.
#
# ## Your turn
#
# Change the function (try `x * x * y` or `ad.exp(x) / y`), rebuild the animation, and predict each upstream gradient
# before you press **step ▶**. `ad.viz.animate` also takes a function and its arguments directly:

# %%
anim2 = ad.viz.animate(lambda a, b: a * a * b, 2.0, 5.0)
print(len(anim2), "steps;", anim2.steps[-1]["title"])
assert anim2.steps[-1]["title"].startswith("Done")
anim2
