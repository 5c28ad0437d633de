"""Tests of the ``pis_env.batched`` package."""
