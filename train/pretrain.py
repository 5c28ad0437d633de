"""Warm start: imitate a teacher bot before PPO (behaviour cloning with a value target).

The teacher (``pretrain.teacher``, e.g. ``heuristic``) plays the learner's seat against the
league's opponents for ``pretrain.decisions`` decisions; the policy is then trained for
``pretrain.epochs`` passes to predict the teacher's action (cross-entropy over the legal
actions) and the value head to predict the return that followed (Monte Carlo, with the
run's gamma). PPO then starts from a policy that already plays like the teacher and a
value function that knows what positions are worth, instead of from random play.
"""

from __future__ import annotations

import time

import numpy as np

from pis_env.observation import Layout


def collect(cfg: dict, league, teacher_name: str, decisions: int, seed: int,
            log=print) -> dict[str, np.ndarray]:
    """Teacher decisions at the learner's seat: inputs, masks, actions, returns."""
    from train.league import LeagueEnv, make_bot

    rules = cfg["rules"]
    n, d = rules["num_players"], rules["num_deals"]
    layout_size = Layout.of(n, d).size
    env = LeagueEnv(league, rules, features=cfg["policy"]["features"],
                    learner_seat=cfg["league"]["learner_seat"], seed=seed,
                    win_bonus=cfg["win_bonus"], skip_forced=cfg["skip_forced"],
                    privileged=cfg["policy"]["privileged_critic"])
    teacher = make_bot(teacher_name, rules, seed)
    size = env.observation_space.shape[0]
    x = np.empty((decisions, size), np.float32)
    masks = np.empty((decisions, 58), bool)
    actions = np.empty(decisions, np.int64)
    rewards = np.zeros(decisions, np.float32)
    returns = np.zeros(decisions, np.float32)
    gamma = float(cfg["ppo"]["gamma"])
    obs, _ = env.reset(seed=seed)
    teacher.reset()
    i = start = kept = 0
    t0 = last = time.time()
    while i < decisions:
        mask = env.action_masks()
        a = teacher.act({"observation": obs[:layout_size], "action_mask": mask.astype(np.int8)})
        x[i], masks[i], actions[i] = obs, mask, a
        obs, r, terminated, truncated, _ = env.step(a)
        rewards[i] = r
        i += 1
        if terminated or truncated:
            g = 0.0
            for k in range(i - 1, start - 1, -1):
                g = rewards[k] + gamma * g
                returns[k] = g
            kept = i
            start = i
            obs, _ = env.reset()
            teacher.reset()
        if time.time() - last > 30:
            last = time.time()
            log(f"pretrain: {i:,}/{decisions:,} teacher decisions "
                f"({i / (last - t0):,.0f}/s)")
    # the last, unfinished episode has no return: leave it out
    return {"x": x[:kept], "masks": masks[:kept], "actions": actions[:kept],
            "returns": returns[:kept]}


def fit(policy, data: dict[str, np.ndarray], epochs: int, batch_size: int, lr: float,
        value_coef: float, seed: int, log=print, logger=None) -> dict[str, float]:
    """Behaviour cloning of ``data`` into an SB3 MaskableActorCriticPolicy, in place."""
    import torch
    import torch.nn.functional as F

    gen = torch.Generator().manual_seed(seed)
    x = torch.as_tensor(data["x"])
    m = torch.as_tensor(data["masks"])
    a = torch.as_tensor(data["actions"])
    r = torch.as_tensor(data["returns"])
    n = x.shape[0]
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    policy.set_training_mode(True)
    stats = {}
    for epoch in range(epochs):
        perm = torch.randperm(n, generator=gen)
        tot_ce = tot_v = correct = 0.0
        for b in range(0, n, batch_size):
            idx = perm[b:b + batch_size]
            values, log_prob, _ = policy.evaluate_actions(x[idx], a[idx], action_masks=m[idx])
            ce = -log_prob.mean()
            v_loss = F.mse_loss(values.flatten(), r[idx])
            loss = ce + value_coef * v_loss
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            opt.step()
            with torch.no_grad():
                dist = policy.get_distribution(x[idx], action_masks=m[idx].numpy())
                pred = dist.distribution.probs.argmax(dim=1)
                correct += float((pred == a[idx]).sum())
            tot_ce += ce.item() * len(idx)
            tot_v += v_loss.item() * len(idx)
        stats = {"cross_entropy": tot_ce / n, "value_loss": tot_v / n, "accuracy": correct / n}
        log(f"pretrain epoch {epoch + 1}/{epochs}: accuracy {stats['accuracy']:.1%}, "
            f"cross-entropy {stats['cross_entropy']:.3f}, value loss {stats['value_loss']:.4f}")
        if logger is not None:
            for k, v in stats.items():
                logger.record(f"pretrain/{k}", v)
            logger.dump(epoch)
    policy.set_training_mode(False)
    return stats


def pretrain(model, cfg: dict, league, log=print) -> dict[str, float]:
    p = cfg["pretrain"]
    t0 = time.time()
    data = collect(cfg, league, p["teacher"], p["decisions"], seed=cfg["seed"] + 7919, log=log)
    t1 = time.time()
    log(f"pretrain: {len(data['actions']):,} decisions of {p['teacher']} in {t1 - t0:.0f} s")
    stats = fit(model.policy, data, p["epochs"], p["batch_size"], p["learning_rate"],
                p["value_coef"], seed=cfg["seed"], log=log)
    stats["seconds"] = time.time() - t0
    return stats
