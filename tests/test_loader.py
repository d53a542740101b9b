"""Trace.from_json / Trace.load on hostile documents: always TraceFormatError, never a crash or a hang."""
import json

import pytest

import autodiff_viz as ad
from autodiff_viz import events as ev, traces

HEAD = '{"format":"autodiff_viz.trace","version":' + str(ev.VERSION) + ',"events":['


def _watch(**fields):
    e = {"kind": "watch", "seq": 0, "tape": 1, "tensor": 5, "name": None, "variable": False,
         "trainable": False, "auto": False, "value": None, "label": None}
    e.update(fields)
    return e


def _summary(**fields):
    s = {"shape": [2], "dtype": "float32", "size": 2, "min": 1.0, "max": 2.0, "mean": 1.5, "head": [1.0, 2.0]}
    s.update(fields)
    return s


def _op(**fields):
    e = {"kind": "op", "seq": 0, "tape": 1, "node": 1, "op_type": "Mul", "name": "Mul", "scope": "",
         "inputs": [1, 1], "output": 2, "in_shapes": [[], []], "in_dtypes": ["float32", "float32"],
         "in_names": [None, None], "in_values": [None, None], "shape": [], "dtype": "float32", "value": None,
         "attrs": {}, "during": None, "formula": "a · b", "partials": ["b", "a"], "in_labels": [None, None]}
    e.update(fields)
    return e


def _doc(*events):
    return json.dumps({"format": ev.FORMAT, "version": ev.VERSION, "events": list(events)})


def test_the_helpers_build_valid_traces():
    tr = ad.Trace.from_json(_doc(_watch(value=_summary()), _op(seq=1)))
    assert tr.events[0].value.head == (1.0, 2.0) and tr.events[1].inputs == (1, 1)


