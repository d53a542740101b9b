"""The one place for the rules that turn user text into labels.

User text is anything a script chooses: variable names, name scopes, titles,
notes passed to ``mark=``, names given to ``animate``.  Before it reaches
Graphviz (DOT), SVG, HTML or matplotlib it goes through here:

1. :func:`clean` makes any object a ``str`` that every format accepts: no NUL
   or other control characters (XML, and so Graphviz's HTML-like labels and
   SVG, rejects them), no lone surrogates (they cannot be written as UTF-8),
   no bidirectional overrides (they would show a name reversed), and line
   breaks of every kind turned into ``"\\n"`` or a space.
2. :func:`shorten` cuts long text with an ellipsis, so one long name cannot
   make a picture unreadable or pass Graphviz's 16,384-character limit on a
   label.
3. One escaper per target: :func:`for_dot_html` (HTML-like labels, where
   backslashes are doubled), :func:`for_dot_string` (quoted DOT strings such
   as tooltips, where a backslash is drawn as a look-alike),
   :func:`for_html` (page text and attributes), :func:`for_mpl` plus
   :data:`MPL_TEXT` (matplotlib text, never parsed as math or TeX).

Limits are counted in characters (code points), not measured widths.
"""
from __future__ import annotations

import html
import textwrap

# Characters per label line.  64 keeps every realistic name whole (Keras-style
# scoped names such as "sequential/dense_1/kernel:0" are under 40 characters),
# while a node box stays under about 5 inches wide at 11 pt, so a graph with a
# long name still fits a slide at a readable scale.
LINE_LIMIT = 64
# Titles run across the whole picture or page, so they may be wider.
TITLE_LIMIT = 120
# Tooltips show on hover only; they may hold more of a long name.
TOOLTIP_LIMIT = 256
# Alternative text describes a whole animation in prose.
ALT_LIMIT = 1000
ELLIPSIS = "…"

# Keyword arguments for every matplotlib Text built from user text: shown as
# typed, never parsed as mathtext ("$\foo$" would raise) nor sent to TeX (when a
# user's rcParams turn text.usetex on).
MPL_TEXT = {"parse_math": False, "usetex": False}

_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
# Bidirectional embeddings, overrides, isolates and marks: a name shows in the
# order it is typed ("\u202e" would otherwise reverse everything after it).
_BIDI = "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def _table() -> dict:
    table = {}
    for c in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]:  # C0, DEL and C1 controls
        table[c] = None
    table[ord("\t")] = " "
    for ch in _LINE_BREAKS:
        table[ord(ch)] = "\n"
    for ch in _BIDI:
        table[ord(ch)] = None
    for c in range(0xD800, 0xE000):  # lone surrogates: not encodable as UTF-8
        table[c] = None
    table[0xFFFE] = table[0xFFFF] = None  # not characters in XML
    return table


_TABLE = _table()


def _as_str(text) -> str:
    """Any object as a plain ``str``, never raising (a broken ``__str__`` falls back to the type's name)."""
    if text is None:
        return ""
    if isinstance(text, str):
        return str.__str__(text)  # a plain copy, whatever a subclass overrides
    if isinstance(text, (bytes, bytearray, memoryview)):
        try:
            return bytes(text).decode("utf-8", "backslashreplace")
        except Exception:  # noqa: BLE001  (a memoryview of another format)
            return "<bytes>"
    for convert in (str, repr):
        try:
            out = convert(text)
        except Exception:  # noqa: BLE001  (user objects may raise anything)
            continue
        if isinstance(out, str):
            return str.__str__(out)
    try:
        return f"<{type(text).__name__}>"
    except Exception:  # noqa: BLE001
        return "<object>"


def clean(text, newlines: bool = False) -> str:
    """``text`` (any object) as a ``str`` every format accepts, with runs of spaces kept.

    Control characters are dropped (tabs become spaces); line breaks become
    spaces, or ``"\\n"`` with ``newlines=True``.  Never raises.

    >>> clean("a\\x00b\\tc\\u202e")
    'ab c'
    >>> clean(b"x\\xff"), clean(None), clean("one\\r\\ntwo", newlines=True)
    ('x\\\\xff', '', 'one\\ntwo')
    """
    s = _as_str(text).replace("\r\n", "\n").translate(_TABLE)
    return s if newlines else s.replace("\n", " ")


def shorten(text, limit: int = LINE_LIMIT, where: str = "middle") -> str:
    """``text`` cut to at most ``limit`` characters, with ``…`` where text was left out.

    ``where="middle"`` (for names) keeps the start and the end: a scoped name
    keeps its outer scope and its own last part ("encoder/…/dense_3/kernel"),
    and two long names that differ only at the end stay distinct.
    ``where="end"`` (for prose: titles, notes, descriptions) keeps the start,
    which is how a sentence reads.  Text that is not a ``str`` is cleaned first.

    >>> shorten("abcdefghij", 7)
    'abc…hij'
    >>> shorten("abcdefghij", 7, where="end")
    'abcdef…'
    >>> shorten("short", 7)
    'short'
    """
    if type(text) is not str:
        text = clean(text)
    limit = int(limit)
    if len(text) <= limit:
        return text
    if limit <= 1:
        return ELLIPSIS if limit == 1 else ""
    keep = limit - 1
    if where == "end":
        return text[:keep].rstrip() + ELLIPSIS
    if where != "middle":
        raise ValueError(f"where must be 'middle' or 'end', not {where!r}")
    head = (keep + 1) // 2
    tail = keep - head
    return text[:head].rstrip() + ELLIPSIS + (text[-tail:].lstrip() if tail else "")


