"""The built-in tour: the guides' computations, traced and drawn.

``autodiff-viz tour OUTDIR`` (or :func:`run_tour`) writes one picture per
example.  Each example is a small function that runs the guide's code inside
``ad.trace()`` and returns ``(trace, graph options)``; the pictures in the
README's ``assets/`` folder come from here.
"""
from __future__ import annotations

import pathlib
import warnings

import numpy as np

import autodiff_viz as ad
from autodiff_viz import viz


def square():
    """x*x: two edges into one Mul, dy/dx = 2x = 6."""
    x = ad.constant(3.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        tape.gradient(y, x)
    return viz.graph(tr)


def second_derivative_trace():
    """The trace of nested tapes on x**3 at 3, and the names of its tensors: ``(trace, {"y", "dy_dx"})``."""
    x = ad.Variable(3.0, name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as outer:
            with ad.GradientTape() as inner:
                y = x * x * x
            dy_dx = inner.gradient(y, x)
        outer.gradient(dy_dx, x)
    return tr, {"y": y, "dy_dx": dy_dx}


def second_derivative():
    """Nested tapes: the outer tape records the inner tape's backward pass (d2y/dx2 of x**3 at 3 is 18)."""
    tr, names = second_derivative_trace()
    return viz.graph(tr, names=names)


def matmul_toy():
    """Guide 002: output = input @ weights, loss = squared_difference(y_true, output)."""
    inp = ad.constant([[1.0, 2.0]])
    weights = ad.Variable([[0.25], [0.15]], name="weights")
    y_true = ad.constant(0.75)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            output = ad.linalg.matmul(inp, weights)
            loss = ad.math.squared_difference(y_true, output)
        tape.gradient(loss, weights)
    return viz.graph(tr)


def mlp_step_trace():
    """The trace of a small MLP's training step (seeded): the computation behind both MLP pictures."""
    ad.random.set_seed(0)
    # named, so both pictures show the same scopes (unnamed layers count up: dense, dense_1, dense_2...)
    layers = [ad.keras.layers.Dense(8, activation="relu", name="hidden"), ad.keras.layers.Dense(1, name="output")]
    x = ad.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(6, 2))
    y = ad.constant(np.linspace(0, 1, 6, dtype=np.float32).reshape(6, 1))
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            h = x
            for layer in layers:
                h = layer(h)
            loss = ad.reduce_mean(ad.square(h - y))
        variables = [v for layer in layers for v in layer.trainable_variables]
        tape.gradient(loss, variables)
    return tr


def _mlp_step(collapse):
    return viz.graph(mlp_step_trace(), collapse=collapse)


def mlp_step():
    """A small MLP training step, each Dense layer folded into one box."""
    return _mlp_step(collapse=True)


def mlp_step_expanded():
    """The same step with the layers expanded: every op of the forward pass."""
    return _mlp_step(collapse=False)


def none_not_watched():
    """Guide 003: x1 is not trainable, x2 and x3 are tensors: only x0 gets a gradient."""
    x0 = ad.Variable(3.0, name="x0")
    x1 = ad.Variable(3.0, name="x1", trainable=False)
    x2 = ad.Variable(2.0, name="x2") + 1.0
    with ad.trace():
        with ad.GradientTape(persistent=True) as tape:
            y = (x0**2) + (x1**2) + (x2**2)
    return viz.explain(tape, y, x1)


def none_numpy():
    """Guide 003: a computation that leaves through NumPy."""
    x = ad.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=ad.float32, name="x")
    with ad.trace():
        with ad.GradientTape() as tape:
            x2 = x**2
            y = np.mean(x2, axis=0)
            y = ad.reduce_mean(y, axis=0)
        tape.gradient(y, x)
    return viz.explain(tape, y, x)


