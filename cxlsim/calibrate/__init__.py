"""Measurement tools (above the models): host and GPU measurement and the GPU timing-table
generator. The device models only read the tables and presets these write."""
