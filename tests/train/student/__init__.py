"""Tests of the ``train.student`` package."""
