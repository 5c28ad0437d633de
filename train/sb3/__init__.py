"""The Stable-Baselines3 pipeline: MaskablePPO's config keys, the run, the privileged-critic
policy, ablations and learning curves.
"""
