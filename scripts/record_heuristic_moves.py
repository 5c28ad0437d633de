"""Record the moves the heuristic bot and its held-out re-weightings would choose in seeded
games at 2 to 7 players, in ``tests/fixtures/heuristic_moves.json``, which
``tests/agents/heuristic/test_recorded_moves.py`` then holds every later version of the
code to.

    python scripts/record_heuristic_moves.py           # write the fixture
    python scripts/record_heuristic_moves.py --check   # compare the code with it, write nothing

Why: a change of the heuristic's play at some tables (the larger ones, behind a new
parameter) must provably leave the rest alone: the 2-player single-deal moves, and the
evaluation set's re-weightings (``agents.heuristic.variants.HELD_OUT``) at every size. So
the positions must not depend on the heuristic: the moves actually played come from a
fixed driver (the greedy bot, or a uniformly random legal move, mixed by a seeded
generator), and at every decision of every seat the heuristic (default weights) and each
held-out variant are asked what they would play there, without playing it. Each queried
bot is built as a tournament seats it (``build_seat``, then ``reset(seed=...)``) and
shown the observations of its own seat only, told of every new deal of a match with
``reset()`` (``play_match``), so whatever it remembers matches the position.

The fixture keeps the driver's moves, so the positions are replayed from them (the deck,
dealer and reshuffles come from the game's seed): a later change of the greedy or random
bot does not move the positions, and a change of the engine that does is reported as
such, not as a change of the heuristic. Rewrite it only when the play is meant to change,
and say so in the commit.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run as a file: the project's packages

from agents.greedy import GreedyAgent  # noqa: E402
from agents.heuristic.variants import HELD_OUT  # noqa: E402
from agents.tournament.matches import build_seat, play_match  # noqa: E402
from pis_env import action_name, raw_env  # noqa: E402
from pis_env.engine import ACE_PHASE, NOMINATE, OPENING  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "heuristic_moves.json"
#: The bots asked at every decision: fixture key -> agent spec (as a tournament names it).
BOTS = {"heuristic": "heuristic",
        **{name: f"held_out?variant={name}" for name in HELD_OUT}}
#: (players, deals per game, decisions to reach): one-deal tables at every size, and
#: four-deal matches at 2, 3 and 6 players. A table plays whole games until it has reached
#: its count of decisions (every seat's, forced ones included).
TABLES = [(n, 1, 450) for n in range(2, 8)] + [(n, 4, 300) for n in (2, 3, 6)]
SEED = 0
#: The driver's share of greedy moves; the others are uniformly random legal moves (they
#: draw and pass where a card fits, nominate any suit, leave an Ace's extra play).
GREEDY_SHARE = 0.6
PHASES = ("opening", "play", "sevens", "drawn", "nominate", "ace")


@dataclass
class Decision:
    """One decision of a replayed game: who moved where, and what each queried bot chose
    there (``moves``, by fixture key) beside what the driver played."""

    deal: int
    seat: int
    phase: str
    legal: list[int]
    driver: int
    moves: dict[str, int]
    observation: np.ndarray
    mask: np.ndarray


def phase_of(game) -> str:
    """The kind of decision the player to move faces: the opening club, a turn (``play``),
    answering pending sevens, after drawing (play the drawn card or pass), nominating a
    suit after a Jack, or an Ace's extra play."""
    if game.phase == OPENING:
        return "opening"
    if game.phase == NOMINATE:
        return "nominate"
    if game.phase == ACE_PHASE:
        return "ace"
    if game.pending_sevens:
        return "sevens"
    return "drawn" if game.has_drawn else "play"


def seat_seed(num_players: int, num_deals: int, seed: int, seat: int) -> int:
    """The seed the queried bots of ``seat`` are built and reset with."""
    return int(np.random.SeedSequence([seed, num_players, num_deals, seat])
               .generate_state(1)[0])


def mixed_driver(num_players: int, num_deals: int, seed: int) -> Callable[[dict], int]:
    """The recording's driver: at each decision, with probability ``GREEDY_SHARE`` the
    greedy bot's move, else a uniformly random legal one (one generator per game)."""
    rng = np.random.default_rng([seed, num_players, num_deals, 1])
    greedy = GreedyAgent(num_players, num_deals)

    def move(observation: dict) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if rng.random() < GREEDY_SHARE:
            return greedy.act(observation)
        return int(legal[rng.integers(legal.size)])

    return move


