"""The typed command-line numbers of :mod:`cxlsim.config.arguments`, for the subcommands."""

from cxlsim.config.arguments import figure_path, number, percent, whole, whole_or_auto

__all__ = ["figure_path", "number", "percent", "whole", "whole_or_auto"]
