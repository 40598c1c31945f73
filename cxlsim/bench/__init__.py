"""Speed and memory benchmarks behind ``cxlsim bench TARGET``.

Each module here whose name does not start with ``_`` is a target: it defines ``HELP`` (one line),
``add_arguments(parser)`` (optional) and ``run(args) -> dict`` returning the JSON-ready result,
plus ``render(result) -> str`` for the readable table. Every speed figure is printed as a ratio
against a baseline measured in the same run (machines are shared and noisy).
"""
