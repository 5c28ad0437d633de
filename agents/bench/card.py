"""The benchmark card of one bot: the bot against ``n - 1`` copies of each reference bot
(``agents.bench.field.REFERENCE_FIELD``) at every table size asked, at one-deal tables and
at four-deal matches, on duplicate decks, and one rating per table size on the fixed scale
of ``agents.bench.rating``.

Per reference bot and mode the card holds the bot's win share (the win rate at two
players; a win shared by ``w`` players counts ``1/w``) with Wilson's 95% interval over its
seat-deals, as the tournament reports win rates, and its mean charge per deal (per match:
the mean total) with a normal 95% interval over decks (the rotations of one deck are
correlated, decks are not). The evaluation-set mean is the mean over decks of each deck's
mean share over the evaluation-set bots, with a normal interval over decks, as
``python -m benchmarks.panel`` computes it. The rating is fitted on the one-deal tables
(the stored reference ratings are one-deal ratings); the matches are shown beside it.

Every figure depends only on the bot, the sizes, ``seed``, ``decks`` and ``matches``:
the tournament seeds every deal on its own, whatever the workers or the backend. That is
also why a card can be played in pieces: with a ``checkpoint`` file, every finished table
(the bot against one reference bot at one size and mode) is written to it, and a later
call with the same settings plays only the tables it lacks (a ``search`` card takes
hours; its job may be killed).
"""

from __future__ import annotations

import datetime
import json
import math
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.bench.field import REFERENCE_FIELD, FieldPlay, TablePlay, play_field
from agents.bench.rating import fit_rating, load_reference, reference_ratings
from agents.panel import EVALUATION_SET
from agents.tournament.stats import bootstrap_mean_ci, mean_ci, wilson_interval

#: Deals in a match of the card.
MATCH_DEALS = 4
#: (decks, matches) of the published card and of ``--quick``.
DEFAULT_BUDGET = (1000, 250)
QUICK_BUDGET = (100, 25)


def default_matches(decks: int) -> int:
    """Matches played when ``--matches`` is not given: as many deals as the one-deal
    tables play (``decks // 4``, at least 1)."""
    return max(1, decks // MATCH_DEALS)


def _finite(x: float) -> float | None:
    """JSON has no infinities or NaN: they are written as null."""
    return float(x) if math.isfinite(x) else None


def mode_figures(played: FieldPlay, bot: str) -> dict[str, Any]:
    """The per-reference-bot figures and the evaluation-set mean of one mode at one size."""
    refs: dict[str, Any] = {}
    per_deck = {}
    for ref in played.members:
        wins, games = played.wins[bot][ref], played.games[bot][ref]
        total_w, total_g = float(wins.sum()), float(games.sum())
        low, high = wilson_interval(total_w, total_g) if total_g else (math.nan, math.nan)
        has = games > 0
        charge = bootstrap_mean_ci(played.charges[bot][ref][has] / games[has])
        refs[ref] = {"share": _finite(total_w / total_g if total_g else math.nan),
                     "low": _finite(low), "high": _finite(high), "games": int(total_g),
                     "charge": _finite(charge[0]), "charge_low": _finite(charge[1]),
                     "charge_high": _finite(charge[2])}
        per_deck[ref] = np.where(has, wins / np.maximum(games, 1), np.nan)
    out: dict[str, Any] = {"refs": refs, "truncated": played.truncated}
    chosen = [r for r in played.members if r in EVALUATION_SET]
    if chosen:
        stack = np.stack([per_deck[r] for r in chosen])            # [members, D]
        played_decks = ~np.all(np.isnan(stack), axis=0)             # all truncated: out
        m = mean_ci(np.nanmean(stack[:, played_decks], axis=0))
        out["evaluation_mean"] = {"share": _finite(m[0]), "low": _finite(m[1]),
                                  "high": _finite(m[2]), "members": chosen}
    return out


#: ``"format"`` of a checkpoint file (a card played in pieces).
CHECKPOINT_FORMAT = "pis-bench-partial-card"


def _load_checkpoint(checkpoint: str | Path | None,
                     settings: Mapping[str, Any]) -> dict[str, Any]:
    """The stages already played by a run with the same ``settings`` (none without a
    file); a file of another card is an error, before anything is played."""
    path = Path(checkpoint) if checkpoint is not None else None
    if path is None or not path.exists():
        return {"stages": [], "sizes": {}, "elapsed_s": 0.0}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not a readable partial card ({e}); delete it") from None
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path}: not a partial card of pis-bench; delete it or give "
                         "another --json")
    if data.get("settings") != dict(settings):
        theirs = data.get("settings") or {}
        differ = [k for k in settings if theirs.get(k) != settings[k]]
        raise ValueError(f"{path}: a partial card of another run (its "
                         + ", ".join(f"{k} {theirs.get(k)!r}" for k in differ)
                         + "); delete it or give another --json")
    return data


