"""The batched engine from the learner's seat and its vector-env faces: SB3's VecEnv,
gymnasium's VectorEnv, the registry's vector_entry_point.
"""
