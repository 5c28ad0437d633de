"""``python -m train.export --onnx``: the ONNX actor gives the torch policy's logits.

The reference is SB3's own policy class (``MaskableActorCriticPolicy``, or the project's
``PrivilegedCriticPolicy`` when the file's critic reads hidden cards) with the file's
weights loaded strictly, evaluated on 1,000 observations recorded from real games.
"""

from __future__ import annotations

import json

import numpy as np
import onnxruntime as ort
import pytest
import torch

from agents import make
from agents.ppo import read_policy
from pis_env import raw_env
from train.common.export import main

POLICY = "models/ppo_2p.zip"


def recorded_observations(count: int = 1000, seed: int = 0):
    """``count`` (observation, mask) pairs of the players to move in heuristic games."""
    env = raw_env()
    bots = [make("heuristic", seed=seed + i) for i in range(2)]
    obs, masks = [], []
    game = 0
    while len(obs) < count:
        env.reset(seed=seed + game)
        game += 1
        while not env.game.deal_over and len(obs) < count:
            seat = env.game.current
            o = env.observe(f"player_{seat}")
            obs.append(o["observation"])
            masks.append(o["action_mask"])
            env.step(bots[seat].act(o))
    return np.stack(obs), np.stack(masks).astype(np.float32)


def sb3_policy(meta: dict, arrays: dict):
    """SB3's policy network for this file, its weights loaded strictly."""
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from train.sb3.policy import PrivilegedCriticPolicy

    size = int(meta["input_size"])
    critic_in = arrays["mlp_extractor.value_net.0.weight"].shape[1]
    kwargs = {"net_arch": meta["net_arch"],
              "activation_fn": {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[meta["activation"]]}
    cls = MaskableActorCriticPolicy
    if critic_in != size:
        cls, kwargs["actor_dim"] = PrivilegedCriticPolicy, size
    policy = cls(spaces.Box(-np.inf, np.inf, (critic_in,), np.float32), spaces.Discrete(58),
                 lambda _: 0.0, **kwargs)
    policy.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in arrays.items()},
                           strict=True)
    return policy.eval(), critic_in


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("onnx") / "ppo_2p.onnx"
    assert main(["--onnx", POLICY, str(out)]) == 0
    return out


def test_onnxruntime_logits_equal_torch_on_1000_observations(exported):
    meta, arrays = read_policy(POLICY)
    assert meta["obs_norm"] is None and meta["features"] == ["obs", "mask"]
    obs, masks = recorded_observations()
    session = ort.InferenceSession(str(exported), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["observation", "action_mask"]
    assert [o.name for o in session.get_outputs()] == ["logits"]
    (logits,) = session.run(["logits"], {"observation": obs, "action_mask": masks})

    policy, width = sb3_policy(meta, arrays)
    x = np.zeros((len(obs), width), np.float32)
    x[:, :obs.shape[1] + 58] = np.concatenate([obs, masks], axis=1)
    with torch.no_grad():
        features = policy.extract_features(torch.from_numpy(x))
        expected = policy.action_net(policy.mlp_extractor.forward_actor(features)).numpy()
    assert logits.shape == (1000, 58)
    diff = float(np.abs(logits - expected).max())
    assert diff < 1e-5, diff

    # the masked argmax is the ppo bot's move
    agent = make("ppo", path=POLICY)
    masked = np.where(masks > 0, logits, -np.inf)
    moves = [agent.act({"observation": o, "action_mask": m.astype(np.int8)})
             for o, m in zip(obs, masks)]
    assert (masked.argmax(axis=1) == np.array(moves)).mean() > 0.999


def test_the_model_carries_the_policy_metadata(exported):
    import onnx

    model = onnx.load(str(exported))
    props = {p.key: p.value for p in model.metadata_props}
    meta = json.loads(props["pis_yedili"])
    assert meta["layout_size"] == 178 and meta["num_players"] == 2


def test_a_file_that_is_not_a_policy_is_a_clear_error(tmp_path, capsys):
    bad = tmp_path / "not_a_policy.zip"
    bad.write_bytes(b"PK\x03\x04 nothing")
    assert main(["--onnx", str(bad), str(tmp_path / "x.onnx")]) == 2
    assert "error:" in capsys.readouterr().err
    assert main(["--onnx", str(tmp_path / "missing.zip"), str(tmp_path / "x.onnx")]) == 2
    assert "not found" in capsys.readouterr().err
    assert not (tmp_path / "x.onnx").exists()
