"""The student's training: a network fitted to the search's labels (issue 61, step 2).

    python -m train.student.fit --labels data/student_2p/labels --out models/student_2p.pt
    python -m train.student.fit --max-labels 30000 --epochs 20 temperature=50
    python -m train.student.fit --help-config

Why: the search knows more than its move: it scores every legal action. So the student's
policy target is a softmax of the search's action values over the legal actions at a
``temperature`` in points (0: the search's move alone), and ``train.common.pretrain``'s
imitation loop fits it by cross-entropy against that distribution; a move the search
scores a few points below its best keeps some weight, a losing one none. With ``prior``
(a PPO policy file) the target is ``softmax(prior logits + values / temperature)``, the
improved policy of Gumbel AlphaZero: where the search's values are close (within its
noise) the prior's order stands, and the search moves it where they are not; a softmax
of the values alone makes near ties uniform, so the student's argmax there is anyone's.
``init`` starts the network from a PPO policy file's actor, zero weights on the marginals,
so it first plays exactly as that network. Both help with few labels and hold the student
where the prior was with many: the shipped recipe (``configs/student_fit_2p.yaml``)
trains from random weights on the values alone, over 300,000 labels (docs/results.md,
"The student"). Its
value head learns the search's value of the position in **one unit**: the search's deal
score divided by ``value_scale`` (1,000, the search's win bonus), so about the expected
win share (+1 a sure win, -1 a sure loss at two players) plus the charge differential /
1,000
(``train.expert.iteration.label_games`` defines the score).

The input is what the student bot reads at play time (``agents.student``): the v0
observation, the particle filter's marginals that the search saw at that position (the
labels' ``belief``) and the legal mask. The labels are the chunk files of
``python -m train.student.labels``: the first ``val_chunks`` chunks (the same games
however far the labelling has got) are held out, and the network trains on the following
chunks, up to ``max_labels`` labels. Each epoch prints the training and held-out figures;
at the end the held-out agreement with the search's move, the value loss and the mean
regret (the search's value of its best move minus its value of the student's, in points)
are printed and the file is written: a weights-only file (``agents.common.weights_file``)
whose metadata carries the particle filter's settings (those of the labelling search),
the layouts, the table and the value unit, so ``agents.make("student", path=OUT)`` plays
with the filter it was trained with.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from pis_env.cards import NUM_CARDS
from pis_env.engine import NUM_ACTIONS
from pis_env.observation import Layout
from pis_env.shipped import shipped_dir
from train.common.schema import ConfigError, Schema, add_arguments, as_dict, param

DEFAULT_CONFIG = shipped_dir("config") / "student_fit_2p.yaml"
#: How the search of the labels must have dealt its worlds: the student reads the
#: particle filter's marginals.
LABELLER_MODE = "particles"


@dataclass
class StudentFitConfig:
    """A training run of ``python -m train.student.fit`` (the module docstring)."""

    labels: str = param("data/student_2p/labels", "the labels directory of python -m "
                        "train.student.labels (its games_*.npz chunks and job.json)")
    out: str = param("models/student_2p.pt", "the student file written at the end")
    max_labels: int | None = param(None, "training labels at most, from the first chunks "
                                   "after the held-out ones (null: every chunk there)", ge=1)
    val_chunks: int = param(4, "the first chunks, held out for validation", ge=1)
    temperature: float = param(50.0, "the policy target: a softmax of the search's action "
                               "values / temperature (points) over the legal actions; 0: "
                               "the search's move alone", ge=0)
    prior: str | None = param(None, "a PPO policy file of the table whose logits are added "
                              "to values / temperature before the softmax (Gumbel "
                              "AlphaZero's improved policy: the prior's order kept where the "
                              "search's values are close, moved where they are not); null: "
                              "the values alone")
    value_scale: float = param(1000.0, "the value head's unit: the search's deal score / "
                               "value_scale (1000: about the win share)", gt=0)
    init: str | None = param(None, "a PPO policy file of the table (v0 layout, input "
                             "observation + mask) the student starts from: its actor's "
                             "weights, zero on the marginals, so it first plays as that "
                             "network does (its widths and activation replace hidden and "
                             "activation); null: random weights")
    features: list[str] = param(["obs", "belief", "mask"], "the network's inputs: the v0 "
                                "observation, the particle filter's marginals (belief) and "
                                "the legal mask; without belief the file written is a PPO "
                                "policy file (agents.make('ppo', path=OUT)) that plays "
                                "with no filter")
    hidden: list[int] = param([256, 256], "the trunk's layer widths")
    activation: str = param("relu", "the trunk's activation", choices=("relu", "tanh"))
    epochs: int = param(20, "passes over the training labels", ge=1)
    batch_size: int = param(256, "minibatch size", ge=1)
    learning_rate: float = param(1.0e-3, "Adam step size", gt=0)
    value_coef: float = param(0.5, "weight of the value loss beside the policy's "
                              "cross-entropy", ge=0)
    seed: int = param(0, "the network's initial weights and the minibatch order", ge=0)
    threads: int = param(2, "torch threads", ge=1)


#: The inputs a student may read: with the filter's marginals (a student file) or
#: without them (a PPO policy file).
FEATURE_SETS = (["obs", "belief", "mask"], ["obs", "mask"])


def _check(cfg: StudentFitConfig) -> StudentFitConfig:
    if list(cfg.features) not in FEATURE_SETS:
        raise ConfigError(f"features={cfg.features!r}: one of "
                          + " or ".join(str(f) for f in FEATURE_SETS))
    if not cfg.hidden or any(not isinstance(h, int) or isinstance(h, bool) or h < 1
                             for h in cfg.hidden):
        raise ConfigError(f"hidden={cfg.hidden!r}: a non-empty list of widths >= 1")
    return cfg


#: The config of ``python -m train.student.fit``.
CONFIG = Schema(StudentFitConfig, check=_check)


def load_config(path: str | Path | None = None,
                overrides: list[str] | None = None) -> StudentFitConfig:
    """Defaults, the YAML file, then ``key=value`` overrides, checked (typed)."""
    return CONFIG.build(path, overrides)


# ---------------------------------------------------------------------- the data
def read_job(directory: str | Path) -> dict:
    """The labelling job of a labels directory (``job.json``), checked: a search with
    the particle filter, whose marginals the student reads."""
    record = Path(directory) / "job.json"
    if not record.is_file():
        raise ConfigError(f"labels={directory}: no job.json there (not a labels directory "
                          "of python -m train.student.labels)")
    job = json.loads(record.read_text(encoding="utf-8"))
    mode = job.get("labeller", {}).get("determinize")
    if mode != LABELLER_MODE:
        raise ConfigError(f"labels={directory}: labelled by a search with determinize="
                          f"{mode!r}; the student reads the particle filter's marginals "
                          f"(determinize={LABELLER_MODE!r})")
    if int(job["rules"].get("num_deals", 1)) != 1 or int(job.get("env_version", 0)) != 0:
        raise ConfigError(f"labels={directory}: labels of single deals at v0 tables only")
    return job


def split_chunks(directory: str | Path, val_chunks: int,
                 max_labels: int | None = None) -> tuple[list[Path], list[Path]]:
    """``(training chunks, held-out chunks)``: the first ``val_chunks`` files in game
    order are held out; training takes the next ones until ``max_labels`` labels."""
    paths = sorted(Path(directory).glob("games_*.npz"))
    if len(paths) <= val_chunks:
        raise ConfigError(f"labels={directory}: {len(paths)} chunk file(s); at least "
                          f"{val_chunks + 1} are needed ({val_chunks} held out, val_chunks)")
    held, rest = paths[:val_chunks], paths[val_chunks:]
    if max_labels is None:
        return rest, held
    train, count = [], 0
    for path in rest:
        if count >= max_labels:
            break
        with np.load(path) as data:
            count += len(data["search"])
        train.append(path)
    return train, held


def policy_targets(values: np.ndarray, masks: np.ndarray, search: np.ndarray,
                   temperature: float, prior: np.ndarray | None = None) -> np.ndarray:
    """float32 [N, 58]: a softmax of ``values`` (points; NaN where illegal) over the legal
    actions at ``temperature``, plus ``prior`` logits [N, 58] where given (the improved
    policy ``softmax(prior + values / temperature)``); at 0, all the weight on the
    search's move."""
    out = np.zeros(values.shape, np.float32)
    if temperature == 0:
        out[np.arange(len(search)), search] = 1.0
        return out
    legal = masks.astype(bool) & ~np.isnan(values)
    z = np.where(legal, values, -np.inf) / temperature
    if prior is not None:
        z = z + np.where(legal, prior, 0.0)
    z -= z.max(axis=1, keepdims=True)
    e = np.where(legal, np.exp(z), 0.0)
    out[:] = e / e.sum(axis=1, keepdims=True)
    return out


