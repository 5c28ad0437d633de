#!/usr/bin/env python
"""Train a Pis Yedili agent with sb3-contrib's MaskablePPO against a league of opponents.

    python train/ppo.py                                  # 2 players, configs/ppo_2p.yaml
    python train/ppo.py --config configs/ppo_4p.yaml
    python train/ppo.py total_timesteps=200000 ppo.learning_rate=1e-4 num_players=3
    python train/ppo.py rules=configs/rules/double.yaml league.opponents='{heuristic: 1}'
    python train/ppo.py --resume runs/ppo_2p-20260101-120000   # continue a run
    python train/ppo.py --print-config                   # the resolved config, no training

Every run writes into its run directory (``run_dir=``, default
``runs/<name>-<timestamp>``): ``config.yaml`` (the full resolved config), ``checkpoints/``
(every ``checkpoint.every`` steps, at the end and on Ctrl-C), ``tb/`` (TensorBoard),
``policy.zip`` (SB3 archive) and ``policy.pt`` (weights only), ``eval.json``.
``agents.make("ppo", path=".../policy.zip")`` plays the result.
"""

from __future__ import annotations

import argparse
import copy
import datetime as _dt
import json
import shutil
import signal
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: python train/ppo.py
    _here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]
    try:
        import train  # noqa: F401  (the installed package)
    except ImportError:  # not installed: use the checkout this file is in
        sys.path.insert(0, str(_here.parent))

from train import config as config_mod  # noqa: E402
from train.config import ConfigError  # noqa: E402

DEFAULT_CONFIG = config_mod.REPO_ROOT / "configs" / "ppo_2p.yaml"


# ---------------------------------------------------------------------- building blocks
def _lr_schedule(ppo: dict):
    lr = float(ppo["learning_rate"])
    if ppo["lr_schedule"] == "constant":
        return lr
    final = float(ppo["lr_final_fraction"])

    def schedule(progress_remaining: float) -> float:
        return lr * (final + (1.0 - final) * progress_remaining)

    return schedule


def make_vec_env(cfg: dict, league, seed: int):
    """``n_envs`` LeagueEnvs in a DummyVecEnv (or SubprocVecEnv).

    ``vec_env="module:function"`` calls ``function(cfg, league, seed)`` instead: a
    factory of another VecEnv (e.g. a batched engine). It must answer
    ``env_method("action_masks")``, put the policy input (see ``policy.features``) in its
    observations and ``info["league"]`` (as ``LeagueEnv`` does) at episode ends."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    if cfg["vec_env"] == "batched":
        try:
            from train.batched_vec_env import make_league_vec_env
        except ImportError as e:  # numba (the 'fast' extra) missing
            raise ConfigError(
                f"vec_env=batched needs numba: pip install 'pis-yedili[fast]' ({e})"
            ) from e
        return make_league_vec_env(cfg, league, seed)
    if ":" in cfg["vec_env"]:
        import importlib

        module_name, _, func_name = cfg["vec_env"].partition(":")
        try:
            factory_fn = getattr(importlib.import_module(module_name), func_name)
        except (ImportError, AttributeError) as e:
            raise ConfigError(f"vec_env={cfg['vec_env']!r}: cannot load it ({e})") from e
        return factory_fn(cfg, league, seed)

    from train.league import LeagueEnv

    rules = cfg["rules"]
    features = tuple(cfg["policy"]["features"])
    seat = cfg["league"]["learner_seat"]

    def factory(i: int):
        def make():
            return LeagueEnv(league, rules, features=features, learner_seat=seat,
                             seed=seed * 1000 + i, win_bonus=cfg["win_bonus"],
                             skip_forced=cfg["skip_forced"],
                             privileged=cfg["policy"]["privileged_critic"])
        return make

    fns = [factory(i) for i in range(cfg["n_envs"])]
    if cfg["vec_env"] == "subproc":
        return SubprocVecEnv(fns)
    return DummyVecEnv(fns)


def actor_dim(cfg: dict) -> int:
    """The size of the policy's input (the observation, then the mask)."""
    from agents.ppo import input_size_of
    from pis_env.observation import Layout

    rules = cfg["rules"]
    return input_size_of(Layout.of(rules["num_players"], rules["num_deals"]).size,
                         cfg["policy"]["features"])


def _obs_norm_of(vec_env, size: int) -> dict | None:
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


def _set_obs_norm(vec_env, norm: dict | None) -> None:
    import numpy as np

    if norm is None or not hasattr(vec_env, "obs_rms"):
        return
    vec_env.obs_rms.mean = np.asarray(norm.get("full_mean", norm["mean"]), dtype=np.float64)
    vec_env.obs_rms.var = np.asarray(norm.get("full_var", norm["var"]), dtype=np.float64)
    vec_env.obs_rms.count = float(norm["count"])