def _save_checkpoint(path: Path, settings: Mapping[str, Any], done: Sequence[str],
                     sizes: Mapping[str, Any], pieces: Mapping[str, Any],
                     elapsed: float) -> None:
    """Write the played stages and the finished tables of unfinished ones, atomically (a
    job killed while writing keeps the old file)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"format": CHECKPOINT_FORMAT, "settings": dict(settings),
                               "stages": list(done), "sizes": sizes, "tables": pieces,
                               "elapsed_s": round(elapsed, 1)}, indent=1) + "\n",
                   encoding="utf-8")
    os.replace(tmp, path)


def _kept(played: TablePlay) -> dict[str, Any]:
    """A finished table as the checkpoint keeps it (JSON floats read back exactly)."""
    return {"wins": played.wins.tolist(), "games": played.games.tolist(),
            "charges": played.charges.tolist(), "truncated": played.truncated}


def _stage_play(tables: Mapping[str, Any], bot: str, field: Sequence[str], n: int,
                count: int, seed: int, num_deals: int) -> FieldPlay:
    """One stage's ``FieldPlay`` from its finished tables (each member's, as kept)."""
    for m in field:
        if any(len(tables[m][key]) != count for key in ("wins", "games", "charges")):
            raise ValueError(f"a kept table of {bot} against {m} does not hold {count} "
                             "decks: delete the partial card")
    figures = {key: {bot: {m: np.asarray(tables[m][key], dtype=float) for m in field}}
               for key in ("wins", "games", "charges")}
    return FieldPlay(bots=[bot], members=list(field), num_players=n, decks=count,
                     seed=seed, num_deals=num_deals, wins=figures["wins"],
                     games=figures["games"], charges=figures["charges"],
                     truncated=sum(tables[m]["truncated"] for m in field), elapsed_s=0.0,
                     workers=0)


def make_card(spec: str, sizes: Sequence[int] = (2, 3, 4), decks: int = DEFAULT_BUDGET[0],
              matches: int | None = None, seed: int = 0, workers: int | None = None,
              progress: bool = True, field: Sequence[str] = REFERENCE_FIELD,
              backend: str = "local", address: str | None = None,
              reference: Mapping[str, Any] | None = None,
              checkpoint: str | Path | None = None) -> dict[str, Any]:
    """Play the card of ``spec`` (``{n}`` in it: the table size) and return its figures
    (what ``--json`` writes). ``matches`` defaults to :func:`default_matches`; 0 plays no
    matches. ``checkpoint``: a file that keeps the finished stages (one size, one mode)
    and, within a stage, every finished table (the bot against one reference bot); what
    is in it, from a run with the same settings, is not played again."""
    reference = reference if reference is not None else load_reference()
    matches = default_matches(decks) if matches is None else matches
    field = list(field)
    stages = [(n, 1, decks) for n in sizes] + \
        ([(n, MATCH_DEALS, matches) for n in sizes] if matches else [])
    settings = {"bot": spec, "players": list(sizes), "decks": decks, "matches": matches,
                "seed": seed, "field": field, "reference": reference.get("measured")}
    saved = _load_checkpoint(checkpoint, settings)
    done: list[str] = list(saved["stages"])
    out_sizes: dict[str, Any] = saved["sizes"]
    tables: dict[str, dict[str, Any]] = saved.get("tables", {})
    todo = [s for s in stages if f"{s[0]}x{s[1]}" not in done]
    if (done or tables) and progress:
        print(f"resuming from {checkpoint}: {len(done)} of {len(stages)} stages and "
              f"{sum(len(t) for t in tables.values())} tables of the others already played",
              file=sys.stderr)
    start = time.perf_counter()

    def save() -> None:
        if checkpoint is not None:
            _save_checkpoint(Path(checkpoint), settings, done, out_sizes, tables,
                             saved["elapsed_s"] + time.perf_counter() - start)

    bar = _card_progress(sum((len(field) - len(tables.get(f"{n}x{nd}", {}))) * n * nd * count
                             for n, nd, count in todo), progress)
    try:
        for n, num_deals, count in todo:
            bot, stage = spec.replace("{n}", str(n)), f"{n}x{num_deals}"
            kept = tables.setdefault(stage, {})

            def keep(_bot: str, member: str, played: TablePlay, kept=kept,
                     deals=n * num_deals * count) -> None:
                kept[member] = _kept(played)
                save()
                bar.update(deals)

            missing = [m for m in field if m not in kept]
            if missing:
                play_field([bot], field, n, count, seed, workers, progress,
                           num_deals=num_deals, backend=backend, address=address,
                           pairs=[(bot, m) for m in missing], on_table=keep)
            played = _stage_play(kept, bot, field, n, count, seed, num_deals)
            entry = out_sizes.setdefault(str(n), {"bot": bot})
            figures = mode_figures(played, bot)
            if num_deals == 1:
                ratings = reference_ratings(n, reference)
                fit = fit_rating([(ratings[r], float(played.wins[bot][r].sum()),
                                   float(played.games[bot][r].sum())) for r in field], n)
                entry["rating"] = {"rating": _finite(fit.rating), "low": _finite(fit.low),
                                   "high": _finite(fit.high),
                                   "unbounded": None if math.isfinite(fit.rating)
                                   else ("above" if fit.rating > 0 else "below")}
                entry["deals"] = figures
            else:
                entry["matches"] = figures
            done.append(stage)
            del tables[stage]
            save()
    finally:
        bar.close()
    out_sizes = {str(n): out_sizes[str(n)] for n in sizes}
    return {"bot": spec, "players": list(sizes), "decks": decks, "matches": matches,
            "match_deals": MATCH_DEALS, "seed": seed, "field": field,
            "reference": {k: reference.get(k) for k in ("measured", "command", "seed",
                                                          "decks")},
            "sizes": out_sizes,
            "date": datetime.date.today().isoformat(),
            "elapsed_s": round(saved["elapsed_s"] + time.perf_counter() - start, 1)}


def _card_progress(total: int, progress: bool):
    """The whole card's progress (in deals, matches counting their deals) with an ETA,
    above each tournament's own bar; a line per stage in a log."""
    from agents.tournament.progress import LineProgress, _isatty

    if progress and not _isatty(sys.stderr):
        return LineProgress(total, desc="card", every=0.0)
    from tqdm import tqdm

    return tqdm(total=total, unit="deal", desc="card", disable=not progress, file=sys.stderr,
                dynamic_ncols=True, position=0)


