#!/usr/bin/env python
"""Train a Pis Yedili agent with sb3-contrib's MaskablePPO against a league of opponents.

    python train/ppo.py                                  # 2 players, configs/ppo_2p.yaml
    python train/ppo.py --config configs/ppo_4p.yaml
    python train/ppo.py total_timesteps=200000 ppo.learning_rate=1e-4 num_players=3
    python train/ppo.py rules=configs/rules/double.yaml league.opponents='{heuristic: 1}'
    python train/ppo.py --resume runs/ppo_2p-20260101-120000   # continue a run
    python train/ppo.py --print-config                   # the resolved config, no training
    python train/ppo.py --help-config                    # every key, its default and help

``run`` reads top to bottom: config and run directory (or the run to resume) → envs and
opponents → model → pretraining → learning → saving → evaluation. Every run writes into
its run directory (``run_dir=``, default ``runs/<name>-<timestamp>``): ``config.yaml``
(the full resolved config), ``checkpoints/`` (every ``checkpoint.every`` steps, at the
end and on Ctrl-C), ``tb/`` (TensorBoard, with the config as text), ``policy.zip`` (SB3
archive) and ``policy.pt`` (weights only), ``eval.json``.
``agents.make("ppo", path=".../policy.zip")`` plays the result.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from pis_env.shipped import shipped_dir
from train.common.schema import ConfigError, as_dict
from train.sb3 import config as config_mod
from train.sb3.config import PPOConfig, TrainConfig

#: The shipped 2-player recipe (``configs/ppo_2p.yaml``; found in a wheel too).
DEFAULT_CONFIG = shipped_dir("config") / "ppo_2p.yaml"


# ---------------------------------------------------------------------- envs and model
def make_vec_env(cfg: TrainConfig, league, seed: int):
    """``n_envs`` games the learner plays: the batched numba engine (``vec_env=batched``),
    LeagueEnvs in a DummyVecEnv / SubprocVecEnv, or ``vec_env="module:function"``, a
    factory called as ``function(cfg, league, seed)``. A factory's VecEnv must answer
    ``env_method("action_masks")``, put the policy input (see ``policy.features``) in its
    observations and ``info["league"]`` (as ``LeagueEnv`` does) at episode ends."""
    import importlib

    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    kind = cfg.vec_env
    if kind == "batched":
        try:
            from train.vector.sb3_vec_env import make_league_vec_env
        except ImportError as e:  # numba (the 'fast' extra) missing
            raise ConfigError(
                f"vec_env=batched needs numba: pip install 'pis-yedili[fast]' ({e})"
            ) from e
        return make_league_vec_env(cfg, league, seed)
    if ":" in kind:
        module_name, _, func_name = kind.partition(":")
        try:
            factory = getattr(importlib.import_module(module_name), func_name)
        except (ImportError, AttributeError) as e:
            raise ConfigError(f"vec_env={kind!r}: cannot load it ({e})") from e
        return factory(cfg, league, seed)
    fns = [LeagueEnvFactory(cfg, league, seed * 1000 + i) for i in range(cfg.n_envs)]
    return SubprocVecEnv(fns) if kind == "subproc" else DummyVecEnv(fns)


@dataclass(frozen=True)
class LeagueEnvFactory:
    """Builds game ``seed``'s ``LeagueEnv`` (in a subprocess, for ``vec_env=subproc``)."""

    cfg: TrainConfig
    league: object  # train.common.league.League
    seed: int

    def __call__(self):
        from train.common.league import LeagueEnv

        cfg = self.cfg
        return LeagueEnv(self.league, cfg.rules, features=tuple(cfg.policy.features),
                         learner_seat=cfg.league.learner_seat, seed=self.seed,
                         win_bonus=cfg.win_bonus, skip_forced=cfg.skip_forced,
                         privileged=cfg.policy.privileged_critic,
                         env_version=cfg.env_version)


def actor_dim(cfg: TrainConfig) -> int:
    """The size of the policy's input (the observation of the ``env_version``'s layout,
    then the mask)."""
    from agents.ppo import input_size_of
    from pis_env.observation import Layout

    rules = cfg.rules
    return input_size_of(Layout.of(rules["num_players"], rules["num_deals"],
                                   cfg.env_version).size, cfg.policy.features)


