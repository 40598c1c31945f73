"""The bibliography that ``source:`` notes cite, and the rules a note keeps.

The bibliography ships as package data (``cxlsim/catalogs/sources.yaml``, read with
:mod:`importlib.resources`): one :class:`Reference` per publication, data sheet, standard, data set
or code repository. A note cites an entry by its key in brackets followed by what it read there
(``[yang-fast20] Fig. 4``, ``[kwon-micro23] Table 2``); a note that cites no entry names itself an
assumption (``assumption (named)``, ``calibrated (named)``) or points at a shipped page
(``docs/design.md#persistence``).

Contract: :func:`cited_keys` returns the bracketed lower-case keys of a note in order (kind tags
such as ``[S]``, ``[T]``, ``[CSV]`` are upper-case and are not keys); :func:`citation_problems`
returns one line per thing a note cites that does not ship (a path under ``reference/`` or
``shared/``, a specification section ``SPEC §``, a section sign that follows no key, a project
issue number) or a key missing from the bibliography; an empty list means the note is followable.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources

import yaml

from cxlsim.errors import ConfigError

#: where the bibliography ships (package, file)
BIBLIOGRAPHY = ("cxlsim.catalogs", "sources.yaml")
#: fields every entry carries; and one of ``doi`` / ``url``
REQUIRED_FIELDS = ("authors", "title", "venue", "year")

_KEY = re.compile(r"\[([a-z0-9][a-z0-9.+-]*)\]")
_UNSHIPPED = (
    (re.compile(r"\breference/|\bshared/"), "a file that does not ship (reference/, shared/)"),
    (re.compile(r"(?<![\w/])(devices|measurements|cxl-measurements|strategies|workloads|"
                r"trainingcxl-paper-excerpt)\.md"), "a reading note that does not ship (cite the publication)"),
    (re.compile(r"\bSPEC\b"), "the design specification (cite docs/design.md#<section>)"),
    (re.compile(r"\bissues? #?\d+", re.IGNORECASE), "an issue number (cite a bibliography key)"),
    (re.compile(r"(?<!\] )(?<!\])§"), "a section sign that follows no [key]"),
)


@dataclass(frozen=True)
class Reference:
    """One bibliography entry; ``link`` is ``https://doi.org/<doi>`` when a DOI is known, else the URL."""

    key: str
    authors: tuple[str, ...]
    title: str
    venue: str
    year: str
    doi: str | None
    url: str | None
    note: str | None

    @property
    def link(self) -> str:
        return f"https://doi.org/{self.doi}" if self.doi else str(self.url)

    def citation(self) -> str:
        """One line: authors, title, venue, year, DOI or URL."""
        authors = ', '.join(self.authors).rstrip('.')
        return f"{authors}. {self.title}. {self.venue}, {self.year.rstrip('.')}. {self.link}"

    def as_dict(self) -> dict[str, object]:
        return {"key": self.key, "authors": list(self.authors), "title": self.title, "venue": self.venue,
                "year": self.year, "doi": self.doi, "url": self.url, "citation": self.citation()}


def _parse(doc: object, where: str) -> dict[str, Reference]:
    entries = doc.get("sources") if isinstance(doc, dict) else None
    if not isinstance(entries, dict):
        raise ConfigError(where, "sources", "expected a mapping of key -> entry")
    out = {}
    for key, e in entries.items():
        if not isinstance(e, dict):
            raise ConfigError(where, f"sources.{key}", "expected a mapping")
        missing = [f for f in REQUIRED_FIELDS if not str(e.get(f) or "").strip()]
        if missing:
            raise ConfigError(where, f"sources.{key}", f"missing {', '.join(missing)}")
        if not (e.get("doi") or e.get("url")):
            raise ConfigError(where, f"sources.{key}", "needs a doi or a url")
        if not _KEY.fullmatch(f"[{key}]"):
            raise ConfigError(where, f"sources.{key}", "a key is lower-case letters, digits, '.', '+', '-'")
        authors = e["authors"] if isinstance(e["authors"], list) else [e["authors"]]
        out[key] = Reference(key, tuple(str(a) for a in authors), str(e["title"]), str(e["venue"]),
                             str(e["year"]), e.get("doi"), e.get("url"), e.get("note"))
    return out


@functools.cache
def bibliography() -> dict[str, Reference]:
    """Every shipped entry by key (validated: title, year, venue, authors, a DOI or URL)."""
    package, name = BIBLIOGRAPHY
    res = resources.files(package) / name
    return _parse(yaml.safe_load(res.read_text(encoding="utf-8")), f"{package}/{name}")


def cited_keys(note: str) -> list[str]:
    """The bibliography keys a note cites, in order of first appearance."""
    keys: list[str] = []
    for k in _KEY.findall(note):
        if any(c.isalpha() for c in k) and k not in keys:
            keys.append(k)
    return keys


def citation_problems(note: str) -> list[str]:
    """What in a note cannot be followed from the package (empty: nothing)."""
    problems = [why for pattern, why in _UNSHIPPED if pattern.search(note)]
    bib = bibliography()
    problems += [f"[{k}] is not in the bibliography" for k in cited_keys(note) if k not in bib]
    return problems


def references_for(notes: list[str]) -> list[Reference]:
    """The entries the notes cite, in order of first citation; unknown keys are skipped."""
    bib, seen = bibliography(), []
    for note in notes:
        for k in cited_keys(note):
            if k in bib and bib[k] not in seen:
                seen.append(bib[k])
    return seen
