"""Tests of the ``agents.bench`` package."""
