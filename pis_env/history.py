"""Hand histories: the one format in which a match is saved, checked and replayed.

A history holds the rules and everything chance decided, so that a replay reaches the
same positions: per deal the dealer, the dealt deck and every reshuffle of the stock (with
``empty_stock="reshuffle"``), then the actions. A replay re-derives every position by
stepping the engine through the actions; it never loads a stored state, so a history
cannot describe a position the rules do not reach.

Format 1 (``HISTORY_FORMAT``), as written by ``raw_env.export_history``::

    {"history_format": 1,
     "env": "pis_yedili_v0",              # the env that wrote it (informative)
     "rules": {...},                      # Rules.to_dict()
     "deals": [{"dealer": 0,
                "deck": [52 card ids],    # deck[0] goes to the player left of the dealer
                "reshuffles": [[ids]],    # each reshuffle's new stock, first drawn first
                "actions": [[player, action], ...],
                "illegal": [player, action]}],   # only a forfeit (illegal_action="terminate")
     "sha256": "..."}                     # of the canonical JSON of everything else

The format has its own version, independent of the observation layout (``LAYOUT_VERSION``):
a later layout does not orphan saved histories. The digest is the SHA-256 of the
canonical JSON (``canonical_json``: sorted keys, no spaces, ASCII) of the record without
its ``sha256`` key; it catches a file changed after it was written, not a forger.

Histories written before format 1 (pis-yedili 0.1.0) have neither ``history_format`` nor
``sha256``: a record without both keys is read as one of those. They do not record
reshuffles, so they replay while no deal reshuffles the stock and otherwise stop with a
``HistoryError`` saying so. Any other defect (a missing or wrong digest, an unknown format,
a malformed field, an action that is not legal at its point) is a ``HistoryError`` too.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from typing import Any

from .engine import ChanceError, GameState, action_name, parse_deck
from .observation import LAYOUT_VERSION
from .rules import Rules

#: Version of the history format written here; bump it when the record changes.
HISTORY_FORMAT = 1
#: The only env that wrote histories before format 1.
LEGACY_ENV = "pis_yedili_v0"
_ENV_NAME = f"pis_yedili_v{LAYOUT_VERSION}"
_ENV_PATTERN = re.compile(r"pis_yedili_v\d+")
_DEAL_KEYS = {"dealer", "deck", "reshuffles", "actions", "illegal"}
_LEGACY_DEAL_KEYS = _DEAL_KEYS - {"reshuffles"}


class HistoryError(ValueError):
    """A history that cannot be replayed: malformed, changed since it was written, or not
    a game of its rules."""


# ---------------------------------------------------------------------- writing
def record(game: GameState, forfeits: dict[int, tuple[int, int]] | None = None,
           env_name: str = _ENV_NAME) -> dict:
    """The history of ``game`` so far as a JSON-ready dict, digest included. ``forfeits``
    maps a deal index to the ``(player, action)`` of the illegal move that ended it;
    ``env_name`` is the env version that wrote it (``pis_yedili_v1`` records its own)."""
    deals = []
    for k, (deck, dealer, reshuffles, actions) in enumerate(
        zip(game.deal_decks, game.deal_dealers, game.deal_reshuffles, game.histories)
    ):
        deal = {
            "dealer": int(dealer),
            "deck": [int(c) for c in deck],
            "reshuffles": [[int(c) for c in order] for order in reshuffles],
            "actions": [[int(p), int(a)] for p, a in actions],
        }
        if forfeits and k in forfeits:
            deal["illegal"] = [int(x) for x in forfeits[k]]
        deals.append(deal)
    body = {
        "history_format": HISTORY_FORMAT,
        "env": env_name,
        "rules": game.rules.to_dict(),
        "deals": deals,
    }
    return {**body, "sha256": digest(body)}


def canonical_json(body: dict) -> str:
    """The one JSON text of ``body`` that its digest covers."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)


def digest(body: dict) -> str:
    """SHA-256 (hex) of ``body``'s canonical JSON; ``body`` must not hold ``sha256``."""
    return hashlib.sha256(canonical_json(body).encode("ascii")).hexdigest()


