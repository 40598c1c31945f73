"""Provenance can be followed from the package alone: every ``source:`` note of the shipped catalogs
and every source or help text the code declares cites bibliography keys (``[yang-fast20] Fig. 4``),
names an assumption, or points at a shipped page or catalog file; nothing cites the unshipped
reading notes, the design specification by section or an issue number; every cited key is in the
shipped bibliography, and every entry there carries authors, title, venue, year and a DOI or URL."""

from __future__ import annotations

import ast
import re
from importlib import resources
from pathlib import Path

import pytest
import yaml

import cxlsim
from cxlsim.config.catalog import list_presets, shipped_root
from cxlsim.config.sources import (
    REQUIRED_FIELDS,
    _parse,
    bibliography,
    citation_problems,
    cited_keys,
    references_for,
)
from cxlsim.devices.registry import load_preset
from cxlsim.errors import ConfigError

CODE = Path(cxlsim.__file__).parent
#: a note that cites no key is still followable when it names an assumption or points at a shipped
#: page, a shipped catalog file, another preset or another parameter of the same file ("as x_ns")
FOLLOWABLE = re.compile(
    r"\bassumption\b|\bcalibrated\b|\bdocs/\S+|\b(?:configs|devices|workloads)/\S+\.(?:yaml|csv)"
    r"|^as [a-z][A-Za-z0-9_]*|, as [a-z][a-z0-9]*_[A-Za-z0-9_]+")


