"""Play Pis Yedili against bots in the terminal.

::

    python -m agents.ui.play --opponents heuristic,mc          # you and two bots, 4 deals
    python -m agents.ui.play --opponents greedy --deals 1 --seed 7 --rules configs/rules/x.yaml

You sit at seat ``player_0``; the opponents sit clockwise to your left in the order
given. A match is ``--deals`` deals (4 by default, the source's match; the dealer moves one
seat clockwise each deal) and the lowest total charge wins. Each decision shows your hand,
the top card, the active suit, pending sevens, the opponents' hand sizes and the moves
since your last turn, then numbered legal moves (see ``agents.ui.human``). Each deal ends
with every hand's points and charge and the running totals.

Bad input is explained and asked again; ``q``, end of input (Ctrl-D) and Ctrl-C stop
the game with a message and the totals so far.
"""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.common.cli import error_exit, read_rules
from agents.ui.human import HumanAgent, QuitGame, card_text, hand_line, suit_text
from pis_env.cards import JACK, SEVEN, points_of
from pis_env.engine import DRAW, NOMINATE_BASE, PASS, GameState

_EIGHT, _TEN, _ACE = 6, 8, 12
_QUIT_MESSAGES = {
    "eof": "End of input: quitting the game.",
    "interrupt": "Interrupted (Ctrl-C): quitting the game.",
    "quit": "You quit the game.",
}


@dataclass
class MatchOutcome:
    """What ``play_match`` returns."""

    names: list[str]
    totals: list[int]
    deals_played: int
    deals: int
    completed: bool
    quit_reason: str | None = None
    deal_charges: list[list[int]] = field(default_factory=list)
    deal_winners: list[list[bool]] = field(default_factory=list)


def _rules(rules: Any, num_players: int, deals: int):
    from pis_env import Rules

    if rules is None:
        r = Rules()
    elif isinstance(rules, Rules):
        r = rules
    elif isinstance(rules, (str, Path)):
        r = read_rules(rules)
    elif isinstance(rules, dict):
        r = Rules.from_options(**rules)
    else:
        raise TypeError(f"rules must be a dict, a Rules, a YAML path or None, got {rules!r}")
    given = r.num_players
    if given != 2 and given != num_players:
        raise ValueError(
            f"the rules say num_players={given} but you chose {num_players - 1} opponent(s)"
        )
    # Every decision of the terminal game is someone's; an illegal move is a bug to raise.
    return r.replace(num_players=num_players, num_deals=deals, illegal_action="raise")


def describe(before: GameState, after: GameState, player: int, action: int,
             names: Sequence[str], you: int) -> str:
    """One line for the move log: what ``player`` did and what it caused."""
    who = names[player]
    n = before.num_players
    if action < 52:
        text = f"{who} played {card_text(action)}"
        rank = action % 13
        if after.deal_over and after.winners and after.winners[player] and \
                after.end_reason == "going_out":
            return text + " and went out!"
        if before.phase_name == "opening":
            return text + " (the opening club: no effect)"
        if rank == SEVEN:
            return text + f" — sevens pending: {after.pending_sevens}"
        if rank == _EIGHT:
            skipped = (player + before.direction) % n
            return text + f" — {names[skipped]} {'are' if skipped == you else 'is'} skipped"
        if rank == _TEN:
            return text + " — direction reversed"
        if rank == _ACE:
            return text + " — plays again"
        return text
    if NOMINATE_BASE <= action < DRAW:
        return f"{who} named {suit_text(action - NOMINATE_BASE)}"
    if action == DRAW:
        got = after.hands[player] & ~before.hands[player]
        count = got.bit_count()
        if before.pending_sevens and before.phase_name == "play":
            text = f"{who} took the penalty: {count} card{'s' if count != 1 else ''}"
        else:
            text = f"{who} drew {'a card' if count == 1 else f'{count} cards'}"
        if player == you and count:
            text += ": " + hand_line([c for c in range(52) if (got >> c) & 1])
        return text
    if action == PASS:
        return f"{who} passed"
    return f"{who}: action {action}"


