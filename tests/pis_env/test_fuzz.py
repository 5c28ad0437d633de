"""A fuzz suite over the AEC API: a hypothesis state machine that builds tables of 2–7
players in every variant, resets them with random seeds, decks and dealers (bad ones
too), steps legal and illegal actions, observes, and replays exported histories.

After every step it checks what must always hold: 52 cards, observations inside their
space that decode to the engine's position, a mask only for the agent to move, zero-sum
rewards; a replay must reach every position the table went through since its reset.

In CI it runs derandomized (a fixed seed, no example database) on a small budget;
``scripts/fuzz.py`` (``make fuzz``) runs the same machine for minutes.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

import pis_env
from pis_env import IllegalActionError, decode_observation, history
from pis_env.cards import card_name, cards_of
from pis_env.engine import DRAW
from pis_env.rules import CHOICES

OPTIONS = st.fixed_dictionaries(
    {
        "num_players": st.integers(2, 7),
        "num_deals": st.integers(1, 3),
        "max_turns": st.one_of(st.none(), st.integers(1, 150)),
        **{key: st.sampled_from(values) for key, values in CHOICES.items()},
    }
)
DECK = st.permutations(range(52))
BAD_DECK = st.one_of(
    DECK.map(lambda d: [float(c) for c in d]),
    DECK.map(lambda d: [None, *d[1:]]),
    DECK.map(lambda d: [*d[:51], d[0]]),
    DECK.map(lambda d: d[:40]),
)
ODD_ACTIONS = st.sampled_from([2.5, None, "7C", True, np.int64(99), np.array(70), -1, 58, 1000])


def position(env) -> tuple:
    """Everything an agent or a trainer can read after a step, comparable with ``==``."""
    views = tuple(
        np.concatenate([v["observation"], v["action_mask"]]).tobytes()
        for v in (env.observe(a) for a in env.possible_agents)
    )
    return (views, env.agent_selection, dict(env.rewards), dict(env.terminations),
            dict(env.truncations), copy.deepcopy(env.infos))


class EnvMachine(RuleBasedStateMachine):
    """The AEC env under random use. ``examples`` counts the tables built (one per
    example), for ``scripts/fuzz.py``'s report."""

    examples = 0

    def __init__(self):
        super().__init__()
        self.env = None
        self.trace: list[tuple] = []  # positions since the last reset, for the replays

    # ------------------------------------------------------------------ tables
    @initialize(options=OPTIONS, seed=st.integers(0, 2**32 - 1))
    def build(self, options, seed):
        type(self).examples += 1
        self.env = pis_env.raw_env(**options)
        self.env.reset(seed=seed)
        self.trace = [position(self.env)]

    @rule(seed=st.one_of(st.none(), st.integers(0, 2**32 - 1)), deck=st.one_of(st.none(), DECK),
          style=st.sampled_from(["ids", "names", "decks"]),
          dealer=st.one_of(st.none(), st.integers(0, 7)))
    def reset(self, seed, deck, style, dealer):
        env = self.env
        options = {"dealer": dealer}
        if deck is not None:
            if style == "names":
                options["deck"] = [card_name(c) for c in deck]
            elif style == "decks":  # a list of decks stacks the first deals of a match
                options["deck"] = [deck, deck[::-1]][: env.rules.num_deals]
            else:
                options["deck"] = np.array(deck)
        if dealer is not None and dealer >= env.rules.num_players:
            with pytest.raises(ValueError, match="dealer"):
                env.reset(seed=seed, options=options)
            return
        env.reset(seed=seed, options=options)
        if deck is not None:
            assert env.game.deal_decks[0] == list(deck)
        if dealer is not None:
            assert env.game.dealer == dealer
        self.trace = [position(env)]

    @rule(deck=BAD_DECK)
    def reset_with_a_bad_deck(self, deck):
        before = position(self.env)
        with pytest.raises(ValueError, match="deck"):
            self.env.reset(options={"deck": deck})
        assert position(self.env) == before  # the episode goes on untouched

    # ------------------------------------------------------------------ steps
    def _live(self) -> bool:
        env = self.env
        agent = env.agent_selection
        return bool(env.agents) and not (env.terminations[agent] or env.truncations[agent])

    def _step(self, action) -> None:
        self.env.step(action)
        self.trace.append(position(self.env))

    @precondition(lambda self: self._live())
    @rule(count=st.integers(1, 80), rng=st.randoms(use_true_random=False),
          draw_bias=st.sampled_from([0.0, 0.3, 0.8]))
    def legal_steps(self, count, rng, draw_bias):
        for _ in range(count):
            if not self._live():
                return
            legal = self.env.game.legal_actions()
            assert legal, "a live deal always has a legal action"
            if DRAW in legal and rng.random() < draw_bias:
                self._step(DRAW)
            else:
                self._step(rng.choice(legal))

    @precondition(lambda self: self._live())
    @rule(action=st.one_of(st.integers(0, 57), ODD_ACTIONS))
    def any_action(self, action):
        env = self.env
        game = env.game
        legal = game.legal_actions()
        is_int = isinstance(action, (int, np.integer, np.ndarray)) and not isinstance(action, bool)
        if is_int and int(action) in legal:
            self._step(action)
            return
        offender = env.agent_selection
        if env.rules.illegal_action == "raise":
            before = (env.export_history(), position(env))
            with pytest.raises(IllegalActionError, match="illegal"):
                env.step(action)
            assert (env.export_history(), position(env)) == before
            return
        self._step(action)
        assert all(env.terminations.values()) and game.end_reason == "illegal"
        expected = int(action) if is_int else -1
        value = env.infos[offender]["illegal_action"]
        assert type(value) is int and value == expected

    @precondition(lambda self: self.env.agents and not self._live())
    @rule()
    def remove_done_agents(self):
        env = self.env
        while env.agents:
            agent = env.agent_selection
            assert env.terminations[agent] or env.truncations[agent]
            with pytest.raises(ValueError, match="episode is over"):
                env.step(0)
            env.step(None)
        with pytest.raises(RuntimeError, match="episode is over"):
            env.step(0)

    # ------------------------------------------------------------------ views
    @rule()
    def observe_unknown_agent(self):
        with pytest.raises(ValueError, match="unknown agent"):
            self.env.observe(f"player_{self.env.rules.num_players}")

    @rule()
    def replay(self):
        text = self.env.export_history()
        replayed = [position(env) for env in history.replay(text, pis_env.raw_env)]
        assert replayed == self.trace
        reshuffles = sum(map(len, self.env.game.deal_reshuffles))
        event(f"replay with {'no' if not reshuffles else 'a'} reshuffle")

    # ------------------------------------------------------------------ invariants
    @invariant()
    def positions_are_consistent(self):
        env = self.env
        if env is None:
            return
        game = env.game
        assert game.card_count() == 52
        n, deals = env.rules.num_players, env.rules.num_deals
        for seat, agent in enumerate(env.possible_agents):
            obs = env.observe(agent)
            assert env.observation_space(agent).contains(obs)
            decoded = decode_observation(obs["observation"], n, deals)
            assert decoded["hand"] == cards_of(game.hands[seat])
            assert decoded["stock_size"] == len(game.stock)
            mine = seat == game.current and not game.deal_over
            assert obs["action_mask"].any() == mine
        if env.agents and any(env.rewards.values()):
            assert sum(env.rewards.values()) == pytest.approx(0.0, abs=1e-9)


#: CI's budget: derandomized, no example database, about 20 s on two busy cores.
CI_SETTINGS = settings(
    max_examples=150,
    stateful_step_count=15,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

TestEnvMachine = EnvMachine.TestCase
TestEnvMachine.settings = CI_SETTINGS
