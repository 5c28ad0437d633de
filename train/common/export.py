"""Export a policy as a weights-only file that loads without unpickling anything.

    python -m train.export runs/ppo_2p-20260101-120000 policy.pt   # a run's final policy
    python -m train.export models/ppo_2p.zip models/ppo_2p.pt      # an SB3 archive

An SB3 ``.zip`` holds pickled Python objects (``MaskablePPO.load`` runs them): only load
archives you trust. The ``.pt`` written here is a plain dict of tensors and strings
(``{"format", "format_version", "meta", "state_dict"}``) that ``torch.load(...,
weights_only=True)`` reads safely; ``agents.make("ppo", path="policy.pt")`` plays it.
The export is made from the archive's ``policy.pth`` and ``pis_yedili.json`` members only
(the pickled ``data`` member is never read).

    python -m train.export --onnx models/ppo_2p.zip ppo_2p.onnx     # for onnxruntime

``--onnx`` writes the actor as an ONNX graph (needs the ``web`` extra: ``onnx``,
``onnxscript``; ``onnxruntime`` runs it). Its inputs are the torch policy's, named as
``env.observe()`` names them: ``observation`` (float32 [batch, layout size]) and
``action_mask`` (float32 [batch, 58]); the graph concatenates and normalises them as the
policy was trained (its ``features`` and ``obs_norm``). Its output ``logits`` (float32
[batch, 58]) are the raw logits: a consumer masks them (``-inf`` where the mask is 0)
before a softmax or an argmax, as ``agents.ppo`` does. Inside, the graph computes in
float64: float32 layers differ from torch's by rounding alone by up to 1.5e-5 on the
shipped 2-player policy (onnxruntime's float32 Tanh is an approximation, and the sums run
in another order; two float32 torch paths differ as much), while the float64 graph gives
the exact logits rounded to float32, within 6e-6 of torch's. The policy's metadata is
stored in the model's ``metadata_props`` under ``pis_yedili``.
"""

from __future__ import annotations

import argparse
import logging
import sys
import warnings
from pathlib import Path


def source_file(src: str | Path) -> Path:
    """The policy file of a run directory (``policy.zip``, else its latest checkpoint)."""
    p = Path(src)
    if p.is_dir():
        if (p / "policy.zip").is_file():
            return p / "policy.zip"
        from train.common.checkpoint import latest_checkpoint, policy_file_of

        return policy_file_of(latest_checkpoint(p))
    return p


def export(src: str | Path, out: str | Path) -> Path:
    import torch

    from agents.ppo import read_policy
    from train.common.checkpoint import export_weights

    meta, arrays = read_policy(source_file(src))
    state = {k: torch.from_numpy(v.copy()) for k, v in arrays.items()}
    export_weights(state, meta, Path(out))
    return Path(out)


def torch_actor(meta: dict, arrays: dict):
    """The actor as a ``torch.nn.Module`` taking ``(observation, action_mask)`` (float32)
    and giving float32 logits: the policy's features, normalisation,
    ``mlp_extractor.policy_net`` and ``action_net`` with the file's weights (the layers
    SB3's policy has), computed in float64 (see the module docstring)."""
    import torch
    from torch import nn

    class _Actor(nn.Module):
        def __init__(self):
            super().__init__()
            act = {"tanh": nn.Tanh, "relu": nn.ReLU}[meta["activation"]]
            layers, width = [], int(meta["input_size"])
            for size in meta["net_arch"]["pi"]:
                layers += [nn.Linear(width, size), act()]
                width = size
            self.policy_net = nn.Sequential(*layers)
            self.action_net = nn.Linear(width, len(arrays["action_net.bias"]))
            self.features = list(meta["features"])
            norm = meta.get("obs_norm")
            self.norm = norm is not None
            if norm:
                var = torch.as_tensor(norm["var"], dtype=torch.float32)
                self.register_buffer("mean", torch.as_tensor(norm["mean"],
                                                             dtype=torch.float32))
                self.register_buffer("scale", 1.0 / torch.sqrt(
                    var + float(norm.get("epsilon", 1e-8))))
                self.clip = float(norm.get("clip", 10.0))

        def forward(self, observation, action_mask):
            parts = [observation if f == "obs" else action_mask for f in self.features]
            x = parts[0] if len(parts) == 1 else torch.cat(parts, dim=-1)
            if self.norm:
                x = torch.clamp((x - self.mean) * self.scale, -self.clip, self.clip)
            return self.action_net(self.policy_net(x.to(torch.float64))).to(torch.float32)

    actor = _Actor()
    state = {}
    for key, value in arrays.items():
        if key.startswith("mlp_extractor.policy_net."):
            state[key[len("mlp_extractor."):]] = torch.from_numpy(value.copy())
        elif key.startswith("action_net."):
            state[key] = torch.from_numpy(value.copy())
    missing = [k for k in actor.state_dict() if k not in state and k not in (
        "mean", "scale")]
    if missing:
        raise ValueError(f"the policy's weights lack {missing}")
    actor.load_state_dict({**actor.state_dict(), **state})
    return actor.double().eval()


def export_onnx(src: str | Path, out: str | Path) -> Path:
    """The actor of a policy file (or run directory) as an ONNX model at ``out``."""
    import json

    try:
        import onnx
        import torch
    except ImportError as e:
        raise ValueError(f"{e}: --onnx needs the web extra: pip install 'pis-yedili[web]'") \
            from None

    from agents.ppo import read_policy

    meta, arrays = read_policy(source_file(src))
    actor = torch_actor(meta, arrays)
    batch = 2
    obs = torch.zeros(batch, int(meta["layout_size"]))
    mask = torch.ones(batch, 58)
    dim = torch.export.Dim("batch")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():  # the exporter's notes on ops this graph does not use
        warnings.simplefilter("ignore")
        quiet = logging.getLogger("torch.onnx")
        level = quiet.level
        quiet.setLevel(logging.ERROR)
        try:
            program = torch.onnx.export(
                actor, (obs, mask), input_names=["observation", "action_mask"],
                output_names=["logits"], dynamic_shapes=({0: dim}, {0: dim}), dynamo=True,
                verbose=False)
        finally:
            quiet.setLevel(level)
    model = program.model_proto
    entry = model.metadata_props.add()
    entry.key, entry.value = "pis_yedili", json.dumps(meta)
    onnx.checker.check_model(model)
    onnx.save(model, str(out))
    return out


def main(argv: list[str] | None = None) -> int:
    from agents.common.cli import error_exit

    parser = argparse.ArgumentParser(prog="python -m train.export", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("source", help="a run directory, or a policy .zip/.pt")
    parser.add_argument("out", help="the file to write (.pt, or .onnx with --onnx)")
    parser.add_argument("--onnx", action="store_true",
                        help="write the actor as ONNX (inputs observation, action_mask)")
    args = parser.parse_args(argv)
    try:
        out = (export_onnx if args.onnx else export)(args.source, args.out)
    except (FileNotFoundError, ValueError) as e:
        return error_exit(parser.prog, str(e))
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
