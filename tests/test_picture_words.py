"""Words match pictures: every picture description names only what its picture shows and numbers its cells printed.

The convention (notebooks/README.md, "Picture descriptions"): in a markdown cell that starts with
``*Picture description:*``, a backticked name (```x0```, ```IdentityN```) or path (```x0 → Identity```) is a
label drawn in the picture just above it, and a decimal number (``0.040``) is one that the notebook printed or
drew above it (or a string of the cells since the previous markdown cell: a plot's legend).  Code (```ad.viz.explain(...)```, ```x = [1, 3]```)
is not a label; something the picture does not show is named without backticks ("there is no Add node").
Labels are checked where the picture is a drawn graph (SVG); plots are checked for their numbers only.
"""
from __future__ import annotations

import ast
import html
import keyword
import re

import pytest

import test_notebooks as T

nbclient = pytest.importorskip("nbclient")

DESCRIBED = [p for p in T.TUTORIALS + T.SOLUTIONS]
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
SPAN = re.compile(r"`([^`]+)`")
DECIMAL = re.compile(r"(?<![\w.])-?\d+\.\d+(?:e-?\d+)?")
SVG_TEXT = re.compile(r"<text[^>]*>(.*?)</text>", re.S)


def labels_named(description: str) -> list[list[str]]:
    """The labels a description names: backticked names, and backticked paths ``a → b`` (as lists).

    >>> labels_named("`x0 → Identity` and `Mul`, not `ad.viz.explain(t)` nor `x = [1, 3]`")
    [['x0', 'Identity'], ['Mul']]
    """
    out = []
    for span in SPAN.findall(description):
        parts = [p.strip() for p in span.split("→")]
        if all(NAME.match(p) and not keyword.iskeyword(p) for p in parts):   # `if`, `None`: code
            out.append(parts)
    return out


def _split(text: str) -> set:
    text = html.unescape(re.sub(r"<[^>]+>", "", text)).replace("\xa0", " ").strip()
    return {text} | {p.strip(" ✗⚠") for p in re.split(r"[·=,():]", text)} - {""}


def _svg_graph(svg: str):
    """Graphviz SVG: {node id: its texts}, and the edges as (node id, node id)."""
    nodes, edges = {}, set()
    for kind, title, body in re.findall(r'<g id="[^"]*" class="(node|edge)">\s*<title>(.*?)</title>(.*?)</g>', svg,
                                        re.S):
        title = html.unescape(title)
        if kind == "node":
            nodes[title] = set().union(*[_split(t) for t in SVG_TEXT.findall(body)] or [set()])
        else:
            a, _, b = title.partition("->")
            edges.add((a.split(":")[0], b.split(":")[0]))
    return nodes, edges


def _path_drawn(path, nodes, edges) -> bool:
    """Whether each step ``a → b`` of the path is an arrow from a box showing ``a`` to a box showing ``b``."""
    return all(any(a in nodes.get(u, ()) and b in nodes.get(v, ()) for u, v in edges) for a, b in zip(path, path[1:]))


def numbers_named(description: str) -> list[str]:
    """The decimal numbers in a description (``0.040``, ``-0.99``), with the math between ``$`` left out."""
    prose = re.sub(r"\$[^$]*\$", " ", description)
    return DECIMAL.findall(prose.replace("−", "-"))


def _same_number(word: str, shown: str) -> bool:
    """A number in the words is one shown when it is printed the same, or rounds it (3.142 of 3.14159)."""
    if word.lstrip("-") in shown:
        return True
    value = float(word)
    digits = len(word.split(".")[1].split("e")[0])
    for found in DECIMAL.findall(shown.replace("−", "-")):
        if round(float(found), digits) == value or float(found) == value:
            return True
    return False


def _pictures(outputs) -> tuple[set, list, str]:
    """The texts drawn in SVG outputs (each label and each part of ``name · Op``), their graphs, and all shown."""
    texts, graphs, shown = set(), [], []
    for o in outputs:
        shown.append(o.get("text", ""))
        for data in o.get("data", {}).values():
            data = "".join(data) if isinstance(data, list) else str(data)
            shown.append(data)
            for t in SVG_TEXT.findall(data):
                texts |= _split(t)
            if 'class="node"' in data:   # a graph drawn by Graphviz
                graphs.append(_svg_graph(data))
    return texts, graphs, "\n".join(shown)


def _drawn_strings(source: str) -> str:
    """The string literals of a cell (a plot's title, legend and labels are drawn from them)."""
    try:
        tree = ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))))
    except SyntaxError:
        return ""
    return "\n".join(n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str))


def _mismatches(nb) -> list[str]:
    problems, code, printed = [], [], ""
    for cell in nb.cells:
        if cell.cell_type == "code":
            code.append(cell)
            printed += "\n" + _pictures(cell.get("outputs", []))[2]
            continue
        if cell.source.startswith("*Picture description:*"):
            description, found = cell.source.split("\n\n")[0], []
            texts, graphs, shown = set(), [], printed
            for c in code:
                t, g, _ = _pictures(c.get("outputs", []))
                texts, graphs, shown = texts | t, graphs + g, shown + "\n" + _drawn_strings(c.source)
            for path in labels_named(description) if graphs else ():
                missing = [w for w in path if w not in texts]
                if missing:
                    found.append(f"names `{missing[0]}`, which the picture does not show "
                                 f"(its labels: {', '.join(sorted(texts)[:30])})")
                elif len(path) > 1 and not any(_path_drawn(path, *g) for g in graphs):
                    found.append(f"names the path `{' → '.join(path)}`, which the picture does not draw")
            found += [f"says {n}, which the cells above neither printed nor drew"
                      for n in numbers_named(description) if not _same_number(n, shown)]
            problems += [f"{description[:70]!r}… {p}" for p in found]
        code = []
    return problems


@pytest.mark.parametrize("path", DESCRIBED, ids=T._id)
def test_each_picture_description_names_what_its_picture_shows(path, tmp_path, jupyter_home):
    work = T._copy_tree(tmp_path) / path.relative_to(T.NB)
    nb, client = T._execute(work, work.parent)
    client.execute()
    problems = _mismatches(nb)
    assert not problems, "\n".join(problems)


def test_the_checker_catches_a_wrong_label_and_a_wrong_number():
    """Three contradictions of issue 23 as they were (a name not drawn, a path not drawn, a number not printed)."""
    import nbformat

    def nb(description, svg_texts, printed):
        svg = "<svg>" + "".join(f'<g id="node{i}" class="node"><title>n{i}</title><text>{html.escape(t)}</text></g>'
                                for i, t in enumerate(svg_texts))
        svg += '<g id="edge1" class="edge"><title>n0&#45;&gt;n1</title></g></svg>'
        code = nbformat.v4.new_code_cell("g")
        code.outputs = [nbformat.v4.new_output("display_data", data={"image/svg+xml": svg}),
                        nbformat.v4.new_output("stream", name="stdout", text=printed)]
        return nbformat.v4.new_notebook(cells=[code, nbformat.v4.new_markdown_cell(description)])
    assert _mismatches(nb("*Picture description:* one node named `clip_gradients`", ["output", " · IdentityN"], ""))
    assert _mismatches(nb("*Picture description:* `x0 → Mul`", ["x0", "Identity", "Mul"], ""))
    assert _mismatches(nb("*Picture description:* they differ by 0.06", [], "largest distance 0.040"))
    assert not _mismatches(nb("*Picture description:* they differ by 0.04, `x0 → Identity`", ["x0", "Identity"],
                              "largest distance 0.040"))


jupyter_home = T.jupyter_home
