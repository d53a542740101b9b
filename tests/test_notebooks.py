"""Every tutorial notebook runs top to bottom in a fresh kernel, then once more in the same kernel; exercises stop
only at their TODO; wrong answers show the checker's verdict and marked graph.

The notebooks assert their own key numbers, so a wrong result fails here.
They are stored without outputs and paired with jupytext percent scripts
(``notebooks/*.py``): the pair must stay in sync.
"""
from __future__ import annotations

import ast
import builtins
import html
import os
import pathlib
import re
import shutil
import sys
import tempfile
import textwrap

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
jupytext = pytest.importorskip("jupytext")

ROOT = pathlib.Path(__file__).resolve().parents[1]
NB = ROOT / "notebooks"
TUTORIALS = sorted(NB.glob("[0-9][0-9]_*.ipynb"))
SOLUTIONS = sorted((NB / "solutions").glob("*.ipynb"))
EXERCISES = sorted((NB / "exercises").glob("*.ipynb"))
ALL = TUTORIALS + SOLUTIONS + EXERCISES
CELL_TIMEOUT = 120  # seconds per cell; whole notebooks take a few seconds
TODO_MARK = "raise NotImplementedError"


def _id(p: pathlib.Path) -> str:
    return str(p.relative_to(NB))


@pytest.fixture(scope="module")
def jupyter_home():
    """Kernels write under HOME (~/.ipython, ~/.local/share/jupyter): keep that in a temporary folder."""
    d = tempfile.mkdtemp(prefix="nbtest-home-")
    old = os.environ.get("HOME")
    os.environ["HOME"] = d
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    yield d
    if old is not None:
        os.environ["HOME"] = old
    shutil.rmtree(d, ignore_errors=True)


def _execute(path: pathlib.Path, workdir: pathlib.Path):
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=CELL_TIMEOUT,
                                     resources={"metadata": {"path": str(workdir)}})
    return nb, client


def _copy_tree(tmp_path) -> pathlib.Path:
    """Run in a copy: notebooks save files (slides, pictures) next to themselves."""
    dst = tmp_path / "notebooks"
    shutil.copytree(NB, dst, ignore=shutil.ignore_patterns("*.py", ".ipynb_checkpoints", "*.gif", "*.html"))
    return dst


def test_there_are_notebooks():
    assert len(TUTORIALS) >= 9 and len(SOLUTIONS) >= 3 and len(EXERCISES) == len(SOLUTIONS)
    assert TUTORIALS[0].name == "00_build_a_tape.ipynb"   # the first hour: build a tape before using one
    assert sorted(p.name for p in EXERCISES) == sorted(p.name for p in SOLUTIONS)


@pytest.mark.parametrize("path", TUTORIALS + SOLUTIONS, ids=_id)
def test_notebook_runs_green_and_again(path, tmp_path, jupyter_home):
    """Top to bottom, then every code cell a second time in the same kernel: a student re-runs cells.

    A cell that relied on a name a later cell changed, or on a seed set once at the top, fails the second pass.
    """
    work = _copy_tree(tmp_path) / path.relative_to(NB)
    nb, client = _execute(work, work.parent)
    with client.setup_kernel():
        for again in (False, True):
            for i, cell in enumerate(nb.cells):
                if cell.cell_type == "code":
                    try:
                        client.execute_cell(cell, i)   # raises CellExecutionError on a failing cell
                    except nbclient.exceptions.CellExecutionError as e:
                        raise AssertionError(f"cell {i} failed on the {'second' if again else 'first'} run:\n{e}")
    assert any(c.get("outputs") for c in nb.cells if c.cell_type == "code")