def load_labels(paths: list[Path], cfg: StudentFitConfig,
                num_players: int) -> dict[str, np.ndarray]:
    """The chunks as imitation data (``train.common.pretrain.imitate``): ``x`` (the
    ``features``: v0 observation, marginals unless left out, mask), ``masks``,
    ``actions`` (the search's moves), ``targets`` (``policy_targets``), ``returns`` (the
    search's value / value_scale) and ``values`` (the action values in points, for the
    regret)."""
    size = Layout.of(num_players, 1, 0).size
    parts: dict[str, list] = {k: [] for k in ("obs", "belief", "mask", "search", "values",
                                              "value")}
    for path in paths:
        try:
            with np.load(path) as data:
                for k in parts:
                    parts[k].append(data[k])
        except KeyError as e:
            raise ConfigError(f"{path}: not a student label chunk (lacks {e})") from None
    a = {k: np.concatenate(v) for k, v in parts.items()}
    if a["obs"].shape[1] != size or a["belief"].shape[1] != (num_players - 1) * NUM_CARDS:
        raise ConfigError(f"{paths[0]}: observations {a['obs'].shape[1]} and beliefs "
                          f"{a['belief'].shape[1]} wide; a {num_players}-player student "
                          f"reads {size} and {(num_players - 1) * NUM_CARDS}")
    masks = a["mask"].astype(bool)
    search = a["search"].astype(np.int64)
    prior = None
    if cfg.prior:
        prior = prior_logits(cfg.prior, num_players, a["obs"], masks)
    columns = {"obs": a["obs"], "belief": a["belief"], "mask": masks}
    return {"x": np.concatenate([columns[f].astype(np.float32) for f in cfg.features], axis=1),
            "masks": masks, "actions": search,
            "targets": policy_targets(a["values"], masks, search, float(cfg.temperature),
                                      prior),
            "returns": (a["value"] / float(cfg.value_scale)).astype(np.float32),
            "values": a["values"]}


