"""Search-labelled positions (train.expert.search_data): the same data set for the same seed in
this process, on a local pool and as Ray tasks; labels are the labeller's values of the
legal actions only."""

from __future__ import annotations

import numpy as np
import pytest

from train.expert.search_data import build_dataset, label_positions, play_games

LABELLER = {"name": "mc", "samples": 2, "rollouts": 1}
RULES = {"num_players": 2}


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def test_positions_and_labels_are_consistent():
    data = build_dataset(3, 2, RULES, labeller=LABELLER, workers=1, label_chunk=16)
    n = len(data["obs"])
    assert n > 10 and data["values"].shape == (n, 58) and data["best"].shape == (n,)
    legal = data["mask"].astype(bool)
    assert (legal.sum(axis=1) > 1).all()  # forced moves are not kept
    assert np.isfinite(data["values"][legal]).all()
    assert np.isnan(data["values"][~legal]).all()
    assert legal[np.arange(n), data["best"]].all()
    assert set(np.unique(data["game"])) == {0, 1}


def test_same_seed_same_data_for_any_split_and_pool():
    one = build_dataset(4, 3, RULES, labeller=LABELLER, workers=1, label_chunk=64)
    pool = build_dataset(4, 3, RULES, labeller=LABELLER, workers=2, label_chunk=7)
    _same(one, pool)
    other = build_dataset(5, 3, RULES, labeller=LABELLER, workers=1)
    assert len(other["obs"]) != len(one["obs"]) or not np.array_equal(other["obs"], one["obs"])


def test_ray_tasks_give_the_same_data():
    import ray
    local = build_dataset(6, 1, RULES, labeller=LABELLER, workers=1, label_chunk=10)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = build_dataset(6, 1, RULES, labeller=LABELLER, backend="ray", workers=2,
                               label_chunk=10)
    finally:
        ray.shutdown()
    _same(local, remote)


def test_label_chunk_is_a_plain_function():
    rules = {**_defaults(), "num_players": 3}
    pos = play_games(0, 0, 1, rules)
    assert pos["obs"].shape[1] == 183 and (pos["mask"].sum(axis=1) > 1).all()
    first = label_positions(pos["obs"][:5], pos["mask"][:5], 0, 0, rules, LABELLER)
    again = label_positions(pos["obs"][:5], pos["mask"][:5], 0, 0, rules, LABELLER)
    _same(first, again)
    shifted = label_positions(pos["obs"][1:5], pos["mask"][1:5], 1, 0, rules, LABELLER)
    _same({k: v[1:] for k, v in first.items()}, shifted)  # seeded by the global index
    assert first["values"].dtype == np.float32


def _defaults() -> dict:
    from pis_env import Rules

    return Rules().to_dict()


@pytest.mark.parametrize("kwargs, match", [
    ({"seed": -1}, "seed"),
    ({"games": 0}, "games"),
    ({"label_chunk": 0}, "label_chunk"),
    ({"backend": "spark"}, "backend"),
    ({"labeller": {"name": "mc", "budget": 3}}, "no setting 'budget'"),
    ({"labeller": {"name": "greedy"}}, "cannot evaluate"),
])
def test_bad_input(kwargs, match):
    args = {"seed": 0, "games": 1, "rules": RULES, "labeller": LABELLER, "workers": 1}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        build_dataset(**args)


def _handlers(_unit) -> tuple:
    import signal

    return signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)


def test_pool_workers_do_not_keep_the_callers_signal_handlers():
    """A caller that turns SIGTERM into KeyboardInterrupt (the training CLIs) must not
    hand it to the pool's forked workers: Pool.terminate sends SIGTERM, and a worker that
    raised there once hung the pool's shutdown."""
    import signal

    from train.expert.search_data import map_chunks

    def _raise(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, _raise)
    try:
        seen = map_chunks(_handlers, [0, 1], "local", 2, None, 1)
    finally:
        signal.signal(signal.SIGTERM, old)
    assert seen == [(signal.SIG_DFL, signal.SIG_IGN)] * 2