# ------------------------------------------------------------------------ printing
def _figure(v: Mapping[str, Any] | None, key: str, scale: float) -> str:
    """``v[key]`` (times ``scale``) with its ``[low, high]`` when the card has them."""
    if not v or v.get(key) is None:
        return "-"
    prefix = "" if key == "share" else f"{key}_"
    low, high = v.get(f"{prefix}low"), v.get(f"{prefix}high")
    ci = (f" [{scale * low:.1f}, {scale * high:.1f}]" if low is not None and high is not None
          else "")
    return f"{scale * v[key]:.1f}{ci}"


def _pct(v: Mapping[str, Any] | None) -> str:
    return _figure(v, "share", 100.0)


def _charge(v: Mapping[str, Any] | None) -> str:
    return _figure(v, "charge", 1.0)


def rating_text(rating: Mapping[str, Any]) -> str:
    """``1191 [1150, 1232]``, or ``above every reference`` for a bot that won everything."""
    if rating.get("rating") is None:
        return f"{rating.get('unbounded', 'no')} every reference (no finite rating)"
    return f"{rating['rating']:.0f} [{rating['low']:.0f}, {rating['high']:.0f}]"


def format_card(card: Mapping[str, Any], reference: Mapping[str, Any] | None = None) -> str:
    """The card as text: per table size the rating, then a row per reference bot."""
    reference = reference if reference is not None else load_reference()
    ref_info = card["reference"]
    matches = card["matches"]
    lines = [f"Benchmark card: {card['bot']}",
             f"{card['decks']} duplicate decks"
             + (f" and {matches} {'match' if matches == 1 else 'matches'} of "
                f"{card['match_deals']} deals" if matches else "")
             + f", every seat rotation, seed {card['seed']}; reference ratings of "
             f"{ref_info.get('measured')} (heuristic = 1000)",
             "Win rate or share in % with 95% intervals; mean charge: penalty points per deal "
             "(per match: the total), lower is better"]
    for size, entry in card["sizes"].items():
        n = int(size)
        what = "win rate" if n == 2 else "win share"
        lines.append("")
        lines.append(f"{n} players ({entry['bot']} against {n - 1} "
                     f"{'copy' if n == 2 else 'copies'} of each): rating "
                     f"{rating_text(entry['rating'])}")
        ratings = reference_ratings(n, reference)
        rows = [("reference", "rating", f"deals: {what} %", "mean charge",
                 f"matches: {what} %", "mean total")]
        deals, matches = entry["deals"], entry.get("matches")
        for ref in card["field"]:
            m = matches["refs"][ref] if matches else None
            rows.append((ref, f"{ratings[ref]:.0f}", _pct(deals["refs"][ref]),
                         _charge(deals["refs"][ref]), _pct(m), _charge(m)))
        if "evaluation_mean" in deals:
            rows.append(("mean, evaluation set", "", _pct(deals["evaluation_mean"]), "",
                         _pct(matches.get("evaluation_mean") if matches else None), ""))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for i, r in enumerate(rows):
            lines.append("  " + "  ".join(c.ljust(w) if j == 0 else c.rjust(w)
                                          for j, (c, w) in enumerate(zip(r, widths))).rstrip())
            if i == 0:
                lines.append("  " + "  ".join("-" * w for w in widths))
        truncated = deals["truncated"] + (matches["truncated"] if matches else 0)
        if truncated:
            lines.append(f"  ({truncated} truncated games left out)")
    return "\n".join(lines)


