"""The terminal game: Enter on an empty line accepts the move shown in brackets (the only
move), and never picks one of several moves."""

from __future__ import annotations

from agents.human import HumanAgent
from pis_env import raw_env
from pis_env.engine import DRAW


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


def _position(deck_front, nominate="any"):
    """An env dealt from a deck whose first cards (player_0's hand, dealer 1) are given."""
    rest = [c for c in range(52) if c not in deck_front]
    deck = []
    for i in range(7):  # alternate: player_0 gets deck_front, player_1 the rest
        deck += [deck_front[i], rest[i]]
    deck += rest[7:]
    env = raw_env(num_players=2, nominate=nominate)
    env.reset(options={"deck": deck, "dealer": 1})
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
