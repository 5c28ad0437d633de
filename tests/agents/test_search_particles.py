"""The search's particle-filter mode: its determinizations are the filter's worlds, it asks
the table for the v1 observation and still plays at v0 tables."""

from __future__ import annotations

import pytest

from agents import make
from agents.belief import ParticleBelief
from agents.search import PARTICLES_LAYOUT, BatchedRollouts
from agents.tournament import run_tournament
from pis_env import decode_observation, pis_yedili_v1, raw_env


def test_particles_mode_deals_the_filters_worlds(monkeypatch):
    """Every determinization rolled out is one of the filter's worlds (save the
    ``smoothing`` share dealt uniformly): the hands the rollouts get are compared with
    the population the filter holds at that decision."""
    dealt = []
    run = BatchedRollouts.run

    def spy(self, template, hands, stocks, actions, seeds, kinds=None):
        dealt.append(hands.copy())
        return run(self, template, hands, stocks, actions, seeds, kinds)

    monkeypatch.setattr(BatchedRollouts, "run", spy)
    n = 2
    env = pis_yedili_v1.raw_env(num_players=n)
    env.reset(seed=4)
    bot = make("search", num_players=n, seed=4, rollouts=200, determinize="particles",
               particles=32)
    other = make("heuristic", num_players=n)
    checked = 0
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        if agent != "player_0":
            env.step(other.act(obs))
            continue
        before = len(dealt)
        action = bot.act(obs)
        if len(dealt) > before:
            worlds, _, weights = bot.filter.worlds()
            population = {tuple(w[1:]) for w, p in zip(worlds, weights) if p > 0}
            rows = [tuple(h) for h in dealt[-1]]
            inside = sum(r in population for r in rows)
            assert inside >= 0.9 * len(rows), (inside, len(rows))
            checked += 1
        env.step(action)
    assert checked >= 3
    assert decode_observation(obs["observation"], n, 1, 1)  # a v1 table throughout


def test_particles_mode_asks_for_v1_and_reads_v0():
    bot = make("search", num_players=4, determinize="particles")
    assert bot.layout_version == PARTICLES_LAYOUT == 1
    assert make("search", num_players=4).layout_version == 1  # the default mode
    assert make("search", num_players=4, determinize="belief").layout_version == 0


@pytest.mark.parametrize("n", [2, 4])
def test_particles_mode_in_a_tournament(n, monkeypatch):
    """At a tournament's (v0) table the particle search is shown the v1 observation (its
    layout version) and the heuristic its own: the filter then never has to project."""
    projections = []
    monkeypatch.setattr(ParticleBelief, "_project",
                        lambda self, decoded: projections.append(decoded))
    result = run_tournament(["search?determinize=particles&rollouts=16&particles=16",
                             "heuristic"], num_players=n, deals=2, seed=3, workers=1,
                            progress=False)
    assert result.stats and result.mean_decisions > 0
    assert projections == []


@pytest.mark.parametrize("version", [0, 1])
def test_particles_mode_plays_a_match(version, monkeypatch):
    """A three-deal match: the filter follows each new deal (at v1 from the deal's
    start event, never projecting) and the search stays legal."""
    projections = []
    project = ParticleBelief._project
    monkeypatch.setattr(ParticleBelief, "_project", lambda self, decoded: (
        projections.append(decoded), project(self, decoded)))
    n = 2
    env = (pis_yedili_v1.raw_env if version else raw_env)(num_players=n, num_deals=3)
    env.reset(seed=8)
    bots = [make("search", num_players=n, num_deals=3, seed=8, rollouts=16,
                 determinize="particles", particles=16),
            make("heuristic", num_players=n, num_deals=3)]
    deals = set()
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = int(agent.split("_")[1])
        action = bots[seat].act(obs)
        assert obs["action_mask"][action]
        if seat == 0:
            deals.add(decode_observation(obs["observation"], n, 3, version)["deal"])
        env.step(action)
    assert deals == {0, 1, 2}
    if version:
        assert projections == []
