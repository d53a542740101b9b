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
# # 0. Build a tape yourself
#
# *The words used here are defined in the [glossary](GLOSSARY.md).*
#
# Before using the package, build its central idea in about 30 lines of plain Python: a **tape** that writes down
# every operation while the code runs forward, and a loop that walks that record **backwards** to compute gradients.
# Then compare your numbers, your graph and your backward pass with `autodiff_viz`'s: they are the same, which is
# the point. Everything in the later notebooks is this idea, with tensors instead of single numbers.
#
# ## Words used in every notebook
#
# * **gradient**: how much a number (the **target**, say a loss) changes when another (a **source**, say a weight)
#   is nudged: $\partial\,\text{target}/\partial\,\text{source}$.
# * **tape**: the record of the operations that ran, in order. A tape **watches** the sources: it records the
#   operations that use them (or use results computed from them).
# * **node**: one recorded operation, drawn as a box; its output is a value (a tensor, later).
# * **saved values**: the inputs or outputs a node keeps because its rule needs them.
# * **upstream gradient**: $\partial\,\text{target}/\partial\,\text{output}$ of a node, arriving from the target's side.
# * **rule**: a node's local derivative; it turns the upstream gradient into one gradient per input:
#   upstream × $\partial\,\text{output}/\partial\,\text{input}$. For `Mul` ($a \cdot b$): send $\bar{u}\,b$ to
#   $a$ and $\bar{u}\,a$ to $b$ ($\bar{u}$ is the upstream gradient). For `Sin`: send $\bar{u}\cos a$.
# * **accumulate**: when a value feeds several nodes, the gradients it receives from each are **added** (`+=`).
# * **event**: one thing the package's tape did (watch a value, record an op, run a rule, add to a gradient), kept
#   by `ad.trace()` as a plain record; every picture is drawn from events.
#
# ## A tape in 30 lines
#
# A `Value` is a number that knows its tape. Each operation computes its result and appends one record to the tape:
# the output, and for each input the **local derivative** $\partial\,\text{output}/\partial\,\text{input}$ at the
# current numbers (these are the saved values). `gradient` starts with 1 at the target and walks the records from
# the newest to the oldest, sending upstream × local derivative to each input.

# %%
import math

import numpy as np
import autodiff_viz as ad
from autodiff_viz import classroom, events

classroom.projector_style()   # this package's own (not TensorFlow): large fonts for a projector


class Tape:
    def __init__(self):
        self.records = []   # (output, [(input, local derivative), ...], op name), in the order they ran


class Value:
    def __init__(self, value, tape):
        self.value, self.tape = float(value), tape

    def record(self, value, parts, op):
        out = Value(value, self.tape)
        self.tape.records.append((out, parts, op))
        return out

    def __add__(self, other):   # d(a + b)/da = 1, d(a + b)/db = 1
        return self.record(self.value + other.value, [(self, 1.0), (other, 1.0)], "Add")

    def __mul__(self, other):   # d(a b)/da = b, d(a b)/db = a
        return self.record(self.value * other.value, [(self, other.value), (other, self.value)], "Mul")


def sin(a):                     # d sin(a)/da = cos(a)
    return a.record(math.sin(a.value), [(a, math.cos(a.value))], "Sin")


def gradient(tape, target, sources):
    grads = {target: 1.0}                                  # d target / d target = 1
    for out, parts, op in reversed(tape.records):          # newest record first
        if out not in grads:
            continue                                       # this node does not lead to the target
        upstream = grads[out]
        for inp, local in parts:                           # the rule: upstream × local derivative
            grads[inp] = grads.get(inp, 0.0) + upstream * local   # += : a shared input collects every path
    return [grads.get(s) for s in sources]


# %% [markdown]
# Try it on $z = x\,y + \sin x$ at $x = 3$, $y = 2$. By hand: $\partial z/\partial x = y + \cos x = 2 + \cos 3
# \approx 1.01$ and $\partial z/\partial y = x = 3$. `x` is used twice (by `Mul` and by `Sin`), so its gradient has
# two contributions, added up by the `+=`.

