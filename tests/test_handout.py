"""The printable handout: ``Animation.save("steps.pdf")`` writes each step's graph, rule and table on A4 or Letter.

The PDF is read back with pypdf when it is installed, else with the small reader below (matplotlib writes
one content stream a page, its text as UTF-16 strings with TrueType fonts), so the test runs either way.
"""
from __future__ import annotations

import math
import re
import zlib

import numpy as np
import pytest

import autodiff_viz as ad
from autodiff_viz.viz.draw import panel as P

pytest.importorskip("matplotlib")


def _anim():
    """f(a, b) = a·b + a at (2, 3): ∂f/∂a = b + 1 = 4, ∂f/∂b = a = 2."""
    return ad.viz.animate(lambda a, b: a * b + a, 2.0, 3.0, linked=False)


# -- reading a PDF back ------------------------------------------------------------------------------------
def _objects(pdf: bytes) -> dict:
    return {int(m.group(1)): m.group(2) for m in re.finditer(rb"(\d+) 0 obj\s*(.*?)endobj", pdf, re.S)}


def _stream(obj: bytes) -> bytes:
    data = re.search(rb"stream\r?\n(.*?)endstream", obj, re.S).group(1)
    return zlib.decompressobj().decompress(data) if b"/FlateDecode" in obj else data  # what follows the end is left


def _literal_strings(content: bytes):
    """The literal strings ``( ... )`` of a content stream, unescaped (PDF 32000, 7.3.4.2)."""
    i, n = 0, len(content)
    escapes = {ord("n"): b"\n", ord("r"): b"\r", ord("t"): b"\t", ord("b"): b"\b", ord("f"): b"\f"}
    while i < n:
        if content[i] != ord("("):
            i += 1
            continue
        out, depth, i = bytearray(), 1, i + 1
        while i < n and depth:
            c = content[i]
            if c == ord("\\"):
                nxt = content[i + 1]
                if nxt in escapes:
                    out += escapes[nxt]
                    i += 2
                elif ord("0") <= nxt <= ord("7"):
                    digits = re.match(rb"[0-7]{1,3}", content[i + 1:i + 4]).group(0)
                    out.append(int(digits, 8) & 0xFF)
                    i += 1 + len(digits)
                else:
                    out.append(nxt)
                    i += 2
                continue
            depth += c == ord("(")
            depth -= c == ord(")")
            if depth:
                out.append(c)
            i += 1
        yield bytes(out)


def _ref(body: bytes, key: bytes) -> int:
    return int(re.search(rb"/" + key + rb"\s+(\d+)\s+0\s+R", body).group(1))


def _to_unicode(cmap: bytes) -> dict:
    """A ToUnicode CMap's character codes to text (its ``bfchar`` and ``bfrange`` entries)."""
    hexes = rb"<([0-9A-Fa-f]+)>"
    out = {}
    for block in re.findall(rb"beginbfchar(.*?)endbfchar", cmap, re.S):
        for code, text in re.findall(hexes + rb"\s*" + hexes, block):
            out[int(code, 16)] = bytes.fromhex(text.decode()).decode("utf-16-be")
    for block in re.findall(rb"beginbfrange(.*?)endbfrange", cmap, re.S):
        for lo, hi, start, listed in re.findall(hexes + rb"\s*" + hexes + rb"\s*(?:<([0-9A-Fa-f]+)>|\[(.*?)\])", block,
                                                re.S):
            codes = range(int(lo, 16), int(hi, 16) + 1)
            if start:
                out.update((code, chr(int(start, 16) + k)) for k, code in enumerate(codes))
            else:
                texts = [bytes.fromhex(t.decode()).decode("utf-16-be") for t in re.findall(hexes, listed)]
                out.update(zip(codes, texts))
    return out


def _page_texts_by_hand(pdf: bytes) -> list:
    """Each page's text: its content stream's strings, each through its font's ToUnicode map."""
    objs = _objects(pdf)
    texts = []
    for body in objs.values():
        if not re.search(rb"/Type\s*/Page\b(?!s)", body):
            continue
        resources = objs[_ref(body, b"Resources")]
        fonts = dict(re.findall(rb"/(\S+?)\s+(\d+)\s+0\s+R", objs[_ref(resources, b"Font")]))
        maps = {name: _to_unicode(_stream(objs[_ref(objs[int(ref)], b"ToUnicode")])) for name, ref in fonts.items()}
        content = _stream(objs[_ref(body, b"Contents")])
        lines = []
        for block in re.findall(rb"\bBT\b(.*?)\bET\b", content, re.S):
            line, font = [], None
            for m in re.finditer(rb"/(\S+)\s+[\d.]+\s+Tf|\[(.*?)\]\s*TJ|(\(.*?\))\s*Tj", block, re.S):
                if m.group(1):
                    font = maps[m.group(1)]
                    continue
                for raw in _literal_strings(m.group(2) or m.group(3)):
                    line.extend(font.get(int.from_bytes(raw[k:k + 2], "big"), "\ufffd") for k in range(0, len(raw), 2))
            lines.append("".join(line))
        texts.append("\n".join(lines))
    return texts


def page_texts(path) -> list:
    """The text of every page of the PDF at ``path``, in page order."""
    try:
        import pypdf
    except ImportError:
        return _page_texts_by_hand(path.read_bytes())
    return [page.extract_text() for page in pypdf.PdfReader(str(path)).pages]