def check_vec_env_size(cfg: TrainConfig, vec_env) -> None:
    """Refuses a VecEnv whose observations are not the network input this config
    trains on (``actor_dim``, plus the hidden cards for a privileged critic): a
    ``vec_env`` factory that ignores ``env_version`` would otherwise train a network
    whose saved metadata names another layout."""
    from pis_env.privileged import privileged_size

    want = actor_dim(cfg)
    if cfg.policy.privileged_critic:
        want += privileged_size(cfg.rules["num_players"])
    have = vec_env.observation_space.shape[0]
    if have != want:
        vec_env.close()
        raise ConfigError(
            f"vec_env={cfg.vec_env!r} gives observations of {have} entries, but "
            f"env_version={cfg.env_version} with policy.features="
            f"{cfg.policy.features} needs {want}: its factory does not build the "
            f"pis_yedili_v{cfg.env_version} table")


@dataclass(frozen=True)
class LinearSchedule:
    """SB3 learning-rate schedule: ``lr`` down to ``lr * final`` at the end of training
    (``progress_remaining`` goes from 1 to 0)."""

    lr: float
    final: float

    def __call__(self, progress_remaining: float) -> float:
        return self.lr * (self.final + (1.0 - self.final) * progress_remaining)


@dataclass(frozen=True)
class BudgetSchedule(LinearSchedule):
    """``LinearSchedule`` over whichever limit stops the run first: a run that
    ``max_minutes`` stops before ``total_timesteps`` reaches ``lr * final`` at the time
    limit instead of stopping with its step schedule barely begun. ``budget`` is the
    run's ``train.common.callbacks.Budget`` (the clock counts every session of a run)."""

    budget: object = None

    def __call__(self, progress_remaining: float) -> float:
        if self.budget.limit_s is not None:
            time_left = 1.0 - self.budget.elapsed() / self.budget.limit_s
            progress_remaining = max(0.0, min(progress_remaining, time_left))
        return super().__call__(progress_remaining)


def learning_rate(ppo: PPOConfig, budget):
    """The ``learning_rate`` argument of the config's ``ppo.lr_schedule`` for a run of
    limits ``budget``."""
    lr, final = float(ppo.learning_rate), float(ppo.lr_final_fraction)
    if ppo.lr_schedule == "constant":
        return lr
    if ppo.lr_schedule == "linear":
        return LinearSchedule(lr, final)
    return BudgetSchedule(lr, final, budget)


def make_model(cfg: TrainConfig, vec_env, run_dir: Path, budget):
    """A MaskablePPO with the config's hyperparameters (and privileged critic); ``budget``
    (the run's limits) is what ``lr_schedule: budget`` anneals over."""
    import torch
    from sb3_contrib import MaskablePPO

    from train.sb3.policy import PrivilegedCriticPolicy, hidden_columns, hide_from_actor

    ppo, policy, rules = cfg.ppo, cfg.policy, cfg.rules
    policy_class: object = "MlpPolicy"
    policy_kwargs = {"net_arch": list(policy.net_arch), "ortho_init": policy.ortho_init,
                     "activation_fn": {"tanh": torch.nn.Tanh,
                                       "relu": torch.nn.ReLU}[policy.activation]}
    if policy.privileged_critic:
        from pis_env.privileged import privileged_size

        policy_class = PrivilegedCriticPolicy
        policy_kwargs["actor_dim"] = actor_dim(cfg) + (
            privileged_size(rules["num_players"]) if policy.oracle_actor else 0)
        if policy.hidden_cards_head:  # the opponents' hands follow the policy input
            hands = actor_dim(cfg)
            policy_kwargs["hidden_cards"] = (hands, hands + 52 * (rules["num_players"] - 1),
                                             float(policy.hidden_cards_head))
    model = MaskablePPO(
        policy_class,
        vec_env,
        learning_rate=learning_rate(ppo, budget),
        n_steps=ppo.n_steps,
        batch_size=ppo.batch_size,
        n_epochs=ppo.n_epochs,
        gamma=ppo.gamma,
        gae_lambda=ppo.gae_lambda,
        clip_range=ppo.clip_range,
        ent_coef=ppo.ent_coef,
        vf_coef=ppo.vf_coef,
        max_grad_norm=ppo.max_grad_norm,
        target_kl=ppo.target_kl,
        normalize_advantage=ppo.normalize_advantage,
        policy_kwargs=policy_kwargs,
        tensorboard_log=str(run_dir / "tb") if cfg.log.tensorboard else None,
        seed=int(cfg.seed),
        device="cpu",
        verbose=0,
    )
    if not cfg.log.tensorboard:
        # SB3's default logger makes an empty tempdir/SB3-<time> folder at every learn()
        from stable_baselines3.common.logger import Logger

        model.set_logger(Logger(folder=None, output_formats=[]))
    hide_from_actor(model.policy, hidden_columns(rules["num_players"], rules["num_deals"],
                                                 policy.hide_from_actor,
                                                 cfg.env_version))
    return model


