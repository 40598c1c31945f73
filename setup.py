"""Which packages the distribution holds (everything else about it is in pyproject.toml).

The catalogs stay at the repository's top level (``devices/``, ``workloads/``, ``configs/``) and ship
inside the package as ``cxlsim.catalogs.<kind>``: package data read at run time with
:mod:`importlib.resources` (``cxlsim.config.catalog.catalog_roots``). setuptools' declarative
discovery only finds packages below ``cxlsim/``, so the mapping is computed here: the code packages
under ``cxlsim/`` plus each catalog folder and its sub-folders (data folders: listing them ships their
files and keeps setuptools from warning about folders it would otherwise skip). A catalog folder
holds an ``__init__.py`` only so that the editable install's import finder resolves it too.
"""

from setuptools import find_namespace_packages, find_packages, setup

CATALOGS = ("devices", "workloads", "configs")
DATA_FILES = ["*.yaml", "*.csv"]

packages = find_packages(include=["cxlsim", "cxlsim.*"])
package_dir = {}
package_data = {"cxlsim.catalogs": ["sources.yaml"]}  # the bibliography source: notes cite
for kind in CATALOGS:
    pkg = f"cxlsim.catalogs.{kind}"
    package_dir[pkg] = kind
    subs = find_namespace_packages(where=kind, exclude=["__pycache__", "*.__pycache__"])
    for name in [pkg, *(f"{pkg}.{sub}" for sub in subs)]:
        packages.append(name)
        package_data[name] = DATA_FILES

setup(packages=packages, package_dir=package_dir, package_data=package_data)
