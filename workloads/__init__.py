"""The workloads catalog, shipped as the package data of ``cxlsim.catalogs.workloads`` (see cxlsim/catalogs).

This file only makes the folder importable so that importlib.resources finds it in every kind of
install, editable included; the catalog itself is the YAML (and CSV) files.
"""