def obs_norm_of(vec_env, size: int) -> dict | None:
    """The running normalisation of the policy's inputs (the first ``size`` entries)."""
    from stable_baselines3.common.vec_env import VecNormalize

    if not isinstance(vec_env, VecNormalize):
        return None
    rms = vec_env.obs_rms
    return {"mean": rms.mean[:size].astype(float).tolist(),
            "var": rms.var[:size].astype(float).tolist(),
            "full_mean": rms.mean.astype(float).tolist(),
            "full_var": rms.var.astype(float).tolist(),
            "count": float(rms.count), "clip": float(vec_env.clip_obs),
            "epsilon": float(vec_env.epsilon)}


# ---------------------------------------------------------------------- run directory
def new_run_dir(cfg: TrainConfig) -> Path:
    if cfg.run_dir:
        return Path(cfg.run_dir)
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = Path("runs") / f"{cfg.name}-{stamp}"
    k = 1
    while path.exists():
        k += 1
        path = Path("runs") / f"{cfg.name}-{stamp}-{k}"
    return path


def load_run_config(run_dir: Path, overrides: list[str] | dict | None = None) -> dict:
    """The saved config of a run, with overrides (e.g. a larger ``total_timesteps``)."""
    import yaml

    path = Path(run_dir) / "config.yaml"
    if not path.is_file():
        raise ConfigError(f"{run_dir} is not a run directory (no config.yaml)")
    try:
        saved = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: corrupt config ({e})") from e
    if not isinstance(saved, dict):
        raise ConfigError(f"{path}: corrupt config (not a mapping of keys)")
    before = config_mod.build(base=saved)
    cfg = config_mod.build(None, overrides, base=saved)
    changed = [k for k in ("rules", "num_players", "env_version", "policy", "n_envs")
               if json.dumps(as_dict(getattr(cfg, k)), sort_keys=True)
               != json.dumps(as_dict(getattr(before, k)), sort_keys=True)]
    if changed:
        raise ConfigError(f"--resume cannot change {', '.join(changed)} of a run")
    cfg.run_dir = str(run_dir)
    return cfg