# ---------------------------------------------------------------------- reading
def load(history: str | bytes | dict) -> dict:
    """The checked record of a history (JSON text or its parsed dict): the format, the
    digest and the type of every field are verified, the rules parsed. Adds
    ``"legacy": True`` to a record written before format 1. Raises ``HistoryError``."""
    if isinstance(history, (str, bytes, bytearray)):
        try:
            data = json.loads(history)
        except ValueError as e:
            raise HistoryError(f"history is not valid JSON: {e}") from None
        except RecursionError:
            raise HistoryError("history is nested too deeply to be a history") from None
    else:
        data = history
    if not isinstance(data, dict):
        raise HistoryError(f"a history is a JSON object, got {type(data).__name__}")
    legacy = "history_format" not in data and "sha256" not in data
    if legacy:
        if data.get("env") != LEGACY_ENV:
            raise HistoryError(f"history is for {data.get('env')!r}, not {LEGACY_ENV!r}")
        _check_keys(data, {"env", "rules", "deals"}, "history")
    else:
        _check_header(data)
    rules = _rules(data.get("rules"))
    deals = data.get("deals")
    if not isinstance(deals, list) or not deals:
        raise HistoryError("history: 'deals' must be a non-empty list")
    if len(deals) > rules.num_deals:
        raise HistoryError(f"history has {len(deals)} deals for a match of {rules.num_deals}")
    checked = [_deal(deal, k, rules, legacy) for k, deal in enumerate(deals)]
    for k, deal in enumerate(checked[:-1]):
        if "illegal" in deal:
            raise HistoryError(f"history deal {k}: a forfeit ends the match, yet deals follow")
    return {"rules": rules, "deals": checked, "legacy": legacy}


def _check_header(data: dict) -> None:
    version = data.get("history_format")
    if version != HISTORY_FORMAT or isinstance(version, bool):
        raise HistoryError(
            f"history_format={version!r}: this version of pis_env reads format "
            f"{HISTORY_FORMAT} (and the unversioned histories written before it)"
        )
    _check_keys(data, {"history_format", "env", "rules", "deals", "sha256"}, "history")
    env_name = data.get("env")
    if not isinstance(env_name, str) or not _ENV_PATTERN.fullmatch(env_name):
        raise HistoryError(f"history is for {env_name!r}, not a pis_yedili env")
    stored = data.get("sha256")
    if not isinstance(stored, str):
        raise HistoryError("history has no sha256 digest (every format-1 history carries one)")
    body = {k: v for k, v in data.items() if k != "sha256"}
    try:
        actual = digest(body)
    except (TypeError, ValueError) as e:
        raise HistoryError(f"history is not plain JSON data: {e}") from None
    except RecursionError:
        raise HistoryError("history is nested too deeply to be a history") from None
    if actual != stored:
        raise HistoryError(
            f"history digest mismatch: it was changed after it was written "
            f"(sha256 {stored[:16]}..., content {actual[:16]}...)"
        )


def _check_keys(data: dict, allowed: set[str], where: str) -> None:
    unknown = sorted(set(data) - allowed, key=str)
    if unknown:
        raise HistoryError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(allowed)}")


def _rules(options) -> Rules:
    if not isinstance(options, dict):
        raise HistoryError("history: 'rules' must be a mapping of rules options")
    try:
        return Rules.from_options(**options)
    except (TypeError, ValueError) as e:
        raise HistoryError(f"history rules: {e}") from None