def deal_end_sentence(game: GameState, names: Sequence[str],
                      name_card: Callable[[int], str]) -> str:
    """Why a finished deal ended, in one sentence (the terminal game and the browser
    table say the same); ``name_card`` names the last card."""
    n, reason = game.num_players, game.end_reason
    if reason == "going_out":
        last = game.history[-1][1]
        rank = last % 13
        extra = (" — charges tripled" if rank == SEVEN
                 else " — charges doubled" if rank == JACK else "")
        return f"{names[game.winners.index(True)]} went out on {name_card(last)}{extra}."
    if reason == "empty_stock":
        won = [names[i] for i in range(n) if game.winners[i]]
        return "The stock ran out: the lowest hand wins (" + ", ".join(won) + ")."
    if reason == "truncated":
        return "The deal hit the turn limit: nobody is charged."
    if reason == "illegal":
        loser = [names[i] for i in range(n) if not game.winners[i]]
        return f"{', '.join(loser)} made an illegal move and forfeits the match."
    return f"The deal ended ({reason})."


def deal_result_text(game: GameState, names: Sequence[str], totals: Sequence[int],
                     deal: int, deals: int) -> str:
    """The finished deal: who won, every hand with its points and charge, the totals."""
    n = game.num_players
    lines = [f"═══ Deal {deal + 1}/{deals} over ═══"]
    lines.append(deal_end_sentence(game, names, card_text))
    width = max(len(x) for x in names)
    for i in range(n):
        hand = [c for c in range(52) if (game.hands[i] >> c) & 1]
        mark = "winner" if game.winners[i] else f"{points_of(game.hands[i])} points"
        lines.append(f"  {names[i].ljust(width)}  charged {game.charges[i]:>3}  ({mark})  "
                     f"{hand_line(hand) if hand else ''}".rstrip())
    if deals > 1:
        lines.append("Totals: " + "   ".join(f"{names[i]} {totals[i]}" for i in range(n)))
    return "\n".join(lines)


