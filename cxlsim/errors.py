"""Errors cxlsim raises on purpose.

Contract: :class:`InputError` (and its subclass :class:`ConfigError`) mean the *user's input* is
wrong; the CLI prints their one-line message and exits with status 2. Anything else escaping a
command is an internal error (status 1).
"""

from __future__ import annotations


class CxlsimError(Exception):
    """Base class for errors cxlsim raises deliberately. The message is kept on one line: line
    breaks and other control characters (from a key or value the user wrote) are escaped.

    Every subclass pickles with all its fields, whatever its constructor takes (an error raised in
    a worker process must reach the parent readable): the constructor's arguments are kept and
    the error is rebuilt from them, then given the attributes it had."""

    def __new__(cls, *args: object, **kwargs: object):
        self = super().__new__(cls, *args)
        self._made_with = (args, kwargs)
        return self

    def __init__(self, *args: object):
        if len(args) == 1 and isinstance(args[0], str):
            args = (one_line(args[0]),)
        super().__init__(*args)

    def __reduce__(self) -> tuple:
        args, kwargs = self._made_with
        return _rebuild, (type(self), args, kwargs, self.__dict__)


def _rebuild(cls: type, args: tuple, kwargs: dict, state: dict) -> CxlsimError:
    """An unpickled :class:`CxlsimError`: made as it was made, with the attributes it had."""
    error = cls(*args, **kwargs)
    error.__dict__.update(state)
    return error


def one_line(text: str) -> str:
    """``text`` with control characters (line breaks, tabs, NULs...) written as escapes."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii") for c in text)


class InputError(CxlsimError):
    """Bad user input (a file, a flag, a name): printed as one line, exit status 2."""


class ConfigError(InputError):
    """A configuration value is wrong. ``where`` names the file (or flag), ``key`` the key path."""

    def __init__(self, where: str, key: str, message: str):
        self.where = where
        self.key = key
        self.message = message
        location = f"{where}: {key}" if key else where
        super().__init__(f"{location}: {message}")
