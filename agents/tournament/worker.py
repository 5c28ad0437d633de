"""Playing chunks of deals in a worker process (or in this one); what a table returns."""

from __future__ import annotations

import signal
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.tournament.deals import agent_seed, deal_setup, env_seed
from agents.tournament.matches import build_seat, match_setup, play_match
from agents.tournament.specs import spec_kind

#: End reasons, as stored in ``TableResult.reasons``.
REASONS = ("going_out", "empty_stock", "illegal", "truncated")
TRUNCATED = REASONS.index("truncated")
#: Agent kinds built once per process and reseeded before every deal.
_CACHED_KINDS = ("ppo",)


@dataclass
class TableResult:
    """Raw results of one table: arrays indexed ``[deal, rotation, seat]``. In match mode
    (``agents.tournament.matches``) the index is the match's, ``charges`` the match
    totals, ``winners`` the match winners and ``decisions`` the match's moves."""

    lineup: list[str]
    seating: list[list[str]]  # seating[rotation][seat] -> agent label
    charges: np.ndarray  # int32 [D, R, n]
    winners: np.ndarray  # bool  [D, R, n]
    reasons: np.ndarray  # uint8 [D, R], index into REASONS
    decisions: np.ndarray  # int32 [D, R], actions taken in the deal


WORKER_STATE: dict[str, Any] = {}


def reset_worker_signals() -> None:
    """For a pool's initializer. A forked worker inherits the parent's signal handlers (the
    training CLIs turn SIGTERM into KeyboardInterrupt), and ``Pool.terminate`` sends
    SIGTERM: with the inherited handler an idle worker prints a traceback, or hangs the
    pool's shutdown when it dies holding the task queue's lock. Workers die quietly on
    SIGTERM and ignore SIGINT (Ctrl-C reaches the whole process group; the parent handles
    it and terminates the pool)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def init_pool_worker(config: dict[str, Any]) -> None:
    """The pool's initializer (``reset_worker_signals``, then the worker's config)."""
    reset_worker_signals()
    init_worker(config)


def init_worker(config: dict[str, Any]) -> None:
    WORKER_STATE.clear()
    WORKER_STATE.update(config)
    WORKER_STATE["cache"] = {}
    WORKER_STATE["env"] = None


def _get_agent(spec: str, n: int, seed: int, seat: int):
    num_deals = int(WORKER_STATE["rules"].get("num_deals", 1))
    if spec_kind(spec) in _CACHED_KINDS:
        cache = WORKER_STATE["cache"]
        key = (spec, seat)
        if key not in cache:
            cache[key] = build_seat(spec, n, seed, num_deals)
        agent = cache[key]
        agent.reset(seed=seed)
        return agent
    return build_seat(spec, n, seed, num_deals)


def seat_observation(env, seat: int, version: int, encoders: dict) -> dict:
    """What the bot in ``seat`` is shown: the observation of the layout version it was
    built for (``agent.layout_version``), so v0 and v1 networks can sit at one table.
    The table's own version comes from the env as it is; another from an encoder of that
    version kept in ``encoders`` (the mask is the same at every version)."""
    observation = env.observe(env.possible_agents[seat])
    if version == env.layout_version:
        return observation
    encoder = encoders.get(version)
    if encoder is None:
        from pis_env.observation import observation_encoder

        rules = env.rules
        encoder = encoders[version] = observation_encoder(rules.num_players,
                                                          rules.num_deals, version)
    return {"observation": encoder.encode(env.game, seat),
            "action_mask": observation["action_mask"]}


def _mover(env, players: list, labels: list[str], encoders: dict, where: str, rotation: str):
    """``move(seat, deal)``: the seat's bot plays one move at ``env`` (each shown its own
    layout version); a bot's failure is a ``RuntimeError`` naming it and the game."""
    versions = [getattr(p, "layout_version", env.layout_version) for p in players]

    def move(s: int, deal: int) -> None:
        try:
            env.step(players[s].act(seat_observation(env, s, versions[s], encoders)))
        except Exception as e:
            raise RuntimeError(f"agent {labels[s]!r} in seat {s} failed at {where}, deal "
                               f"{deal}, {rotation}: {type(e).__name__}: {e}") from e

    return move


