"""Shared fixtures. Tiers: default tests are fast; `-m slow` selects end-to-end runs."""

from __future__ import annotations

import pytest


@pytest.fixture
def user_catalog(tmp_path, monkeypatch):
    """An empty user catalog folder on $CXLSIM_PATH; returns its devices/ folder."""
    root = tmp_path / "catalog"
    (root / "devices").mkdir(parents=True)
    monkeypatch.setenv("CXLSIM_PATH", str(root))
    return root / "devices"