def replayed_driver(actions: list[int], where: str) -> Callable[[dict], int]:
    """A driver that plays the recorded ``actions`` in order; a recorded action that is
    no longer legal is an error naming the position (the engine changed, not the bot)."""
    moves: Iterator[int] = iter(actions)

    def move(observation: dict) -> int:
        action = next(moves, None)
        if action is None:
            raise AssertionError(f"{where}: the game goes on after the {len(actions)} "
                                 "recorded driver moves: the positions are no longer the "
                                 "recorded ones (the engine changed)")
        if not observation["action_mask"][action]:
            raise AssertionError(f"{where}: the recorded driver move {action_name(action)} "
                                 "is not legal: the positions are no longer the recorded "
                                 "ones (the engine changed)")
        return action

    return move


def play_game(num_players: int, num_deals: int, seed: int,
              driver: Callable[[dict], int] | None = None,
              bots: dict[str, str] | None = None) -> list[Decision]:
    """Play one game (a deal, or a match of ``num_deals`` deals) of ``seed`` with
    ``driver`` (default ``mixed_driver``) making every move, asking ``bots`` (default
    ``BOTS``) at every decision what they would play; the decisions in order."""
    bots = BOTS if bots is None else bots
    driver = mixed_driver(num_players, num_deals, seed) if driver is None else driver
    rng = np.random.default_rng([seed, num_players, num_deals])
    decks = [rng.permutation(52).tolist() for _ in range(num_deals)]
    dealer = int(rng.integers(num_players))
    env_seed = int(rng.integers(2**31))
    env = raw_env(num_players=num_players, num_deals=num_deals)
    seated = []
    for seat in range(num_players):
        s = seat_seed(num_players, num_deals, seed, seat)
        seat_bots = {key: build_seat(spec, num_players, s, num_deals)
                     for key, spec in bots.items()}
        for bot in seat_bots.values():
            bot.reset(seed=s)
        seated.append(seat_bots)
    decisions: list[Decision] = []

    def move(seat: int, deal: int) -> None:
        game = env.game
        observation = env.observe(env.possible_agents[seat])
        moves = {key: int(bot.act(observation)) for key, bot in seated[seat].items()}
        action = int(driver(observation))
        decisions.append(Decision(deal, seat, phase_of(game),
                                  np.flatnonzero(observation["action_mask"]).tolist(),
                                  action, moves, observation["observation"].copy(),
                                  observation["action_mask"].copy()))
        env.step(action)

    players = [bot for seat_bots in seated for bot in seat_bots.values()]
    play_match(env, players, decks, dealer, env_seed, move)
    return decisions


def table_key(num_players: int, num_deals: int) -> str:
    return f"{num_players}p" + (f"_{num_deals}deals" if num_deals > 1 else "")


def replay_table(table: dict, bots: dict[str, str] | None = None) -> list[list[Decision]]:
    """The decisions of every game of a fixture table, replayed from its driver moves."""
    n, deals = table["num_players"], table["num_deals"]
    return [play_game(n, deals, g["seed"],
                      replayed_driver(g["driver"], f"{table_key(n, deals)}, seed {g['seed']}"),
                      bots)
            for g in table["games"]]


def first_difference(table: dict, games: list[list[Decision]], key: str) -> str | None:
    """The first decision where ``key``'s move differs from the fixture's, described (the
    table, the game's seed, the decision's index, deal, seat, phase and legal actions,
    the recorded move and the one chosen now); ``None`` when every move is the recorded
    one."""
    where = f"{table['num_players']} players, {table['num_deals']} deal(s)"
    for g, decisions in zip(table["games"], games):
        got = [d.moves[key] for d in decisions]
        expected = g[key]
        if len(got) != len(expected) or len(decisions) != len(g["driver"]):
            return (f"{where}, seed {g['seed']}: {len(decisions)} decisions replayed, "
                    f"{len(g['driver'])} recorded (the positions changed)")
        for i, (e, a) in enumerate(zip(expected, got)):
            if e != a:
                d = decisions[i]
                legal = ", ".join(action_name(x) for x in d.legal)
                return (f"{key} at {where}, seed {g['seed']}, decision {i} (deal {d.deal}, "
                        f"seat {d.seat}, phase {d.phase}, legal [{legal}]): recorded "
                        f"{action_name(e)} ({e}), got {action_name(a)} ({a})")
    return None


