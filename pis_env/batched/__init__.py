"""A batched Pis Yedili engine: thousands of matches in numpy arrays, stepped by numba.

Importing this subpackage imports numba (an optional dependency; ``import pis_env``
does not). The rules are those of ``pis_env.engine.GameState`` with every option of
RULES.md, the observations those of ``ObservationEncoder.encode``, the masks those of
``mask_array(state.legal_mask())`` and the rewards those of ``deal_rewards``: a
differential test holds them equal step by step on stacked decks. Only randomness
differs (one splitmix64 stream per game instead of ``numpy.random.Generator``).

* ``BatchedGame(B, rules, seed=..., layout_version=1)``: the engine (``layout_version=1``
  writes the ``pis_yedili_v1`` observation, its public record kept by ``public``).
  ``reset(seed, decks=, dealers=, games=)``, ``step(actions, auto_reset=,
  terminal_obs=, terminal_seats=)`` -> ``StepResult(obs, masks, done, reason, rewards,
  charges, winners, current)``, ``observe(seats, games)``, ``action_masks(games)``,
  ``game_state(b)``.
* ``RandomPolicy(B, seed)``: random legal play, ``policy(game) -> actions``. The bots'
  numba ports live beside the bots, above this package: ``agents.greedy.batched.
  GreedyPolicy`` and ``agents.heuristic.batched.HeuristicPolicy``.
* ``BatchedEnv(B, rules, opponent=, learner_seat=, seed=)``: one learner seat per
  game, opponents batched (random in the kernel, or one call of a policy for all games);
  ``reset() -> (obs, masks)``, ``step(actions) -> (obs, rewards, dones, infos)``.

Example::

    from pis_env.batched import BatchedGame, RandomPolicy

    game = BatchedGame(4096, num_players=4, seed=0)
    policy = RandomPolicy(4096, seed=1)
    for _ in range(1000):
        result = game.step(policy(game), auto_reset=True)
        # result.obs [4096, L] float32, result.masks [4096, 58] int8 (current players),
        # result.done / result.rewards [4096, 4] where a deal ended (result.reason > 0)

``python -m benchmarks.batched`` measures throughput and compile times.
"""

from .core import BatchedGame, RandomPolicy, StepResult, rules_vector, uint8_scale
from .env import BatchedEnv
from .kernels import REASON_NAMES

__all__ = ["REASON_NAMES", "BatchedEnv", "BatchedGame", "RandomPolicy", "StepResult",
           "rules_vector", "uint8_scale"]
