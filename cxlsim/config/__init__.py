"""Configuration: parameter schemas, preset catalogs, YAML reading and ``--set`` overrides."""

from cxlsim.config.catalog import Preset, list_presets, resolve_preset
from cxlsim.config.params import Param, ParamSet, Schema
from cxlsim.config.yamlio import apply_sets, parse_set, read_yaml

__all__ = [
    "Param", "ParamSet", "Preset", "Schema", "apply_sets", "list_presets", "resolve_preset",
    "parse_set", "read_yaml",
]