def _notes(doc, path=""):
    """(key path, text) of every ``source`` and ``figure`` string in a parsed YAML document."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k in ("source", "figure") and isinstance(v, str):
                yield f"{path}.{k}", v
            else:
                yield from _notes(v, f"{path}.{k}")
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _notes(v, f"{path}[{i}]")


def _shipped_yaml() -> list[Path]:
    return sorted(p for kind in ("devices", "configs", "workloads") for p in shipped_root(kind).rglob("*.yaml"))


def test_bibliography_ships_as_package_data_and_is_complete():
    res = resources.files("cxlsim.catalogs") / "sources.yaml"
    assert res.is_file()
    raw = yaml.safe_load(res.read_text(encoding="utf-8"))["sources"]
    bib = bibliography()
    assert set(bib) == set(raw) and len(bib) > 50
    for key, entry in raw.items():
        for field in REQUIRED_FIELDS:
            assert str(entry.get(field) or "").strip(), f"{key} lacks {field}"
        assert entry.get("doi") or entry.get("url"), f"{key} has neither a DOI nor a URL"
    # the keys later presets will cite (DDR5-4800, the Xeon Gold 6430 host, Sun et al.'s apparatus)
    assert {"sun-micro23", "jedec-ddr5", "intel-xeon-gold-6430"} <= set(bib)


@pytest.mark.parametrize("field", [*REQUIRED_FIELDS, "doi"])
def test_an_entry_without_a_required_field_is_refused(field):
    entry = {"authors": ["A"], "title": "T", "venue": "V", "year": 2020, "doi": "10.1/x"}
    del entry[field]
    with pytest.raises(ConfigError, match="sources.k"):
        _parse({"sources": {"k": entry}}, "sources.yaml")


@pytest.mark.parametrize("note, problem", [
    ("OptaneStudy (reference/devices.md, H)", "does not ship"),
    ("rows as in shared/reference/workloads.md", "does not ship"),
    ("SPEC §4: ~40 GB of tables", "specification"),
    ("decision (issue 33)", "issue number"),
    ("midpoint (devices.md, M)", "reading note"),
    ("§9: 26 tables", "section sign"),
    ("[no-such-key] Fig. 1", "not in the bibliography"),
])
def test_citation_problems_name_what_cannot_be_followed(note, problem):
    assert any(problem in p for p in citation_problems(note)), citation_problems(note)


def test_citation_problems_accept_keys_sections_and_kind_tags():
    note = "[yang-fast20] Fig. 4 and [yang-fast20] §5; [c2sight] [S]; docs/design.md#pmem (H)"
    assert citation_problems(note) == []
    assert cited_keys(note) == ["yang-fast20", "c2sight"]


def test_every_shipped_yaml_cites_only_shipped_things():
    """Raw text (comments and descriptions included) and every parsed source/figure note."""
    raw = re.compile(r"\breference/|\bshared/|\bSPEC\b|\b[Ii]ssues? #?\d+|(?<![\w/])(?:devices|measurements|"
                     r"cxl-measurements|strategies|workloads)\.md")
    bad = []
    for path in _shipped_yaml():
        text = path.read_text(encoding="utf-8")
        bad += [f"{path.name}:{i}: {line.strip()[:100]}" for i, line in enumerate(text.splitlines(), 1)
                if raw.search(line)]
        bad += [f"{path.name}{where}: {problems}" for where, note in _notes(yaml.safe_load(text))
                if (problems := citation_problems(note))]
    assert not bad, "\n".join(bad)


def test_every_shipped_source_note_is_followable():
    """A key, a named assumption, or a shipped page/file/preset/parameter (FOLLOWABLE)."""
    presets = set(list_presets())
    bad = []
    for path in _shipped_yaml():
        for where, note in _notes(yaml.safe_load(path.read_text(encoding="utf-8"))):
            if where.endswith(".figure") or cited_keys(note) or FOLLOWABLE.search(note):
                continue
            if any(name in note for name in presets):
                continue
            bad.append(f"{path.relative_to(path.parents[1])}{where}: {note[:90]}")
    assert not bad, "\n".join(bad)


def test_code_declared_sources_and_help_cite_only_shipped_things():
    """Every resolved preset's sources (code-declared defaults included), the platform study's
    assumption texts, and every string literal of the package that is not a docstring."""
    from cxlsim.studies.platform_study.settings import ASSUMPTIONS

    notes = []
    for name in list_presets():
        pre = load_preset(name)
        notes += [(f"{name}:{k}", s) for k, s in pre.params.sources.items()]
        notes += [(f"{name}:emulates", pre.emulates_source)]
    notes += [(f"platform study {a.name}", a.what) for a in ASSUMPTIONS]
    pattern = re.compile(r"\breference/|\bshared/|SPEC §|\bissues? #?\d+|(?<![\w/])(?:devices|measurements|"
                         r"cxl-measurements|strategies|workloads|trainingcxl-paper-excerpt)\.md")
    for path in sorted(CODE.rglob("*.py")):
        if path.name == "sources.py" and path.parent.name == "config":
            continue  # the rules themselves
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        notes += [(f"{path.relative_to(CODE.parent)}:{n.lineno}", n.value) for n in ast.walk(tree)
                  if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings
                  and pattern.search(n.value)]
    bad = [f"{where}: {problems}" for where, note in notes if (problems := citation_problems(note))]
    assert not bad, "\n".join(bad)


def test_devices_show_prints_the_references_its_sources_cite(capsys):
    from cxlsim.cli import main

    assert main(["devices", "show", "pmem/optane-100"]) == 0
    text = capsys.readouterr().out
    head, refs = text.split("\nreferences:\n")
    assert "[yang-fast20] Jian Yang" in refs and "FAST 2020, 2020" in refs
    assert "https://www.usenix.org/conference/fast20/presentation/yang" in refs
    # every key the table cites is printed, once
    for key in {k for line in head.splitlines() for k in cited_keys(line)}:
        assert refs.count(f"  [{key}] ") == 1, key


def test_devices_show_json_lists_references(capsys):
    import json

    from cxlsim.cli import main

    assert main(["devices", "show", "dram/ddr4-2666", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    keys = [r["key"] for r in data["references"]]
    assert keys[:2] == ["kwon-micro23", "yang-fast20"] and "jedec-ddr4" in keys
    ref = data["references"][keys.index("jedec-ddr4")]
    assert set(ref) >= {"authors", "title", "venue", "year", "doi", "url", "citation"}
    assert ref["year"] == "2012"


def test_references_follow_first_citation_and_skip_unknown_keys():
    refs = references_for(["[jedec-ddr5] and [unknown-key]", "[sun-micro23]; [jedec-ddr5] again"])
    assert [r.key for r in refs] == ["jedec-ddr5", "sun-micro23"]



#: What no comment, docstring, page or catalog note may cite, since a reader of the package cannot
#: follow it: a project issue number, the design specification by section, an unshipped reading
#: note or style guide (the design rules are docs/design.md; publications are bibliography keys).
UNSHIPPED_CITATION = re.compile(
    r"\b[Ii]ssues? #?\d+|\bSPEC\s*§|\bSPEC \d|\breference/|\bshared/|\bSTYLE\s*§?\s*\d"
    r"|(?<![\w/])(?<!\]\()(?:devices|measurements|cxl-measurements|strategies|workloads|"
    r"trainingcxl-paper-excerpt)\.md")
ROOT = CODE.parent
#: the modules whose docstrings are the commands' --help descriptions (held by their own test)
CLI = CODE / "cli"


def _docstrings_and_comments(path: Path):
    """(line, text) of every docstring and comment of one Python file."""
    import io
    import tokenize

    src = path.read_text(encoding="utf-8")
    for n in ast.walk(ast.parse(src)):
        if (isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
                and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)
                and isinstance(n.body[0].value.value, str)):
            if not (isinstance(n, ast.Module) and path.parent == CLI):
                yield n.body[0].lineno, n.body[0].value.value
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string


@pytest.mark.parametrize("text, cites", [
    ("# added in issue 44", True), ("(Issue 32 item 9)", True), ("issues #12 and #13", True),
    ("relaxed lookup (SPEC §3.3)", True), ("SPEC 1.4's systems", True), ("STYLE §8", True),
    ("(reference/strategies.md)", True), ("(strategies.md §2)", True), ("(workloads.md)", True),
    ("docs/design.md#relaxed-embedding-lookup", False), ("[yang-fast20] §5", False),
    ("docs/workloads.md", False), ("[the devices](devices.md)", False), ("the host issues a load", False), ("`cxlsim sweep SPEC.yaml`", False),
])
def test_unshipped_citation_pattern(text, cites):
    assert bool(UNSHIPPED_CITATION.search(text)) is cites


def test_code_comments_and_docstrings_cite_only_shipped_things():
    """Package and test code: every comment and docstring (the bibliography's rules excepted)."""
    bad = []
    for path in sorted([*CODE.rglob("*.py"), *(ROOT / "tests").rglob("*.py")]):
        if path == CODE / "config" / "sources.py" or not path.is_file():
            continue
        bad += [f"{path.relative_to(ROOT)}:{line}: {m.group(0)!r}"
                for line, text in _docstrings_and_comments(path)
                for m in [UNSHIPPED_CITATION.search(text)] if m]
    assert not bad, "\n".join(bad)


def test_command_descriptions_cite_only_shipped_things():
    """The commands' --help descriptions (their modules' docstrings)."""
    bad = [f"{p.name}: {m.group(0)!r}" for p in sorted(CLI.glob("*.py"))
           if (doc := ast.get_docstring(ast.parse(p.read_text(encoding="utf-8")), clean=False))
           and (m := UNSHIPPED_CITATION.search(doc))]
    assert not bad, "\n".join(bad)


def test_docs_and_catalog_notes_cite_only_shipped_things():
    """Every page under docs/ and the README, and the bibliography's comments and entry notes."""
    pages = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
    bad = [f"{p.relative_to(ROOT)}:{i}: {line.strip()[:100]}" for p in pages if p.is_file()
           for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
           if UNSHIPPED_CITATION.search(line)]
    res = resources.files("cxlsim.catalogs") / "sources.yaml"
    text = res.read_text(encoding="utf-8")
    bad += [f"sources.yaml:{i}: {line.strip()[:100]}" for i, line in enumerate(text.splitlines(), 1)
            if line.lstrip().startswith("#") and UNSHIPPED_CITATION.search(line)]
    bad += [f"sources.yaml {key}.note: {e['note'][:100]}"
            for key, e in yaml.safe_load(text)["sources"].items()
            if e.get("note") and UNSHIPPED_CITATION.search(str(e["note"]))]
    assert not bad, "\n".join(bad)
