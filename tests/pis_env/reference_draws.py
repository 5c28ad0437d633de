"""Plain-Python references for what the batched code draws at random: the splitmix64
stream written on Python ints, and the check that rows are uniform permutations.

Shared by the tests of the batched engine's draws (``batched/test_draws.py``), the
panel's mixing and the typed rollouts (``tests/agents/panel/test_mixing.py``) and the
particle filter's helpers (``tests/agents/belief/test_world_kernels.py``).
"""

from __future__ import annotations

import numpy as np

MASK64 = (1 << 64) - 1


def splitmix64(state: int) -> tuple[int, int]:
    """(next state, output): Steele, Lea and Flood's splitmix64, on Python ints."""
    state = (state + 0x9E3779B97F4A7C15) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


def seeded(seed: int) -> int:
    """The stream state ``seed_streams`` derives from ``seed``: one output skipped, the
    next one the state (its docstring: hashed, so nearby seeds are unrelated)."""
    state, _ = splitmix64(seed)
    _, out = splitmix64(state)
    return out


def assert_uniform_permutations(perms: np.ndarray, items: np.ndarray) -> None:
    """Every row a permutation of ``items``, each item at each position about equally
    often, and about one item per row where it started (``items`` in order): a shuffle
    that can never leave an item in place (Sattolo's off-by-one) has none."""
    rows, k = perms.shape
    np.testing.assert_array_equal(np.sort(perms, axis=1), np.tile(np.sort(items), (rows, 1)))
    fixed = (perms == items[None, :]).sum(axis=1).mean()
    assert 0.85 < fixed < 1.15, fixed  # expected 1 (sd about 1 / sqrt(rows))
    counts = np.zeros((k, k))
    index = {int(c): i for i, c in enumerate(items)}
    for pos in range(k):
        for c, m in zip(*np.unique(perms[:, pos], return_counts=True)):
            counts[index[int(c)], pos] = m
    expected = rows / k
    chi2 = ((counts - expected) ** 2 / expected).sum()
    dof = (k - 1) ** 2
    assert chi2 < dof + 6 * np.sqrt(2 * dof), chi2  # far out in the tail only if skewed
    assert counts.min() > 0
