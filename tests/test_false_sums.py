"""No picture writes a sum that is not true: a property test over generated programs.

For each program (a plain gradient, a persistent tape called twice, jacobian,
batch_jacobian, a gradient of a gradient, a Hessian from nested tapes, a
custom gradient, a stop_gradient), the player is drawn and every
``a + b + … = c`` it writes (step lines, results, the gradient table) is
parsed and checked with arithmetic; every table row's total must be the sum of
its terms; the results the player ends with, the Jacobian's rows it lists and
the graph's boxes must equal what the engine returned, which is itself checked
against central finite differences.
"""
import json
import re
import typing

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

import autodiff_viz as ad  # noqa: E402
from autodiff_viz.viz.model.build import build  # noqa: E402
from autodiff_viz.viz.model.story import build_story, states  # noqa: E402

KINDS = ("gradient", "persistent", "jacobian", "batch_jacobian", "nested", "hessian", "custom_gradient",
         "stop_gradient")
UNARY = ("sin", "tanh", "exp")
BINARY = ("mul", "add", "sub")


# ---------------------------------------------------------------------------
# Reading the numbers a picture writes
# ---------------------------------------------------------------------------
_NUMBER = re.compile(r"(?<![\w.₀-₉])-?(?:\d+(?:\.\d+)?(?:e[+-]?\d+)?|nan|inf)(?![\w.×])")
_MEAN = re.compile(r"(\d+(?:×\d+)+) values, mean (-?[\d.e+-]+|nan|inf)")


class Written(typing.NamedTuple):
    """A value as a picture writes it: every number (``array``), or only its shape and mean (a large tensor)."""

    shape: tuple
    mean: float
    array: object = None


def parse_value(text):
    """A value as the player writes it (``2.5``, ``[1.0, -2.0]``, ``2×3 values, mean 0.5``), else None."""
    text = text.strip()
    m = _MEAN.fullmatch(text)
    if m:
        return Written(tuple(int(d) for d in m.group(1).split("×")), float(m.group(2)))
    arr = None
    if _NUMBER.fullmatch(text):
        arr = np.array(float(text))
    elif text.startswith("[") and text.endswith("]"):
        body = re.sub(r"[\[\],\s]", " ", text).split()
        if body and all(_NUMBER.fullmatch(b) for b in body):
            arr = np.array(json.loads(text.replace("nan", "NaN").replace("inf", "Infinity")), dtype=float)
    return None if arr is None else Written(arr.shape, float(np.mean(arr)) if arr.size else 0.0, arr)


def _tokens(line):
    """The line as values, '+', '=', '…' and other text: enough to find every written sum."""
    out, k = [], 0
    while k < len(line):
        c = line[k]
        if c.isspace():
            k += 1
        elif c == "[":
            depth, j = 0, k
            while j < len(line):
                depth += {"[": 1, "]": -1}.get(line[j], 0)
                j += 1
                if depth == 0:
                    break
            v = parse_value(line[k:j])
            out.append(("value", v) if v is not None else ("other", line[k:j]))
            k = j
        elif line.startswith("+=", k):
            out.append(("other", "+="))
            k += 2
        elif c in "+=…":
            out.append((c, c))
            k += 1
        else:
            m = _MEAN.match(line, k) or _NUMBER.match(line, k)
            if m and (k == 0 or not (line[k - 1].isalnum() or line[k - 1] in "._")):
                out.append(("value", parse_value(m.group())))
                k = m.end()
            else:
                out.append(("other", c))
                k += 1
    return out


def written_sums(line):
    """Every ``a + b + … = c`` in a line: (terms, total, partial) with partial when it starts with "… +"."""
    toks = _tokens(line)
    found = []
    for i, (kind, _) in enumerate(toks):
        if kind != "=" or i + 1 >= len(toks) or toks[i + 1][0] != "value":
            continue
        terms, j = [], i - 1
        while j >= 0 and toks[j][0] == "value":
            terms.insert(0, toks[j][1])
            if j >= 1 and toks[j - 1][0] == "+":
                j -= 2
            else:
                j -= 1
                break
        if len(terms) < 2:
            continue
        partial = j >= 0 and toks[j][0] == "…" or (j >= 1 and toks[j][0] == "+" and toks[j - 1][0] == "…")
        found.append((terms, toks[i + 1][1], partial))
    return found