def none_integer():
    """Guide 003: gradients through an integer."""
    x = ad.constant(10)
    with ad.trace(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ad.GradientTape() as g:
            g.watch(x)
            y = x * x
        g.gradient(y, x)
    return viz.explain(g, y, x)


def none_state():
    """Guide 003: state blocks gradients (assign_add inside the tape)."""
    x0 = ad.Variable(3.0, name="x0")
    x1 = ad.Variable(0.0, name="x1")
    with ad.trace():
        with ad.GradientTape() as tape:
            x1.assign_add(x0)
            y = x1**2
        tape.gradient(y, x0)
    return viz.explain(tape, y, x0)


def none_stop_recording():
    """stop_recording: the op run inside it is not on the tape."""
    x = ad.constant(2.0)
    with ad.trace():
        with ad.GradientTape() as tape:
            tape.watch(x)
            with tape.stop_recording():
                z = x * x
            y = x + z
        tape.gradient(y, x)
    return viz.explain(tape, y, x)


def none_not_connected():
    """Guide 003: z = y*y does not depend on x."""
    x = ad.Variable(2.0, name="x")
    y = ad.Variable(3.0, name="y")
    with ad.trace():
        with ad.GradientTape() as tape:
            z = y * y
        tape.gradient(z, x)
    return viz.explain(tape, z, x)


def _forward_mode_trace():
    """z = x·y + sin(x) in forward mode, along x (ẋ = 1, ẏ = 0): ż = y + cos(x) = ∂z/∂x."""
    x, y = ad.constant(3.0), ad.constant(2.0)
    with ad.trace() as tr:
        with ad.autodiff.ForwardAccumulator([x, y], [ad.constant(1.0), ad.constant(0.0)]):
            z = x * y + ad.sin(x)
    return tr, {"x": x, "y": y, "z": z}


def forward_mode():
    """Forward mode: every box carries its tangent ẋ beside its value, computed in the same pass."""
    tr, names = _forward_mode_trace()
    return viz.graph(tr, names=names)


def nan_from_log():
    """A NaN gradient traced to its log: -Σ y·log p with p = [0, 0.5] (log 0 = -inf, then 0 · inf)."""
    y = ad.constant([0.0, 1.0])
    p = ad.constant([0.0, 0.5])
    with ad.trace(), np.errstate(divide="ignore", invalid="ignore"):
        with ad.GradientTape() as tape:
            tape.watch(p)
            loss = -ad.reduce_sum(y * ad.math.log(p))
        tape.gradient(loss, p)
    return viz.explain(tape, loss, p)


EXAMPLES = {
    "square": square,
    "second-derivative": second_derivative,
    "matmul-toy": matmul_toy,
    "mlp-step": mlp_step,
    "mlp-step-expanded": mlp_step_expanded,
    "none-not-watched": none_not_watched,
    "none-numpy": none_numpy,
    "none-integer": none_integer,
    "none-state": none_state,
    "none-stop-recording": none_stop_recording,
    "none-not-connected": none_not_connected,
    "forward-mode": forward_mode,
    "nan-from-log": nan_from_log,
}


def run_tour(outdir, formats=("png",), only=None) -> list:
    """Render every example (or those named in ``only``) into ``outdir``; returns the paths written."""
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, make in EXAMPLES.items():
        if only and name not in only:
            continue
        picture = make()
        for fmt in formats:
            path = outdir / f"graph-{name}.{fmt}"
            picture.save(path)
            written.append(path)
    for name, make in ANIMATIONS.items():
        if only and name not in only:
            continue
        path = outdir / f"animation-{name}.gif"
        make().save(path, fps=1.0, dpi=80)
        written.append(path)
    for name, make in STILLS.items():
        if only and name not in only:
            continue
        anim, step = make()
        path = outdir / f"step-{name}.png"
        anim.frame(step, path, dpi=100)
        written.append(path)
    return written


def animation_sum_rule():
    """z = x*y + sin(x): forward, then backward; x is reached twice, so its gradient is a sum (+=)."""
    x, y = ad.constant(3.0), ad.constant(2.0)
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch([x, y])
            z = x * y + ad.sin(x)
        tape.gradient(z, [x, y])
    return viz.animate(tr, names={"x": x, "y": y}, title="z = x·y + sin(x): forward, then backward")


def animation_second_derivative():
    """Nested tapes: the inner gradient's ops are recorded, then differentiated by the outer tape."""
    x = ad.Variable(3.0, name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as outer:
            with ad.GradientTape() as inner:
                y = x * x * x
            dy_dx = inner.gradient(y, x)
        outer.gradient(dy_dx, x)
    return viz.animate(tr, title="Second derivative of x³ at 3: nested tapes")


def animation_forward_mode():
    """Forward mode step by step: the tangent rule with its numbers, the evaluation trace filling in."""
    tr, names = _forward_mode_trace()
    return viz.animate(tr, names=names, title="z = x·y + sin(x) in forward mode, along x")


ANIMATIONS = {
    "sum-rule": animation_sum_rule,
    "second-derivative": animation_second_derivative,
    "forward-mode": animation_forward_mode,
}


def still_jacobian_rows():
    """y = x·Σx at x = [1, 2]: the Jacobian [[4, 1], [2, 5]], one backward pass per row; the player as row 2's
    pass ends (row 1 listed, row 2 summed in the table).  Returns the player and the step to draw."""
    x = ad.constant([1.0, 2.0])
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            s = ad.reduce_sum(x)
            y = x * s
        tape.jacobian(y, x)
    anim = viz.animate(tr, names={"x": x, "s": s, "y": y}, title="The Jacobian of y = x·Σx, one backward pass per row")
    step = max(k for k, st in enumerate(anim.steps) if st["title"].startswith("Backward step") and "row 2 of 2" in st["title"])
    return anim, step


# Single steps of a player, written as step-NAME.png.
STILLS = {
    "jacobian-rows": still_jacobian_rows,
}
