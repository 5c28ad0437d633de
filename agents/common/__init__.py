"""Plumbing the bots and their interfaces share: the command-line helpers and weights-only
files.
"""