def assert_true_sum(terms, total, where):
    """The sum of the written terms is the written total, to the digits the player writes (4 significant,
    3 for a mean); where a large tensor is written by its mean, the means must add up."""
    assert all(t is not None for t in terms) and total is not None, f"{where}: a term or the total is unreadable"
    if all(t.array is not None for t in terms) and total.array is not None:
        arrays = np.broadcast_arrays(*[t.array for t in terms])
        got = np.sum(arrays, axis=0)
        scale = sum(np.abs(a) for a in arrays) + np.abs(total.array)
        assert np.shape(got) == np.shape(total.array), f"{where}: shapes of the terms and the total differ"
        assert np.all(np.abs(got - total.array) <= 1e-3 * scale + 1e-6), f"false sum in {where}"
        return
    assert all(t.shape == total.shape for t in terms), f"{where}: shapes of the terms and the total differ"
    got = sum(t.mean for t in terms)
    scale = sum(abs(t.mean) for t in terms) + abs(total.mean)
    assert abs(got - total.mean) <= 5e-3 * scale + 1e-6, f"false sum of means in {where}"


def assert_true_box(before, text, where):
    """A box's ``+= a + b → total``: the total it showed before (none: 0) plus the terms is the total."""
    body, total = text.replace("\n", " ")[3:].rsplit(" → ", 1)
    terms = [parse_value(t) for t in body.split(" + ")]
    before = before.replace("\n", " ").rsplit(" → ", 1)[-1]
    if before:
        terms.insert(0, parse_value(before))
    assert_true_sum(terms, parse_value(total), where)


# ---------------------------------------------------------------------------
# The programs
# ---------------------------------------------------------------------------
values = st.lists(st.sampled_from([-1.5, -1.0, -0.5, 0.25, 0.5, 1.0, 1.5, 2.0]), min_size=4, max_size=4)
steps = st.lists(st.tuples(st.sampled_from(UNARY + BINARY + BINARY), st.integers(0, 9), st.integers(0, 9)),
                 min_size=1, max_size=5)


@st.composite
def programs(draw):
    return {"kind": draw(st.sampled_from(KINDS)), "n": draw(st.integers(1, 2)), "x": draw(values),
            "steps": draw(steps), "cut": draw(st.integers(0, 9))}


def body(x, prog, cut=None):
    """The generated chain of ops on ``x``; intermediate values are reused (fan-out: sums of paths)."""
    vals = [x] if cut is None else [x, cut_op(prog["kind"], x)]
    for op, i, j in prog["steps"]:
        a, b = vals[i % len(vals)], vals[j % len(vals)]
        if op in UNARY:
            vals.append(getattr(ad, op)(a * 0.5))
        else:
            vals.append({"mul": a * b, "add": a + b, "sub": a - b}[op])
    return vals[-1] * vals[prog["cut"] % len(vals)]


def cut_op(kind, v):
    if kind == "stop_gradient":
        return ad.stop_gradient(v) + v
    if kind == "custom_gradient":
        return _triple(v)
    return v


@ad.custom_gradient
def _triple(v):
    """Its value is v·v, its gradient (on purpose not the true one) 3·v·upstream: the player must show that."""
    def grad(upstream):
        return upstream * 3.0 * v
    return v * v, grad


def run(prog):
    """Trace the program; returns (trace, [(label, engine result as NumPy)]) in call order."""
    kind, n = prog["kind"], prog["n"]
    data = np.array(prog["x"][:n], dtype=np.float32)
    if kind == "batch_jacobian":
        data = np.array(prog["x"][:2 * n], dtype=np.float32).reshape(2, n) if n * 2 <= 4 else data.reshape(1, n)
    x = ad.constant(data)
    got = []
    with ad.trace() as tr:
        if kind in ("nested", "hessian"):
            with ad.GradientTape() as outer:
                outer.watch(x)
                with ad.GradientTape() as inner:
                    inner.watch(x)
                    y = ad.reduce_sum(body(x, prog))
                g = inner.gradient(y, x)
                got.append(("gradient", g))
                if kind == "nested":
                    got.append(("gradient", outer.gradient(ad.reduce_sum(g), x)))
                else:
                    got.append(("jacobian", outer.jacobian(g, x)))
        else:
            with ad.GradientTape(persistent=kind == "persistent") as tape:
                tape.watch(x)
                out = body(x, prog, cut=prog["cut"])
                y = ad.reduce_sum(out)
            if kind in ("jacobian", "batch_jacobian"):
                got.append((kind, getattr(tape, kind)(out, x)))
            else:
                got.append(("gradient", tape.gradient(y, x)))
                if kind == "persistent":
                    got.append(("gradient", tape.gradient(out, x)))
    return tr, [(m, None if r is None else r.numpy()) for m, r in got]