def _bound_and_read(source: str):
    """Names a cell binds at its top level, and names it reads that it did not bind first (inside its functions too)."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    tree = ast.parse(code)
    bound, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in bound:
            read.add(node.id)
    return bound, read - set(dir(builtins)) - {"display", "get_ipython"}


@pytest.mark.parametrize("path", TUTORIALS + SOLUTIONS, ids=_id)
def test_a_name_read_from_an_earlier_cell_is_bound_in_one_cell_only(path):
    """Re-running any cell after the whole notebook gives what it gave the first time: no later cell rebinds its inputs."""
    cells = [c.source for c in jupytext.read(path.with_suffix(".py")).cells if c.cell_type == "code"]
    names = [_bound_and_read(src) for src in cells]
    clashes = []
    for i, (_, read) in enumerate(names):
        for name in sorted(read):
            binders = [j for j, (bound, _) in enumerate(names) if name in bound]
            if len(binders) > 1:
                clashes.append(f"code cell {i} reads {name!r}, which code cells {binders} all bind")
    assert not clashes, "\n".join(clashes)


@pytest.mark.parametrize("path", EXERCISES, ids=_id)
def test_exercise_stops_only_at_its_todo(path, tmp_path, jupyter_home):
    """An exercise as handed out: every cell before the first TODO runs; the TODO raises NotImplementedError."""
    work = _copy_tree(tmp_path) / path.relative_to(NB)
    nb, client = _execute(work, work.parent)
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    todo = [i for i in code if TODO_MARK in nb.cells[i].source]
    assert todo, "an exercise has at least one TODO cell"
    with pytest.raises(nbclient.exceptions.CellExecutionError) as info:
        client.execute()
    assert info.value.ename == "NotImplementedError", info.value
    ran = [i for i in code if nb.cells[i].get("execution_count")]
    assert ran and max(ran) == todo[0], f"stopped at cell {max(ran)}, the first TODO is cell {todo[0]}"


@pytest.mark.parametrize("path", ALL, ids=_id)
def test_stored_without_outputs_and_in_sync_with_its_script(path):
    nb = nbformat.read(path, as_version=4)
    for c in nb.cells:
        if c.cell_type == "code":
            assert not c.outputs and c.execution_count is None, f"{_id(path)}: clear outputs before committing"
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"  # or JupyterLab asks for a kernel
    script = path.with_suffix(".py")
    assert script.exists(), f"{_id(path)} has no paired script"
    paired = jupytext.read(script)
    assert [(c.cell_type, c.source) for c in nb.cells] == [(c.cell_type, c.source) for c in paired.cells], (
        f"{_id(path)} and {script.name} differ: run `jupytext --sync {_id(path)}`")


@pytest.mark.parametrize("path", TUTORIALS + SOLUTIONS + EXERCISES, ids=_id)
def test_every_notebook_has_a_picture_with_a_description(path):
    text = path.with_suffix(".py").read_text()
    assert any(k in text for k in ("ad.viz.", "plt.", "classroom.check")), "each notebook shows a picture"
    assert "*Picture description:*" in text, "pictures come with a text description"


def test_exercises_are_generated_from_the_solutions():
    """Exercises are the solutions with each solution block replaced by a TODO (notebooks/make_exercises.py)."""
    sys.path.insert(0, str(NB))
    try:
        import make_exercises
    finally:
        sys.path.remove(str(NB))
    assert make_exercises.main(check=True) == 0
    sample = "def f():\n    # BEGIN SOLUTION\n    return 1\n    # END SOLUTION\n"
    assert make_exercises.exercise_text(sample) == 'def f():\n    raise NotImplementedError("TODO: your answer here")\n'


# Wrong answers a student tries first, one per mistake the checker names: (solution, which solution block,
# the wrong code, words the verdict must show).  Each runs through the exercise's own cells.
WRONG_ANSWERS = [
    ("ex1_write_a_rule", 0, "return 1.0 - op.outputs[0] ** 2", "multiply by the upstream gradient `grad`"),
    ("ex1_write_a_rule", 0, "y = op.output[0]\nreturn grad * (1.0 - y * y)",
     "raised AttributeError: no attribute 'output', in tanh_rule, line 2: y = op.output[0]"),
    ("ex1_write_a_rule", 0, "y = op.outputs[0]\nreturn grad * (y * y - 1.0)", "the wrong sign"),
    ("ex1_write_a_rule", 1, "half = 0.5 * ad.cast(ad.equal(a, b), grad.dtype)\n"
     "share = ad.cast(ad.greater(a, b), grad.dtype) + half\nreturn grad * share, grad * (1.0 - share)",
     "but not at a = b = [0.5, -1.0, 2.0] (a tie)"),
    ("ex1_write_a_rule", 1, "a_wins = ad.greater_equal(a, b)\nzeros = ad.zeros_like(grad)\n"
     "return ad.where(a_wins, zeros, grad), ad.where(a_wins, grad, zeros)", "The gradients of a and b are swapped: return them in the order of op.inputs"),
    ("ex1_write_a_rule", 1, "return ad.where(ad.greater_equal(a, b), grad, ad.zeros_like(grad))",
     "returned 1 gradient, but Maximum has 2 inputs (a, b)"),
    ("ex1_write_a_rule", 2, "return g", "its gradient is the sum over the copies: ad.reduce_sum(g, axis=0)"),
    ("ex2_custom_gradient", 0, "return upstream * x / n", "Your rule returns nan at x = 0"),
    ("ex2_custom_gradient", 0, "safe = ad.where(ad.greater(n, 0.0), n, ad.ones_like(n))\n"
     "return ad.where(ad.greater(n, 0.0), upstream * x / safe, upstream * ad.ones_like(x))",
     "is accepted when, for every direction d, g·d is at most the steepest slope"),   # [1, 1]: length √2
    ("ex3_predict_the_gradient", 1, "prediction = [2.0, 4.0]", "For x you predicted 2 numbers, but x has 3 elements"),
    ("ex3_predict_the_gradient", 1, "prediction = np.array([[2.0], [4.0], [-6.0]])",
     "Your prediction for x has shape (3, 1); a gradient has the shape of its input, (3,)"),
    ("ex3_predict_the_gradient", 2, "prediction = [3.0, 2.0, None]", "variable 'b' was created with trainable=False"),
    ("ex3_predict_the_gradient", 2, "prediction = [3.0, None, 8.0]", "the constant marked on the graph moves with it"),
]


def _with_wrong_answer(text: str, block: int, code: str) -> str:
    """The solution script with its ``block``-th solution replaced by ``code`` (at the block's indentation)."""
    sys.path.insert(0, str(NB))
    try:
        import make_exercises
    finally:
        sys.path.remove(str(NB))
    match = list(make_exercises.BLOCK.finditer(text))[block]
    return text[:match.start()] + textwrap.indent(code + "\n", match["indent"]) + text[match.end():]


@pytest.mark.parametrize("name, block, code, words", WRONG_ANSWERS,
                         ids=[f"{w[0][:3]}-{i}" for i, w in enumerate(WRONG_ANSWERS)])
def test_a_wrong_answer_shows_the_marked_graph_and_names_the_mistake(name, block, code, words, tmp_path,
                                                                     jupyter_home):
    """The exercise cell displays the verdict (words and marked graph) before its assert stops the notebook."""
    text = _with_wrong_answer((NB / "solutions" / f"{name}.py").read_text(encoding="utf-8"), block, code)
    nb = jupytext.reads(text, fmt="py:percent")
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=CELL_TIMEOUT,
                                     resources={"metadata": {"path": str(tmp_path)}})
    with pytest.raises(nbclient.exceptions.CellExecutionError) as info:
        client.execute()
    assert info.value.ename == "AssertionError", info.value
    failed = [c for c in nb.cells if c.cell_type == "code" and any(o.get("output_type") == "error"
                                                                   for o in c.get("outputs", []))]
    assert len(failed) == 1 and code.splitlines()[0] in failed[0].source
    shown = "".join(o.get("data", {}).get("text/html", "") for o in failed[0].outputs)
    assert "Not yet." in shown and "<svg" in shown and "✗" in shown, "the verdict and the marked graph, shown first"
    assert html.escape(words) in shown, re.sub(r"<svg.*", "", shown, flags=re.S)[:2000]
