"""The studies: each a folder of its own, with its settings, simulation and report kept apart.

* :mod:`~cxlsim.studies.paper`: the paper's comparison (``cxlsim reproduce``) and its Figures 11–13;
* :mod:`~cxlsim.studies.platform_study`: which conclusions survive the prototype's assumptions;
* :mod:`~cxlsim.studies.readings`: the headline claims under each reading the paper leaves open;
* :mod:`~cxlsim.studies.sensitivity`: the normalised energy against its weakest parameters;
* :mod:`~cxlsim.studies.fig12`: the Figure 12 calibration points;
* :mod:`~cxlsim.studies.sampling`: ``batches: auto`` against 20 measured batches;
* :mod:`~cxlsim.studies.symmetry`: the symmetry reduction against full detail;
* :mod:`~cxlsim.studies.scaleout`: the scale-out sweeps' figure and tables.

Each study's ``settings.py`` says what it runs (its systems, workloads and platforms come from its
catalog sweep, ``configs/sweeps/<name>.yaml``, read by :func:`cxlsim.sweep.lists.sweep_lists`),
``simulation.py`` runs it, ``report.py`` turns the results into tables and figures without
simulating again, and ``__main__.py`` is its command, ``python -m cxlsim.studies.<name>``
(the paper's is ``cxlsim reproduce``). A smoke test per study runs a tiny configuration
(``tests/studies/``). ``docs/extending.md`` ("A new study") walks through adding one.
"""
