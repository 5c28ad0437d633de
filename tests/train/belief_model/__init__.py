"""Tests of the ``train.belief_model`` package."""