# %%
my_tape = Tape()
x, y = Value(3.0, my_tape), Value(2.0, my_tape)
z = x * y + sin(x)
mine = gradient(my_tape, z, [x, y])
print("records:", [op for _, _, op in my_tape.records])
print("dz/dx, dz/dy =", mine)
assert math.isclose(mine[0], 2 + math.cos(3.0)) and mine[1] == 3.0

# %% [markdown]
# ## Why `+=` and not `=`
#
# With `=`, each contribution overwrites the one before, and `x` keeps only the last path the loop visited (`Mul`,
# which sends $y = 2$): the `Sin` path's $\cos 3 \approx -0.99$ is lost.

# %%
def gradient_forgetful(tape, target, sources):
    grads = {target: 1.0}
    for out, parts, op in reversed(tape.records):
        if out in grads:
            for inp, local in parts:
                grads[inp] = grads[out] * local            # '=' : the earlier contribution is overwritten
    return [grads.get(s) for s in sources]


forgetful = gradient_forgetful(my_tape, z, [x, y])
print("with '=':", forgetful)
assert forgetful[0] == 2.0 and not math.isclose(forgetful[0], mine[0])

# %% [markdown]
# ## The same computation with the package
#
# `ad.GradientTape` is this tape for tensors, with TensorFlow's API (`tf.GradientTape`). `tape.watch` says which
# values are sources; `ad.trace()` keeps the **events**: one `op` event per record, one `backward_step` per rule run,
# one `accumulate` per `+=`. `ad.trace()`, its events and the pictures drawn from them (`ad.viz`) are this
# package's own, not TensorFlow: notebook 1 lists which parts are which.

# %%
x_ad, y_ad = ad.constant(3.0), ad.constant(2.0)
with ad.trace() as trace_ad:
    with ad.GradientTape() as tape_ad:
        tape_ad.watch([x_ad, y_ad])
        z_ad = x_ad * y_ad + ad.sin(x_ad)
    theirs = tape_ad.gradient(z_ad, [x_ad, y_ad])
print("package:", [float(g) for g in theirs], " yours:", mine)
np.testing.assert_allclose([float(g) for g in theirs], mine, rtol=1e-6)   # float32 against your float64

recorded = [e.op_type for e in trace_ad.events if e.kind == "op"]
rules_run = [e.op_type for e in trace_ad.events if e.kind == "backward_step"]
print("recorded:", recorded, " rules, in the order they ran:", rules_run)
assert recorded == [op for _, _, op in my_tape.records] == ["Mul", "Sin", "Add"]
assert rules_run == [op for _, _, op in reversed(my_tape.records)]          # newest first, as in your loop
added_to_x = [e for e in trace_ad.events if e.kind == "accumulate" and e.tensor == x_ad._id]
assert len(added_to_x) == 2                                                  # x's two contributions: your +=

# %% [markdown]
# ## Your tape, drawn by the package
#
# The package draws pictures from events alone (`ad.viz.graph`, this package's own), so your records can be drawn too: each record becomes an `op`
# event, and the sources become `watch` events.

# %%
def as_events(tape, sources):
    ids = {}

    def tid(v):
        return ids.setdefault(v, len(ids) + 1)

    evs = [events.TapeBegin(0, 1)]
    for s in sources:
        evs.append(events.Watch(len(evs), 1, tensor=tid(s), value=events.summarize(s.value)))
    for k, (out, parts, op) in enumerate(tape.records):
        evs.append(events.Op(len(evs), 1, node=k, op_type=op, inputs=tuple(tid(i) for i, _ in parts),
                             output=tid(out), dtype="float64", value=events.summarize(out.value)))
    return evs, ids


