"""The terminal game (agents/ui/play.py) and the human agent (agents/ui/human.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents import make
from agents.ui.human import HumanAgent, QuitGame, penalty_cards
from agents.ui.play import main, play_match
from pis_env import raw_env

ROOT = Path(__file__).resolve().parents[3]
BAD_INPUTS = ["abc", "0", "99", "", "-3", "KZ", "p"]  # text, out of range, empty, pass


def run_cli(args: list[str], stdin: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [sys.executable, "-m", "agents.ui.play", *args], input=stdin, capture_output=True,
        text=True, encoding="utf-8", cwd=ROOT, env=env, timeout=timeout,
    )


class Script:
    """An ``input`` replacement reading scripted lines, then always ``then`` (or EOF)."""

    def __init__(self, lines, then: str | None = "1", interrupt_after: int | None = None):
        self.lines = list(lines)
        self.then = then
        self.calls = 0
        self.interrupt_after = interrupt_after
        self.prompts: list[str] = []

    def __call__(self, prompt: str = "") -> str:
        self.calls += 1
        self.prompts.append(prompt)
        if self.interrupt_after is not None and self.calls > self.interrupt_after:
            raise KeyboardInterrupt
        if self.lines:
            return self.lines.pop(0)
        if self.then is None:
            raise EOFError
        return self.then


def find_position(predicate, num_players=2, seed=0, deals=200, **rules):
    """A (observation, env) where ``predicate(game)`` holds for the player to move,
    found by random play."""
    env = raw_env(num_players=num_players, **rules)
    rng = np.random.default_rng(seed)
    for d in range(deals):
        env.reset(seed=seed * 1000 + d)
        game = env.game
        while not game.deal_over:
            if predicate(game):
                return env.observe(env.agent_selection), env
            legal = game.legal_actions()
            env.step(legal[rng.integers(len(legal))])
    raise AssertionError("no such position found")


# ---------------------------------------------------------------------------- stdin
def test_a_whole_deal_through_stdin_with_bad_inputs():
    stdin = "\n".join(BAD_INPUTS) + "\n" + "1\n" * 3000
    proc = run_cli(["--opponents", "random", "--deals", "1", "--seed", "3"], stdin)
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in out + proc.stderr
    assert "'abc' is not a move" in out
    assert "0 is not on the list" in out and "99 is not on the list" in out
    assert "-3 is not on the list" in out and "'KZ' is not a move" in out
    assert "Please type" in out and "You cannot pass now" in out
    for shown in ("Your hand", "Top card:", "active suit:", "Opponents: random:", "Your moves:",
                  "  1) play ", "Last moves:", "═══ Deal 1/1 over ═══", "charged", "Game over."):
        assert shown in out
    assert any(s in out for s in "♣♦♥♠")


def test_a_four_deal_match_through_stdin():
    proc = run_cli(["--opponents", "random,random", "--seed", "5"], "x\n" + "1\n" * 6000)
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in out + proc.stderr
    assert "'x' is not a move" in out
    for k in range(1, 5):
        assert f"═══ Deal {k}/4 over ═══" in out
    assert out.count("Totals: ") == 4
    assert "Match over after 4 deals. Final totals:" in out
    assert "Opponents: random #1: " in out and "random #2: " in out
    assert "Match totals (lower is better)" in out


def test_end_of_input_quits_cleanly():
    proc = run_cli(["--opponents", "random", "--seed", "1"], "abc\n")
    assert proc.returncode == 0
    assert "End of input: quitting the game." in proc.stdout
    assert "Deals played: 0/4. Totals so far: You 0   random 0" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_bad_command_line():
    proc = run_cli(["--opponents", "nobody"], "")
    assert proc.returncode == 2 and "unknown agent 'nobody'" in proc.stderr
    assert main(["--opponents", "human"]) == 2
    assert main(["--opponents", ",".join(["random"] * 7)]) == 2


def test_malformed_rules_file_is_a_one_line_error(tmp_path):
    bad = tmp_path / "bad rules.yaml"
    bad.write_text("num_players: 3\ndraw_rule: [one\n", encoding="utf-8")
    proc = run_cli(["--opponents", "random", "--rules", str(bad)], "")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert str(bad) in proc.stderr and "error:" in proc.stderr
    assert main(["--opponents", "random", "--rules", str(tmp_path / "missing.yaml")]) == 2


# ---------------------------------------------------------------------------- injected
def test_match_with_injected_input_and_running_totals():
    lines: list[str] = []
    script = Script(["hello", "100"])
    outcome = play_match(["random", "random"], deals=4, seed=9, input_fn=script,
                         output=lines.append)
    text = "\n".join(lines)
    assert outcome.completed and outcome.deals_played == 4
    assert outcome.names == ["You", "random #1", "random #2"]
    assert [sum(c[i] for c in outcome.deal_charges) for i in range(3)] == outcome.totals
    assert "'hello' is not a move" in text and "100 is not on the list" in text
    running = [0, 0, 0]
    for charges in outcome.deal_charges:
        running = [a + b for a, b in zip(running, charges)]
        assert "Totals: " + "   ".join(
            f"{n} {t}" for n, t in zip(outcome.names, running)) in text
    # the same seed and the same answers replay the same match
    again = play_match(["random", "random"], deals=4, seed=9, input_fn=Script(["1"]),
                       output=lambda s: None)
    assert again.totals == outcome.totals


def test_ctrl_c_and_quit():
    lines: list[str] = []
    outcome = play_match(["random"], deals=2, seed=1, input_fn=Script([], interrupt_after=3),
                         output=lines.append)
    assert not outcome.completed and outcome.quit_reason == "interrupt"
    assert "\nInterrupted (Ctrl-C): quitting the game.\nDeals played: 0/2." in "\n".join(lines)
    assert main(["--opponents", "random", "--seed", "1"],
                input_fn=Script([], interrupt_after=0), output=lines.append) == 130
    outcome = play_match(["random"], deals=1, seed=1, input_fn=Script(["q"]),
                         output=lines.append)
    assert outcome.quit_reason == "quit" and "You quit the game." in "\n".join(lines)
    assert main(["--opponents", "random"], input_fn=Script([], then=None),
                output=lines.append) == 0


# ---------------------------------------------------------------------------- agent
def _human(script, n=2, **kwargs):
    out: list[str] = []
    return HumanAgent(num_players=n, input_fn=script, output=out.append, **kwargs), out


def test_bad_input_loses_nothing():
    """Every kind of bad answer is explained and asked again; the first valid answer is
    the move."""
    obs, env = find_position(
        lambda g: g.phase_name == "opening"
        and g.hands[g.current] & ~0x1FFF and (g.hands[g.current] & 0x1FFF).bit_count() >= 2)
    game = env.game
    hand = [c for c in range(52) if game.hands[game.current] >> c & 1]
    legal = game.legal_actions()
    illegal_held = next(c for c in hand if c not in legal)
    not_held = next(c for c in range(52) if c not in hand)
    from pis_env import card_name

    bad = ["", "   ", "foo", "0", "-1", "999", "1.5", card_name(illegal_held),
           card_name(not_held), "p", "pass", "?"]
    script = Script(bad + ["2"], then=None)
    agent, out = _human(script)
    action = agent.act(obs)
    assert script.calls == len(bad) + 1 and not script.lines
    options = agent.menu(agent.decode(obs), legal)
    assert action == options[1][0] and action in legal
    text = "\n".join(out)
    assert "cannot be played now" in text and "You do not hold" in text
    assert "is not on the list" in text and "is not a move" in text
    assert "You cannot pass now" in text and "Type the number of a move" in text
    # a card name is accepted as well, lower case or with a unicode suit
    first = options[0][0]
    for answer in (card_name(first).lower(), card_name(first, unicode=True)):
        assert _human(Script([answer], then=None))[0].act(obs) == first


def test_suit_prompt_after_a_jack():
    obs, env = find_position(lambda g: g.phase_name == "nominate")
    script = Script(["x", "7", "", "h"], then=None)
    agent, out = _human(script)
    assert agent.act(obs) == 52 + 2
    text = "\n".join(out)
    assert "Name the suit" in text and "1) ♣ clubs" in text and "4) ♠ spades" in text
    assert "'x' is not a suit" in text and "7 is not on the list" in text
    assert _human(Script(["3"]))[0].act(obs) == 54
    # nominate="other": the active suit is not offered and is refused by name
    obs, env = find_position(lambda g: g.phase_name == "nominate", nominate="other")
    active = env.game.active_suit
    script = Script(["cdhs"[active], "1"], then=None)
    agent, out = _human(script)
    action = agent.act(obs)
    assert action != 52 + active and script.calls == 2
    assert "You may not name" in "\n".join(out)


def test_pending_sevens_are_shown():
    obs, env = find_position(lambda g: g.pending_sevens > 0 and g.phase_name == "play")
    k = env.game.pending_sevens
    agent, out = _human(Script(["d"], then=None))
    assert agent.act(obs) == 56
    text = "\n".join(out)
    assert f"Pending sevens: {k}" in text
    assert f"take the penalty: draw {penalty_cards(k)} cards" in text
    assert penalty_cards(3, "double") == 12 and penalty_cards(3) == 9


def test_moves_log_and_registry():
    agent = make("human", num_players=3)
    assert isinstance(agent, HumanAgent) and agent.names[0] == "You"
    obs, env = find_position(lambda g: g.phase_name == "play", num_players=3)
    agent, out = _human(Script(["1"]), n=3, names=["You", "left", "right"])
    agent.note("left played 7♣")
    agent.act(obs)
    text = "\n".join(out)
    assert "Last moves:\n  left played 7♣" in text
    assert "Opponents: left:" in text and "right:" in text
    assert not agent.moves  # shown once
    for quit_input, reason in ((Script(["q"]), "quit"), (Script([], then=None), "eof")):
        with pytest.raises(QuitGame) as info:
            _human(quit_input, n=3)[0].act(obs)
        assert info.value.reason == reason


@pytest.mark.platform_skip(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_at_the_prompt_quits_cleanly():
    import select
    import signal
    import time

    proc = subprocess.Popen(
        [sys.executable, "-m", "agents.ui.play", "--opponents", "random", "--seed", "1"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        # a shell that started us in the background may have set SIGINT to "ignored",
        # which the child would inherit: give it the default, as a terminal would
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    seen = b""
    deadline = time.monotonic() + 60
    while b"Your move" not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 1.0)
        if ready:
            seen += os.read(proc.stdout.fileno(), 4096)
    assert b"Your move" in seen
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    text = (seen + out).decode("utf-8")
    assert proc.returncode == 130
    assert "Interrupted (Ctrl-C): quitting the game." in text
    assert b"Traceback" not in err
