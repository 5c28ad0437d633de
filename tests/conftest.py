"""Shared helpers and fixtures of the test suite, and the CI rule that a skip is a failure.

``tests.ci_skips`` (loaded here and by ``tests_rllib/conftest.py``) makes every skip a
failure when ``CI=true``, except the platform skips declared with
``@pytest.mark.platform_skip``.

The one deck stacker (``stacked_deck``) and the one finished game (``finished_history``)
of the suite live here; tests import them (``from tests.conftest import stacked_deck``)
or take the fixtures of the same name.
"""

from __future__ import annotations

import locale
from collections.abc import Sequence

import numpy as np
import pytest

from pis_env import raw_env
from pis_env.cards import parse_card

pytest_plugins = ["tests.ci_skips"]

#: Cards that complete a stacked hand and make the rest of the deck: plain low cards
#: first, the specials (Q K 10 8 A 7 J) last, so a scenario meets only the cards it asks for.
FILLER = [parse_card(r + s) for s in "DHSC" for r in ("2", "3", "4", "5", "6", "9")] + [
    parse_card(r + s) for s in "DHSC" for r in ("Q", "K", "10", "8", "A", "7", "J")]
CARDS_PER_HAND = 7


def stacked_deck(hands: Sequence[Sequence[int | str]], stock: Sequence[int | str] = (),
                 dealer: int | None = None, *, num_players: int | None = None,
                 seed: int | None = None) -> tuple[list[int], int]:
    """``(deck, dealer)``: a 52-card deck that deals ``hands[i]`` (ids or names such as
    ``"7C"``) to seat ``i`` and then has ``stock`` drawn first, in order.

    The table has ``num_players`` seats (default ``len(hands)``; seats without a hand and
    hands shorter than seven cards are completed); the dealer defaults to the last seat,
    so ``player_0`` opens. The cards nobody asked for come in ``FILLER`` order, or
    shuffled by ``seed``. Dealing is one card at a time, starting left of the dealer."""
    n = len(hands) if num_players is None else num_players
    if not len(hands) <= n:
        raise ValueError(f"{len(hands)} hands for {n} players")
    dealer = n - 1 if dealer is None else dealer
    hand_ids = [[parse_card(c) for c in h] for h in hands] + [[] for _ in range(n - len(hands))]
    stock_ids = [parse_card(c) for c in stock]
    used = [c for h in hand_ids for c in h] + stock_ids
    if len(used) != len(set(used)):
        raise ValueError("a card is stacked twice")
    order = FILLER if seed is None else np.random.default_rng(seed).permutation(52).tolist()
    spare = [c for c in order if c not in used]
    for h in hand_ids:
        if len(h) > CARDS_PER_HAND:
            raise ValueError(f"a hand of {len(h)} cards: at most {CARDS_PER_HAND}")
        while len(h) < CARDS_PER_HAND:
            h.append(spare.pop(0))
    deck = [hand_ids[(dealer + 1 + j) % n][r] for r in range(CARDS_PER_HAND) for j in range(n)]
    deck += stock_ids + spare
    assert sorted(deck) == list(range(52))
    return deck, dealer


def finished_history(seed: int = 0, draw: float = 0.0, **rules) -> str:
    """A match of random legal moves (drawing with probability ``draw`` when drawing is
    legal, so that stocks run out), as ``export_history()`` JSON."""
    env = raw_env(**rules)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while not env.game.match_over:
        legal = env.game.legal_actions()
        if 56 in legal and rng.random() < draw:
            env.step(56)
        else:
            env.step(legal[rng.integers(len(legal))])
    return env.export_history()


@pytest.fixture(name="stacked_deck")
def stacked_deck_fixture():
    """``stacked_deck`` as a fixture."""
    return stacked_deck


@pytest.fixture(name="finished_history")
def finished_history_fixture():
    """``finished_history`` as a fixture."""
    return finished_history


@pytest.fixture
def ascii_locale():
    """The C locale for one test: ``open()`` and ``read_text()`` without an encoding then
    read and write ASCII (unless Python runs in UTF-8 mode, which ignores the locale), so
    a file the project reads or writes without saying UTF-8 fails on a non-ASCII
    character, as it would on a machine whose locale is not UTF-8."""
    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        yield
    finally:
        locale.setlocale(locale.LC_CTYPE, before)