HOSTILE = {
    "100,000 nested lists": ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    "100,000 nested objects": ('{"a":' * 100_000 + "1" + "}" * 100_000, "nested too deeply"),
    "nested inside the events": (HEAD + "[" * 100_000, "nested too deeply"),
    "id beyond int64": (_doc(_watch(tensor=99999999999999999999999)), r"tensor: integer .* out of range"),
    "id just beyond int64": (_doc(_watch(tape=2 ** 63)), "out of range"),
    "negative id beyond int64": (_doc(_watch(seq=-(2 ** 63) - 1)), "out of range"),
    "input id beyond int64": (_doc(_op(inputs=[1, 2 ** 64])), r"inputs\[1\]: integer .* out of range"),
    "dimension beyond int64": (_doc(_watch(value=_summary(shape=[2 ** 64], size=2 ** 64))), "out of range"),
    "size beyond int64": (_doc(_watch(value=_summary(size=2 ** 70))), "out of range"),
    "negative dimension": (_doc(_watch(value=_summary(shape=[-1, -2], size=2))), "negative"),
    "negative op shape": (_doc(_op(shape=[3, -1])), r"shape\[1\]: dimension -1 is negative"),
    "negative input shape": (_doc(_op(in_shapes=[[], [-4]])), r"in_shapes\[1\]\[0\]: dimension -4"),
    "product wraps in int64": (_doc(_watch(value=_summary(shape=[2 ** 40, 2 ** 40], size=0, min=None, max=None,
                                                          mean=None, head=[]))),
                               "more elements than a 64-bit size can count"),
    "product wraps to the size": (_doc(_watch(value=_summary(shape=[2 ** 32, 2 ** 32, 2], size=0, min=None,
                                                             max=None, mean=None, head=[]))),
                                  "more elements"),
    "op shape too big": (_doc(_op(shape=[2 ** 62, 4])), "more elements"),
    "65 dimensions": (_doc(_op(shape=[1] * 65)), "at most 64 dimensions"),
    "size does not match": (_doc(_watch(value=_summary(size=3))), "does not match shape"),
    "1e400": (HEAD + '{"kind":"watch","seq":0,"tape":1,"tensor":5,"name":null,"variable":false,'
              '"trainable":false,"auto":false,"label":null,"value":{"shape":[],"dtype":"float64","size":1,'
              '"min":1e400,"max":1,"mean":1,"head":[1]}}]}', r"min: number inf is out of range"),
    "-1e400 in a head": (_doc(_watch(value=_summary(head=[1.0, 2.0]))).replace("2.0]", "-1e400]"),
                         r"head\[1\]: number -inf is out of range"),
    "huge integer as a float": (_doc(_watch(value=_summary(mean=10 ** 400))), "out of range of a 64-bit float"),
    "1e400 in attrs": (_doc(_op(attrs={"k": [1, 2]})).replace("[1,2]", "[1,1e999]").replace("[1, 2]", "[1, 1e999]"),
                       r"attrs.k\[1\]: number inf"),
    "NaN literal": (_doc(_watch()).replace('"tensor": 5', '"tensor": NaN'), "NaN is not allowed"),
    "integer of 5000 digits": (_doc(_watch()).replace('"tensor": 5', '"tensor": ' + "9" * 5000), "not valid JSON"),
    "version as a float": (_doc().replace(f'"version": {ev.VERSION}', f'"version": {ev.VERSION}.0'),
                           "unsupported trace version"),
    "version true": (_doc().replace(f'"version": {ev.VERSION}', '"version": true'), "unsupported trace version"),
    "a list, not an object": ("[]", "a trace is a JSON object"),
    "events not a list": (_doc().replace('"events": []', '"events": {}'), "'events' must be a list"),
    "attrs nested too deeply": (_doc(_op(attrs={"k": [[[[[1]]]]]})), "nested too deeply"),
    "empty document": ("", "not valid JSON"),
    "truncated": (_doc(_watch())[:-5], "not valid JSON"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_documents_are_format_errors(name):
    text, message = HOSTILE[name]
    with pytest.raises(ev.TraceFormatError, match=message):
        ad.Trace.from_json(text)
    with pytest.raises(ev.TraceFormatError, match=message):   # the same from bytes
        ad.Trace.from_json(text.encode())


def test_messages_stay_short_whatever_the_document_holds():
    big = "x" * 1_000_000
    for text in (json.dumps({"format": big}),
                 _doc(_watch(kind=big)),
                 _doc(dict(_watch(), **{f"extra{i}": 1 for i in range(1000)})),
                 _doc(_watch(tensor=int("9" * 4000)))):
        with pytest.raises(ev.TraceFormatError) as info:
            ad.Trace.from_json(text)
        assert len(str(info.value)) < 400 and "\n" not in str(info.value)


def test_document_size_is_bounded_before_parsing():
    text = _doc(_watch())
    with pytest.raises(ev.TraceFormatError, match="more than the limit of 10"):
        ad.Trace.from_json(text, max_chars=10)
    assert len(ad.Trace.from_json(text, max_chars=None)) == 1
    assert traces.MAX_JSON_CHARS >= 2 ** 28


def test_wrong_argument_types():
    for value in (None, 12, ["[]"]):
        with pytest.raises(ev.TraceFormatError, match="expected JSON text"):
            ad.Trace.from_json(value)


def test_from_dict_checks_python_data_the_same_way():
    data = json.loads(_doc(_watch()))
    data["events"][0]["tensor"] = 2 ** 80
    with pytest.raises(ev.TraceFormatError, match="out of range"):
        ad.Trace.from_dict(data)
    data["events"][0]["tensor"] = 5
    data["events"][0]["value"] = _summary(mean=float("inf"))
    with pytest.raises(ev.TraceFormatError, match="out of range"):
        ad.Trace.from_dict(data)
    data["events"][0]["value"] = _summary(mean="inf")   # the written form of a non-finite number
    assert ad.Trace.from_dict(data).events[0].value.mean == float("inf")


def test_edge_values_that_are_valid():
    ok = ad.Trace.from_json(_doc(
        _watch(tensor=2 ** 63 - 1, seq=-(2 ** 63)),
        _watch(value=_summary(shape=[0, 2 ** 62, 1], size=0, min=None, max=None, mean=None, head=[])),
        _watch(value=_summary(shape=[2, 2 ** 62 - 1], size=2 ** 63 - 2, head=[1.0] * ev.HEAD)),
        _watch(value=_summary(shape=[1] * 64, size=1, head=[7])),
        _watch(value=_summary(min=2 ** 64 - 1, head=[2 ** 64 - 1, 0])),   # uint64 values are kept exactly
        _op(attrs={"seed": 2 ** 70, "f": 1e308, "s": [[["deep"]]]}),
    ))
    assert ok.events[0].tensor == 2 ** 63 - 1 and ok.events[2].value.size == 2 ** 63 - 2
    assert ok.events[4].value.head[0] == 2 ** 64 - 1


def test_round_trip_of_a_recorded_trace_is_unchanged():
    x = ad.Variable([[1.0, 2.0], [3.0, 4.0]], name="x")
    with ad.trace() as tr:
        with ad.GradientTape() as tape:
            y = ad.reduce_sum(ad.tanh(x) * x)
        tape.gradient(y, x)
    assert ad.Trace.from_json(tr.to_json()).events == tr.events


def test_load_missing_file_and_bad_bytes(tmp_path):
    with pytest.raises(FileNotFoundError):
        ad.Trace.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"format": "\xff\xfe"}')
    with pytest.raises(ev.TraceFormatError, match="not UTF-8 text"):
        ad.Trace.load(bad)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    with pytest.raises(ev.TraceFormatError, match="nested too deeply"):
        ad.Trace.load(deep)
    big = tmp_path / "big.json"
    big.write_text(_doc(_watch()))
    with pytest.raises(ev.TraceFormatError, match="longer than the limit"):
        ad.Trace.load(big, max_chars=20)
    good = tmp_path / "good.json"
    ad.Trace.from_json(_doc(_watch())).save(good)
    assert len(ad.Trace.load(good)) == 1


# ---------------------------------------------------------------------------
# Whatever strings a loaded trace holds, the DOT made from it is valid for Graphviz
# ---------------------------------------------------------------------------
STRANGE = ["a${x}b", "${a}/\"b\"/\udfff", 'q"uote', "q'uote", "\ud800lone", "\udfff", "/lead", "a//b", "trail/",
           "back\\slash", "x\\", "\\N{x} \\G \\E \\T \\L", "a\nb", "<b>x</b>", "\u200b", "a\x07b", ""]


@pytest.mark.parametrize("text", STRANGE, ids=[ascii(s) for s in STRANGE])
def test_loaded_scopes_and_names_make_dot_that_graphviz_parses(text):
    import shutil
    import xml.etree.ElementTree as ET

    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed")
    doc = _doc(_watch(tensor=1, name=text or None, variable=True, trainable=True, auto=True,
                      value=_summary(shape=[], size=1, min=3.0, max=3.0, mean=3.0, head=[3.0])),
               _op(seq=1, scope=text, value=_summary(shape=[], size=1, min=9.0, max=9.0, mean=9.0, head=[9.0])),
               _op(seq=2, node=2, op_type="Sin", name="Sin", scope=text + "/inner", inputs=[2], output=3,
                   in_shapes=[[]], in_dtypes=["float32"], in_names=[None], in_values=[None], in_labels=[None],
                   formula="sin(a)", partials=["cos(a)"]))
    tr = ad.Trace.from_json(doc)
    assert tr.events[1].scope == text   # loaded as it was written
    for collapse in (False, True):
        g = ad.viz.graph(tr, collapse=collapse, names=False)
        svg = g.svg()   # dot ran: a syntax error would be GraphvizFailed
        labels = [t.text or "" for t in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")]
        assert "= 3.0" in labels   # the variable's value
        if not collapse:
            assert "= 9.0" in labels and "Sin" in labels   # the Mul's value, 3 * 3, and the op after it
        elif text.strip("/"):
            assert "2 ops: Mul, Sin" in labels   # both ops folded into their scope's box
