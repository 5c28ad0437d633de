"""Tests of the ``agents.tournament`` package."""
