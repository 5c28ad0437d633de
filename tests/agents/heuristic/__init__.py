"""Tests of the ``agents.heuristic`` package."""
