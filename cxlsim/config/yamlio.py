"""Reading YAML documents and applying ``--set dotted.key=value`` overrides.

Contract: every failure is a :class:`~cxlsim.errors.ConfigError` naming the file (or ``--set``) and
the key path, never a traceback.
"""

from __future__ import annotations

import copy
import functools
import re
from pathlib import Path
from typing import Any

import yaml

from cxlsim.errors import ConfigError

SUPPORTED_VERSIONS = (1,)


class Loader(yaml.SafeLoader):
    """PyYAML's safe loader, with YAML 1.2's floats: ``1e-6`` and ``1e9`` are numbers (YAML 1.1,
    PyYAML's default, reads them as text because they lack a dot)."""


Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def read_yaml(path: str | Path) -> dict[str, Any]:
    """Load a YAML mapping from ``path``; reject missing files, binary or non-UTF-8 content, syntax
    errors (and documents too deeply nested to read) and non-mappings, each with a one-line
    :class:`~cxlsim.errors.ConfigError` naming the file."""
    path = Path(path)
    where = str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(where, "", "file not found") from None
    except IsADirectoryError:
        raise ConfigError(where, "", "is a directory, expected a YAML file") from None
    except OSError as exc:
        raise ConfigError(where, "", f"cannot read ({exc.strerror or exc})") from None
    return parse_yaml(data, where)


#: Parsed documents by their text (a run reads each device preset several times; PyYAML's pure-Python
#: parser took ~15 % of a comparison's wall). Callers get a deep copy, so they may change it.
PARSED_KEEP = 512


@functools.lru_cache(maxsize=PARSED_KEEP)
def _parsed(text: str) -> Any:
    return yaml.load(text, Loader=Loader)


def parse_yaml(data: bytes | str, where: str) -> dict[str, Any]:
    """Decode (UTF-8) and parse one YAML document that must be a mapping (see :func:`read_yaml`)."""
    text = decode_text(data, where) if isinstance(data, bytes) else data
    try:
        doc = copy.deepcopy(_parsed(text))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or (str(exc).splitlines() or ["unreadable"])[0]
        raise ConfigError(where, "", f"malformed YAML{line}: {problem}") from None
    except RecursionError:
        raise ConfigError(where, "", "malformed YAML: nested too deeply") from None
    if doc is None:
        raise ConfigError(where, "", "file is empty")
    if not isinstance(doc, dict):
        raise ConfigError(where, "", f"expected a mapping at top level, got {type(doc).__name__}")
    return doc


def decode_text(data: bytes, where: str) -> str:
    """``data`` as UTF-8 text (a leading byte-order mark dropped), or a ConfigError naming
    ``where``: a NUL byte means a binary file, an undecodable byte a file in another encoding."""
    nul = data.find(b"\x00")
    if nul >= 0:
        raise ConfigError(where, "", f"binary content (NUL byte at offset {nul}), expected a YAML text file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(where, "", f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
                          "save the file as UTF-8") from None


def check_version(doc: dict[str, Any], where: str) -> None:
    """Every catalog and config file carries ``version: 1``."""
    if "version" not in doc:
        raise ConfigError(where, "version", "missing (add `version: 1` at the top)")
    version = doc["version"]
    if isinstance(version, bool) or not isinstance(version, int) or version not in SUPPORTED_VERSIONS:
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
            value = yaml.load(raw, Loader=Loader) if raw.strip() else ""
        except (yaml.YAMLError, RecursionError):
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