@dataclass
class RunStart:
    """Where a run starts: its resolved config, its directory and, when it resumes, the
    newest intact checkpoint (``None`` for a new run). Everything a resume restores goes
    through here."""

    cfg: TrainConfig
    run_dir: Path
    checkpoint: object | None = None  # train.common.checkpoint.Checkpoint

    @property
    def resumed(self) -> bool:
        return self.checkpoint is not None

    @property
    def state(self) -> dict:
        return self.checkpoint.state if self.resumed else {}

    @property
    def step(self) -> int:
        return int(self.state.get("num_timesteps", 0))

    def restore_league(self, league) -> None:
        if self.resumed:
            league.load_state_dict(self.checkpoint.league)

    def restore_model(self, model, vec_env) -> None:
        """Weights, optimizer, counters, seeds and input normalisation from the
        checkpoint's weights-only state: nothing in the run directory runs. A new run
        with ``init_policy`` starts from that policy's weights instead."""
        from train.common.checkpoint import CheckpointError

        if not self.resumed:
            if self.cfg.init_policy:
                self._load_initial_policy(model, vec_env)
            return
        try:
            model.policy.load_state_dict(self.checkpoint.policy)
            model.policy.optimizer.load_state_dict(self.checkpoint.optimizer)
        except (RuntimeError, ValueError, KeyError) as e:
            raise CheckpointError(f"checkpoint {self.checkpoint.path} does not fit the "
                                  f"config's network: {e}") from e
        model.num_timesteps = self.step
        model._n_updates = int(self.state.get("n_updates", 0))
        model.set_random_seed(int(self.cfg.seed) + self.step)
        set_obs_norm(vec_env, self.state.get("obs_norm"))

    def _load_initial_policy(self, model, vec_env) -> None:
        from train.common.checkpoint import CheckpointError, read_initial_policy

        path = self.cfg.init_policy
        state, norm = read_initial_policy(path, self.cfg)
        # a policy trained without the hidden-cards head starts one: the head's own
        # weights keep their initialisation, every other weight must fit
        head = {k: v for k, v in model.policy.state_dict().items()
                if k.startswith("hidden_cards_head.")}
        try:
            model.policy.load_state_dict({**head, **state})
        except (RuntimeError, ValueError, KeyError) as e:
            raise CheckpointError(f"init_policy {path} does not fit the config's network "
                                  f"(policy.net_arch, privileged_critic): {e}") from e
        set_obs_norm(vec_env, norm)


def set_obs_norm(vec_env, norm: dict | None) -> None:
    """Restores the input normalisation a checkpoint or policy saved (``obs_norm_of``)."""
    import numpy as np

    if norm is not None and hasattr(vec_env, "obs_rms"):
        vec_env.obs_rms.mean = np.asarray(norm.get("full_mean", norm["mean"]), np.float64)
        vec_env.obs_rms.var = np.asarray(norm.get("full_var", norm["var"]), np.float64)
        vec_env.obs_rms.count = float(norm["count"])


def open_run(cfg: TrainConfig | None, resume: str | Path | None, overrides,
             trusted_modules) -> RunStart:
    """A new run's directory with its ``config.yaml`` (``cfg``, else the default config
    with ``overrides``), or the run in ``resume``: its saved config with ``overrides``
    (saved into it at once, so a later ``--resume`` keeps them) and its newest intact
    checkpoint. Everything the run needs is checked before a directory is created
    (``train.common.preflight``)."""
    from train.common import checkpoint as ckpt
    from train.common.preflight import check_run

    if resume is not None:
        run_dir = Path(resume)
        cfg = load_run_config(run_dir, overrides)
        check_run(cfg, trusted_modules)
        found = ckpt.find_checkpoint(run_dir, cfg.rules["num_players"],
                                     cfg.rules["num_deals"], ckpt.layout_version_of(cfg))
        if overrides:
            ckpt.atomic_write_text(run_dir / "config.yaml", config_mod.dump(cfg))
        return RunStart(cfg, run_dir, found)
    if cfg is None:
        cfg = config_mod.build(DEFAULT_CONFIG if DEFAULT_CONFIG.exists() else None, overrides)
    check_run(cfg, trusted_modules)
    run_dir = new_run_dir(cfg)
    if (run_dir / ckpt.CHECKPOINTS).exists():
        raise ConfigError(f"{run_dir} already holds a run; use --resume {run_dir} or "
                          "another run_dir")
    run_dir.mkdir(parents=True, exist_ok=True)
    cfg = dataclasses.replace(cfg, run_dir=str(run_dir))
    ckpt.atomic_write_text(run_dir / "config.yaml", config_mod.dump(cfg))
    return RunStart(cfg, run_dir)


