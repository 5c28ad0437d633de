"""RLlib PPO on Ray: its config, env, modules, imitation warm start and export.
"""
