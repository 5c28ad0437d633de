"""Tests of the ``agents`` package."""
