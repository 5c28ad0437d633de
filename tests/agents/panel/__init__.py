"""Tests of the ``agents.panel`` package."""