def play_match(
    opponents: Sequence[str],
    deals: int = 4,
    seed: int | None = None,
    rules: Any = None,
    input_fn: Callable[[str], str] = input,
    output: Callable[[str], None] = print,
) -> MatchOutcome:
    """Play one match of ``deals`` deals: you (seat 0) against ``opponents`` (agent names
    for ``agents.make``). Returns the totals; quitting returns early with
    ``completed=False`` and the reason."""
    from agents import make
    from pis_env import raw_env

    opponents = [o.strip() for o in opponents if o.strip()]
    if not opponents:
        raise ValueError("give at least one opponent, e.g. --opponents heuristic")
    if "human" in opponents:
        raise ValueError("the opponents are bots; 'human' is you")
    n = len(opponents) + 1
    if n > 7:
        raise ValueError(f"at most 6 opponents (7 players), got {len(opponents)}")
    if not isinstance(deals, int) or deals < 1:
        raise ValueError(f"deals must be an int >= 1, got {deals!r}")
    r = _rules(rules, n, deals)
    if seed is None:
        seed = secrets.randbelow(2**31)
    you = 0
    counts = {o: opponents.count(o) for o in opponents}
    names = ["You"] + [
        (o if counts[o] == 1 else f"{o} #{i}") for i, o in enumerate(opponents, start=1)
    ]
    bots = {i: make(o, num_players=n, num_deals=deals, seed=seed * 7 + i)
            for i, o in enumerate(opponents, start=1)}
    human = HumanAgent(num_players=n, num_deals=deals, input_fn=input_fn, output=output,
                       names=names, seven_penalty=r.seven_penalty)
    env = raw_env(**r.to_dict())
    env.reset(seed=seed)
    outcome = MatchOutcome(names=names, totals=[0] * n, deals_played=0, deals=deals,
                           completed=False)
    table = ", ".join(names[1:])
    output(f"Pis Yedili — you against {table}. {deals} deal{'s' if deals > 1 else ''}"
           f"{', lowest total wins' if deals > 1 else ''}. Seed {seed}. "
           "Type ? for help, q to quit.")
    _announce_deal(env.game, names, output)
    try:
        while not all(env.terminations.values()) and not all(env.truncations.values()):
            game = env.game
            player = game.current
            obs = env.observe(env.possible_agents[player])
            agent = human if player == you else bots[player]
            action = int(agent.act(obs))
            before = game.copy()
            after = game.copy()
            after.apply(action)
            env.step(action)
            human.note(describe(before, after, player, action, names, you))
            if after.deal_over:
                outcome.deals_played += 1
                outcome.totals = list(after.totals)
                outcome.deal_charges.append(list(after.charges))
                outcome.deal_winners.append(list(after.winners))
                human.flush_moves()
                output(deal_result_text(after, names, after.totals, after.deal_index, deals))
                if not after.match_over:
                    for bot in bots.values():
                        if hasattr(bot, "reset"):
                            bot.reset()
                    human.reset()
                    _announce_deal(env.game, names, output)
    except QuitGame as q:
        outcome.quit_reason = q.reason
        output("\n" + _QUIT_MESSAGES.get(q.reason, "Quitting."))
        output(f"Deals played: {outcome.deals_played}/{deals}. Totals so far: "
               + "   ".join(f"{names[i]} {outcome.totals[i]}" for i in range(n)))
        return outcome
    except KeyboardInterrupt:
        outcome.quit_reason = "interrupt"
        output("\n" + _QUIT_MESSAGES["interrupt"])
        output(f"Deals played: {outcome.deals_played}/{deals}. Totals so far: "
               + "   ".join(f"{names[i]} {outcome.totals[i]}" for i in range(n)))
        return outcome
    outcome.completed = True
    if deals > 1:
        best = min(outcome.totals)
        won = [names[i] for i in range(n) if outcome.totals[i] == best]
        verdict = ("You win the match!" if won == ["You"]
                   else f"Shared win: {', '.join(won)}." if len(won) > 1
                   else f"{won[0]} wins the match.")
        output(f"Match over after {deals} deals. Final totals: "
               + "   ".join(f"{names[i]} {outcome.totals[i]}" for i in range(n))
               + f". {verdict}")
    else:
        verdict = ("You win the deal!" if outcome.deal_winners[0][you]
                   else "Better luck next deal.")
        output(f"Game over. {verdict}")
    return outcome


def _announce_deal(game: GameState, names: Sequence[str], output) -> None:
    opener = game.current
    output(f"\n═══ Deal {game.deal_index + 1}/{game.rules.num_deals}: {names[game.dealer]} "
           f"{'deal' if game.dealer == 0 else 'deals'}; {names[opener]} "
           f"{'open' if opener == 0 else 'opens'} with a club ═══")


def build_parser() -> argparse.ArgumentParser:
    from agents.common.cli import program_name

    p = argparse.ArgumentParser(prog=program_name("python -m agents.ui.play"),
                                description="Play Pis Yedili against bots in the terminal.")
    p.add_argument("--opponents", default="heuristic",
                   help="comma-separated bots (random, greedy, heuristic, held_out, mc, "
                   "search, ppo:PATH)")
    p.add_argument("--deals", type=int, default=4, help="deals in the match (default 4)")
    p.add_argument("--seed", type=int, default=None, help="seed (default: random)")
    p.add_argument("--rules", default=None, help="rules YAML file (configs/rules/*.yaml)")
    return p


def main(argv: Sequence[str] | None = None, input_fn: Callable[[str], str] = input,
         output: Callable[[str], None] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if output is None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.reconfigure(errors="replace")
            except (AttributeError, ValueError):
                pass

        def output(text: str) -> None:
            print(text, flush=True)
    try:
        outcome = play_match(args.opponents.split(","), deals=args.deals, seed=args.seed,
                             rules=args.rules, input_fn=input_fn, output=output)
    except (ValueError, TypeError, OSError) as e:
        return error_exit(parser.prog, str(e))
    except KeyboardInterrupt:
        output("\nInterrupted (Ctrl-C): quitting the game.")
        return 130
    if outcome.quit_reason == "interrupt":
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
