"""Tests of the ``agents.belief`` package."""