def record_table(num_players: int, num_deals: int, target: int, first_seed: int) -> dict:
    """Play seeded games of the mixed driver until ``target`` decisions; the table's
    fixture entry (per game its seed, the driver's moves and every queried bot's)."""
    games, summary, count, seed = [], Counter(), 0, first_seed
    while count < target:
        decisions = play_game(num_players, num_deals, seed)
        games.append({"seed": seed, "driver": [d.driver for d in decisions],
                      **{key: [d.moves[key] for d in decisions] for key in BOTS}})
        for d in decisions:
            summary[d.phase] += 1
            summary[d.phase + " (a choice)"] += len(d.legal) > 1
        count += len(decisions)
        seed += 1
    phases = {p: [summary[p], summary[p + " (a choice)"]] for p in PHASES}
    return {"num_players": num_players, "num_deals": num_deals, "decisions": count,
            "phases": phases, "games": games}


HEADER = (
    "The moves of the heuristic bot (default weights) and of each held-out variant "
    "(agents.heuristic.variants.HELD_OUT) at every decision of every seat of seeded games "
    "at 2 to 7 players (one-deal tables; four-deal matches at 2, 3 and 6), asked without "
    "playing them: the moves played are the driver's (greedy, or a random legal move). Per "
    "table: per game its seed, the driver's moves (the positions are replayed from them) "
    "and each bot's; 'phases': decisions per phase [all, with more than one legal action]. "
    "Written by python scripts/record_heuristic_moves.py; checked by "
    "tests/agents/heuristic/test_recorded_moves.py."
)


def fixture_text(fixture: dict) -> str:
    """The fixture as JSON, one game per line (small, and a diff shows the games that
    moved)."""
    lines = ["{"]
    for key in ("header", "seed", "greedy_share", "bots"):
        lines.append(f" {json.dumps(key)}: {json.dumps(fixture[key])},")
    lines.append(' "tables": [')
    for t, table in enumerate(fixture["tables"]):
        head = {k: v for k, v in table.items() if k != "games"}
        lines.append("  " + json.dumps(head)[:-1] + ', "games": [')
        games = [json.dumps(g, separators=(",", ":")) for g in table["games"]]
        lines += ["   " + g + ("," if i < len(games) - 1 else "") for i, g in enumerate(games)]
        lines.append("  ]}" + ("," if t < len(fixture["tables"]) - 1 else ""))
    lines.append(" ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def load(path: Path = FIXTURE) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def record() -> dict:
    tables = [record_table(n, deals, target, SEED + 1000 * i)
              for i, (n, deals, target) in enumerate(TABLES)]
    return {"header": HEADER, "seed": SEED, "greedy_share": GREEDY_SHARE, "bots": BOTS,
            "tables": tables}


def check(fixture: dict) -> list[str]:
    """Every difference between the fixture and the code's moves now (the first per table
    and bot)."""
    problems = []
    for table in fixture["tables"]:
        games = replay_table(table, fixture["bots"])
        for key in fixture["bots"]:
            diff = first_difference(table, games, key)
            if diff:
                problems.append(diff)
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true",
                        help="compare the code's moves with the fixture; write nothing")
    parser.add_argument("--out", type=Path, default=FIXTURE,
                        help=f"the fixture (default {FIXTURE.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    if args.check:
        problems = check(load(args.out))
        for p in problems:
            print(p)
        print(f"{args.out}: {'differs' if problems else 'every move is the recorded one'}")
        return 1 if problems else 0
    fixture = record()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(fixture_text(fixture), encoding="utf-8")
    for table in fixture["tables"]:
        phases = ", ".join(f"{p} {a}/{c}" for p, (a, c) in table["phases"].items())
        print(f"{table_key(table['num_players'], table['num_deals'])}: "
              f"{len(table['games'])} games, {table['decisions']} decisions ({phases})")
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
