"""Tests of the ``train`` package."""