def shorten_words(text, limit: int = 40) -> str:
    """Every whitespace-separated word longer than ``limit`` shortened in the middle.

    For prose that quotes names: the sentence stays, a 20,000-character name
    inside it does not.

    >>> shorten_words("sent 2.0 to " + "n" * 50, 9)
    'sent 2.0 to nnnn…nnnn'
    """
    s = clean(text, newlines=True)
    if len(s) <= limit:
        return s
    return " ".join(shorten(w, limit) if len(w) > limit else w for w in s.split(" "))


def lines(text, limit: int = LINE_LIMIT, max_lines: int = 1, wrap: bool = False, where: str = "middle") -> list:
    """Clean text as at most ``max_lines`` lines of at most ``limit`` characters each.

    With ``max_lines=1`` line breaks become spaces.  Otherwise the text's own
    line breaks are kept (and, with ``wrap=True``, long lines wrap at spaces);
    lines past ``max_lines`` are left out and the last kept one ends in ``…``.

    >>> lines("a long note about x", limit=8, max_lines=2, wrap=True)
    ['a long', 'note…']
    >>> lines("first\\nsecond", max_lines=2)
    ['first', 'second']
    """
    if max_lines <= 1:
        return [shorten(clean(text), limit, where)]
    out = []
    for line in clean(text, newlines=True).split("\n"):
        if wrap and len(line) > limit:
            out.extend(textwrap.wrap(line, limit, break_long_words=True, break_on_hyphens=False) or [""])
        else:
            out.append(shorten(line, limit, where))
    if len(out) > max_lines:
        out = out[:max_lines]
        out[-1] = shorten(out[-1], limit - 1, "end").rstrip(ELLIPSIS) + ELLIPSIS
    return out


def for_dot_html(text, limit: int = LINE_LIMIT, max_lines: int = 1, wrap: bool = False, where: str = "middle",
                 br: str = "<br/>") -> str:
    r"""Text for a Graphviz HTML-like label (``label=<...>``): cleaned, shortened, escaped.

    ``&``, ``<``, ``>`` and quotes become entities.  Each backslash is doubled:
    Graphviz expands ``\N`` (node name), ``\G`` (graph name), ``\L``... in
    label text too, after reading entities, and reads ``\\`` as one
    backslash.  Lines are joined with ``br``.

    >>> print(for_dot_html('<b>"x"</b> & \\G'))
    &lt;b&gt;&quot;x&quot;&lt;/b&gt; &amp; \\G
    >>> for_dot_html("n" * 100, limit=9)
    'nnnn…nnnn'
    """
    return br.join(html.escape(line, quote=True).replace("\\", "\\\\")
                   for line in lines(text, limit, max_lines, wrap, where))


# Stands in for a backslash in quoted DOT strings: Graphviz 2.43 reads escapes in a tooltip
# twice (so no one way of doubling backslashes shows them the same in every version).
BACKSLASH_STAND_IN = "\u29f5"  # REVERSE SOLIDUS OPERATOR, which looks like a backslash


def for_dot_string(text, limit: int = TOOLTIP_LIMIT, where: str = "middle") -> str:
    r"""Text for inside a double-quoted DOT string (``tooltip="..."``), on one line.

    Quotes and markup become entities (Graphviz reads them back).  A backslash
    becomes ``⧵`` (U+29F5): in these strings Graphviz expands ``\N``, ``\G``,
    ``\n``... and a trailing backslash would swallow the closing quote.

    >>> print(for_dot_string('a\\N "b"\\'))
    a⧵N &quot;b&quot;⧵
    """
    return html.escape(shorten(clean(text), limit, where), quote=True).replace("\\", BACKSLASH_STAND_IN)


def for_html(text, limit: int = TITLE_LIMIT, where: str = "end") -> str:
    """Text for an HTML page: element content or a double-quoted attribute value.

    >>> for_html('"><img src=x onerror=alert(1)>')
    '&quot;&gt;&lt;img src=x onerror=alert(1)&gt;'
    """
    return html.escape(shorten(clean(text), limit, where), quote=True)


def for_mpl(text, limit: int = LINE_LIMIT, where: str = "middle", newlines: bool = False) -> str:
    """Text for a matplotlib ``Text`` built with :data:`MPL_TEXT` (so ``$`` needs no escape).

    ``newlines=True`` keeps line breaks and shortens each line.

    >>> for_mpl("$\\\\foo$ \\x00")
    '$\\\\foo$ '
    """
    if newlines:
        return "\n".join(shorten(line, limit, where) for line in clean(text, newlines=True).split("\n"))
    return shorten(clean(text), limit, where)
