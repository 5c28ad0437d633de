"""Tests of the ``train.vector`` package."""