def _deal(deal, k: int, rules: Rules, legacy: bool) -> dict:
    where = f"history deal {k}"
    if not isinstance(deal, dict):
        raise HistoryError(f"{where}: must be an object")
    _check_keys(deal, _LEGACY_DEAL_KEYS if legacy else _DEAL_KEYS, where)
    for key in ("dealer", "deck", "actions") + (() if legacy else ("reshuffles",)):
        if key not in deal:
            raise HistoryError(f"{where}: '{key}' is missing")
    dealer = deal["dealer"]
    if not _is_int(dealer) or not 0 <= dealer < rules.num_players:
        raise HistoryError(f"{where}: dealer={dealer!r} is not a seat 0..{rules.num_players - 1}")
    try:
        deck = parse_deck(deal["deck"])
    except ValueError as e:
        raise HistoryError(f"{where}: {e}") from None
    out = {"dealer": dealer, "deck": deck, "actions": _pairs(deal["actions"], f"{where} actions")}
    reshuffles = deal.get("reshuffles", [])
    if not isinstance(reshuffles, list) or not all(
        isinstance(order, list) and all(_is_int(c) for c in order) for order in reshuffles
    ):
        raise HistoryError(f"{where}: 'reshuffles' must be a list of lists of card ids")
    out["reshuffles"] = reshuffles
    if "illegal" in deal:
        if rules.illegal_action != "terminate":
            raise HistoryError(f"{where}: a forfeit needs illegal_action='terminate'")
        out["illegal"] = _pairs([deal["illegal"]], f"{where} illegal")[0]
    return out


def _pairs(items, where: str) -> list[tuple[int, int]]:
    if not isinstance(items, list):
        raise HistoryError(f"{where}: must be a list of [player, action] pairs")
    for i, item in enumerate(items):
        if not (isinstance(item, list) and len(item) == 2 and all(map(_is_int, item))):
            raise HistoryError(f"{where}[{i}]: {item!r} is not a [player, action] pair of ints")
    return [(p, a) for p, a in items]


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# ---------------------------------------------------------------------- replaying
def replay(history: str | bytes | dict, env_cls) -> Iterator[Any]:
    """Replay a history in a new ``env_cls`` (``raw_env``), yielding that env after the
    reset and after every step (the same object each time: read it before moving on).
    Every position is re-derived by the engine; an action that is not legal where the
    history puts it, a deal that does not follow from the previous one, or a reshuffle the
    history does not record raises ``HistoryError``."""
    data = load(history)
    rules, deals, legacy = data["rules"], data["deals"], data["legacy"]
    env = env_cls(**rules.to_dict())
    game = GameState(
        rules,
        deck=[deal["deck"] for deal in deals],
        dealer=deals[0]["dealer"],
        reshuffles=[deal["reshuffles"] for deal in deals],
    )
    env._begin(game)
    yield env
    for k, deal in enumerate(deals):
        where = f"history deal {k}"
        if game.deal_index != k:
            raise HistoryError(f"{where}: the previous deal is not over after its actions")
        if game.dealer != deal["dealer"]:
            raise HistoryError(
                f"{where}: dealer={deal['dealer']}, but the dealer moves one seat clockwise "
                f"each deal: player_{game.dealer} deals it"
            )
        for i, (player, action) in enumerate(deal["actions"]):
            _check_turn(game, player, f"{where} action {i}")
            if not game.is_legal(action):
                raise HistoryError(
                    f"{where} action {i}: {action} ({action_name(action)}) is not legal for "
                    f"player_{player} here; legal: {game.legal_actions()}"
                )
            try:
                env.step(action)
            except ChanceError as e:
                raise HistoryError(_chance_message(f"{where} action {i}", e, legacy)) from None
            yield env
        done = len(game.deal_reshuffles[k])
        if done != len(deal["reshuffles"]):
            raise HistoryError(
                f"{where}: records {len(deal['reshuffles'])} reshuffle(s), the actions made "
                f"{done}"
            )
        if "illegal" in deal:
            player, action = deal["illegal"]
            _check_turn(game, player, f"{where} forfeit")
            if game.is_legal(action):
                raise HistoryError(f"{where}: the forfeit's action {action} is legal")
            env.step(action)
            yield env


def _check_turn(game: GameState, player: int, where: str) -> None:
    if game.deal_over:
        raise HistoryError(f"{where}: the deal is already over")
    if game.current != player:
        raise HistoryError(f"{where}: it is player_{game.current}'s turn, not player_{player}'s")


def _chance_message(where: str, error: ChanceError, legacy: bool) -> str:
    if legacy:
        return (
            f"{where}: the stock runs out and is reshuffled here, but this history has no "
            "history_format: it was written before format 1, which does not record reshuffle "
            "orders, so it cannot be replayed past this point"
        )
    return f"{where}: {error}"