def prior_logits(path: str, num_players: int, obs: np.ndarray,
                 masks: np.ndarray) -> np.ndarray:
    """float64 [N, 58]: a PPO policy file's logits at the labels' positions."""
    from agents.ppo import PolicyLoadError, load_policy

    try:
        policy = load_policy(path, num_players, 1)
    except (FileNotFoundError, PolicyLoadError) as e:
        raise ConfigError(f"prior={path}: {e}") from None
    x = policy.inputs(obs.astype(np.float32), masks.astype(np.float32))
    return policy.logits(x).astype(np.float64)


# ---------------------------------------------------------------------- the network
def make_module(input_size: int, hidden: list[int], activation: str, seed: int = 0):
    """The torch network whose weights ``agents.student.StudentNetwork`` reads: ``trunk``
    (Linear, activation, ...), ``policy`` (58 logits), ``value`` (one number); its initial
    weights drawn from ``seed``."""
    import torch
    from torch import nn

    class Student(nn.Module):
        def __init__(self):
            super().__init__()
            layers, last = [], input_size
            for width in hidden:
                layers += [nn.Linear(last, width), nn.ReLU() if activation == "relu"
                           else nn.Tanh()]
                last = width
            self.trunk = nn.Sequential(*layers)
            self.policy = nn.Linear(last, NUM_ACTIONS)
            self.value = nn.Linear(last, 1)

        def forward(self, x, masks):
            h = self.trunk(x)
            logits = self.policy(h).masked_fill(~masks, -1e8)
            return logits, self.value(h).squeeze(-1)

    torch.manual_seed(int(seed))
    return Student()


def start_from(path: str, num_players: int, belief_input: bool = True
               ) -> tuple[dict, dict[str, np.ndarray]]:
    """``(hidden widths and activation, the student's initial weights)`` from a PPO policy
    file: its actor (``mlp_extractor.policy_net``, ``action_net``) as the trunk and the
    policy head, the first layer's columns placed at the observation's and the mask's
    positions of the student's input and zero on the marginals' (Net2Net's
    function-preserving growth, as ``train.common.checkpoint.widen_to_layout``), so the
    student's policy head starts as the network's (``belief_input`` false: the
    network's first layer as it is). The value head starts at random."""
    from agents.ppo import PolicyLoadError, check_layout, read_policy

    try:
        meta, state = read_policy(path)
        check_layout(meta, num_players, 1, source=str(path), layout_version=0)
    except (FileNotFoundError, PolicyLoadError) as e:
        raise ConfigError(f"init={path}: {e}") from None
    if list(meta["features"]) != ["obs", "mask"] or meta.get("obs_norm"):
        raise ConfigError(f"init={path}: the student starts from a network whose input is "
                          "the observation and the mask, not normalised")
    obs = Layout.of(num_players, 1, 0).size
    belief = (num_players - 1) * NUM_CARDS if belief_input else 0
    out, idx = {}, 0
    while f"mlp_extractor.policy_net.{idx}.weight" in state:
        w = state[f"mlp_extractor.policy_net.{idx}.weight"]
        if idx == 0:
            w = np.concatenate([w[:, :obs], np.zeros((w.shape[0], belief), w.dtype),
                                w[:, obs:]], axis=1)
        out[f"trunk.{idx}.weight"] = w
        out[f"trunk.{idx}.bias"] = state[f"mlp_extractor.policy_net.{idx}.bias"]
        idx += 2
    out["policy.weight"], out["policy.bias"] = state["action_net.weight"], \
        state["action_net.bias"]
    arch = {"hidden": list(meta["net_arch"]["pi"]), "activation": meta["activation"]}
    return arch, out


