"""Dimension files (package data): one YAML per dimension, and ``sets.yaml`` naming dimension sets.

Loaded by :mod:`debatrix.core.dimension`; add your own with ``JudgeSettings(dimension_dirs=[...])``."""
