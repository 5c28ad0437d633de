"""Tests of the ``agents.ui`` package."""
