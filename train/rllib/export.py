"""An RLlib PPO module's actor as the project's weights-only policy file.

RLlib's default PPO module has the same actor as the SB3 policies ``agents.ppo`` plays:
an MLP (the encoder, ``encoder.encoder`` when shared with the critic, the default, or
``encoder.actor_encoder`` with ``vf_share_layers=False``, then the ``pi`` head) on the
observation vector, the mask applied to the logits outside the network. So the export
only renames the actor's linear layers into the names ``agents.ppo.NumpyPolicy`` reads
(``mlp_extractor.policy_net.{0,2,..}``, then ``action_net``) and writes them with the
project's exporter (``train.common.checkpoint.export_weights``), with metadata that records the
layout (the run's ``env_version``), the rules and the network.
``agents.make("ppo", path=...)``, the tournament and the terminal game then play it.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

_LINEAR = re.compile(r"^(encoder\.(?:actor_)?encoder|pi)\.net\.mlp\.(\d+)\.(weight|bias)$")


def actor_layers(state: dict) -> list[tuple[np.ndarray, np.ndarray]]:
    """The actor's ``(weight [out, in], bias)`` pairs in forward order: the actor encoder's
    layers, then the ``pi`` head's."""
    found: dict[tuple[int, int], dict[str, np.ndarray]] = {}
    for key, value in state.items():
        m = _LINEAR.match(key)
        if not m:
            continue
        part = 1 if m.group(1) == "pi" else 0
        found.setdefault((part, int(m.group(2))), {})[m.group(3)] = _numpy(value)
    if not any(p == 1 for p, _ in found) or not any(p == 0 for p, _ in found):
        raise ValueError(
            "not a default RLlib PPO module (an MLP encoder and a pi head): the weights lack "
            "encoder.encoder.* / encoder.actor_encoder.* or pi.*")
    layers = []
    for key in sorted(found):
        entry = found[key]
        if set(entry) != {"weight", "bias"} or entry["weight"].ndim != 2:
            raise ValueError(f"unsupported layer in the actor: {key} has {sorted(entry)}")
        layers.append((entry["weight"], entry["bias"]))
    for (w, _), (w2, _) in zip(layers, layers[1:]):
        if w.shape[0] != w2.shape[1]:
            raise ValueError("the actor's layers do not chain (an unsupported architecture)")
    return layers


def policy_state(state: dict) -> dict:
    """The actor's weights under the names ``agents.ppo.NumpyPolicy`` reads (torch tensors)."""
    import torch

    layers = actor_layers(state)
    out = {}
    for i, (w, b) in enumerate(layers[:-1]):
        out[f"mlp_extractor.policy_net.{2 * i}.weight"] = torch.from_numpy(w.copy())
        out[f"mlp_extractor.policy_net.{2 * i}.bias"] = torch.from_numpy(b.copy())
    w, b = layers[-1]
    out["action_net.weight"] = torch.from_numpy(w.copy())
    out["action_net.bias"] = torch.from_numpy(b.copy())
    return out


def export_module(state: dict, rules: dict, model: dict, path: str | Path,
                  extra: dict | None = None, layout_version: int = 0) -> Path:
    """Writes the weights-only ``.pt`` that ``agents.make("ppo", path=...)`` plays, for the
    observation layout ``layout_version`` (the run's ``env_version``)."""
    from train.common.checkpoint import export_weights

    weights, meta = policy_parts(state, rules, model, extra, layout_version)
    path = Path(path)
    export_weights(weights, meta, path)
    return path


def numpy_policy(state: dict, rules: dict, model: dict, extra: dict | None = None,
                 layout_version: int = 0):
    """The actor as an ``agents.ppo.NumpyPolicy`` (picklable: the snapshots that reach the
    env runners), what the exported file plays."""
    from agents.ppo import NumpyPolicy

    weights, meta = policy_parts(state, rules, model, extra, layout_version)
    return NumpyPolicy(meta, {k: v.numpy() for k, v in weights.items()})


def policy_parts(state: dict, rules: dict, model: dict, extra: dict | None = None,
                 layout_version: int = 0) -> tuple[dict, dict]:
    """``(weights, metadata)`` of the policy file: the actor's tensors under
    ``NumpyPolicy``'s names and ``agents.ppo.make_metadata``'s description (a network
    whose input is not the size of layout ``layout_version``'s observation is refused)."""
    from agents.ppo import make_metadata

    weights = policy_state(state)
    layers = actor_layers(state)
    hidden = [int(w.shape[0]) for w, _ in layers[:-1]]
    activation = model.get("fcnet_activation", "tanh")
    head_activation = model.get("head_fcnet_activation", activation)
    if model.get("head_fcnet_hiddens") and head_activation != activation:
        raise ValueError("the export needs one activation for the encoder and the pi head")
    meta = make_metadata(
        rules=rules,
        net_arch={"pi": hidden, "vf": list(model.get("fcnet_hiddens", hidden))
                  + list(model.get("head_fcnet_hiddens", []))},
        activation=activation,
        features=["obs"],
        extra={"trainer": "rllib", **(extra or {})},
        layout_version=layout_version,
    )
    if int(layers[0][0].shape[1]) != meta["input_size"]:
        raise ValueError(f"the actor reads {layers[0][0].shape[1]} inputs; layout version "
                         f"{layout_version}'s observation at this table has "
                         f"{meta['input_size']}")
    return weights, meta


def _numpy(value) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.float32)
