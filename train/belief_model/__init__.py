"""The learned belief model over hidden cards: its training data (the observer's positions) and
its training.
"""
