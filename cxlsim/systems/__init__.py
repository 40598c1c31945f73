"""Training systems: one batch dataflow, configured per system (docs/design.md#one-training-batch,
#systems-compared, #persistence).

A system is configuration (``configs/<name>.yaml``): devices by role and a pipeline that says where
tables live, who computes embeddings, how data moves and how batches are persisted. There is no
class per system: :mod:`cxlsim.systems.dataflow` builds every system's batch op graph from the
pipeline settings and :mod:`cxlsim.engine.executor` runs it on simpy.
"""
