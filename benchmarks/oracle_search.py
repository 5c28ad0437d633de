"""What knowing the opponents' hands would buy the search: an upper bound on any belief.

    python -m benchmarks.oracle_search --decks 20                 # a short run
    python -m benchmarks.oracle_search --decks 1000 --seed 11 --out runs/oracle
    python -m agents.tournament --agents search,heuristic --players 2 --deals 1000 \\
        --seed 11 --workers 1 --out runs/search
    python -m agents.tournament compare runs/oracle/deals.csv runs/search/deals.csv

The search bot (``agents.search``, its defaults or the options given) plays ``--opponent``
with one change: its determinizations deal every opponent the hand that opponent really
holds, read from the engine, and only the stock (which no seat sees) is shuffled afresh
in each world. Everything else is the bot's own: the budget, the rollouts, the choice.
Its win rate is therefore what a perfect belief over the opponents' hands could at most
give that search (the network's counterpart: [Results](../docs/results.md), "Oracle
probe"); the gap to the real bot is what a better belief, or a better model of who the
opponent is, is worth; the gap to 100% is the rollout policy's and the stock's.

The decks, dealers and seeds are a tournament's (``agents.tournament.deals``: every deck
under every seat rotation, the same ``--seed`` the same deals), and ``OUT/deals.csv`` has
the tournament's columns, so ``compare`` pairs it deal by deal with a tournament of the
real bot. This is a measurement, not a bot: no table shows a bot the hidden cards.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

from agents.search import SearchAgent

#: The columns of a tournament's deals.csv (``TournamentResult.save``).
COLUMNS = ("table", "deal", "rotation", "seat", "agent", "charge", "winner", "end_reason",
           "decisions")


class HandsOracleSearch(SearchAgent):
    """The search bot whose worlds hold the opponents' true hands (``game``: the engine
    state of the table, set by whoever seats it; ``seat``: its seat there)."""

    name = "search"

    def __init__(self, *args, seat: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.seat = seat
        self.game = None

    def _worlds(self, decoded, unseen, count, rng):
        game, n = self.game, self.num_players
        if game is None:
            raise RuntimeError("HandsOracleSearch plays only where it is shown the game")
        opponents = [game.hands[(self.seat + k) % n] for k in range(1, n)]
        if [h.bit_count() for h in opponents] != list(decoded["hand_sizes"][1:]):
            raise RuntimeError("the engine's hands do not match the observation's sizes")
        hands = np.tile(np.asarray(opponents, dtype=np.int64), (count, 1))
        stock = np.asarray(game.stock[::-1], dtype=np.int64)
        stocks = rng.permuted(np.tile(stock, (count, 1)), axis=1)
        return hands, stocks, None


def play(decks: int, seed: int, players: int, opponent: str, options: dict,
         table: int = 0):
    """Every deck under every rotation of [oracle search, opponent x (n-1)]; yields the
    deals.csv rows of each game."""
    from agents.tournament.deals import agent_seed, deal_setup, env_seed, rotations
    from agents.tournament.specs import build_agent
    from agents.tournament.worker import seat_observation
    from pis_env import raw_env

    env = raw_env(num_players=players)
    labels = ["search", *[opponent] * (players - 1)]
    encoders: dict = {}
    for d in range(decks):
        deck, dealer = deal_setup(seed, d, players)
        for r, lineup in enumerate(rotations(list(range(players)))):
            bots = []
            for s, who in enumerate(lineup):
                a_seed = agent_seed(seed, d, r, s)
                bots.append(HandsOracleSearch(players, seed=a_seed, seat=s, **options)
                            if who == 0 else build_agent(opponent, players, a_seed))
            env.reset(seed=env_seed(seed, d), options={"deck": deck, "dealer": dealer})
            game = env.game
            versions = [getattr(b, "layout_version", env.layout_version) for b in bots]
            while not game.deal_over:
                s = game.current
                if isinstance(bots[s], HandsOracleSearch):
                    bots[s].game = game
                env.step(bots[s].act(seat_observation(env, s, versions[s], encoders)))
            for s, who in enumerate(lineup):
                yield {"table": table, "deal": d, "rotation": r, "seat": s,
                       "agent": labels[who], "charge": int(game.charges[s]),
                       "winner": int(bool(game.winners[s])), "end_reason": game.end_reason,
                       "decisions": game.turns}


def main(argv=None) -> int:
    from agents.tournament.specs import parse_spec
    from agents.tournament.stats import wilson_interval

    parser = argparse.ArgumentParser(prog="python -m benchmarks.oracle_search",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--decks", type=int, default=20, help="duplicate decks (default 20)")
    parser.add_argument("--seed", type=int, default=11, help="the tournament seed (default 11)")
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    parser.add_argument("--opponent", default="heuristic",
                        help="the spec at every other seat (default heuristic)")
    parser.add_argument("--search", default="search",
                        help="the search spec whose options the oracle takes (default search)")
    parser.add_argument("--out", default=None, help="folder for deals.csv")
    args = parser.parse_args(argv)
    if not 1 <= args.decks <= 100_000:
        parser.error("--decks must be in 1..100000")
    name, options = parse_spec(args.search)
    if name != "search":
        parser.error(f"--search {args.search!r}: a search spec (search?key=value&...)")
    out = Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    rows = list(play(args.decks, args.seed, args.players, args.opponent, options))
    mine = [r for r in rows if r["agent"] == "search"]
    games: dict = {}
    for r in rows:
        games.setdefault((r["deal"], r["rotation"]), []).append(r["winner"])
    wins = sum(r["winner"] / max(sum(games[(r["deal"], r["rotation"])]), 1) for r in mine)
    low, high = wilson_interval(wins, len(mine))
    print(f"oracle {args.search} vs {args.opponent}, {args.players} players, {args.decks} "
          f"decks: {100 * wins / len(mine):.1f}% [{100 * low:.1f}, {100 * high:.1f}] of "
          f"{len(mine)} seat-deals")
    if out is not None:
        with open(out / "deals.csv", "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
        print(f"wrote {out / 'deals.csv'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