# ---------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------
def check_player(tr, results, collapse=False):
    story = build_story(tr.events, build(tr.events, subscripts=True, collapse=collapse))
    sums = 0
    done = []
    boxes = None
    for k, s in enumerate(states(story)):
        where = f"step {k} ({s['title']})"
        for i, text in enumerate(s["grads"]):
            if text.startswith("+= ") and (boxes is None or text != boxes[i]):
                sums += 1
                assert_true_box(boxes[i] if boxes else "", text, f"{where}: box {i} {text!r}")
        boxes = s["grads"]
        for line in s["lines"] + s["results"]:
            for terms, total, partial in written_sums(line):
                sums += 1
                if not partial:
                    assert_true_sum(terms, total, f"{where}: {line!r}")
        for row in s["panel"]:
            terms = [parse_value(t) for t in row["terms"]]
            total = parse_value(row["total"])
            assert total is not None and all(t is not None for t in terms), f"{where}: unreadable row {row}"
            assert len(terms) == row["count"], f"{where}: {row['name']} shows {len(terms)} terms of {row['count']}"
            if len(terms) > 1:
                sums += 1
                assert_true_sum(terms, total, f"{where}: table row {row['name']}")
            else:
                assert row["terms"][0] == row["total"], f"{where}: table row {row} has one term and another total"
        if s["phase"] == "done":
            done.append(s)
    assert len(done) == len(results)
    for s, (method, expected) in zip(done, results):
        final = [line for line in s["results"] if " = " in line and "row" not in line.split(" = ")[0]]
        assert len(final) == 1, s["results"]
        shown = final[0].split(" = ", 1)[1]
        if expected is None:
            assert shown == "None"
            continue
        assert_close(shown, expected, s["title"])
        if method != "gradient":  # the rows listed under the table are the Jacobian's rows
            rows = [line.split(" = ", 1)[1] for line in s["results"] if line.startswith("  row ")]
            assert len(rows) == min(expected_rows(method, expected), 6)
            matrix = expected if method == "jacobian" else np.moveaxis(expected, 1, 0)
            for got, want in zip(rows, matrix):
                assert_close(got, want, f"{s['title']} row")
    return sums


def expected_rows(method, result):
    return result.shape[0] if method == "jacobian" else result.shape[1]


def assert_close(text, want, where):
    if text == "0 (not reached)":  # a row no path reached: the engine fills it with zeros
        assert not np.any(want), f"{where}: {text} for {want}"
        return
    value = parse_value(text)
    assert value is not None, f"{where}: cannot read {text!r}"
    if value.array is None:  # a large array is written by its shape and mean
        assert value.shape == np.shape(want), f"{where}: {text} for shape {np.shape(want)}"
        assert abs(value.mean - float(np.mean(want))) <= 5e-3 * (1e-3 + abs(float(np.mean(want)))), where
        return
    # (a tensor of one value is written as its number, [[2.0]] as 2.0)
    assert value.array.size == np.size(want), f"{where}: {text} for shape {np.shape(want)}"
    value = value.array.reshape(np.shape(want))
    assert np.allclose(value, want, rtol=1e-3, atol=1e-3), f"{where}: shows {text}, the engine returned {want}"


def check_graph(tr, results):
    """Each call's boxes: the source's ∂ is what the engine returned (the whole Jacobian for jacobian)."""
    for k, (_method, expected) in enumerate(results):
        g = ad.viz.graph(tr, gradient=k)
        for line in g.source.splitlines():
            for terms, total, partial in written_sums(re.sub(r"<[^>]*>", " ", line)):
                if not partial:
                    assert_true_sum(terms, total, f"graph {k}: {line[:80]}")
        call = g.model.gradients[k]
        (src,) = [n for n in g.model.nodes if n._raw == call.sources[0]]
        key = (call.tape, call.call)
        if expected is None:
            continue
        assert src.grads[key].array() is not None
        np.testing.assert_allclose(src.grads[key].array(), expected, rtol=1e-5, atol=1e-6)