def filter_settings() -> dict:
    """The particle filter's settings of the labelling search (``determinize=particles``
    with no options: ``ParticleBelief``'s defaults), written out so that a later change
    of a default does not change what a trained student is shown."""
    import inspect

    from agents.belief.opponent_models import DEFAULT_MODEL
    from agents.belief.particles import ParticleBelief

    params = inspect.signature(ParticleBelief.__init__).parameters
    out = {k: params[k].default for k in ("particles", "moves", "ess_threshold", "smoothing")}
    out["opponent_model"] = DEFAULT_MODEL if params["opponent_model"].default is None \
        else params["opponent_model"].default
    return out


def metadata(cfg: StudentFitConfig, job: dict, input_size: int, labels: int) -> dict:
    """The student file's metadata (``agents.student``'s module docstring)."""
    from agents.student import FEATURES

    rules = dict(job["rules"])
    return {"num_players": int(rules["num_players"]), "num_deals": 1, "rules": rules,
            "layout_version": 0, "table_layout": 1, "features": list(FEATURES),
            "input_size": input_size, "hidden": list(cfg.hidden),
            "activation": cfg.activation, "filter": filter_settings(),
            "init": cfg.init, "prior": cfg.prior,
            "labeller": dict(job["labeller"]), "temperature": float(cfg.temperature),
            "value_scale": float(cfg.value_scale),
            "value_unit": f"the search's deal score / {cfg.value_scale:g} (charge "
                          "differential + 1000 x win share, agents.mc.deal_score)",
            "labels": int(labels)}


def save_policy(module, cfg: StudentFitConfig, job: dict, labels: int) -> Path:
    """A student without the marginals as a PPO policy file (the weights-only export that
    ``agents.make("ppo", path=...)`` reads): the trunk as the actor's layers, the policy
    head as its output; the value head is left out (``agents.ppo`` plays the actor)."""
    from agents.ppo import make_metadata
    from train.common.checkpoint import export_weights

    state = module.state_dict()
    names = {f"trunk.{i}.{p}": f"mlp_extractor.policy_net.{i}.{p}"
             for i in range(0, 2 * len(cfg.hidden), 2) for p in ("weight", "bias")}
    names.update({"policy.weight": "action_net.weight", "policy.bias": "action_net.bias"})
    meta = make_metadata(rules=dict(job["rules"]), net_arch={"pi": list(cfg.hidden),
                                                             "vf": []},
                         activation=cfg.activation, features=["obs", "mask"],
                         layout_version=0,
                         extra={"student": {"labels": int(labels),
                                            "labeller": dict(job["labeller"]),
                                            "temperature": float(cfg.temperature),
                                            "init": cfg.init, "prior": cfg.prior}})
    export_weights({names[k]: v for k, v in state.items() if k in names}, meta, Path(cfg.out))
    return Path(cfg.out)


def save_student(module, meta: dict, path: str | Path) -> Path:
    """The weights-only student file (``agents.student.read_student`` reads it)."""
    from agents.common.weights_file import save_weights_file
    from agents.student import FORMAT_VERSION, STUDENT_FORMAT

    return save_weights_file({
        "format": STUDENT_FORMAT, "format_version": FORMAT_VERSION, "meta": json.dumps(meta),
        "state_dict": {k: v.detach().cpu().clone() for k, v in module.state_dict().items()},
    }, path)


def regret(module, data: dict[str, np.ndarray]) -> float:
    """Mean points the student's argmax leaves on the table by the search's own values:
    the value of the search's best legal action minus that of the student's choice."""
    import torch

    with torch.no_grad():
        logits, _ = module(torch.as_tensor(data["x"]), torch.as_tensor(data["masks"]))
    chosen = logits.argmax(dim=1).numpy()
    values = np.where(data["masks"], data["values"], -np.inf)
    rows = np.arange(len(chosen))
    return float((values.max(axis=1) - values[rows, chosen]).mean())


