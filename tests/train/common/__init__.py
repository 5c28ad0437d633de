"""Tests of the ``train.common`` package."""
