"""What every training pipeline shares: the config schema, checkpoints, the league, imitation
warm start, callbacks, evaluation, export, preflight checks.
"""