def run(cfg: StudentFitConfig, say=print) -> dict:
    """Trains a student on ``cfg``'s labels, writes ``cfg.out`` and returns the
    figures (labels, minutes, held-out agreement, value loss, regret)."""
    import torch

    from train.common.pretrain import EpochCheckpoint, evaluate, imitate

    torch.set_num_threads(int(cfg.threads))
    t0 = time.perf_counter()
    job = read_job(cfg.labels)
    n = int(job["rules"]["num_players"])
    train_paths, held_paths = split_chunks(cfg.labels, cfg.val_chunks, cfg.max_labels)
    data = load_labels(train_paths, cfg, n)
    if cfg.max_labels is not None:
        data = {k: v[:cfg.max_labels] for k, v in data.items()}
    val = load_labels(held_paths, cfg, n)
    count, size = len(data["actions"]), data["x"].shape[1]
    say(f"student: {count:,} training labels from {len(train_paths)} chunk(s), "
        f"{len(val['actions']):,} held out ({len(held_paths)} chunk(s)); input {size}, "
        f"hidden {cfg.hidden}, temperature {cfg.temperature:g} points")
    belief_input = "belief" in cfg.features
    if cfg.init:
        arch, weights = start_from(cfg.init, n, belief_input)
        cfg = replace(cfg, **arch)
        say(f"student: starting from {cfg.init}'s actor ({arch['hidden']}, "
            f"{arch['activation']}"
            + ("; zero weights on the marginals)" if belief_input else ")"))
    module = make_module(size, cfg.hidden, cfg.activation, cfg.seed)
    if cfg.init:
        own = module.state_dict()
        own.update({k: torch.as_tensor(v, dtype=torch.float32) for k, v in weights.items()})
        module.load_state_dict(own)
    # Killed mid-fit, the same command resumes from the last finished epoch.
    settings = {k: v for k, v in as_dict(cfg).items() if k not in ("out", "threads")}
    checkpoint = EpochCheckpoint(Path(f"{cfg.out}.partial"), settings)
    stats = imitate(module, module, data, cfg.epochs, cfg.batch_size, cfg.learning_rate,
                    cfg.value_coef, cfg.seed, log=say, val=val, checkpoint=checkpoint)
    held = evaluate(module, module, val)
    out = {"labels": count, "minutes": (time.perf_counter() - t0) / 60,
           "val_agreement": held["accuracy"], "val_value_loss": held["value_loss"],
           "val_cross_entropy": held["cross_entropy"], "val_regret": regret(module, val),
           "train_agreement": stats["accuracy"]}
    path = (save_student(module, metadata(cfg, job, size, count), cfg.out) if belief_input
            else save_policy(module, cfg, job, count))
    checkpoint.remove()
    say(f"held out: agreement with the search's move {out['val_agreement']:.1%}, value loss "
        f"{out['val_value_loss']:.4f} ((value / {cfg.value_scale:g})^2), regret "
        f"{out['val_regret']:.1f} points a decision; {out['minutes']:.1f} min; wrote {path}")
    return out


def main(argv: list[str] | None = None) -> int:
    from agents.common.cli import error_exit
    from train.common.entry import preamble

    p = argparse.ArgumentParser(prog="python -m train.student.fit",
                                description=__doc__.split("\n\n")[0])
    add_arguments(p, DEFAULT_CONFIG)
    p.add_argument("--labels", help="the labels directory (config key labels)")
    p.add_argument("--out", help="the student file to write (config key out)")
    p.add_argument("--max-labels", type=int, help="training labels at most (max_labels)")
    p.add_argument("--epochs", type=int, help="passes over the labels (epochs)")
    args = p.parse_args(argv)
    overrides = list(args.overrides)
    for key, value in (("labels", args.labels), ("out", args.out),
                       ("max_labels", args.max_labels), ("epochs", args.epochs)):
        if value is not None:
            overrides.append(f"{key}={value}")
    start = preamble(p, args, CONFIG,
                     lambda: load_config(args.config or DEFAULT_CONFIG, overrides))
    if start.exit is not None:
        return start.exit
    try:
        run(start.cfg, say=lambda line: print(line, flush=True))
    except ConfigError as e:
        return error_exit(p.prog, str(e))
    return 0

__all__ = ["CONFIG", "StudentFitConfig", "load_config", "load_labels", "main", "make_module",
           "policy_targets", "prior_logits", "read_job", "regret", "run", "save_policy",
           "save_student",
           "split_chunks", "start_from"]

if __name__ == "__main__":
    sys.exit(main())
