"""Train the belief model (``agents.belief.tracker``): data from games, supervised training,
and the report against the uniform prior and the ``drew_on_suit`` hints.

Why supervised: the true hands are known when we play the games ourselves, so every
position of the observer seat is a labelled example of "who holds this card". The
opponent seats are played by a mix of bots (``heuristic``, ``greedy``, ``random``, ``mc``
with a small budget and the shipped PPO policy as a learner snapshot) so that the model
does not only decode one bot; two variants of the heuristic with other weights are held
out (never trained on) and reported separately.

    python -m train.belief                      # 2 and 4 players: data, training, report
    python -m train.belief --quick              # a few minutes: fewer games and epochs
    python -m train.belief --players 2 --stage report

Stages (each resumable: data files and models already there are kept):
``data`` writes ``OUT/data/{n}p_{opponent}_{split}.npz``; ``train`` writes
``models/belief_{n}p.pt`` (``--models-dir``); ``report`` prints and writes
``OUT/report.md`` / ``report.json``: per player count and opponent, the log-loss (nats per
unseen card, over its places: each opponent and the stock) and the expected share of the
opponents' cards placed right, for the uniform prior, the hints and the model.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from agents.belief.tracker import (
    FEATURE_NAMES,
    DealTracker,
    expected_correct,
    hint_belief,
    load_model,
    log_loss,
    pair_features,
    uniform_belief,
)
from agents.heuristic.variants import HELD_OUT

#: Opponent mixes the model is trained on (specs for ``agents.tournament.build_agent``).
TRAIN_OPPONENTS = {
    "heuristic": "heuristic",
    "greedy": "greedy",
    "random": "random",
    "mc": "mc?samples=4&rollouts=1",
    "ppo": "ppo:models/ppo_{n}p.zip",
}
SPLIT_SEEDS = {"train": 1_000, "test": 2_000_000}


def _opponent(name: str, n: int, seed: int):
    from agents import make
    from agents.tournament.specs import build_agent

    if name in HELD_OUT:
        return make("held_out", variant=name, num_players=n, seed=seed)
    return build_agent(TRAIN_OPPONENTS[name].format(n=n), n, seed)


def play(n: int, opponent: str, games: int, seed: int) -> dict[str, np.ndarray]:
    """Positions of the observer seat (``train.belief_model.observer_positions``) against
    ``opponent`` in every other seat: features, unseen mask, the true place of every card
    (0 stock, k opponent k, -1 seen), hand sizes, stock size, hints, hard voids. Only
    decisions with more than one legal action are kept."""
    from train.belief_model.observer_positions import observer_positions

    rows: dict[str, list] = {k: [] for k in ("features", "unseen", "holders", "sizes",
                                             "stock", "hints", "void", "game")}
    tracker = DealTracker(n)
    for pos in observer_positions(n, lambda s: _opponent(opponent, n, s), seed, games=games):
        if pos.first:
            tracker = DealTracker(n)
        else:
            tracker.record(pos.previous)
        decoded = pos.decoded
        tracker.observe(decoded)
        if pos.choice:
            feats, unseen = pair_features(decoded, tracker)
            hints = np.zeros((n - 1, 4), dtype=bool)
            for k, row in enumerate(decoded["drew_on_suit"]):
                hints[k, row] = True
            rows["features"].append(feats.astype(np.float16))
            rows["unseen"].append(unseen)
            rows["holders"].append(pos.holders)
            rows["sizes"].append(np.array(decoded["hand_sizes"], dtype=np.int8))
            rows["stock"].append(decoded["stock_size"])
            rows["hints"].append(hints)
            rows["void"].append(tracker.void[1:].copy())
            rows["game"].append(pos.game)
    return {k: np.asarray(v) for k, v in rows.items()}


def make_data(n: int, out: Path, games: dict[str, int]) -> None:
    """Every data file of table size ``n`` that is not there yet."""
    names = list(TRAIN_OPPONENTS) + list(HELD_OUT)
    for split in ("train", "test"):
        for name in names:
            if split == "train" and name in HELD_OUT:
                continue
            path = out / "data" / f"{n}p_{name}_{split}.npz"
            if path.exists():
                continue
            count = games[split]
            if name in ("mc", "ppo"):
                count = max(1, count // 2)  # slower bots: fewer games
            t0 = time.time()
            data = play(n, name, count, SPLIT_SEEDS[split] + 100_000 * n)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp.npz")
            np.savez_compressed(tmp, **data)
            tmp.replace(path)
            print(f"{path}: {len(data['stock'])} positions from {count} games "
                  f"in {time.time() - t0:.0f}s", flush=True)


def _load(paths) -> dict[str, np.ndarray]:
    parts = [dict(np.load(p)) for p in paths]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def _card_rows(data: dict[str, np.ndarray]):
    """Per unseen card: features [C, m, F], log size priors [C, m + 1] (last: the
    stock), the index of its true place (opponent k -> k - 1, stock -> m)."""
    feats, unseen, holders = data["features"], data["unseen"], data["holders"]
    m = feats.shape[1]
    pos, card = np.nonzero(unseen)
    x = feats[pos, :, card].astype(np.float32)                 # [C, m, F]
    sizes = data["sizes"][pos, 1:].astype(np.float32)
    prior = np.concatenate([sizes, data["stock"][pos, None].astype(np.float32)], axis=1)
    prior = np.where(prior > 0, np.log(np.maximum(prior, 1e-9)), -1e9)
    forbidden = data["void"][pos, :, card]
    prior[:, :m][forbidden] = -1e9
    h = holders[pos, card].astype(np.int64)
    y = np.where(h > 0, h - 1, m)
    return x, prior.astype(np.float32), y


def train(n: int, out: Path, models_dir: Path, epochs: int, hidden: int = 64,
          seed: int = 0) -> Path:
    """Fit the MLP on every training opponent's data; save ``belief_{n}p.pt``."""
    import torch

    from agents.common.weights_file import save_weights_file

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    paths = [out / "data" / f"{n}p_{name}_train.npz" for name in TRAIN_OPPONENTS]
    x, prior, y = _card_rows(_load(paths))
    flat = x.reshape(-1, x.shape[-1])
    mean = flat.mean(axis=0)
    std = flat.std(axis=0) + 1e-3
    xt = torch.from_numpy((x - mean) / std)
    pt, yt = torch.from_numpy(prior), torch.from_numpy(y)
    f = x.shape[-1]
    net = torch.nn.Sequential(torch.nn.Linear(f, hidden), torch.nn.ReLU(),
                              torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
                              torch.nn.Linear(hidden, 1))
    opt = torch.optim.Adam(net.parameters(), lr=2e-3)
    count = len(y)
    batch = 2048
    steps = epochs * ((count + batch - 1) // batch)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    gen = torch.Generator().manual_seed(seed)
    t0 = time.time()
    for epoch in range(epochs):
        order = torch.randperm(count, generator=gen)
        total = 0.0
        for i in range(0, count, batch):
            idx = order[i:i + batch]
            logits = net(xt[idx]).squeeze(-1)                       # [b, m]
            logits = torch.cat([logits, torch.zeros(len(idx), 1)], dim=1) + pt[idx]
            loss = torch.nn.functional.cross_entropy(logits, yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
        print(f"{n}p epoch {epoch + 1}/{epochs}: loss {total / count:.4f} "
              f"({count} cards, {time.time() - t0:.0f}s)", flush=True)
    layers = [m for m in net if isinstance(m, torch.nn.Linear)]
    payload = {"kind": "belief", "features": ",".join(FEATURE_NAMES),
               "num_players": n, "layers": len(layers), "hidden": hidden,
               "mean": torch.from_numpy(mean), "std": torch.from_numpy(std),
               "opponents": ",".join(TRAIN_OPPONENTS), "cards": int(count)}
    for i, layer in enumerate(layers):
        payload[f"w{i}"] = layer.weight.detach().T.contiguous()
        payload[f"b{i}"] = layer.bias.detach().clone()
    path = models_dir / f"belief_{n}p.pt"
    save_weights_file(payload, path)
    print(f"saved {path}", flush=True)
    return path


def evaluate(n: int, out: Path, models_dir: Path) -> dict[str, dict]:
    """Per opponent of the test split: mean log-loss and share of opponents' cards placed
    right, for uniform, hints and the model."""
    from agents.belief.tracker import scale_belief

    model = load_model(n, models_dir / f"belief_{n}p.pt")
    results = {}
    for name in list(TRAIN_OPPONENTS) + list(HELD_OUT):
        data = dict(np.load(out / "data" / f"{n}p_{name}_test.npz"))
        sums = {k: [0.0, 0.0] for k in ("uniform", "hints", "belief")}
        cards = held = 0
        for i in range(len(data["stock"])):
            unseen = data["unseen"][i]
            holders = data["holders"][i].astype(np.int64)
            decoded = {"hand_sizes": data["sizes"][i].tolist(),
                       "stock_size": int(data["stock"][i]),
                       "hand": np.flatnonzero(holders == -1).tolist(), "discard": [],
                       "drew_on_suit": [np.flatnonzero(r).tolist() for r in data["hints"][i]]}
            feats = data["features"][i].astype(np.float32)
            logits = np.zeros((n - 1, 52))
            logits[:, unseen] = model.logits(feats[:, unseen])
            void = data["void"][i]
            beliefs = {
                "uniform": uniform_belief(decoded),
                "hints": hint_belief(decoded),
                "belief": scale_belief(logits, decoded["hand_sizes"], decoded["stock_size"],
                                       unseen, void if void.any() else None),
            }
            for key, b in beliefs.items():
                sums[key][0] += log_loss(b, holders, unseen) * unseen.sum()
                sums[key][1] += expected_correct(b, holders)
            cards += int(unseen.sum())
            held += int((holders > 0).sum())
        results[name] = {
            "positions": int(len(data["stock"])), "held_out": name in HELD_OUT,
            "cards": cards, "held": held,
            **{f"{k}_logloss": v[0] / cards for k, v in sums.items()},
            **{f"{k}_correct": v[1] / held for k, v in sums.items()},
            **{f"{k}_correct_per_position": v[1] / len(data["stock"])
               for k, v in sums.items()},
        }
    results["held-out mix"] = _mix([r for r in results.values() if r["held_out"]])
    return results


def _mix(parts: list[dict]) -> dict:
    """The held-out opponents pooled (weighted by cards and positions)."""
    cards = sum(r["cards"] for r in parts)
    held = sum(r["held"] for r in parts)
    positions = sum(r["positions"] for r in parts)
    out = {"positions": positions, "held_out": True, "cards": cards, "held": held}
    for k in ("uniform", "hints", "belief"):
        out[f"{k}_logloss"] = sum(r[f"{k}_logloss"] * r["cards"] for r in parts) / cards
        out[f"{k}_correct"] = sum(r[f"{k}_correct"] * r["held"] for r in parts) / held
        out[f"{k}_correct_per_position"] = sum(
            r[f"{k}_correct_per_position"] * r["positions"] for r in parts) / positions
    return out


def report(all_results: dict[int, dict], out: Path) -> str:
    lines = ["| players | opponent | positions | log-loss uniform | hints | belief | "
             "cards placed right (per position): uniform | hints | belief |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]

    def placed(r: dict, key: str) -> str:
        return f"{100 * r[key + '_correct']:.1f}% ({r[key + '_correct_per_position']:.2f})"

    for n, results in sorted(all_results.items()):
        for name, r in results.items():
            label = f"{name} (held out)" if r["held_out"] and "mix" not in name else name
            lines.append(
                f"| {n} | {label} | {r['positions']} | {r['uniform_logloss']:.3f} | "
                f"{r['hints_logloss']:.3f} | **{r['belief_logloss']:.3f}** | "
                f"{placed(r, 'uniform')} | {placed(r, 'hints')} | **{placed(r, 'belief')}** |")
    text = "\n".join(lines)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(text + "\n")
    (out / "report.json").write_text(json.dumps({str(k): v for k, v in all_results.items()},
                                                indent=1))
    return text


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.belief",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--players", type=int, nargs="+", default=[2, 4])
    p.add_argument("--out", default="runs/belief")
    p.add_argument("--models-dir", default="models")
    p.add_argument("--stage", choices=("all", "data", "train", "report"), default="all")
    p.add_argument("--games", type=int, default=None, help="training games per opponent")
    p.add_argument("--test-games", type=int, default=None)
    p.add_argument("--epochs", type=int, default=None)
    p.add_argument("--quick", action="store_true", help="fewer games and epochs (minutes)")
    args = p.parse_args(argv)
    if not all(2 <= n <= 7 for n in args.players):
        p.error(f"--players: table sizes in 2..7, got {args.players}")
    for flag, value in (("--games", args.games), ("--test-games", args.test_games),
                        ("--epochs", args.epochs)):
        if value is not None and not 1 <= value <= 1_000_000:
            p.error(f"{flag} must be in 1..1000000, got {value}")
    out, models_dir = Path(args.out), Path(args.models_dir)
    games = {"train": args.games or (100 if args.quick else 1500),
             "test": args.test_games or (30 if args.quick else 300)}
    epochs = args.epochs or (2 if args.quick else 6)
    all_results = {}
    for n in args.players:
        if args.stage in ("all", "data"):
            make_data(n, out, {k: max(1, v if n == 2 else v // 2) for k, v in games.items()})
        if args.stage in ("all", "train") and (
                args.stage == "train" or not (models_dir / f"belief_{n}p.pt").exists()):
            train(n, out, models_dir, epochs)
        if args.stage in ("all", "report"):
            all_results[n] = evaluate(n, out, models_dir)
    if all_results:
        print(report(all_results, out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
