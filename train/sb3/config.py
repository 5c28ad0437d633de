"""``train/ppo.py``'s config: the keys of a MaskablePPO run (``TrainConfig``) and their
checks, declared with ``train.common.schema`` (the machinery every entry point shares).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from pis_env import Rules
from pis_env.observation import segment_table
from train.common import run_fields
from train.common.pretrain import ImitationConfig
from train.common.schema import (  # noqa: F401  (re-exported: the config API of a run)
    MAX_SEED,
    ConfigError,
    Key,
    Schema,
    _hint,
    add_arguments,
    as_dict,
    check_mix,
    check_teacher,
    dump,
    find_file,
    mapping,
    param,
    section,
)


# ---------------------------------------------------------------------- the hyperparameters
@dataclass
class PPOConfig:
    learning_rate: float = param(5.0e-4, "Adam step size of the PPO updates", gt=0)
    lr_schedule: str = param("constant", "constant; linear: annealed to lr_final_fraction "
                             "of learning_rate at total_timesteps; budget: the same, at "
                             "whichever limit stops the run first (total_timesteps or "
                             "max_minutes)",
                             choices=("constant", "linear", "budget"))
    lr_final_fraction: float = param(0.1, "the linear schedule's final fraction", ge=0, le=1)
    n_steps: int = param(32, "steps per env per rollout", gt=0)
    batch_size: int = param(8192, "minibatch size of the PPO updates", gt=0)
    n_epochs: int = param(1, "passes over each rollout", gt=0)
    gamma: float = param(1.0, "discount factor (a deal is short: 1 keeps the points exact)",
                         ge=0, le=1)
    gae_lambda: float = param(0.95, "GAE lambda (lower leans more on the critic)", ge=0, le=1)
    clip_range: float = param(0.2, "PPO's policy ratio clipping", gt=0)
    ent_coef: float = param(0.01, "entropy bonus coefficient", ge=0)
    vf_coef: float = param(0.5, "value loss coefficient", ge=0)
    max_grad_norm: float = param(0.5, "gradient clipping norm", gt=0)
    target_kl: float | None = param(None, "stop an update's epochs past this KL "
                                       "(null: never)")
    normalize_advantage: bool = param(True, "normalise advantages per minibatch")


@dataclass
class PolicyConfig:
    net_arch: list[int] = param([256, 256], "hidden layer widths of the actor and the critic")
    activation: str = param("tanh", "hidden activation", choices=("tanh", "relu"))
    ortho_init: bool = param(True, "orthogonal initialisation (SB3's default)")
    features: list[str] = param(["obs", "mask"], "network input: the observation ('obs'), "
                                "then optionally the legal mask ('mask')")
    normalize_obs: bool = param(False, "running mean/std normalisation of the input "
                                "(VecNormalize)")
    privileged_critic: bool = param(True, "the value net also sees the hidden cards "
                                    "(train/sb3/policy.py)")
    hide_from_actor: list[str] = param([], "observation segments the actor never reads (an "
                                       "ablation, e.g. [drew_on_suit, discard])")
    oracle_actor: bool = param(False, "an oracle probe: the actor also reads the hidden "
                               "cards (the critic's privileged features), which no table "
                               "shows a bot, to measure what that information could buy; "
                               "needs privileged_critic, no 'self' or 'ppo:' opponents and "
                               "eval.deals=0 (no table can seat it: its saved policy is "
                               "marked and refused); compare the runs' train_win_rates")
    hidden_cards_head: float = param(0.0, "weight of an auxiliary loss: a linear head on "
                                     "the actor's last hidden layer predicts the "
                                     "opponents' hands (binary cross-entropy against the "
                                     "critic's privileged features); 0: no head. Needs "
                                     "privileged_critic and normalize_obs=false; the "
                                     "played policy does not include the head", ge=0)


@dataclass
class LeagueConfig:
    opponents: dict[str, float] = param(
        {"heuristic": 0.8, "self": 0.2}, "the mix each opponent seat is drawn from: agent "
        "names of agents.make, 'ppo:PATH', and 'self' for the pool of the learner's snapshots")
    learner_seat: int | None = param(None, "the learner's seat (null: a random seat every "
                                        "episode)")
    snapshot_every: int = param(500_000, "steps between snapshots of the learner for the pool",
                                gt=0)
    pool_size: int = param(10, "snapshots kept in the pool", gt=0)
    prioritized: bool = param(True, "pick snapshots the learner still loses to more often")
    priority_power: float = param(2.0, "a snapshot's weight is (1 - score)^p (AlphaStar's "
                                  "PFSP 'hard')", ge=0)
    snapshot_deterministic: bool = param(False, "snapshots play their argmax instead of "
                                         "sampling")
    window: int = param(500, "results kept per opponent for stats and priorities", gt=0)


@dataclass
class PretrainConfig(ImitationConfig):
    data: list[str] = param([], "imitate the labelled positions of these .npz files "
                            "(train/expert/iteration.py) instead of a teacher's decisions")


@dataclass
class CheckpointConfig:
    every: int = param(2_000_000, "steps between checkpoints (also at the end and on Ctrl-C)",
                       gt=0)
    keep: int = param(2, "checkpoints kept (0: all)", ge=0)


@dataclass
class EvalConfig:
    opponents: list[str] = param(["random", "greedy", "heuristic"],
                                 "bots the final policy is evaluated against")
    deals: int = param(1000, "duplicate deals per opponent (0: no evaluation)", ge=0)
    seed: int = param(2024, "seed of the evaluation deals", ge=0, le=MAX_SEED)
    workers: int | None = param(None, "tournament worker processes (null: all cores)", ge=1)


@dataclass
class LogConfig:
    tensorboard: bool = param(True, "TensorBoard logs in the run's tb/ (with the resolved "
                              "config as text)")
    progress: bool = param(True, "a progress bar on a terminal, lines in a log file")
    interval: float = param(30.0, "seconds between progress lines when stderr is not a "
                            "terminal", ge=0)
    win_window: int = param(1000, "episodes in the 'recent win rate'", gt=0)


@dataclass
class TrainConfig:
    """A training run of ``train/sb3/run.py``: the 2-player recipe of ``configs/ppo_2p.yaml``."""

    name: str = run_fields.name("ppo_2p")
    run_dir: str | None = run_fields.run_dir()
    seed: int = run_fields.seed("the model, the envs and the pretraining")
    init_policy: str | None = param(None, "start from this saved policy's weights (a .zip "
                                       "or .pt of train/sb3/run.py for the same table and "
                                       "network); pretraining, if set, continues from them")
    init_widen: bool = param(False, "init_policy may be of an earlier observation layout "
                             "(a v0 network in an env_version=1 run) or of single deals "
                             "(a deal-level network in a rules.num_deals>1 run): its first "
                             "layers get zero weights on the new columns, so the network "
                             "starts playing exactly as that policy")
    total_timesteps: int = param(20_000_000, "PPO steps to train for", gt=0)
    max_minutes: float | None = param(7.0, "stop after this much training time, "
                                         "cumulative, pretraining included (null: no limit)",
                                         gt=0)
    num_players: int | None = param(2, "players at the table (null: take it from the "
                                       "rules)")
    env_version: int = run_fields.env_version(
        "the env the learner plays, pis_yedili_v<N>: observation layout N is the network's "
        "input (0: the v0 snapshot; 1: v1, plus a per-opponent summary and the public event "
        "log) and its pretraining data, checkpoints, saved policy and evaluation use it; "
        "ppo:PATH opponents keep their own layout")
    rules_file: str | None = param(None, "a rules YAML (configs/rules/*.yaml); also "
                                      "rules=PATH.yaml", path=True)
    rules: dict[str, Any] = mapping({}, "rules options on top of rules_file (pis_env "
                                    "keywords, e.g. rules.draw_rule=one)", keys=Rules.keys)
    win_bonus: float = param(0.5, "added to the learner's reward at a match end: +bonus for a "
                             "win, -bonus shared by the losers", ge=0)
    skip_forced: bool = param(True, "the env plays the learner's forced moves (1 legal "
                              "action)")
    n_envs: int = param(512, "games stepped together", gt=0)
    vec_env: str = param("batched", "dummy | subproc | batched (the numba engine) | "
                         "module:function (a VecEnv factory)",
                         choices=("dummy", "subproc", "batched"), also="module:function")
    torch_threads: int = param(1, "torch.set_num_threads (0: torch's default); 1 suits 2 "
                               "busy cores", ge=0)
    ppo: PPOConfig = section(PPOConfig, "MaskablePPO")
    policy: PolicyConfig = section(PolicyConfig, "the network")
    league: LeagueConfig = section(LeagueConfig, "the opponents")
    pretrain: PretrainConfig = section(PretrainConfig, "imitation of a bot before PPO")
    checkpoint: CheckpointConfig = section(CheckpointConfig, "checkpoints")
    eval: EvalConfig = section(EvalConfig, "the final evaluation")
    log: LogConfig = section(LogConfig, "logging and progress")
    export_pt: bool = param(True, "also write the weights-only policy.pt")


# ---------------------------------------------------------------------- train/sb3/run.py
def _check_train(cfg: TrainConfig) -> TrainConfig:
    """What relates several keys of ``TrainConfig``, then ``rules`` resolved."""
    arch = cfg.policy.net_arch
    if not arch or not all(h > 0 for h in arch):
        raise ConfigError(f"policy.net_arch={arch!r}: a list of positive layer widths")
    feats = cfg.policy.features
    if len(set(feats)) != len(feats) or not set(feats) <= {"obs", "mask"} or "obs" not in feats:
        raise ConfigError(f"policy.features={feats!r}: 'obs', optionally with 'mask'")
    segments = [name for name, _ in segment_table(7, 2, cfg.env_version)]
    unknown = [h for h in cfg.policy.hide_from_actor if h not in segments]
    if unknown:
        raise ConfigError(f"policy.hide_from_actor: unknown observation segment(s) "
                          f"{unknown}; the segments are {', '.join(segments)}")
    check_mix("league.opponents", cfg.league.opponents, also=("self", "ppo:"))
    if cfg.policy.oracle_actor:
        nets = [k for k in cfg.league.opponents if k == "self" or k.startswith("ppo:")]
        why = ("policy.privileged_critic is false (the hidden cards are not in the input)"
               if not cfg.policy.privileged_critic else
               f"league.opponents has {nets} (a network opponent is played without the "
               "hidden cards)" if nets else
               f"eval.deals={cfg.eval.deals} (no table can show it the hidden cards)"
               if cfg.eval.deals else None)
        if why:
            raise ConfigError(f"policy.oracle_actor=true: {why}")
    if cfg.policy.hidden_cards_head:
        why = ("policy.privileged_critic is false (the hands are its targets)"
               if not cfg.policy.privileged_critic else
               "policy.normalize_obs is true (its targets are the raw 0/1 hands)"
               if cfg.policy.normalize_obs else None)
        if why:
            raise ConfigError(f"policy.hidden_cards_head={cfg.policy.hidden_cards_head}"
                              f": {why}")
    if cfg.pretrain.teacher is not None and cfg.pretrain.data:
        raise ConfigError("pretrain.teacher and pretrain.data are alternatives: set one "
                          "(the other null)")
    check_teacher("pretrain.teacher", cfg.pretrain.teacher)
    from agents import REGISTRY

    for name in cfg.eval.opponents:
        if name not in REGISTRY and not str(name).startswith("ppo:"):
            close = difflib.get_close_matches(str(name), list(REGISTRY), n=3)
            raise ConfigError(f"eval.opponents: unknown agent {name!r}{_hint(close)}")
    return _resolve_rules(cfg)


def _resolve_rules(cfg: TrainConfig) -> TrainConfig:
    """``rules`` expanded into every option (``rules_file`` under the ``rules`` options,
    ``num_players`` over both) and ``num_players`` set from them."""
    options: dict[str, Any] = {}
    if cfg.rules_file:
        path = find_file(cfg.rules_file, "rules")
        if not path.exists():
            from pis_env.shipped import shipped_names

            raise ConfigError(f"rules_file not found: {cfg.rules_file} (shipped rules: "
                              f"{', '.join(shipped_names('rules'))})")
        try:
            options.update(Rules.from_yaml(path).to_dict())
        except ValueError as e:
            raise ConfigError(f"rules_file: {e}") from e
    options.update(cfg.rules)
    if cfg.num_players is not None:
        options["num_players"] = cfg.num_players
    options.pop("illegal_action", None)
    try:
        rules = Rules.from_options(**options)
    except ValueError as e:
        raise ConfigError(f"rules: {e}") from e
    cfg.rules = {k: v for k, v in rules.to_dict().items() if k != "illegal_action"}
    cfg.num_players = rules.num_players
    seat = cfg.league.learner_seat
    if seat is not None and not 0 <= seat < rules.num_players:
        raise ConfigError(f"league.learner_seat={seat}: must be in 0..{rules.num_players - 1}")
    return cfg


#: ``train/sb3/run.py``'s config; the names below are its API.
TRAIN = Schema(TrainConfig, prefer="ppo", check=_check_train)
FIELDS: dict[str, Key] = TRAIN.fields
SECTIONS = tuple(TRAIN.sections)
SHORT_NAMES = TRAIN.short_names
DEFAULTS: dict[str, Any] = TRAIN.defaults
canonical_key = TRAIN.canonical_key
parse_overrides = TRAIN.parse_overrides
flatten = TRAIN.flatten
load_file = TRAIN.load_file
build = TRAIN.build
help_text = TRAIN.help_text
hyperparameters_markdown = TRAIN.hyperparameters_markdown


def resolve(cfg: TrainConfig | dict) -> TrainConfig:
    """Checks a complete config (typed or a dict) and expands its rules into every option
    (a new object)."""
    return build(base=cfg)
