"""The env in PettingZoo's and gymnasium's registries once ``pis_env`` is imported."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pettingzoo
from pettingzoo.test import api_test

import pis_env


def test_pettingzoo_make_builds_the_env_in_a_fresh_interpreter():
    code = ("import pettingzoo, pis_env\n"
            "env = pettingzoo.make('aec', 'pis_yedili/pis_yedili_v0', num_players=3)\n"
            "print(type(env.unwrapped).__name__, env.unwrapped.rules.num_players)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["raw_env", "3"]


def test_the_registered_env_passes_the_api_test():
    assert pis_env.PETTINGZOO_ID == "pis_yedili/pis_yedili_v0"
    env = pettingzoo.make("aec", pis_env.PETTINGZOO_ID, reward="win")
    assert isinstance(env.unwrapped, pis_env.raw_env) and env.unwrapped.rules.reward == "win"
    api_test(env, num_cycles=200)


def test_importing_again_registers_nothing_twice():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PettingZoo warns when an id is overridden
        importlib.reload(pis_env)
    assert pettingzoo.spec("aec", pis_env.PETTINGZOO_ID).entry_point == "pis_env.aec:env"


def test_making_either_gymnasium_view_warns_nothing():
    """Both views are current: ``PisYedili-v0`` must not be reported "out of date" (as it is
    when a ``PisYedili-v1`` is registered beside it), nor anything else warned."""
    import gymnasium

    assert pis_env.GYMNASIUM_IDS == {0: "PisYedili-v0", 1: "PisYedili-Events-v0"}
    assert "PisYedili-v1" not in gymnasium.registry
    for version, env_id in pis_env.GYMNASIUM_IDS.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            env = gymnasium.make(env_id, num_players=3)
            env.reset(seed=0)
            vec = gymnasium.make_vec(env_id, num_envs=2, vectorization_mode="sync")
            vec.reset(seed=0)
        assert [str(w.message) for w in caught] == []
        assert env.unwrapped.aec.layout_version == version
        vec.close()
        env.close()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gymnasium.make_vec("PisYedili-v0", num_envs=2).close()  # the batched engine
    assert [str(w.message) for w in caught] == []
