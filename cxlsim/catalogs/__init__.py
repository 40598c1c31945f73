"""The shipped catalogs, as package data: ``cxlsim.catalogs.devices``, ``.workloads``, ``.configs``.

The folders live at the repository's top level (``devices/``, ``workloads/``, ``configs/``);
``setup.py`` maps them into this package (``package_dir``), so a wheel, an sdist, a
``pip install .`` and an editable install all reach them as ``importlib.resources.files(
"cxlsim.catalogs.devices")`` etc. Nothing but :func:`cxlsim.config.catalog.catalog_roots` should
look them up; it also layers ``$CXLSIM_PATH`` on top.
"""
