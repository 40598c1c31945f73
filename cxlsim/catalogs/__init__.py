"""The shipped catalogs, as package data: ``cxlsim.catalogs.devices``, ``.workloads``, ``.configs``.

The folders live at the repository's top level (``devices/``, ``workloads/``, ``configs/``);
``pyproject.toml`` maps them into this package (``[tool.setuptools] package-dir``), so a wheel, a
``pip install .`` and an editable install all reach them as ``importlib.resources.files(
"cxlsim.catalogs.devices")`` etc. Nothing but :func:`cxlsim.config.catalog.catalog_roots` should
look them up; it also layers ``$CXLSIM_PATH`` on top.
"""
