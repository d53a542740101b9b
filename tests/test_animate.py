"""The step-through storyboard: numbers a step shows equal closed-form values."""
import json
import math

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz import events as ev

pytest.importorskip("matplotlib")


def traced(f, *values):
    xs = [ad.constant(v) for v in values]
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(xs)
            y = f(*xs)
        g = tape.gradient(y, xs)
    return tr, xs, g


def steps_of(anim, phase):
    return [s for s in anim.steps if s["phase"] == phase]


def test_mul_rule_numbers_and_accumulation():
    # z = x*y + sin(x): x is reached by two paths, so its gradient is formed as a sum.
    tr, (x, y), _ = traced(lambda x, y: x * y + ad.sin(x), 3.0, 2.0)
    anim = ad.viz.animate(tr, names={"x": x, "y": y})
    fwd = steps_of(anim, "forward")
    assert [s["title"] for s in fwd] == ["Forward 1/3: Mul", "Forward 2/3: Sin", "Forward 3/3: Add"]
    back = steps_of(anim, "backward")
    # Reverse topological order: Add first, then Sin, then Mul (reverse of recording).
    assert [s["title"] for s in back] == ["Backward step 1: Add", "Backward step 2: Sin", "Backward step 3: Mul"]
    mul = back[2]
    assert mul["numbers"]["upstream"] == 1.0
    assert mul["numbers"]["local"] == [2.0, 3.0]          # d(ab)/da = b, d(ab)/db = a
    assert mul["numbers"]["sent"] == [2.0, 3.0]
    assert "∂(a · b)/∂a = b = 2.0" in mul["lines"]
    sin = back[1]
    assert sin["numbers"]["local"][0] == pytest.approx(math.cos(3.0), rel=1e-6)
    # The panel shows x's gradient formed from two contributions: cos(3) + 2.
    row = next(r for r in mul["panel"] if r["name"] == "x")
    assert len(row["terms"]) == 2 and row["fresh"]
    assert float(row["total"]) == pytest.approx(math.cos(3.0) + 2.0, abs=1e-3)
    xi = [n["label"] for n in anim.nodes].index("x")
    assert mul["grads"][xi].startswith("+= 2.0 →")
    assert any("reached again" in line for line in mul["lines"])
    # Badges number each node by the order its rule ran.
    labels = [n["label"] for n in anim.nodes]
    assert mul["order"][labels.index("Add")] == "1" and mul["order"][labels.index("Mul")] == "3"
    done = anim.steps[-1]
    assert done["phase"] == "done"
    assert done["results"][1] == "∂target/∂y = 3.0"


def test_a_broadcast_input_is_told_that_the_tape_sums_its_gradient():
    x = ad.constant(np.arange(6.0).reshape(2, 3))
    b = ad.constant(np.array([0.5, -1.0, 2.0]))
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch([x, b])
            y = ad.reduce_sum(x * b)
        g = tape.gradient(y, [x, b])
    np.testing.assert_allclose(g[1].numpy(), [3.0, 5.0, 7.0])   # dy/db: the column sums of x
    anim = ad.viz.animate(tr, names={"x": x, "b": b})
    (mul,) = [s for s in steps_of(anim, "backward") if s["title"].endswith(": Mul")]
    assert mul["lines"][-1] == ("b has shape (3,) and the upstream gradient (2, 3): the tape sums over axis 0 to "
                                "give the gradient of b.")
    assert sum("the tape sums over" in line for line in mul["lines"]) == 1   # x has the upstream's shape


def test_x_times_x_has_two_edges_and_sums():
    tr, (x,), g = traced(lambda x: x * x, 3.0)
    anim = ad.viz.animate(tr)
    assert len(anim.data["edges"]) == 2
    step = steps_of(anim, "backward")[0]
    assert step["numbers"]["sent"] == [3.0, 3.0]
    row = step["panel"][-1]
    assert row["terms"] == ["3.0", "3.0"] and row["total"] == "6.0" and float(g[0]) == 6.0


def test_hand_written_events_need_no_engine():
    s = ev.summarize
    events = [
        ev.TapeBegin(0, 1), ev.Watch(1, 1, tensor=10, value=s(2.0)),
        ev.Op(2, 1, node=1, op_type="Square", inputs=(10,), output=11, in_values=(s(2.0),), value=s(4.0),
              formula="a²", partials=("2a",)),
        ev.GradientBegin(3, 1, targets=(11,), sources=(10,)),
        ev.Accumulate(4, 1, tensor=11, node=None, contribution=s(1.0), total=s(1.0)),
        ev.BackwardStep(5, 1, node=1, op_type="Square", step=1, inputs=(10,), output=11, upstream=s(1.0),
                        grads=(s(4.0),)),
        ev.Accumulate(6, 1, tensor=10, node=1, contribution=s(4.0), total=s(4.0)),
        ev.GradientEnd(7, 1, sources=(10,), results=(s(4.0),)),
    ]
    story = ad.viz.animate(events)
    back = [st for st in story.steps if st["phase"] == "backward"][0]
    assert "∂(a²)/∂a = 2a = 4.0" in back["lines"]
    assert story.steps[-1]["results"] == ["∂target/∂x = 4.0"]
    # Without a formula in the events the step still shows what was sent, and invents nothing.
    import dataclasses
    bare = [dataclasses.replace(e, formula="", partials=()) if e.kind == "op" else e for e in events]
    back = [st for st in ad.viz.animate(bare).steps if st["phase"] == "backward"][0]
    assert back["lines"][0].startswith("Square: Square(…)") and "sent 4.0 → x" in back["lines"]