def card_markdown(card: Mapping[str, Any]) -> str:
    """One Markdown row per table size for docs/leaderboard.md: bot, size, rating,
    the win share against heuristic, the evaluation-set mean (deals, matches)."""
    rows = []
    for size, entry in card["sizes"].items():
        deals, matches = entry["deals"], entry.get("matches") or {}
        heur = deals["refs"].get("heuristic")
        rows.append(f"| `{entry['bot']}` | {size} | {rating_text(entry['rating'])} | "
                    f"{_pct(heur)} | {_pct(deals.get('evaluation_mean'))} | "
                    f"{_pct(matches.get('evaluation_mean'))} |")
    return "\n".join(rows)


def plot_card(card: Mapping[str, Any], path: str) -> None:
    """A figure of the card: per table size, the win share against each reference bot
    (one-deal tables and matches) with its interval, and the share of an equal bot
    (``1/n``) as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = list(card["sizes"].items())
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.5 * len(sizes), 4), squeeze=False)
    field = card["field"]
    x = np.arange(len(field))
    for ax, (size, entry) in zip(axes[0], sizes):
        for k, (mode, label) in enumerate((("deals", "one deal"), ("matches", "4-deal match"))):
            figures = entry.get(mode)
            if not figures:
                continue
            share = np.array([figures["refs"][r]["share"] or np.nan for r in field])
            low = np.array([figures["refs"][r]["low"] or 0.0 for r in field])
            high = np.array([figures["refs"][r]["high"] or 0.0 for r in field])
            ax.bar(x + (k - 0.5) * 0.4, share, 0.4, label=label,
                   yerr=[share - low, high - share], capsize=2)
        ax.axhline(1 / int(size), color="grey", lw=1, ls="--", label="equal (1/n)")
        ax.set_xticks(x, field, rotation=60, ha="right", fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_title(f"{size} players: rating {rating_text(entry['rating'])}", fontsize=9)
        ax.set_ylabel("win share" if int(size) > 2 else "win rate")
    axes[0][0].legend(fontsize=7, loc="upper right")
    fig.suptitle(f"{card['bot']}: {card['decks']} decks, seed {card['seed']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


__all__ = ["CHECKPOINT_FORMAT", "DEFAULT_BUDGET", "MATCH_DEALS", "QUICK_BUDGET", "card_markdown",
           "default_matches", "format_card", "make_card", "mode_figures", "plot_card",
           "rating_text"]