def new_run_dir(cfg: dict) -> Path:
    if cfg["run_dir"]:
        return Path(cfg["run_dir"])
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = Path("runs") / f"{cfg['name']}-{stamp}"
    k = 1
    while path.exists():
        k += 1
        path = Path("runs") / f"{cfg['name']}-{stamp}-{k}"
    return path


def load_run_config(run_dir: Path, overrides: list[str] | dict | None = None) -> dict:
    """The saved config of a run, with overrides (e.g. a larger ``total_timesteps``)."""
    path = Path(run_dir) / "config.yaml"
    if not path.is_file():
        raise ConfigError(f"{run_dir} is not a run directory (no config.yaml)")
    import yaml

    try:
        saved = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: corrupt config ({e})") from e
    base = copy.deepcopy(config_mod.DEFAULTS)
    config_mod.apply(base, saved, str(path))
    cfg = config_mod.build(None, overrides, base=base)
    changed = [k for k in ("rules", "num_players", "policy", "n_envs")
               if json.dumps(cfg[k], sort_keys=True) != json.dumps(
                   config_mod.resolve(base)[k], sort_keys=True)]
    if changed:
        raise ConfigError(f"--resume cannot change {', '.join(changed)} of a run")
    cfg["run_dir"] = str(run_dir)
    return cfg


