"""The typed command-line numbers of :mod:`cxlsim.config.arguments`, for the subcommands, and the
catalog names their ``--help`` lists."""

from cxlsim.config.arguments import figure_path, number, percent, whole, whole_or_auto
from cxlsim.config.catalog import catalog_roots

__all__ = ["figure_path", "number", "percent", "whole", "whole_or_auto", "workload_names"]


def workload_names() -> str:
    """The catalog's workloads (``rm1, rm2, ...``) from its file names, importing no model."""
    names = {p.stem for root in catalog_roots("workloads") if root.is_dir() for p in root.glob("*.yaml")}
    return ", ".join(sorted(names))