def page_count(pdf: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page\b(?!s)", pdf))


# -- the tests ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("per_page", [1, 2, 4])
def test_pages_hold_their_steps(tmp_path, per_page):
    anim = _anim()
    n = len(anim)
    path = tmp_path / f"steps{per_page}.pdf"
    assert anim.save(path, per_page=per_page) == str(path)
    pdf = path.read_bytes()
    assert pdf.startswith(b"%PDF-")
    assert page_count(pdf) == math.ceil(n / per_page)
    texts = page_texts(path)
    assert len(texts) == math.ceil(n / per_page)
    flat = [" ".join(t.split()) for t in texts]
    for i, st in enumerate(anim.steps):
        page = flat[i // per_page]
        assert f"Step {i + 1} / {n}" in page
        lines, _ = P.side_text(st)
        for line in lines:  # the rule's sentence, as the panel wraps it
            assert " ".join(line.split()) in page, (i, line, page)
        for other in range(len(flat)):
            if other != i // per_page:
                assert f"Step {i + 1} / {n}:" not in flat[other]


def test_the_gradients_are_printed(tmp_path):
    """The last step's table and results carry the closed-form gradients: ∂(ab + a)/∂a = b + 1, ∂/∂b = a."""
    path = _anim().save(tmp_path / "steps.pdf", paper="letter")
    last = " ".join(page_texts(tmp_path / "steps.pdf")[-1].split())
    assert "∂target/∂a = 4.0" in last and "∂target/∂b = 2.0" in last
    assert re.search(r"\ba 4\.0 = 1\.0 \+ 3\.0", last)
    box = re.search(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", open(path, "rb").read())
    assert (round(float(box.group(1))), round(float(box.group(2)))) == (612, 792)  # Letter, portrait


def test_a4_portrait_is_the_default(tmp_path):
    pdf = _anim().save(tmp_path / "steps.pdf")
    box = re.search(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", open(pdf, "rb").read())
    assert abs(float(box.group(1)) - 595.3) < 1 and abs(float(box.group(2)) - 841.9) < 1


def test_each_step_has_its_graph_picture(tmp_path):
    pdf = (_anim().save(tmp_path / "steps.pdf", per_page=2) and (tmp_path / "steps.pdf").read_bytes())
    images = re.findall(rb"/Subtype\s*/Image", pdf)
    assert len(images) >= len(_anim())


@pytest.mark.parametrize("kwargs, words", [
    ({"per_page": 5}, "per_page=5"), ({"per_page": "2"}, "per_page='2'"), ({"per_page": True}, "per_page=True"),
    ({"paper": "a5"}, "paper='a5'"), ({"background": "blu"}, "background='blu'"),
    ({"background": None}, "background=None"),
])
def test_bad_arguments_say_which(tmp_path, kwargs, words):
    with pytest.raises(ValueError, match=re.escape(words)) as e:
        _anim().save(tmp_path / "steps.pdf", **kwargs)
    assert "Animation.save" in str(e.value)
    assert not (tmp_path / "steps.pdf").exists()


def test_background_colours_the_page(tmp_path):
    """The page's first fill is the background: #FFFFCC is 1 1 0.8 in the PDF's RGB."""
    pdf = (tmp_path / "steps.pdf")
    _anim().save(pdf, background="#FFFFCC")
    objs = _objects(pdf.read_bytes())
    contents = [_stream(objs[int(m.group(1))]) for body in objs.values()
                if re.search(rb"/Type\s*/Page\b(?!s)", body)
                for m in [re.search(rb"/Contents\s+(\d+)\s+0\s+R", body)]]
    first_fill = [re.search(rb"([\d.]+ [\d.]+ [\d.]+) rg", c).group(1) for c in contents]
    assert first_fill == [b"1 1 0.8"] * len(_anim())


def test_greyscale_tells_the_target_from_an_op(tmp_path):
    """On the last frame, printed in grey, the target's border (Add) is darker and thicker than a plain op's
    (Mul): it does not need colour to be told apart."""
    from PIL import Image

    anim = _anim()
    path = tmp_path / "last.png"
    fig = anim.frame(-1, path=path, dpi=100)
    grey = np.asarray(Image.open(path).convert("L"), dtype=float)
    lay = anim.data["layout"]["nodes"]
    ax = fig.axes[0]

    def border(label):
        """Dark pixels across the box's left border, on a line through its middle."""
        node = next(n for n in anim.nodes if n["label"] == label)
        p = lay[node["id"]]
        (x0, y), (xm, _) = ax.transData.transform([(p["x"] - p["w"] / 2, p["y"]), (p["x"], p["y"])])
        row = grey[round(grey.shape[0] - y), max(0, round(x0) - 15):round(x0) + 15]
        return int((row < 200).sum()), float(row.min())

    target, op = border("Add"), border("Mul")
    assert anim.node("Add")["role"] == "target" and anim.node("Mul")["role"] != "target"
    assert target[0] >= op[0] + 2  # a wider border
    assert target[1] <= 160      # dark enough to print


def test_names_are_printed_as_typed(tmp_path):
    """A name that looks like mathtext or markup is printed as typed, never parsed."""
    anim = ad.viz.animate(lambda a, b: a * b, 2.0, 3.0, names=["$\\alpha$", "<b>&"], linked=False)
    path = anim.save(tmp_path / "steps.pdf", per_page=6)
    text = " ".join(page_texts(tmp_path / "steps.pdf")[0].split())
    assert "$\\alpha$" in text and "<b>&" in text
    assert page_count(open(path, "rb").read()) == math.ceil(len(anim) / 6)


@pytest.mark.parametrize("name, kwargs", [("per_page", {"per_page": 2}), ("paper", {"paper": "letter"}),
                                          ("background", {"background": "black"})])
def test_options_for_other_files_are_refused(tmp_path, name, kwargs):
    with pytest.raises(ValueError, match=f"Animation.save: {name}=.* is for .*pdf files, not .html"):
        _anim().save(tmp_path / "steps.html", **kwargs)
