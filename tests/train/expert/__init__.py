"""Tests of the ``train.expert`` package."""
