"""The engine's structure: one context module, no import cycles, no module patching another."""
import ast
import pathlib
import threading

import autodiff_viz as ad

PKG = pathlib.Path(ad.__file__).parent
# The engine: everything but the views, the command line and the classroom (which import lazily on purpose).
ENGINE = sorted(p for p in [*PKG.glob("*.py"), *(PKG / "keras").glob("*.py")]
                if p.stem not in ("cli", "classroom", "tour", "nbconvert", "lessons"))


def _module_name(path):
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path):
    """(package modules imported at module level, imports nested in functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    name = _module_name(path)
    package = name if path.stem == "__init__" else name.rsplit(".", 1)[0]
    top, nested = set(), []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        targets = []
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".")
            base = base[:len(base) - node.level + 1]
            mod = ".".join(base + ([node.module] if node.module else []))
            targets = [mod] if node.module else [f"{mod}.{a.name}" for a in node.names]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("autodiff_viz"):
            targets = [node.module]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names if a.name.startswith("autodiff_viz")]
        if not targets:
            continue
        if node.col_offset > 0:
            nested.append((node.lineno, ast.unparse(node)))
        top.update(targets)
    return top, nested


def test_engine_modules_import_each_other_without_cycles_or_late_imports():
    graph = {}
    names = {_module_name(p) for p in ENGINE}
    for p in ENGINE:
        top, nested = _imports(p)
        assert nested == [], f"{p.name} imports inside functions: {nested}"
        graph[_module_name(p)] = {t for t in top if t in names and t != _module_name(p)}
    # The package's __init__ imports everything; cycles are among the others.
    graph.pop("autodiff_viz", None)
    state = {}

    def visit(n, path):
        state[n] = "open"
        for m in graph.get(n, ()):
            if state.get(m) == "open":
                raise AssertionError("import cycle: " + " -> ".join(path + [n, m]))
            if m not in state:
                visit(m, path + [n])
        state[n] = "done"

    for n in graph:
        if n not in state:
            visit(n, [])


def test_no_module_assigns_a_function_of_another():
    # ``_tape.forward_op = ...`` or ``_t._leave = ...`` at module level: one module patching another.
    for p in ENGINE:
        tree = ast.parse(p.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    assert not isinstance(t, ast.Attribute), f"{p.name}:{node.lineno} assigns {ast.unparse(t)}"


def test_the_context_is_the_only_engine_module_holding_thread_state():
    holders = [p.name for p in ENGINE if "threading.local" in p.read_text(encoding="utf-8")]
    assert holders == ["_backend.py", "_context.py"]  # the backend choice is per thread too


def test_two_threads_record_and_trace_apart():
    results = {}
    barrier = threading.Barrier(2)

    def work(name, value, op):
        x = ad.constant(value)
        barrier.wait()
        with ad.trace() as tr:
            for _ in range(200):
                with ad.GradientTape() as tape:
                    tape.watch(x)
                    y = op(x)
                g = tape.gradient(y, x)
        results[name] = (tr, float(g), [r.type for r in tape._ops()])

    a = threading.Thread(target=work, args=("a", 3.0, lambda x: x * x))
    b = threading.Thread(target=work, args=("b", 2.0, ad.sin))
    a.start(), b.start()
    a.join(), b.join()
    tr_a, g_a, ops_a = results["a"]
    tr_b, g_b, ops_b = results["b"]
    assert (g_a, ops_a) == (6.0, ["Mul"])
    assert abs(g_b - float(ad.cos(ad.constant(2.0)))) < 1e-6 and ops_b == ["Sin"]
    assert {e.op_type for e in tr_a.events if e.kind == "op"} == {"Mul"}
    assert {e.op_type for e in tr_b.events if e.kind == "op"} == {"Sin"}
    for tr in (tr_a, tr_b):
        assert [e.seq for e in tr.events] == list(range(len(tr.events)))
        assert sum(e.kind == "gradient_begin" for e in tr.events) == 200


# ---------------------------------------------------------------------------
# The picture wing: rooms by role, imports only run down the layers
# ---------------------------------------------------------------------------
VIZ = PKG / "viz"
ROOMS = ["text", "model", "draw", "run"]  # lowest first; the public faces at viz/'s top come after them all


def _room(module):
    """The layer of a viz module (0 for text/ ... 3 for run/, 4 for the faces), None outside viz."""
    parts = module.split(".")
    if parts[:2] != ["autodiff_viz", "viz"]:
        return None
    return ROOMS.index(parts[2]) if len(parts) > 2 and parts[2] in ROOMS else len(ROOMS)


def test_viz_imports_run_down_the_layers_never_up():
    seen = 0
    for path in sorted(VIZ.rglob("*.py")):
        me = _module_name(path)
        mine = _room(me)
        top, _ = _imports(path)
        for target in top:
            theirs = _room(target)
            if theirs is not None:
                seen += 1
                assert theirs <= mine, f"{me} (layer {mine}) imports {target} (layer {theirs}): up the layers"
    assert seen > 40  # the walk really read the imports


def test_no_view_module_is_a_grab_bag():
    # A module over about 500 lines mixes roles (tables of data are the exception, and there are none now).
    long = {p.relative_to(VIZ).as_posix(): n for p in VIZ.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 520}
    assert long == {}


def test_the_classroom_uses_only_the_public_viz_api_and_its_words():
    for path in sorted((PKG / "classroom").glob("*.py")):
        top, _ = _imports(path)
        used = {t for t in top if _room(t) is not None}
        private = {t for t in used if t != "autodiff_viz.viz" and not t.startswith("autodiff_viz.viz.text")}
        assert private == set(), f"{path.name} imports drawing or model internals: {private}"
