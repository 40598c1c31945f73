"""The typed command-line numbers of :mod:`cxlsim.config.arguments`, for the subcommands."""

from cxlsim.config.arguments import number, percent, whole, whole_or_auto

__all__ = ["number", "percent", "whole", "whole_or_auto"]
