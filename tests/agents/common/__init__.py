"""Tests of the ``agents.common`` package."""
