"""Export a policy as a weights-only file that loads without unpickling anything.

    python -m train.export runs/ppo_2p-20260101-120000 policy.pt   # a run's final policy
    python -m train.export models/ppo_2p.zip models/ppo_2p.pt      # an SB3 archive

An SB3 ``.zip`` holds pickled Python objects (``MaskablePPO.load`` runs them): only load
archives you trust. The ``.pt`` written here is a plain dict of tensors and strings
(``{"format", "format_version", "meta", "state_dict"}``) that ``torch.load(...,
weights_only=True)`` reads safely; ``agents.make("ppo", path="policy.pt")`` plays it.
The export is made from the archive's ``policy.pth`` and ``pis_yedili.json`` members only
(the pickled ``data`` member is never read).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def source_file(src: str | Path) -> Path:
    """The policy file of a run directory (``policy.zip``, else its latest checkpoint)."""
    p = Path(src)
    if p.is_dir():
        if (p / "policy.zip").is_file():
            return p / "policy.zip"
        from train.checkpoint import latest_checkpoint

        return latest_checkpoint(p) / "model.zip"
    return p


def export(src: str | Path, out: str | Path) -> Path:
    import torch

    from agents.ppo import read_policy
    from train.checkpoint import export_weights

    meta, arrays = read_policy(source_file(src))
    state = {k: torch.from_numpy(v.copy()) for k, v in arrays.items()}
    export_weights(state, meta, Path(out))
    return Path(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.export", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("source", help="a run directory, or a policy .zip/.pt")
    parser.add_argument("out", help="the .pt file to write")
    args = parser.parse_args(argv)
    try:
        out = export(args.source, args.out)
    except (FileNotFoundError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