def test_second_derivative_animates_both_tapes():
    x = ad.Variable(3.0, name="x")
    with ad.trace():
        with ad.GradientTape() as t2:
            with ad.GradientTape() as t1:
                y = x * x * x
            dy = t1.gradient(y, x)
        d2 = t2.gradient(dy, x)
    assert float(dy) == 27.0 and float(d2) == 18.0
    anim = ad.viz.animate(t2)  # a tape: found in the last trace, with the tape nested in it
    dones = steps_of(anim, "done")
    assert [d["results"] for d in dones] == [["∂target/∂x = 27.0"], ["∂target/∂x = 18.0"]]
    recorded = [s for s in anim.steps if s["title"].startswith("Recorded while tape T2")]
    assert recorded, "the inner gradient's ops, recorded on the outer tape, appear as steps"
    born = [n for n in anim.nodes if n["role"] == "rule_op"]
    assert born and not anim.steps[0]["alive"][[n["id"] for n in anim.nodes].index(born[0]["id"])]


def test_mlp_training_step():
    ad.random.set_seed(1)
    l1, l2 = ad.keras.layers.Dense(3, activation=ad.nn.relu), ad.keras.layers.Dense(1)
    xb = ad.constant(np.array([[1.0, 2.0], [0.5, -1.0]], np.float32))
    yb = ad.constant([[1.0], [0.0]])
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            loss = ad.reduce_mean(ad.square(l2(l1(xb)) - yb))
        vs = l1.trainable_variables + l2.trainable_variables
        grads = tape.gradient(loss, vs)
    anim = ad.viz.animate(tr)
    labels = [n["label"] for n in anim.nodes]
    assert len(set(labels)) == len(labels)  # two "kernel"s are told apart by their scope
    # The loss box carries the name the code gives it; its op is still the Mean.
    assert [s["title"].split(": ")[1] for s in steps_of(anim, "backward")][:3] == ["loss", "Square", "Sub"]
    assert anim.node("loss")["op"] == "Mean"
    mean_step = steps_of(anim, "backward")[0]
    assert mean_step["lines"][-1].strip().startswith("sent [[0.5], [0.5]]")  # d mean/d a_i = 1/n, n = 2
    done = anim.steps[-1]
    assert float(grads[3].numpy().ravel()[0]) == pytest.approx(0.3612, abs=5e-5)   # the tape's number, 4 digits
    # (layers are numbered per process, as in Keras: the second layer's name depends on the layers made before)
    assert done["results"][-1] == f"∂target/∂{l2.name}/bias = 0.3612"


def mlp_trace():
    """A 2-layer MLP's training step: 9 ranks from the inputs to the loss."""
    ad.random.set_seed(0)
    l1, l2 = ad.keras.layers.Dense(3, activation="tanh"), ad.keras.layers.Dense(1)
    xb = ad.constant(np.array([[1.0, 2.0], [0.5, -1.0], [0.0, 1.5]], np.float32))
    yb = ad.constant(np.array([[1.0], [0.0], [0.5]], np.float32))
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            loss = ad.reduce_mean((l2(l1(xb)) - yb) ** 2)
        tape.gradient(loss, l1.trainable_variables + l2.trainable_variables)
    return tr


def test_rankdir_auto_lays_long_chains_top_to_bottom():
    tr = mlp_trace()
    auto = ad.viz.animate(tr).data["layout"]
    assert auto["rankdir"] == "TB"
    assert auto["height"] > auto["width"]  # a tall column, not a wide strip
    lr = ad.viz.animate(tr, rankdir="LR").data["layout"]
    assert lr["rankdir"] == "LR" and lr["width"] > lr["height"]
    short, _, _ = traced(lambda x, y: x * y + ad.sin(x), 3.0, 2.0)
    assert ad.viz.animate(short).data["layout"]["rankdir"] == "LR"
    assert ad.viz.animate(short, rankdir="tb").data["layout"]["rankdir"] == "TB"
    with pytest.raises(ValueError, match="rankdir"):
        ad.viz.animate(short, rankdir="diagonal")


def test_layered_fallback_top_to_bottom(monkeypatch):
    import shutil
    monkeypatch.setattr(shutil, "which", lambda name: None)
    lay = ad.viz.animate(mlp_trace()).data["layout"]
    assert lay["engine"] == "layered" and lay["rankdir"] == "TB"
    ys = sorted({round(p["y"]) for p in lay["nodes"].values()})
    assert len(ys) == 9  # one row per rank