my_events, my_ids = as_events(my_tape, [x, y])
yours = ad.viz.graph(my_events, title="your tape", names={my_ids[x]: "x", my_ids[y]: "y", my_ids[z]: "z"})
package = ad.viz.graph(trace_ad, title="the package's tape", names={"x": x_ad, "y": y_ad, "z": z_ad})
assert sorted(n.label for n in yours.model.nodes) == sorted(n.label for n in package.model.nodes)
yours

# %%
package

# %% [markdown]
# *Picture description:* two graphs with the same shape. Sources `x` (3.0) and `y` (2.0) feed `Mul` (6.0); `x` also
# feeds `Sin` (0.1411); `Mul` and `Sin` feed the `Add` node `z` (6.141). The first graph, titled "your tape", shows
# only values. The second, titled "the package's tape", also writes gradients after `∂`: 1.01 in `x`'s box, made of
# the 2.0 and −0.99 written on its two arrows (from `Mul` and from `Sin`), and 3.0 in `y`'s box, because its trace
# also recorded the backward pass.
#
# ## Watch the backward pass step by step
#
# The step-through replays the events: first the forward pass op by op, then the rules from the target back, with
# the `+=` into `x` shown in a side table. Press **step ▶** (or **▶ play**, or drag the slider).

# %%
steps = ad.viz.animate(trace_ad, names={"x": x_ad, "y": y_ad, "z": z_ad})
titles = [s["title"] for s in steps.steps]
backward = [t for t in titles if t.startswith("Backward step")]
assert len(backward) == 3 and backward[1].endswith("Sin") and backward[2].endswith("Mul")   # z's Add, Sin, Mul
panel = steps.steps[titles.index(backward[2])]["panel"]     # the side table after the last rule
x_row = next(row for row in panel if row["name"] == "x")
assert x_row["terms"] == ["-0.99", "2.0"] and x_row["total"] == "1.01"
steps

# %% [markdown]
# *Picture description:* an interactive player over the same graph, with buttons (first, back, play, step, last), a
# slider and a speed menu. Its steps go forward through `Mul`, `Sin` and `Add`, then backward through `Add`, `Sin`
# and `Mul`, in the order your loop used; a table "Gradients accumulated so far" shows `x` receiving −0.99 from `Sin`
# and then 2.0 from `Mul`, 1.01 in total, and `y` receiving 3.0.
#
# ## Your turn
#
# Add an operation to your tape, then check it against the package. Here is `exp` ($\frac{d}{da} e^a = e^a$, so the
# rule reuses the output as its saved value); try `__sub__` or `__truediv__` the same way.

# %%
def exp(a):
    e = math.exp(a.value)
    return a.record(e, [(a, e)], "Exp")


turn_tape = Tape()
u, v = Value(0.5, turn_tape), Value(2.0, turn_tape)
w = exp(u * v) * u
mine_exp = gradient(turn_tape, w, [u, v])

u_ad, v_ad = ad.constant(0.5), ad.constant(2.0)
with ad.GradientTape() as turn_ad:
    turn_ad.watch([u_ad, v_ad])
    w_ad = ad.exp(u_ad * v_ad) * u_ad
theirs_exp = [float(g) for g in turn_ad.gradient(w_ad, [u_ad, v_ad])]
print("yours:", mine_exp, " package:", theirs_exp)
# by hand: d/du = e^{uv} (v u + 1) = 2e, d/dv = e^{uv} u² = e/4
np.testing.assert_allclose(mine_exp, [2 * math.e, math.e / 4], rtol=1e-12)
np.testing.assert_allclose(theirs_exp, mine_exp, rtol=1e-6)

# %% [markdown]
# ## What to remember
#
# * Forward, the tape records each operation with what its rule will need.
# * Backward, one loop from the newest record to the oldest: each rule multiplies the upstream gradient by its local
#   derivative and **adds** the result to each input's gradient.
# * The package's `GradientTape` does exactly this for tensors; notebook 1 starts using it, and notebook 8 comes
#   back to the step-through for slides.
