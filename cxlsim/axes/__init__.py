"""Built-in implementations of the pipeline axes, one subpackage per axis (its interface in the
subpackage's ``__init__``, each implementation a module beside it); the registry and the list of
axes are :mod:`cxlsim.systems.axes`. Importing a module registers its implementation."""
