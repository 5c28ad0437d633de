"""Warm start: imitate a teacher bot before PPO (behaviour cloning with a value target).

The teacher (``pretrain.teacher``, e.g. ``heuristic``) plays the learner's seat of the
training VecEnv itself -- the same env stack PPO then steps (``vec_env=batched``: the
numba engine, with the heuristic's numba port as the teacher), against the league's
opponents -- for ``pretrain.decisions`` decisions. The policy is then trained for
``pretrain.epochs`` passes to predict the teacher's action (cross-entropy over the legal
actions) and the value head to predict the return that followed (Monte Carlo, with the
run's gamma). PPO then starts from a policy that already plays like the teacher and a
value function that knows what positions are worth, instead of from random play.

With ``pretrain.data`` the policy imitates labelled positions instead (``load_labelled``:
the search bot's moves at positions the network reached, from ``train/expert/iteration.py``),
which is expert iteration's distillation step. The student (``train.student.fit``)
imitates the search's action values through the same loop: a target distribution per
position (``targets``) instead of one action.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pis_env.observation import LAYOUT_VERSIONS, Layout
from train.common.schema import param

#: A batched teacher: ``teacher(obs [K, L] float32, masks int8 [K, 58]) -> actions [K]``.
Teacher = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass
class ImitationConfig:
    """The warm start both PPO pipelines share (``train.common.pretrain.imitate``)."""

    teacher: str | None = param("heuristic", "behaviour cloning of this bot before PPO "
                                   "(null: start from a random policy)")
    decisions: int = param(300_000, "teacher decisions at the learner's seat", gt=0)
    epochs: int = param(4, "passes over the teacher's decisions", gt=0)
    batch_size: int = param(1024, "minibatch size of the imitation", gt=0)
    learning_rate: float = param(1.0e-3, "Adam step size of the imitation", gt=0)
    value_coef: float = param(1.0, "weight of the value head's return regression", ge=0)


class RowByRow:
    """Any ``agents`` bot as a batched teacher, one ``act`` per row. The bot must not
    keep state between decisions (the games of a batch interleave); the built-in bots
    do not. It is shown the table's own observations (``layout_version`` None: a
    rule-based bot reads every layout); the numba teachers read layout 0."""

    layout_version = None

    def __init__(self, agent):
        self.agent = agent

    def __call__(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        act = self.agent.act
        return np.array([act({"observation": o, "action_mask": m})
                         for o, m in zip(obs, masks)], dtype=np.int64)


def make_teacher(name: str, rules: dict, seed: int) -> Teacher:
    """The batched teacher ``name`` at the table of ``rules``: its ``agents.registry``
    port where that plays observation rows (the heuristic's numba port: the same choices,
    ~100x faster) and numba is installed, else the bot row by row."""
    import agents
    from agents.registry import batched_port, has_port

    if has_port(name, rows=True):
        from pis_env import Rules

        try:
            return batched_port(name, 1, Rules.from_options(**rules), seed)
        except ImportError:  # numba (the 'fast' extra) missing: the Python bot below
            pass
    return RowByRow(agents.make_for_table(name, rules, seed=seed))


def teacher_columns(teacher: Teacher, rules: dict, env_version: int) -> int:
    """How many leading observation columns ``teacher`` is shown at a table of layout
    ``env_version``: those of the layout it reads (``teacher.layout_version``, 0 for the
    numba ports, None for the table's own). Every later layout begins with the earlier
    ones unchanged, so a layout-0 teacher at a v1 table reads the v0 observation."""
    version = getattr(teacher, "layout_version", 0)
    return Layout.of(rules["num_players"], rules["num_deals"],
                     env_version if version is None else version).size


def collect(vec_env, teacher: Teacher, decisions: int, layout_size: int, gamma: float,
            seed: int, log=print) -> dict[str, np.ndarray]:
    """The teacher's decisions at the learner's seat of every game of ``vec_env`` (an SB3
    VecEnv answering ``env_method("action_masks")``), at least ``decisions`` of them:
    policy inputs ``x``, legal ``masks``, ``actions``, Monte Carlo ``returns``, and
    ``rows``: the rows of finished episodes (the last, unfinished episode of each game
    has no return and is left out)."""
    n = vec_env.num_envs
    steps = -(-decisions // n)
    vec_env.seed(seed)
    obs = vec_env.reset()
    x = np.empty((steps, n, obs.shape[1]), np.float32)
    masks = np.empty((steps, n, 58), bool)
    actions = np.empty((steps, n), np.int64)
    rewards = np.empty((steps, n), np.float32)
    dones = np.empty((steps, n), bool)
    t0 = last = time.time()
    for t in range(steps):
        mask = np.stack(vec_env.env_method("action_masks"))  # as MaskablePPO reads them
        act = teacher(obs[:, :layout_size], mask.astype(np.int8))
        x[t], masks[t], actions[t] = obs, mask, act
        obs, rewards[t], dones[t], _ = vec_env.step(act)
        if time.time() - last > 30:
            last = time.time()
            log(f"pretrain: {(t + 1) * n:,}/{steps * n:,} teacher decisions "
                f"({(t + 1) * n / (last - t0):,.0f}/s)")
    returns = np.empty_like(rewards)
    finished = np.zeros((steps, n), bool)
    g = np.zeros(n, np.float32)
    ended = np.zeros(n, bool)
    for t in range(steps - 1, -1, -1):  # an episode's return stops at its last step
        g = rewards[t] + gamma * g * ~dones[t]
        returns[t] = g
        ended |= dones[t]
        finished[t] = ended
    return {"x": x.reshape(steps * n, -1), "masks": masks.reshape(steps * n, -1),
            "actions": actions.ravel(), "returns": returns.ravel(),
            "rows": np.flatnonzero(finished.ravel())}


def soft_cross_entropy(logits, targets):
    """The mean over rows of ``-sum_a targets[a] * log softmax(logits)[a]``: the
    cross-entropy against a target distribution (``targets`` [B, 58], zero on the illegal
    actions, whose masked logits may be -inf: a zero target there adds nothing)."""
    import torch

    log_p = torch.log_softmax(logits, dim=-1)
    terms = torch.where(targets > 0, targets * log_p, torch.zeros_like(log_p))
    return -terms.sum(dim=-1).mean()


def _batch_loss(forward: Callable, tensors: dict, idx):
    """``(cross-entropy, value loss, correct moves)`` of the rows ``idx``:
    against the target distribution where the data has ``targets``, else the action."""
    import torch.nn.functional as F

    logits, values = forward(tensors["x"][idx], tensors["masks"][idx])
    a = tensors["actions"][idx]
    if "targets" in tensors:
        ce = soft_cross_entropy(logits, tensors["targets"][idx])
    else:
        ce = F.cross_entropy(logits, a)
    v_loss = F.mse_loss(values.flatten(), tensors["returns"][idx])
    correct = float((logits.detach().argmax(dim=1) == a).sum())
    return ce, v_loss, correct


def _tensors(data: dict[str, np.ndarray]) -> dict:
    import torch

    out = {"x": torch.as_tensor(data["x"], dtype=torch.float32),
           "masks": torch.as_tensor(data["masks"]).bool(),
           "actions": torch.as_tensor(data["actions"], dtype=torch.int64),
           "returns": torch.as_tensor(data["returns"], dtype=torch.float32)}
    if data.get("targets") is not None:
        out["targets"] = torch.as_tensor(data["targets"], dtype=torch.float32)
    return out


def evaluate(module, forward: Callable, data: dict[str, np.ndarray],
             batch_size: int = 4096) -> dict[str, float]:
    """:func:`imitate`'s statistics of ``data`` without training: its cross-entropy (soft
    where it has ``targets``), value loss and accuracy (argmax = ``actions``), means over
    every row; how a held-out set is scored."""
    import torch

    tensors = _tensors(data)
    n = int(tensors["actions"].shape[0])
    was_training = module.training
    module.eval()
    tot_ce = tot_v = correct = 0.0
    with torch.no_grad():
        for b in range(0, n, batch_size):
            idx = torch.arange(b, min(b + batch_size, n))
            ce, v_loss, right = _batch_loss(forward, tensors, idx)
            tot_ce += ce.item() * len(idx)
            tot_v += v_loss.item() * len(idx)
            correct += right
    module.train(was_training)
    return {"cross_entropy": tot_ce / n, "value_loss": tot_v / n, "accuracy": correct / n}


@dataclass(frozen=True)
class EpochCheckpoint:
    """Where :func:`imitate` keeps its state after every epoch (the network, Adam's moments,
    the minibatch order's generator, the epoch), so that a long fit killed at any moment
    resumes from its last finished epoch when the same command runs again, and ends with
    the weights an uninterrupted fit would have. ``settings`` are the caller's (what chose
    the data and the network); ``imitate`` adds its own, and a file written under other
    settings is refused before any training, never mixed in."""

    path: Path
    settings: dict = field(default_factory=dict)

    def load(self, settings: dict) -> dict | None:
        """The saved state, ``None`` if there is none; ``ValueError`` if it belongs to
        other settings or cannot be read."""
        import torch

        if not self.path.exists():
            return None
        try:
            state = torch.load(self.path, weights_only=True)
            saved = state["settings"]
        except Exception as e:  # a truncated or foreign file: say which, keep it
            raise ValueError(f"{self.path}: not a readable fit checkpoint ({e}); remove "
                             "it to start the fit again") from None
        changed = sorted(k for k in settings.keys() | saved.keys()
                         if settings.get(k) != saved.get(k))
        if changed:
            raise ValueError(f"{self.path} was written by a fit with other settings "
                             f"({', '.join(changed)}); remove it to start again, or run "
                             "the command that wrote it")
        return state

    def save(self, state: dict) -> None:
        import torch

        from agents.common.weights_file import write_atomically

        write_atomically(self.path, lambda tmp: torch.save(state, tmp))

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def imitate(module, forward: Callable, data: dict[str, np.ndarray], epochs: int,
            batch_size: int, lr: float, value_coef: float, seed: int, log=print,
            logger=None, val: dict[str, np.ndarray] | None = None,
            checkpoint: EpochCheckpoint | None = None) -> dict[str, float]:
    """The imitation loop of every pipeline: behaviour cloning of ``data`` (its ``rows``,
    default all) into ``module`` (a torch module, trained in place), with a value target.

    ``forward(x, masks)`` returns ``(logits [B, 58] with the illegal actions masked out,
    values [B])`` for a minibatch of policy inputs and bool masks: the one thing the SB3
    policy (:func:`fit`), the RLlib module (``train.rllib.pretrain.fit_module``) and the
    student (``train.student.fit``) do differently. The loss is the cross-entropy of the
    teacher's action -- or, where ``data`` has ``targets`` ([N, 58] distributions over
    the legal actions, such as a softmax of the search's action values), the
    cross-entropy against that distribution (:func:`soft_cross_entropy`), so that the
    network learns how much worse each other move is, not only which is best -- plus
    ``value_coef`` times the squared error of the value to the ``returns``; Adam,
    gradient norm clipped at 1, minibatches in an order drawn from ``seed``. ``accuracy``
    is the share of rows whose argmax is ``actions`` either way. ``val``: a held-out set
    of the same form, scored after every epoch (:func:`evaluate`; its figures join the
    epoch's line and the returned statistics as ``val_*``). ``logger`` (SB3's) records
    each epoch's statistics for TensorBoard. ``checkpoint``: save the loop's state after
    every epoch and resume from it (:class:`EpochCheckpoint`); the caller removes the file
    once it has written its result."""
    import torch

    gen = torch.Generator().manual_seed(int(seed))
    tensors = _tensors(data)
    rows = torch.as_tensor(data.get("rows", np.arange(len(data["actions"]))),
                           dtype=torch.int64)
    n = int(rows.shape[0])
    params = [q for q in module.parameters() if q.requires_grad]
    opt = torch.optim.Adam(params, lr=lr)
    stats: dict[str, float] = {}
    first = 0
    if checkpoint is not None:
        settings = {**checkpoint.settings, "epochs": epochs, "batch_size": batch_size,
                    "learning_rate": lr, "value_coef": value_coef, "seed": seed, "rows": n}
        saved = checkpoint.load(settings)
        if saved is not None:
            module.load_state_dict(saved["module"])
            opt.load_state_dict(saved["optimizer"])
            gen.set_state(saved["generator"])
            first, stats = saved["epoch"], saved["stats"]
            log(f"pretrain: resuming after epoch {first}/{epochs} ({checkpoint.path})")
    module.train()
    for epoch in range(first, epochs):
        perm = rows[torch.randperm(n, generator=gen)]
        tot_ce = tot_v = correct = 0.0
        for b in range(0, n, batch_size):
            idx = perm[b:b + batch_size]
            ce, v_loss, right = _batch_loss(forward, tensors, idx)
            loss = ce + value_coef * v_loss
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            correct += right
            tot_ce += ce.item() * len(idx)
            tot_v += v_loss.item() * len(idx)
        stats = {"cross_entropy": tot_ce / n, "value_loss": tot_v / n, "accuracy": correct / n}
        line = (f"pretrain epoch {epoch + 1}/{epochs}: accuracy {stats['accuracy']:.1%}, "
                f"cross-entropy {stats['cross_entropy']:.3f}, value loss "
                f"{stats['value_loss']:.4f}")
        if val is not None:
            held = evaluate(module, forward, val)
            stats.update({f"val_{k}": v for k, v in held.items()})
            line += (f"; held out: accuracy {held['accuracy']:.1%}, cross-entropy "
                     f"{held['cross_entropy']:.3f}, value loss {held['value_loss']:.4f}")
        if checkpoint is not None:
            checkpoint.save({"settings": settings, "epoch": epoch + 1, "stats": stats,
                             "module": module.state_dict(), "optimizer": opt.state_dict(),
                             "generator": gen.get_state()})
        log(line)
        if logger is not None:
            for k, v in stats.items():
                logger.record(f"pretrain/{k}", v)
            logger.dump(epoch)
    module.eval()
    return stats


def fit(policy, data: dict[str, np.ndarray], epochs: int, batch_size: int, lr: float,
        value_coef: float, seed: int, log=print, logger=None) -> dict[str, float]:
    """:func:`imitate` into an SB3 MaskableActorCriticPolicy, in place (its masked
    action distribution's logits and its value head)."""

    def forward(x, masks):
        dist = policy.get_distribution(x, action_masks=masks)
        return dist.distribution.logits, policy.predict_values(x)

    return imitate(policy, forward, data, epochs, batch_size, lr, value_coef, seed,
                   log=log, logger=logger)


#: Arrays of a labelled data set (``pretrain.data``, written by train/expert/iteration.py).
LABELLED_KEYS = ("obs", "mask", "privileged", "action", "returns")


def load_labelled(paths: list[str], cfg: Any) -> dict[str, np.ndarray]:
    """The positions of labelled ``.npz`` files as ``fit`` data: the policy input the
    run's VecEnv would give (observation, then the mask and the hidden cards as the
    config's network reads them), the labelled ``actions`` and the ``returns``.

    A file lacking an array, or made for another observation layout (the config's
    ``env_version``), is a ``ValueError`` naming it."""
    rules, policy = cfg.rules, cfg.policy
    version = int(cfg.env_version)
    size = Layout.of(rules["num_players"], rules["num_deals"], version).size
    parts: dict[str, list] = {"x": [], "masks": [], "actions": [], "returns": []}
    for path in paths:
        try:
            with np.load(path) as data:
                arrays = {k: data[k] for k in LABELLED_KEYS}
        except KeyError as e:
            raise ValueError(f"{path}: not a labelled data set (lacks {e})") from e
        except (OSError, ValueError) as e:
            raise ValueError(f"{path}: cannot read a labelled data set ({e})") from e
        if arrays["obs"].ndim != 2 or arrays["obs"].shape[1] != size:
            other = [v for v in LAYOUT_VERSIONS if v != version and arrays["obs"].ndim == 2
                     and Layout.of(rules["num_players"], rules["num_deals"], v).size
                     == arrays["obs"].shape[1]]
            detail = (f" (layout version {other[0]}'s size: labelled at pis_yedili_v"
                      f"{other[0]}, but env_version={version})" if other else "")
            raise ValueError(f"{path}: observations of shape {arrays['obs'].shape}; this "
                             f"table's observations (layout version {version}) have {size} "
                             f"entries{detail}")
        columns = [arrays["obs"].astype(np.float32)]
        if "mask" in policy.features:
            columns.append(arrays["mask"].astype(np.float32))
        if policy.privileged_critic:
            columns.append(arrays["privileged"].astype(np.float32))
        parts["x"].append(np.concatenate(columns, axis=1))
        parts["masks"].append(arrays["mask"].astype(bool))
        parts["actions"].append(arrays["action"].astype(np.int64))
        parts["returns"].append(arrays["returns"].astype(np.float32))
    return {k: np.concatenate(v) for k, v in parts.items()}


def pretrain(model, vec_env, cfg: Any, log=print) -> dict[str, float]:
    """Collects the teacher's decisions from ``vec_env`` (the run's own VecEnv, without
    observation normalisation), or reads ``pretrain.data``, fits ``model``'s policy to
    them, and seeds ``vec_env`` back with the run's seed, so that PPO's first reset deals
    what it would have dealt without pretraining."""
    p, rules = cfg.pretrain, cfg.rules
    t0 = time.time()
    if p.data:
        data = load_labelled(p.data, cfg)
        log(f"pretrain: {len(data['actions']):,} labelled positions from "
            f"{len(p.data)} file(s)")
        stats = fit(model.policy, data, p.epochs, p.batch_size, p.learning_rate,
                    p.value_coef, seed=cfg.seed, log=log)
        stats["seconds"] = time.time() - t0
        return stats
    teacher = make_teacher(p.teacher, rules, seed=cfg.seed + 7919)
    layout_size = teacher_columns(teacher, rules, int(cfg.env_version))
    data = collect(vec_env, teacher, p.decisions, layout_size, float(cfg.ppo.gamma),
                   seed=cfg.seed + 7919, log=log)
    vec_env.seed(cfg.seed)
    t1 = time.time()
    log(f"pretrain: {len(data['rows']):,} decisions of {p.teacher} in {t1 - t0:.0f} s")
    stats = fit(model.policy, data, p.epochs, p.batch_size, p.learning_rate,
                p.value_coef, seed=cfg.seed, log=log)
    stats["seconds"] = time.time() - t0
    return stats
