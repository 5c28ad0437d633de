"""The terminal game: Enter on an empty line accepts the move shown in brackets (the only
move), and never picks one of several moves."""

from __future__ import annotations

from agents.ui.human import HumanAgent
from pis_env import raw_env
from pis_env.engine import DRAW
from tests.conftest import stacked_deck


class Lines:
    """An ``input`` replacement: scripted answers, then EOF; remembers the prompts."""

    def __init__(self, lines):
        self.lines = list(lines)
        self.prompts: list[str] = []

    def __call__(self, prompt: str = "") -> str:
        self.prompts.append(prompt)
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)


def _position(hand0, nominate="any"):
    """A 2-player env whose player_0 (dealer: player_1) holds ``hand0``."""
    deck, dealer = stacked_deck([hand0], num_players=2)
    env = raw_env(num_players=2, nominate=nominate)
    env.reset(options={"deck": deck, "dealer": dealer})
    return env


def _agent(script):
    out: list[str] = []
    return HumanAgent(num_players=2, input_fn=script, output=out.append), out


def test_enter_accepts_the_only_move():
    # player_0 opens without a club: drawing is the only move, shown as [1]
    env = _position([13 + r for r in range(7)])  # seven diamonds
    obs = env.observe("player_0")
    assert list(obs["action_mask"].nonzero()[0]) == [DRAW]
    script = Lines([""])
    agent, out = _agent(script)
    assert agent.act(obs) == DRAW
    assert script.prompts == ["Your move [1]: "]
    assert not any("Please type" in line for line in out)


def test_enter_does_not_choose_among_several_moves():
    env = _position([0, 1, 2, 13, 14, 15, 16])  # three clubs: three plays and a draw
    obs = env.observe("player_0")
    script = Lines(["", "2"])
    agent, out = _agent(script)
    action = agent.act(obs)
    options = agent.menu(agent.decode(obs), list(obs["action_mask"].nonzero()[0]))
    assert len(options) > 1 and action == options[1][0]
    assert script.prompts[0] == f"Your move [1-{len(options)}]: "
    assert any("Please type a number from 1 to" in line for line in out)