def carry_opponents(players: list, labels: list[str], carried: dict, into: bool) -> None:
    """The repeated-opponent mode of bots built with ``carry_posterior`` (``search?
    carry_posterior=1``): after each rotation of a deck such a bot's evidence about who
    each opponent is (``opponent_prior()``, by relative seat; no card) is kept under
    (its label, the opponent's label), and the next rotation's bot of that label starts
    from it (``set_opponent_prior``), so the bot meets an opponent it has played the
    deck's earlier rotations against. Only within one deck, whose rotations one task
    plays in order: the results depend on neither ``--workers`` nor the backend."""
    n = len(players)
    for s, p in enumerate(players):
        if not getattr(p, "carry_posterior", False):
            continue
        if into:
            prior = p.opponent_prior()
            for k in range(1, n):
                key = (labels[s], labels[(s + k) % n])
                if key in carried:
                    prior[k] = carried[key]
            p.set_opponent_prior(prior)
        else:
            prior = p.opponent_prior()
            for k in range(1, n):
                carried[(labels[s], labels[(s + k) % n])] = prior[k]


def play_chunk(task: tuple[int, int, int]):
    """Play deals ``start..stop-1`` of table ``t`` under every rotation (matches
    ``start..stop-1`` in match mode)."""
    from pis_env import raw_env

    t, start, stop = task
    cfg = WORKER_STATE
    if cfg["env"] is None:
        cfg["env"] = raw_env(**cfg["rules"])
    env = cfg["env"]
    n = cfg["rules"]["num_players"]
    seed = cfg["seed"]
    seating = cfg["seatings"][t]
    specs = cfg["specs"]
    count = stop - start
    charges = np.zeros((count, n, n), np.int32)
    winners = np.zeros((count, n, n), bool)
    reasons = np.zeros((count, n), np.uint8)
    decisions = np.zeros((count, n), np.int32)
    encoders = cfg.setdefault("encoders", {})
    num_deals = int(cfg["rules"].get("num_deals", 1))
    if num_deals > 1:
        for i, m in enumerate(range(start, stop)):
            decks, dealer = match_setup(seed, m, n, num_deals)
            for r in range(n):
                labels = seating[r]
                players = [_get_agent(specs[labels[s]], n, agent_seed(seed, m, r, s), s)
                           for s in range(n)]
                move = _mover(env, players, labels, encoders, f"table {t}, match {m}",
                              f"rotation {r}")
                totals, won, reason, moves = play_match(env, players, decks, dealer,
                                                        env_seed(seed, m), move)
                charges[i, r], winners[i, r] = totals, won
                reasons[i, r], decisions[i, r] = REASONS.index(reason), moves
        return t, start, charges, winners, reasons, decisions
    for i, d in enumerate(range(start, stop)):
        deck, dealer = deal_setup(seed, d, n)
        eseed = env_seed(seed, d)
        carried: dict = {}  # this deck's evidence about opponents (carry_opponents)
        for r in range(n):
            labels = seating[r]
            players = [
                _get_agent(specs[labels[s]], n, agent_seed(seed, d, r, s), s) for s in range(n)
            ]
            carry_opponents(players, labels, carried, into=True)
            env.reset(seed=eseed, options={"deck": deck, "dealer": dealer})
            game = env.game
            versions = [getattr(p, "layout_version", env.layout_version) for p in players]
            while not game.deal_over:
                s = game.current
                try:
                    action = players[s].act(seat_observation(env, s, versions[s], encoders))
                    env.step(action)
                except Exception as e:
                    raise RuntimeError(
                        f"agent {labels[s]!r} in seat {s} failed at table {t}, deal {d}, "
                        f"rotation {r}: {type(e).__name__}: {e}"
                    ) from e
            carry_opponents(players, labels, carried, into=False)
            charges[i, r] = game.charges
            winners[i, r] = game.winners
            reasons[i, r] = REASONS.index(game.end_reason)
            decisions[i, r] = game.turns
    return t, start, charges, winners, reasons, decisions
