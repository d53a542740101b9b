"""The glossary: every notebook links to it, it defines the terms the course uses without saying what they are,
and the links it holds lead to notebooks that exist."""
import pathlib
import re

import pytest

NB = pathlib.Path(__file__).resolve().parents[1] / "notebooks"
GLOSSARY = NB / "GLOSSARY.md"
SCRIPTS = sorted(NB.glob("[0-9][0-9]_*.py")) + sorted((NB / "solutions").glob("*.py")) + sorted(
    (NB / "exercises").glob("*.py"))
TERMS = ["tensor", "Dense", "relu", "Adam", "epoch", "mini-batch", "ResourceVariable", "EagerTensor", "IdentityN",
         "SelectV2", ":0", "Jacobian", "JVP", "VJP", "topological order", "logits", "broadcasting", "subgradient", "kink",
         "one-hot", "MLP", "sigmoid", "tanh", "saturation", "vanishing gradient", "finite differences", "Hessian"]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.relative_to(NB).as_posix())
def test_every_notebook_links_to_the_glossary_in_its_first_cell(script):
    first = script.read_text(encoding="utf-8").split("# %%")[1]
    link = re.search(r"\[glossary\]\(([^)]+)\)", first)
    assert link, f"{script.name}: its first cell has no link to the glossary"
    assert (script.parent / link.group(1)).resolve() == GLOSSARY


@pytest.mark.parametrize("term", TERMS)
def test_the_glossary_defines_each_term(term):
    entries = re.findall(r"^\* \*\*(.+?)\*\*:", GLOSSARY.read_text(encoding="utf-8"), re.M)
    assert any(term.lower() in e.lower().replace("`", "") for e in entries), f"no entry for {term!r}: {entries}"


def test_the_glossary_links_lead_to_notebooks():
    for target in re.findall(r"\]\(([^)]+)\)", GLOSSARY.read_text(encoding="utf-8")):
        assert (NB / target).with_suffix(".py").is_file(), target
