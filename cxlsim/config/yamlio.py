"""Reading YAML documents and applying ``--set dotted.key=value`` overrides.

Contract: every failure is a :class:`~cxlsim.errors.ConfigError` naming the file (or ``--set``) and
the key path, never a traceback.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from cxlsim.errors import ConfigError

SUPPORTED_VERSIONS = (1,)


def read_yaml(path: str | Path) -> dict[str, Any]:
    """Load a YAML mapping from ``path``; reject missing files, syntax errors and non-mappings."""
    path = Path(path)
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(where, "", "file not found") from None
    except IsADirectoryError:
        raise ConfigError(where, "", "is a directory, expected a YAML file") from None
    except OSError as exc:
        raise ConfigError(where, "", f"cannot read ({exc.strerror})") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(where, "", f"malformed YAML{line}: {problem}") from None
    if doc is None:
        raise ConfigError(where, "", "file is empty")
    if not isinstance(doc, dict):
        raise ConfigError(where, "", f"expected a mapping at top level, got {type(doc).__name__}")
    return doc


def check_version(doc: dict[str, Any], where: str) -> None:
    """Every catalog and config file carries ``version: 1``."""
    if "version" not in doc:
        raise ConfigError(where, "version", "missing (add `version: 1` at the top)")
    if doc["version"] not in SUPPORTED_VERSIONS:
        raise ConfigError(where, "version", f"unsupported version {doc['version']!r}; supported: 1")


def parse_set(assignments: list[str] | None) -> list[tuple[str, Any]]:
    """Parse ``["a.b=1", "c=text"]`` into ``[("a.b", 1), ("c", "text")]`` (values read as YAML)."""
    out: list[tuple[str, Any]] = []
    for item in assignments or []:
        if "=" not in item:
            raise ConfigError("--set", item, "expected dotted.key=value")
        key, raw = item.split("=", 1)
        key = key.strip()
        if not key or any(not part for part in key.split(".")):
            raise ConfigError("--set", item, "empty key; expected dotted.key=value")
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            value = raw
        out.append((key, value))
    return out


def apply_sets(doc: dict[str, Any], sets: list[tuple[str, Any]], where: str = "--set") -> dict[str, Any]:
    """Return a deep copy of ``doc`` with each dotted key set; intermediate mappings must exist
    or are created when absent (unknown keys are then rejected by schema validation)."""
    doc = copy.deepcopy(doc)
    for key, value in sets:
        parts = key.split(".")
        node: Any = doc
        for i, part in enumerate(parts[:-1]):
            nxt = node.get(part) if isinstance(node, dict) else None
            if nxt is None:
                nxt = {}
                node[part] = nxt
            elif not isinstance(nxt, dict):
                raise ConfigError(where, ".".join(parts[: i + 1]), "is a value, not a mapping")
            node = nxt
        node[parts[-1]] = value
    return doc