# ---------------------------------------------------------------------- the live run
class LiveRun:
    """What the training callback reaches while PPO learns: snapshots of the learner into
    the league, the league's pool sent to subprocess envs, checkpoints to disk."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, model, league, vec_env, budget,
                 pretrain: dict | None = None):
        self.cfg, self.run_dir, self.model = cfg, run_dir, model
        self.league, self.vec_env, self.budget = league, vec_env, budget
        self.pretrain = pretrain  # the imitation's statistics, kept in every checkpoint

    def obs_norm(self) -> dict | None:
        return obs_norm_of(self.vec_env, actor_dim(self.cfg))

    def take_snapshot(self, step: int) -> None:
        from agents.ppo import NumpyPolicy
        from train.common.checkpoint import policy_metadata

        if not self.league.uses_pool:
            return
        meta = policy_metadata(self.cfg, self.model, self.obs_norm(), step=step)
        state = {k: v.detach().cpu().numpy().copy()
                 for k, v in self.model.policy.state_dict().items()}
        self.league.add_snapshot(step, NumpyPolicy(meta, state))

    def sync_league(self, pool_changed: bool) -> None:
        if self.cfg.vec_env == "subproc":
            self.vec_env.env_method("league_sync", self.league.sync_payload(pool_changed))

    def save_checkpoint(self) -> Path:
        from train.common.checkpoint import save_checkpoint

        return save_checkpoint(
            self.run_dir, self.model, self.league, self.cfg,
            {"train_seconds": self.budget.elapsed(), "seed": int(self.cfg.seed),
             "total_timesteps": int(self.cfg.total_timesteps), "pretrain": self.pretrain},
            obs_norm=self.obs_norm(), keep=self.cfg.checkpoint.keep,
        )


class Say:
    """``print`` when verbose, flushed (the run's own messages)."""

    def __init__(self, verbose: bool):
        self.verbose = verbose

    def __call__(self, *args) -> None:
        if self.verbose:
            print(*args, flush=True)


# ---------------------------------------------------------------------- training
def run(cfg: TrainConfig | None = None, resume: str | Path | None = None,
        overrides: list[str] | dict | None = None, callbacks: list | None = None,
        evaluate: bool = True, verbose: bool = True, trusted_modules=()) -> dict:
    """Trains (or resumes) a run; returns a summary dict.

    ``cfg`` is a resolved config (``train.sb3.config.build``); with ``resume`` the run
    directory's saved config is used (``overrides`` applied and saved into it at once).
    ``trusted_modules`` may be imported as ``vec_env`` factories. Extra SB3 ``callbacks``
    run after the training callback. A ``KeyboardInterrupt`` (Ctrl-C, SIGTERM) saves a
    checkpoint and returns ``{"status": "interrupted", ...}``."""
    import torch
    from stable_baselines3.common.callbacks import CallbackList
    from stable_baselines3.common.vec_env import VecNormalize

    from train.common.callbacks import Budget, LogHyperparameters, TrainingCallback
    from train.common.league import League
    from train.common.pretrain import pretrain

    say = Say(verbose)

    # 1. config and run directory: a new run, or the one to resume
    start = open_run(cfg, resume, overrides, trusted_modules)
    cfg, run_dir = start.cfg, start.run_dir
    seed, total = int(cfg.seed), int(cfg.total_timesteps)
    if cfg.torch_threads:
        torch.set_num_threads(int(cfg.torch_threads))

    # 2. opponents and envs
    league = League.from_config(cfg.league)
    start.restore_league(league)
    games = make_vec_env(cfg, league, seed + start.step)
    check_vec_env_size(cfg, games)
    vec_env = games
    if cfg.policy.normalize_obs:
        vec_env = VecNormalize(games, norm_obs=True, norm_reward=False, clip_obs=10.0,
                               gamma=cfg.ppo.gamma)

    # 3. model
    max_minutes = cfg.max_minutes  # the clock runs from here, pretraining included
    budget = Budget(total, None if max_minutes is None else 60.0 * float(max_minutes),
                    elapsed_before=float(start.state.get("train_seconds", 0.0)))
    model = make_model(cfg, vec_env, run_dir, budget)
    start.restore_model(model, vec_env)
    if start.resumed:
        say(f"resuming {run_dir} from step {start.step:,} "
            f"({start.checkpoint.path.name}, pool of {len(league.snapshots)})")
    live = LiveRun(cfg, run_dir, model, league, vec_env, budget, start.state.get("pretrain"))

    # 4. pretraining: a new run imitates its teacher in the same envs (or labelled data)
    p = cfg.pretrain
    if not start.resumed and (p.teacher or p.data):
        say(f"pretraining: imitating {p.teacher} for {p.decisions:,} decisions"
            if p.teacher else f"pretraining: imitating {', '.join(p.data)}")
        try:
            live.pretrain = pretrain(model, games, cfg, log=say)
        except KeyboardInterrupt:
            say(f"\ninterrupted while pretraining: nothing saved; start again with the same "
                f"command (run_dir={run_dir})")
            vec_env.close()
            return {"status": "interrupted", "run_dir": str(run_dir), "num_timesteps": 0}
    if league.uses_pool and not league.snapshots:
        live.take_snapshot(model.num_timesteps)
        live.sync_league(True)
    if not start.resumed and live.pretrain:
        live.save_checkpoint()  # a crash later does not lose the warm start

    # 5. learn
    threads = cfg.torch_threads
    cb = TrainingCallback(
        league, live, budget, cfg.league.snapshot_every, cfg.checkpoint.every,
        win_window=cfg.log.win_window, progress=cfg.log.progress and verbose,
        interval=cfg.log.interval, torch_threads=(1, threads) if threads > 1 else None,
    )
    extra = [LogHyperparameters(config_mod.hyperparameters_markdown(cfg))] \
        if cfg.log.tensorboard else []
    say(f"run directory: {run_dir}")
    say(f"training {cfg.num_players} players, {total:,} steps"
        + (f" or {max_minutes:g} min" if max_minutes is not None else "")
        + f", {cfg.n_envs} envs, opponents {cfg.league.opponents}"
        + rollout_note(total - model.num_timesteps, int(cfg.ppo.n_steps),
                       int(cfg.n_envs)))
    t_learn, status = time.time(), "finished"
    try:
        if total > model.num_timesteps:
            model.learn(total - model.num_timesteps, reset_num_timesteps=False,
                        callback=CallbackList([cb, *extra, *(callbacks or [])]),
                        tb_log_name="ppo", progress_bar=False)
    except KeyboardInterrupt:
        status = "interrupted"
        cb.rewind_partial_rollout()
    finally:
        cb.close()
    if cb.hit_deadline:
        say(f"stopped at the time limit (max_minutes={max_minutes}) at step "
            f"{model.num_timesteps:,} of {total:,}")

    # 6. save
    path = live.save_checkpoint()
    train_seconds = budget.elapsed()
    summary = {"status": status, "run_dir": str(run_dir), "num_timesteps": model.num_timesteps,
               "train_seconds": train_seconds, "checkpoint": str(path),
               "steps_per_s": (model.num_timesteps - start.step)
               / max(time.time() - budget.t_start, 1e-9),
               "train_win_rates": cb.win_rates()}
    if status == "interrupted":
        say(f"\ninterrupted at step {model.num_timesteps:,}: checkpoint saved in {path}\n"
            f"resume with: python train/ppo.py --resume {run_dir}")
        vec_env.close()
        return summary
    summary.update(save_policy(cfg, model, live.obs_norm(), run_dir, train_seconds))
    vec_env.close()
    say(f"trained {model.num_timesteps:,} steps in {train_seconds / 60:.1f} min "
        f"({summary['steps_per_s']:,.0f} steps/s; learning {time.time() - t_learn:.0f} s); "
        f"policy saved to {summary['policy']}")

    # 7. evaluate
    ev = cfg.eval
    if evaluate and ev.deals > 0 and ev.opponents:
        from train.common.evaluate import evaluate as run_eval

        summary["eval"] = run_eval(summary["policy"], cfg.rules, ev.opponents,
                                   ev.deals, seed=ev.seed, workers=ev.workers,
                                   progress=cfg.log.progress and verbose,
                                   out_dir=run_dir, verbose=verbose)
    summary["total_seconds"] = round(budget.elapsed(), 1)
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n",
                                          encoding="utf-8")
    return summary


