"""Built-in implementations of the pipeline axes, one subpackage per axis (its interface in the
subpackage's ``__init__``, each implementation a module beside it, or a folder of its own where it
has more than one level: a persistence scheme's batch timing, crash protocol and cluster-level ft
scheme, :mod:`cxlsim.axes.persistence.cnr`). The registry and the list of axes are
:mod:`cxlsim.systems.axes`; each implementation is declared by one entry-point line
(``cxlsim.axes.<axis>``) in pyproject.toml."""