# ---------------------------------------------------------------------- training
def run(cfg: dict | None = None, resume: str | Path | None = None,
        overrides: list[str] | dict | None = None, callbacks: list | None = None,
        evaluate: bool = True, verbose: bool = True, trusted_modules=()) -> dict:
    """Trains (or resumes) a run; returns a summary dict.

    ``cfg`` is a resolved config (``train.config.build``); with ``resume`` the run
    directory's saved config is used (``overrides`` applied and saved into it at once, so
    a later ``--resume`` keeps them). Everything the run needs is checked before the run
    directory is created (``train.preflight``; ``trusted_modules`` may be imported as
    ``vec_env`` factories). Extra SB3 ``callbacks`` run after the training callback. A
    ``KeyboardInterrupt`` (Ctrl-C, SIGTERM) saves a checkpoint and returns
    ``{"status": "interrupted", ...}``."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import CallbackList
    from stable_baselines3.common.vec_env import VecNormalize

    from agents.ppo import NumpyPolicy
    from train import checkpoint as ckpt
    from train.callbacks import TrainingCallback
    from train.league import League
    from train.policy import hidden_columns, hide_from_actor
    from train.preflight import check_run

    def say(*args):
        if verbose:
            print(*args, flush=True)

    state: dict = {}
    restored = None
    if resume is not None:
        run_dir = Path(resume)
        cfg = load_run_config(run_dir, overrides)
        check_run(cfg, trusted_modules)
        restored = ckpt.find_checkpoint(run_dir, cfg["rules"]["num_players"],
                                        cfg["rules"]["num_deals"])
        state = restored.state
        if overrides:
            ckpt.atomic_write_text(run_dir / "config.yaml", config_mod.dump(cfg))
    else:
        if cfg is None:
            cfg = config_mod.build(DEFAULT_CONFIG if DEFAULT_CONFIG.exists() else None,
                                   overrides)
        check_run(cfg, trusted_modules)
        run_dir = new_run_dir(cfg)
        if (run_dir / ckpt.CHECKPOINTS).exists():
            raise ConfigError(f"{run_dir} already holds a run; use --resume {run_dir} or "
                              "another run_dir")
        run_dir.mkdir(parents=True, exist_ok=True)
        cfg = dict(cfg, run_dir=str(run_dir))
        ckpt.atomic_write_text(run_dir / "config.yaml", config_mod.dump(cfg))
    total = int(cfg["total_timesteps"])
    seed = int(cfg["seed"])
    if cfg["torch_threads"]:
        torch.set_num_threads(int(cfg["torch_threads"]))

    league = League.from_config(cfg["league"])
    if restored is not None:
        league.load_state_dict(restored.league)
    start_step = int(state.get("num_timesteps", 0))
    vec_env = make_vec_env(cfg, league, seed + start_step)
    if cfg["policy"]["normalize_obs"]:
        vec_env = VecNormalize(vec_env, norm_obs=True, norm_reward=False, clip_obs=10.0,
                               gamma=cfg["ppo"]["gamma"])
        _set_obs_norm(vec_env, state.get("obs_norm"))

    ppo = cfg["ppo"]
    activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[cfg["policy"]["activation"]]
    tb_dir = str(run_dir / "tb") if cfg["log"]["tensorboard"] else None
    policy_class: object = "MlpPolicy"
    policy_kwargs = {"net_arch": list(cfg["policy"]["net_arch"]), "activation_fn": activation,
                     "ortho_init": cfg["policy"]["ortho_init"]}
    if cfg["policy"]["privileged_critic"]:
        from train.policy import PrivilegedCriticPolicy

        policy_class = PrivilegedCriticPolicy
        policy_kwargs["actor_dim"] = actor_dim(cfg)
    model = MaskablePPO(
        policy_class,
        vec_env,
        learning_rate=_lr_schedule(ppo),
        n_steps=ppo["n_steps"],
        batch_size=ppo["batch_size"],
        n_epochs=ppo["n_epochs"],
        gamma=ppo["gamma"],
        gae_lambda=ppo["gae_lambda"],
        clip_range=ppo["clip_range"],
        ent_coef=ppo["ent_coef"],
        vf_coef=ppo["vf_coef"],
        max_grad_norm=ppo["max_grad_norm"],
        target_kl=ppo["target_kl"],
        normalize_advantage=ppo["normalize_advantage"],
        policy_kwargs=policy_kwargs,
        tensorboard_log=tb_dir,
        seed=seed,
        device="cpu",
        verbose=0,
    )
    if restored is not None:  # weights-only state: nothing from the run directory runs
        try:
            model.policy.load_state_dict(restored.policy)
            model.policy.optimizer.load_state_dict(restored.optimizer)
        except (RuntimeError, ValueError, KeyError) as e:
            raise ckpt.CheckpointError(f"checkpoint {restored.path} does not fit the "
                                       f"config's network: {e}") from e
        model.num_timesteps = start_step
        model._n_updates = int(state.get("n_updates", 0))
        model.set_random_seed(seed + start_step)
        say(f"resuming {run_dir} from step {start_step:,} "
            f"({restored.path.name}, pool of {len(league.snapshots)})")

    rules = cfg["rules"]
    hide_from_actor(model.policy, hidden_columns(rules["num_players"], rules["num_deals"],
                                                 cfg["policy"]["hide_from_actor"]))

    elapsed_before = float(state.get("train_seconds", 0.0))
    t_start = time.time()

    def obs_norm():
        return _obs_norm_of(vec_env, actor_dim(cfg))

    def take_snapshot(step: int) -> None:
        if not league.uses_pool:
            return
        meta = ckpt.policy_metadata(cfg, model, obs_norm(), step=step)
        sd = {k: v.detach().cpu().numpy().copy() for k, v in model.policy.state_dict().items()}
        league.add_snapshot(step, NumpyPolicy(meta, sd))

    def save_checkpoint() -> Path:
        train_seconds = elapsed_before + time.time() - t_start
        return ckpt.save_checkpoint(
            run_dir, model, league, cfg,
            {"train_seconds": train_seconds, "seed": seed, "total_timesteps": total,
             "pretrain": state.get("pretrain")},
            obs_norm=obs_norm(), keep=cfg["checkpoint"]["keep"],
        )

    def sync_league(pool_changed: bool) -> None:
        if cfg["vec_env"] == "subproc":
            vec_env.env_method("league_sync", league.sync_payload(pool_changed))

    if resume is None and cfg["pretrain"]["teacher"]:
        from train.pretrain import pretrain

        say(f"pretraining: imitating {cfg['pretrain']['teacher']} for "
            f"{cfg['pretrain']['decisions']:,} decisions")
        try:
            state["pretrain"] = pretrain(model, cfg, league, log=say)
        except KeyboardInterrupt:
            say(f"\ninterrupted while pretraining: nothing saved; start again with the same "
                f"command (run_dir={run_dir})")
            vec_env.close()
            return {"status": "interrupted", "run_dir": str(run_dir), "num_timesteps": 0}

    if league.uses_pool and not league.snapshots:
        take_snapshot(model.num_timesteps)
        sync_league(True)

    if resume is None and state.get("pretrain"):
        save_checkpoint()  # a crash later does not lose the warm start

    threads = None
    if cfg["torch_threads"] and cfg["torch_threads"] > 1:
        threads = (1, int(cfg["torch_threads"]))
    deadline = None
    if cfg["max_minutes"] is not None:
        deadline = t_start + 60.0 * float(cfg["max_minutes"]) - elapsed_before
    cb = TrainingCallback(
        league, total, cfg["league"]["snapshot_every"], cfg["checkpoint"]["every"],
        take_snapshot, save_checkpoint, sync_league,
        win_window=cfg["log"]["win_window"],
        progress=cfg["log"]["progress"] and verbose, interval=cfg["log"]["interval"],
        torch_threads=threads, deadline=deadline,
    )
    cbs = CallbackList([cb, *(callbacks or [])])
    say(f"run directory: {run_dir}")
    say(f"training {cfg['num_players']} players, {total:,} steps, {cfg['n_envs']} envs, "
        f"opponents {cfg['league']['opponents']}")
    remaining = total - model.num_timesteps
    status = "finished"
    try:
        if remaining > 0:
            model.learn(remaining, callback=cbs, reset_num_timesteps=False, tb_log_name="ppo",
                        progress_bar=False)
    except KeyboardInterrupt:
        status = "interrupted"
        cb.rewind_partial_rollout()
    finally:
        cb.close()
    if cb.hit_deadline:
        say(f"stopped at the time limit (max_minutes={cfg['max_minutes']}) at step "
            f"{model.num_timesteps:,} of {total:,}")
    train_seconds = elapsed_before + time.time() - t_start
    path = save_checkpoint()
    summary = {"status": status, "run_dir": str(run_dir), "num_timesteps": model.num_timesteps,
               "train_seconds": train_seconds, "checkpoint": str(path),
               "steps_per_s": (model.num_timesteps - start_step) / max(time.time() - t_start,
                                                                       1e-9)}
    if status == "interrupted":
        say(f"\ninterrupted at step {model.num_timesteps:,}: checkpoint saved in {path}\n"
            f"resume with: python train/ppo.py --resume {run_dir}")
        vec_env.close()
        return summary

    meta = ckpt.policy_metadata(cfg, model, obs_norm(), train_seconds=round(train_seconds, 1))
    policy_zip = run_dir / "policy.zip"
    ckpt.save_model_zip(model, policy_zip, meta)
    summary["policy"] = str(policy_zip)
    if cfg["export_pt"]:
        ckpt.export_weights(model.policy.state_dict(), meta, run_dir / "policy.pt")
        summary["policy_pt"] = str(run_dir / "policy.pt")
    vec_env.close()
    say(f"trained {model.num_timesteps:,} steps in {train_seconds / 60:.1f} min "
        f"({summary['steps_per_s']:,.0f} steps/s); policy saved to {policy_zip}")
    ev = cfg["eval"]
    if evaluate and ev["deals"] > 0 and ev["opponents"]:
        from train.evaluate import evaluate as run_eval

        rows = run_eval(policy_zip, cfg["rules"], ev["opponents"], ev["deals"],
                        seed=ev["seed"], workers=ev["workers"],
                        progress=cfg["log"]["progress"] and verbose, out_dir=run_dir,
                        verbose=verbose)
        summary["eval"] = rows
    summary["total_seconds"] = round(elapsed_before + time.time() - t_start, 1)
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n",
                                          encoding="utf-8")
    return summary


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python train/ppo.py",
        description="Train a MaskablePPO agent for Pis Yedili against a league of bots and "
                    "snapshots of itself.",
        epilog="Overrides are key=value (YAML values), e.g. total_timesteps=200000 "
               "ppo.learning_rate=1e-4 num_players=4 rules.draw_rule=one "
               "rules=configs/rules/x.yaml league.opponents='{heuristic: 0.5, self: 0.5}' "
               "seed=1 run_dir=runs/mine. See train/config.py for every key.",
    )
    parser.add_argument("overrides", nargs="*", metavar="key=value")
    parser.add_argument("--config", help=f"a config YAML (default {DEFAULT_CONFIG.name})")
    parser.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR")
    parser.add_argument("--save-to", metavar="PATH",
                        help="also copy the final policy.zip (and .pt) to PATH")
    parser.add_argument("--print-config", action="store_true",
                        help="print the resolved config and exit")
    parser.add_argument("--no-eval", action="store_true", help="skip the final evaluation")
    args = parser.parse_args(argv)
    try:
        if args.resume:
            if args.config:
                parser.error("--resume uses the run's own config; give overrides instead")
            cfg = load_run_config(Path(args.resume), args.overrides)
        else:
            cfg = config_mod.build(
                args.config or (DEFAULT_CONFIG if DEFAULT_CONFIG.exists() else None),
                args.overrides)
    except ConfigError as e:
        print(f"config error: {e}", file=sys.stderr)
        return 2
    if args.print_config:
        print(config_mod.dump(cfg), end="")
        return 0
    signal.signal(signal.SIGTERM, _raise_interrupt)
    from train.checkpoint import CheckpointError

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
        print(f"error: {e}", file=sys.stderr)
        return 2
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