def test_mlp_frames_keep_layout_and_readable_text(tmp_path):
    from autodiff_viz.viz.draw.frames import K_MIN, FrameRenderer

    for rankdir in ("auto", "LR"):
        anim = ad.viz.animate(mlp_trace(), rankdir=rankdir)
        r = FrameRenderer(anim.data)
        # the frames draw the player's layout: every node box where the layout puts it
        for (n, box, *_rest) in r.nodes:
            p = anim.data["layout"]["nodes"][n["id"]]
            assert box.get_x() + box.get_width() / 2 == pytest.approx(p["x"])
        assert r.k >= K_MIN
        labels = [lab.get_fontsize() for (_n, _box, lab, *_rest) in r.nodes]
        assert min(labels) >= 11  # points: node labels read at the GIF's 100 dpi
        r.draw(len(anim) - 1)
        # the last step's table and results all fit in the frame (nothing cut off at the bottom)
        bottom = r.panel.get_window_extent(r.fig.canvas.get_renderer()).y0
        assert bottom >= 0
        import matplotlib.pyplot as plt
        plt.close(r.fig)


def test_layout_once_and_json_round_trip(monkeypatch):
    tr, _, _ = traced(lambda x: ad.exp(x) * x, 1.0)
    calls = []
    import subprocess
    real = subprocess.run
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append(a) or real(*a, **k))
    anim = ad.viz.animate(tr)
    assert len(calls) <= 1  # one Graphviz run for the whole animation (0 where dot is missing)
    data = json.loads(anim.to_json())
    assert set(data["layout"]["nodes"]) == {n["id"] for n in data["nodes"]}
    assert len(data["steps"]) == len(anim)


def test_layered_fallback_without_graphviz(monkeypatch):
    import shutil
    tr, _, _ = traced(lambda x: ad.exp(x) * x, 1.0)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    anim = ad.viz.animate(tr)
    assert anim.data["layout"]["engine"] == "layered"


def test_function_source_linked_views():
    anim = ad.viz.animate(lambda x, y: x * y + ad.sin(x), 3.0, 2.0)
    lk = anim.data["linked"]
    grid = np.array(lk["grid"])
    labels = [n["label"] for n in anim.nodes]
    k_sin = labels.index("Sin")
    vals = np.array([row[k_sin] for row in lk["val"]])
    dvals = np.array([row[k_sin] for row in lk["dval"]])
    fds = np.array([row[k_sin] for row in lk["fd"]])
    np.testing.assert_allclose(vals, np.sin(grid), atol=1e-12)
    np.testing.assert_allclose(dvals, np.cos(grid), atol=1e-12)      # tape
    np.testing.assert_allclose(fds, np.cos(grid), atol=1e-6)         # finite differences agree
    # Moving the input changes every step's numbers: at the last grid point, x's gradient is y + cos(x).
    last = lk["steps"][-1][-1]
    assert grid[-1] == 6.0 and 2.0 + math.cos(6.0) == pytest.approx(2.96017, abs=1e-5)
    assert last["results"][0] == "∂target/∂x = 2.96"


def test_html_is_self_contained(tmp_path):
    tr, _, _ = traced(lambda x: x * x, 3.0)
    anim = ad.viz.animate(tr)
    page = tmp_path / "a.html"
    anim.save(page)
    text = page.read_text()
    assert "<script src" not in text and "http://" not in text.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in text and 'aria-label="' in text


def test_mimebundle_has_html_fallback():
    tr, _, _ = traced(lambda x: x * x, 3.0)
    bundle = ad.viz.animate(tr)._repr_mimebundle_()
    assert "text/html" in bundle and "text/plain" in bundle


def test_widget_state():
    pytest.importorskip("anywidget")
    tr, _, _ = traced(lambda x: x * x, 3.0)
    anim = ad.viz.animate(tr)
    w = anim.widget()
    assert w.step == 0 and w.data["steps"] == anim.data["steps"]
    assert "export default" in w._esm


def test_gif_one_frame_per_step(tmp_path):
    from PIL import Image

    tr, _, _ = traced(lambda x: x * x, 3.0)
    anim = ad.viz.animate(tr)
    anim.save(tmp_path / "a.gif")
    assert Image.open(tmp_path / "a.gif").n_frames == len(anim)


def test_mp4(tmp_path):
    pytest.importorskip("imageio_ffmpeg")
    tr, _, _ = traced(lambda x: x * x, 3.0)
    anim = ad.viz.animate(tr)
    anim.save(tmp_path / "a.mp4")
    head = (tmp_path / "a.mp4").read_bytes()[:12]
    assert b"ftyp" in head


def test_mp4_without_ffmpeg_says_how(tmp_path, monkeypatch):
    from autodiff_viz.viz.draw import movie

    monkeypatch.setattr(movie, "ffmpeg_path", lambda: None)
    tr, _, _ = traced(lambda x: x * x, 3.0)
    with pytest.raises(RuntimeError, match="imageio-ffmpeg"):
        ad.viz.animate(tr).save(tmp_path / "a.mp4")
