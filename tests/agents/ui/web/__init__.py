"""Tests of the ``agents.ui.web`` package."""
