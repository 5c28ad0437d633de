"""Tests of the ``pis_env`` package."""
