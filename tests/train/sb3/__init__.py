"""Tests of the ``train.sb3`` package."""