def save_policy(cfg: TrainConfig, model, obs_norm: dict | None, run_dir: Path,
                train_seconds: float) -> dict:
    """``policy.zip`` (and ``policy.pt`` with ``export_pt``) in the run directory."""
    from train.common import checkpoint as ckpt

    meta = ckpt.policy_metadata(cfg, model, obs_norm, train_seconds=round(train_seconds, 1))
    out = {"policy": str(run_dir / "policy.zip")}
    ckpt.save_model_zip(model, run_dir / "policy.zip", meta)
    if cfg.export_pt:
        ckpt.export_weights(model.policy.state_dict(), meta, run_dir / "policy.pt")
        out["policy_pt"] = str(run_dir / "policy.pt")
    return out


def copy_policy(summary: dict, dest: str) -> None:
    """Copies the run's policy.zip (and policy.pt beside it) to ``dest``."""
    dest_path = Path(dest)
    dest_path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(summary["policy"], dest_path)
    if "policy_pt" in summary:
        shutil.copyfile(summary["policy_pt"], dest_path.with_suffix(".pt"))
    print(f"copied the policy to {dest_path}")


# ---------------------------------------------------------------------- command line
def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def rollout_note(steps: int, n_steps: int, n_envs: int) -> str:
    """What the start line adds when SB3 will train more than ``steps``: it collects whole
    rollouts of ``n_steps * n_envs`` steps, so ``total_timesteps`` is rounded up to one."""
    rollout = n_steps * n_envs
    trained = -(-steps // rollout) * rollout if steps > 0 else 0
    if trained == steps:
        return ""
    return (f" (SB3 collects whole rollouts of ppo.n_steps x n_envs = {rollout:,} steps, "
            f"so {trained:,} steps are trained)")


def build_parser() -> argparse.ArgumentParser:
    """``train/ppo.py``'s (``pis-train``'s) command line."""
    from agents.common.cli import program_name

    parser = argparse.ArgumentParser(
        prog=program_name("python train/ppo.py"),
        description="Train a MaskablePPO agent for Pis Yedili against a league of bots and "
                    "snapshots of itself.",
        epilog="Overrides are key=value (YAML values), e.g. total_timesteps=200000 "
               "ppo.learning_rate=1e-4 num_players=4 rules.draw_rule=one "
               "rules=configs/rules/quick_draw.yaml league.opponents='{heuristic: 0.5, self: 0.5}' "
               "seed=1 run_dir=runs/mine. --help-config lists every key.",
    )
    config_mod.add_arguments(parser, DEFAULT_CONFIG)
    parser.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR")
    parser.add_argument("--save-to", metavar="PATH",
                        help="also copy the final policy.zip (and .pt) to PATH")
    parser.add_argument("--no-eval", action="store_true", help="skip the final evaluation")
    return parser


def main(argv: list[str] | None = None) -> int:
    from agents.common.cli import error_exit
    from train.common.entry import preamble

    parser = build_parser()
    args = parser.parse_args(argv)

    def load() -> TrainConfig:
        if args.resume:
            return load_run_config(Path(args.resume), args.overrides)
        return config_mod.build(
            args.config or (DEFAULT_CONFIG if DEFAULT_CONFIG.exists() else None),
            args.overrides)

    start = preamble(parser, args, config_mod.TRAIN, load, resume_error=(
        "--resume uses the run's own config; give overrides instead"))
    if start.exit is not None:
        return start.exit
    cfg = start.cfg
    signal.signal(signal.SIGTERM, _raise_interrupt)
    from train.common.checkpoint import CheckpointError

    trusted = [value.partition(":")[0] for key, value in
               (item.partition("=")[::2] for item in args.overrides)
               if key.strip() == "vec_env" and ":" in value]
    try:
        if args.resume:
            summary = run(resume=args.resume, overrides=args.overrides,
                          evaluate=not args.no_eval, trusted_modules=trusted)
        else:
            summary = run(cfg, evaluate=not args.no_eval, trusted_modules=trusted)
    except (ConfigError, CheckpointError) as e:
        return error_exit(parser.prog, str(e))
    except KeyboardInterrupt:  # after training (while saving or evaluating)
        print("\ninterrupted after training: the checkpoint and the policy saved so far are "
              "in the run directory", file=sys.stderr)
        return 130
    if summary["status"] == "interrupted":
        return 130
    if args.save_to:
        copy_policy(summary, args.save_to)
    print(f"total time {summary['total_seconds'] / 60:.1f} min; run directory "
          f"{summary['run_dir']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
