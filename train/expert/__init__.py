"""Expert iteration: search-labelled data and the imitation-then-PPO loop.
"""