def finite_difference(prog, results):
    """The engine's first result against central differences of the program's own function."""
    kind = prog["kind"]
    if kind in ("custom_gradient", "nested", "hessian", "stop_gradient"):
        return  # their results are not the plain derivative of one function
    n = prog["n"]
    data = np.array(prog["x"][:n], dtype=np.float64)
    if kind == "batch_jacobian":
        data = np.array(prog["x"][:2 * n], dtype=np.float64).reshape(2, n) if n * 2 <= 4 else data.reshape(1, n)

    def f(v):
        out = body(ad.constant(v, dtype=ad.float64), prog, cut=prog["cut"]).numpy()
        return out if kind in ("jacobian", "batch_jacobian") else np.sum(out)
    eps, flat = 1e-6, data.reshape(-1)
    cols = []
    for i in range(flat.size):
        up, down = flat.copy(), flat.copy()
        up[i] += eps
        down[i] -= eps
        cols.append((f(up.reshape(data.shape)) - f(down.reshape(data.shape))) / (2 * eps))
    jac = np.moveaxis(np.array(cols), 0, -1).reshape(np.shape(f(data)) + data.shape)
    if kind == "batch_jacobian":
        jac = np.stack([jac[b, :, b, :] for b in range(data.shape[0])])
    _, got = results[0]
    if got is None:
        assert np.allclose(jac, 0.0)
        return
    np.testing.assert_allclose(got, jac, rtol=1e-3, atol=1e-3)


SEEN = {"programs": 0, "sums": 0, "kinds": set()}


@settings(max_examples=240, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def _one_program(prog):
    tr, results = run(prog)
    finite_difference(prog, results)
    SEEN["sums"] += check_player(tr, results)
    check_graph(tr, results)
    SEEN["programs"] += 1
    SEEN["kinds"].add(prog["kind"])


def test_no_picture_writes_a_false_sum():
    _one_program()
    assert SEEN["programs"] >= 200, SEEN
    assert SEEN["kinds"] == set(KINDS)
    assert SEEN["sums"] >= 200  # the programs do write sums: the check is not vacuous


def test_the_sum_reader_reads_what_the_player_writes():
    line = "x: reached again, += [0.0, 2.0]: [1.0, 0.0] + [1.0, 0.0] + [0.0, 2.0] + [0.0, 2.0] = [0.0, 4.0]"
    (terms, total, partial), = written_sums(line)
    assert len(terms) == 4 and not partial and total.array.tolist() == [0.0, 4.0]
    with pytest.raises(AssertionError, match="false sum"):  # the issue's own false sum is caught
        assert_true_sum(terms, total, "issue 21")
    (terms, total, partial), = written_sums("Mul₁: reached again, += 2.5e-3: … + 1.0 + -2.0 + 2.5e-3 = -0.9975")
    assert partial and [float(t.array) for t in terms] == [1.0, -2.0, 0.0025]
    (terms, total, _), = written_sums("+= 2×2 values, mean 0.5: 2×2 values, mean 0.25 + 2×2 values, mean 0.5 "
                                      "= 2×2 values, mean 0.75")
    assert total == Written((2, 2), 0.75) and [t.mean for t in terms] == [0.25, 0.5]
    assert_true_sum(terms, total, "means")
    with pytest.raises(AssertionError, match="false sum of means"):
        assert_true_sum(terms, Written((2, 2), 0.5), "means")
    assert written_sums("∂(a · b)/∂a = b, sent 3.0 → x") == []


def _box_sums(tr):
    """Every box's ``+= … → total`` with the text the box showed the step before."""
    story = build_story(tr.events, build(tr.events, subscripts=True))
    before, found = None, []
    for s in states(story):
        found += [(before[i] if before else "", t) for i, t in enumerate(s["grads"])
                  if t.startswith("+= ") and (before is None or t != before[i])]
        before = s["grads"]
    return found


def test_a_box_reached_twice_in_one_step_writes_both_terms():
    # d(x³)/dx at 3 is 27: x·x·x's first Mul sends x two terms of 9 in one step, after 9 from the second.
    x = ad.Variable(3.0)
    with ad.trace() as tr:
        with ad.GradientTape() as outer:
            with ad.GradientTape() as inner:
                y = x * x * x
            g = inner.gradient(y, x)
        outer.gradient(g, x)
    sums = _box_sums(tr)
    assert ("9.0", "+= 9.0 + 9.0\n→ 27.0") in sums
    for before, text in sums:
        assert_true_box(before, text, text)


def test_each_jacobian_row_starts_with_empty_boxes():
    x = ad.constant(np.array([-1.5, -1.5], np.float32))
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            tape.watch(x)
            a = x + x
            y = a * a
        tape.jacobian(y, x)  # each row: a's box gets two terms from a · a, then x's two from x + x
    sums = _box_sums(tr)
    assert [before for before, _ in sums] == ["", "", "", ""]  # (row 2's boxes did show row 1's totals)
    for before, text in sums:
        assert_true_box(before, text, text)
