"""Parsed YAML is memoised by its text: callers get independent copies, and an edited file is read anew."""

from __future__ import annotations

from cxlsim.config.yamlio import read_yaml


def test_copies_are_independent_and_edits_are_seen(tmp_path):
    f = tmp_path / "a.yaml"
    f.write_text("a: {b: [1, 2]}\nx: 1e-6\n")
    first = read_yaml(f)
    first["a"]["b"].append(3)
    first["x"] = 0
    again = read_yaml(f)
    assert again == {"a": {"b": [1, 2]}, "x": 1e-6}
    assert again["a"] is not first["a"]
    f.write_text("a: {b: [4]}\n")
    assert read_yaml(f) == {"a": {"b": [4]}}
