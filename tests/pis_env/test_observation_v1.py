"""pis_yedili_v1: the public event log and the per-opponent summary are exact.

The reference is written here from the env's own action sequence and the engine's own
fields before each action (its phase, top card, active suit, pending sevens) and after it
(the hand sizes of a copy of the state stepped by the same action): never from
``pis_env.events``, whose replay re-derives those facts from the actions alone."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import pis_env
from pis_env import aec_v1, pis_yedili_v0, pis_yedili_v1
from pis_env.actions import DRAW, NOMINATE_BASE
from pis_env.cards import NUM_CARDS
from pis_env.engine import ACE_PHASE, OPENING, GameState
from pis_env.events import PublicHistory
from pis_env.observation import (
    Layout,
    ObservationEncoder,
    ObservationEncoderV1,
    decode_observation,
    event_slots,
    observation_encoder,
    segment_table,
)
from pis_env.rules import Rules

ROOT = Path(__file__).resolve().parents[2]
RULE_FILES = sorted((ROOT / "configs" / "rules").glob("*.yaml"))
VARIANTS = [
    {},
    {"draw_rule": "one"},
    {"draw_rule": "until_playable", "empty_stock": "reshuffle"},
    {"seven_penalty": "double", "after_penalty": "continue"},
    {"nominate": "other", "opening": "first_round", "reward": "win"},
    {"empty_stock": "reshuffle", "num_deals": 3},
    {"max_turns": 30, "num_deals": 2},
]
JACK, SEVEN, ACE = 9, 5, 12


class Reference:
    """The table's public stream and per-seat summary, from the actions the env took."""

    def __init__(self, n: int):
        self.n = n
        self.raw: list[tuple] = []          # (absolute seat, kind, value), deal markers too
        self.last = [-1] * n                # index in raw of each seat's latest action
        self.new_deal(None)

    def new_deal(self, dealer) -> None:
        if dealer is not None:
            self.raw.append((dealer, "deal", None))
        n = self.n
        self.drawn, self.since = [0] * n, [0] * n
        self.suits, self.ranks = [set() for _ in range(n)], [set() for _ in range(n)]
        self.nominated = [None] * n

    def step(self, game: GameState, action: int) -> None:
        """Seat ``game.current`` takes ``action`` (not yet applied to ``game``)."""
        p = game.current
        after = game.copy()
        after.apply(action)
        taken = after.hands[p].bit_count() - game.hands[p].bit_count()
        if action < NUM_CARDS:
            event = (p, "play", action)
            self.since[p] = 0
            self.suits[p].discard(action // 13)
            self.ranks[p].discard(action % 13)
        elif action < DRAW:
            event = (p, "nominate", action - NOMINATE_BASE)
            self.nominated[p] = action - NOMINATE_BASE
        elif action == DRAW and game.pending_sevens:
            event = (p, "penalty", taken)
            self.ranks[p].add(SEVEN)
        else:
            event = (p, "draw", taken) if action == DRAW else (p, "pass", None)
            if game.phase == OPENING:
                self.suits[p].add(0)
            else:
                self.suits[p].add(game.active_suit)
                if game.phase == ACE_PHASE:
                    self.ranks[p] |= {ACE, JACK}
                elif game.top % 13 != JACK:
                    self.ranks[p] |= {game.top % 13, JACK}
        if action == DRAW:
            self.drawn[p] += taken
            self.since[p] += taken
        self.last[p] = len(self.raw)
        self.raw.append(event)

    def window(self, seat: int) -> list[tuple]:
        """What ``seat`` should read: since its own latest action, merged, relative."""
        return _relative(_merge(self.raw[max(self.last[seat], 0):]), seat, self.n)

    def deals(self, seat: int) -> list[list[tuple]]:
        out: list[list] = []
        for event in self.raw:
            if event[1] == "deal":
                out.append([])
            out[-1].append(event)
        return [_relative(_merge(d), seat, self.n) for d in out]

    def summary(self, seat: int) -> dict:
        seats = [(seat + k) % self.n for k in range(1, self.n)]
        return {
            "opp_drawn": [min(self.drawn[s], 52) for s in seats],  # capped at 52
            "opp_drawn_since_play": [min(self.since[s], 52) for s in seats],
            "opp_refused_suits": [sorted(self.suits[s]) for s in seats],
            "opp_refused_ranks": [sorted(self.ranks[s]) for s in seats],
            "opp_nominated": [self.nominated[s] for s in seats],
        }


def _merge(events) -> list[tuple]:
    out: list[tuple] = []
    for e in events:
        if e[1] == "draw" and out and out[-1][1] == "draw" and out[-1][0] == e[0]:
            out[-1] = (e[0], "draw", out[-1][2] + e[2])
        else:
            out.append(e)
    return out


def _relative(events, seat: int, n: int) -> list[tuple]:
    return [((s - seat) % n, kind, value) for s, kind, value in events]


def _choose(rng, legal: list[int]) -> int:
    """Random play that prefers cards (games stay short, every event kind comes up)."""
    cards = [a for a in legal if a < DRAW]
    if cards and rng.random() < 0.75:
        return int(rng.choice(cards))
    return int(rng.choice(legal))


def _matches(tracked: list[tuple], expected: list[tuple]) -> bool:
    """The stream ``tracked`` is ``expected`` with runs of events replaced by ``dropped``
    markers (``k`` events, deal starts included; ``None``: the rest of a gap)."""
    i = 0
    for event in tracked:
        if event[1] == "dropped":
            i += event[2] or 0
            continue
        if i >= len(expected) or expected[i] != event:
            return False
        i += 1
    return i == len(expected)


def play_match(rules: Rules, seed: int, stats: dict) -> None:
    """One match at the v1 env: every decision's window and summary against the reference,
    and each seat's ``PublicHistory`` against the table's stream at the end."""
    n, deals = rules.num_players, rules.num_deals
    env = pis_yedili_v1.raw_env(**rules.to_dict())
    env.reset(seed=seed)
    game = env.game
    ref = Reference(n)
    ref.raw.append((game.dealer, "deal", None))
    trackers = [PublicHistory(n) for _ in range(n)]
    rng = np.random.default_rng(seed)
    slots = event_slots(n)
    while not game.match_over:
        p = game.current
        obs = env.observe(env.agent_selection)
        decoded = decode_observation(obs["observation"], n, deals, version=1)
        window = ref.window(p)
        dropped = max(0, len(window) - slots)
        kept = window[:1] + window[dropped + 1:] if dropped else window  # the first stays
        assert decoded["events"] == kept, (seed, p)
        assert decoded["events_dropped"] == dropped
        stats["dropped"] += dropped > 0
        stats["decisions"] += 1
        summary = {k: decoded[k] for k in ref.summary(p)}
        assert summary == ref.summary(p), (seed, p)
        trackers[p].observe(decoded)
        action = _choose(rng, game.legal_actions())
        deal = game.deal_index
        ref.step(game, action)
        env.step(action)
        if game.deal_index != deal:
            ref.new_deal(game.dealer)
    for p in range(n):
        trackers[p].observe(decode_observation(env.observe(f"player_{p}")["observation"], n,
                                               deals, version=1))
        expected = ref.deals(p)
        assert len(trackers[p].deals) == len(expected)
        flat = [e for deal in trackers[p].deals for e in deal]
        assert _matches(flat, [e for deal in expected for e in deal]), (seed, p)
        for d, (tracked, want) in enumerate(zip(trackers[p].deals, expected)):
            if not trackers[p].dropped[d]:
                assert tracked == want, (seed, p, d)
        if not trackers[p].dropped[-1]:
            # nothing needed is lost: the summary replayed from the rebuilt history is the
            # reference's (and the observation's) of the last deal
            assert trackers[p].summary(rules) == ref.summary(p)
        stats["stream"] += sum(len(d) for d in expected)


@pytest.mark.parametrize("n", range(2, 8))
@pytest.mark.parametrize("variant", range(len(VARIANTS)))
def test_event_log_and_summary_are_exact_under_every_variant(n, variant):
    rules = Rules.from_options(num_players=n, **VARIANTS[variant])
    stats = {"dropped": 0, "decisions": 0, "stream": 0}
    for seed in range(5):
        play_match(rules, 1000 * n + 10 * variant + seed, stats)
    assert stats["decisions"] > 20 and stats["stream"] > 20


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_event_log_is_exact_under_every_rules_file(path):
    rules = Rules.from_yaml(path)
    stats = {"dropped": 0, "decisions": 0, "stream": 0}
    for seed in range(2):
        play_match(rules, seed, stats)
    assert stats["decisions"] > 10


def test_a_window_longer_than_the_log_drops_its_oldest_events_and_counts_them():
    """At 7 players the log has 21 slots: rounds of draws until playable (with 8s that
    skip the observer) hold more, in about 1% of windows. Those windows and the rebuilt
    history (with its gaps) are checked against the reference like every other one."""
    rules = Rules.from_options(num_players=7, draw_rule="until_playable",
                               empty_stock="reshuffle", num_deals=2)
    stats = {"dropped": 0, "decisions": 0, "stream": 0}
    for seed in range(12):
        play_match(rules, seed, stats)
    assert stats["dropped"] >= 2, stats


def test_the_encoder_by_default_is_layout_0_of_one_deal():
    for n in (2, 4):
        enc = observation_encoder(n)
        assert type(enc) is ObservationEncoder
        assert enc.layout == Layout.of(n, 1, 0) and enc.tensor.size == Layout.of(n, 1, 0).size
    assert type(observation_encoder(3, 2, 1)) is ObservationEncoderV1
    assert observation_encoder(3, 2, 1).layout == Layout.of(3, 2, 1)
    assert ObservationEncoder(3).layout == Layout.of(3, 1, 0) == Layout.of(3)
    assert segment_table(3) == segment_table(3, 1)
    for n, deals, version in ((2, 1, 0), (3, 2, 1), (5, 4, 0)):
        layout = Layout.of(n, deals, version)
        assert (layout.num_players, layout.num_deals, layout.version) == (n, deals, version)


def test_v1_is_v0_followed_by_the_public_record_and_under_twice_its_size():
    for n in range(2, 8):
        for deals in (1, 3):
            v0, v1 = segment_table(n, deals), segment_table(n, deals, version=1)
            assert v1[:len(v0)] == v0
            assert Layout.of(n, deals, 1).size <= 2 * Layout.of(n, deals).size
    rules = Rules.from_options(num_players=4, num_deals=2)
    game = GameState(rules, seed=3)
    rng = np.random.default_rng(3)
    e0, e1 = ObservationEncoder(4, 2), ObservationEncoderV1(4, 2)
    for _ in range(60):
        for seat in range(4):
            a, b = e0.encode(game, seat), e1.encode(game, seat)
            assert np.array_equal(b[:a.size], a)
        game.apply(_choose(rng, game.legal_actions()))
        if game.deal_over:
            break


def test_decoded_v1_names_every_segment_and_refuses_v0_vectors():
    env = pis_yedili_v1.env(num_players=3)
    env.reset(seed=5)
    vec = env.observe("player_0")["observation"]
    decoded = decode_observation(vec, 3, version=1)
    names = {name for name, _ in segment_table(3, 1, version=1)}
    event_fields = {"event_seat", "event_action", "event_count"}
    assert names - event_fields <= set(decoded) and "events" in decoded
    v0 = pis_yedili_v0.env(num_players=3)
    v0.reset(seed=5)
    with pytest.raises(ValueError, match="layout version 0's size"):
        decode_observation(v0.observe("player_0")["observation"], 3, version=1)
    with pytest.raises(ValueError, match="layout version 1's size"):
        decode_observation(vec, 3)
    broken = vec.copy()
    broken[Layout.of(3, 1, 1).offsets["event_seat"].stop - 1] = 1 / 8  # a slot after a gap
    with pytest.raises(ValueError, match="gap|code"):
        decode_observation(broken, 3, version=1)
    with pytest.raises(ValueError, match="layout versions 0, 1"):
        segment_table(3, 1, version=2)


def _doc_segments(doc: str) -> list[tuple[str, str]]:
    return re.findall(r"^\| `(\w+)`\s*\| ([^|]+?)\s*\|", doc, re.MULTILINE)


@pytest.mark.parametrize("n,deals", [(2, 1), (5, 1), (7, 1), (3, 4)])
def test_v1_docstring_segment_table_matches_segment_table(n, deals):
    documented = []
    for name, expr in _doc_segments(aec_v1.__doc__):
        if name in ("deal", "scores") and deals == 1:
            continue
        text = expr.replace("−", "-").replace("num_deals", str(deals))
        text = re.sub(r"(\d)\s*n\b", r"\1 * n", text)
        text = re.sub(r"(\d)\s*\(", r"\1 * (", text).replace("n", str(n))
        documented.append((name, int(eval(text, {"__builtins__": {}}))))  # digits + - * ( )
    assert documented == segment_table(n, deals, version=1)
    size = re.search(r"\(L,\) with L from the table below \((\d+) for 2 players\)",
                     aec_v1.__doc__)
    assert size and int(size.group(1)) == Layout.of(2, 1, 1).size


@pytest.mark.parametrize("n", [2, 5])
def test_v1_env_passes_pettingzoo_and_gymnasium_checks(n):
    from gymnasium.utils.env_checker import check_env
    from pettingzoo.test import api_test, seed_test

    api_test(pis_yedili_v1.env(num_players=n, num_deals=2), num_cycles=200)
    seed_test(lambda: pis_yedili_v1.env(num_players=n), num_cycles=100)
    check_env(pis_yedili_v1.SingleAgentEnv(num_players=n), skip_render_check=True)


def test_v1_env_registrations_and_history_record_the_version():
    import gymnasium
    import pettingzoo

    g = gymnasium.make("PisYedili-Events-v0", num_players=4)
    obs, _ = g.reset(seed=1)
    assert obs.shape == (Layout.of(4, 1, 1).size,)
    aec = pettingzoo.make("aec", "pis_yedili/pis_yedili_v1", num_players=2)
    aec.reset(seed=1)
    assert aec.unwrapped.metadata["name"] == "pis_yedili_v1"
    assert '"env": "pis_yedili_v1"' in aec.unwrapped.export_history()
    v0 = pis_env.env(num_players=2)
    v0.reset(seed=1)
    assert '"env": "pis_yedili_v0"' in v0.unwrapped.export_history()
    replayed = pis_yedili_v1.raw_env.from_history(aec.unwrapped.export_history())
    assert replayed.layout_version == 1


def test_a_v0_policy_at_a_v1_table_is_an_error_naming_both_layouts():
    import agents
    from agents.ppo import PolicyLoadError, check_layout

    table = pis_yedili_v1.env(num_players=2)
    table.reset(seed=2)
    observation = table.observe(table.agent_selection)
    ppo = agents.make("ppo", path="models/ppo_2p.zip", num_players=2)
    assert ppo.layout_version == 0
    with pytest.raises(ValueError, match=r"layout version 0 \(pis_yedili_v0\).*layout "
                                         r"version 1 \(pis_yedili_v1\)"):
        ppo.act(observation)
    with pytest.raises(PolicyLoadError, match="layout version 0.*layout version 1"):
        check_layout(ppo.meta, 2, 1, layout_version=1)
    check_layout(ppo.meta, 2, 1, layout_version=0)
    check_layout({**ppo.meta, "layout_version": 1, "layout_size": Layout.of(2, 1, 1).size}, 2)


@pytest.mark.parametrize("name", ["random", "greedy", "heuristic", "held_out", "mc", "search"])
def test_every_rule_based_bot_plays_at_a_v1_table_as_at_a_v0_one(name):
    """They read only layout 0's segments, which v1 begins with: the same deal, the same
    seeds, the same moves at both tables (the search in a layout-0 mode; its default,
    the particle filter, reads v1's events: tests/agents/test_search_particles.py)."""
    import agents

    options = {"num_players": 3} if name not in ("mc", "search") else {"num_players": 2}
    kwargs = {"samples": 2, "rollouts": 1} if name == "mc" else \
        {"rollouts": 4, "determinize": "belief"} if name == "search" else {}
    moves = []
    for module in (pis_yedili_v0, pis_yedili_v1):
        env = module.raw_env(**options)
        env.reset(seed=4)
        bots = [agents.make(name, num_players=options["num_players"], seed=s, **kwargs)
                for s in range(options["num_players"])]
        played = []
        while not env.game.deal_over and len(played) < 40:
            action = bots[env.game.current].act(env.observe(env.agent_selection))
            played.append(action)
            env.step(action)
        moves.append(played)
    assert moves[0] == moves[1] and len(moves[0]) > 5


def test_a_mixed_table_shows_each_seat_the_layout_of_its_bot():
    """The tournament's seat_observation: a v1 seat at a v0 table is shown what the v1 env
    shows that seat, a v0 seat what the v0 env shows; the masks are the table's."""
    from agents.tournament.worker import seat_observation

    rules = {"num_players": 3, "num_deals": 2}
    v0, v1 = pis_yedili_v0.raw_env(**rules), pis_yedili_v1.raw_env(**rules)
    v0.reset(seed=8)
    v1.reset(seed=8)
    rng = np.random.default_rng(8)
    encoders: dict = {}
    for _ in range(80):
        for seat in range(3):
            for version, env in ((0, v0), (1, v1)):
                shown = seat_observation(v0, seat, version, encoders)
                want = env.observe(f"player_{seat}")
                assert np.array_equal(shown["observation"], want["observation"])
                assert np.array_equal(shown["action_mask"], want["action_mask"])
        if v0.game.match_over:
            break
        action = _choose(rng, v0.game.legal_actions())
        v0.step(action)
        v1.step(action)


BATCHED_CASES = [
    (2, {}),
    (3, {"draw_rule": "until_playable", "empty_stock": "reshuffle", "num_deals": 2}),
    (4, {"seven_penalty": "double", "after_penalty": "continue", "num_deals": 2}),
    (5, {"opening": "first_round", "nominate": "other"}),
    (6, {"draw_rule": "one", "max_turns": 80, "num_deals": 3}),
    (7, {"draw_rule": "until_playable", "empty_stock": "reshuffle"}),
]


@pytest.mark.parametrize("n,options", BATCHED_CASES, ids=[str(c[0]) for c in BATCHED_CASES])
def test_the_batched_engine_writes_v1_byte_for_byte(n, options):
    """Every position of random stacked-deck matches, seen by the player to move and by
    one other seat, and every seat's final observation: the batched engine's layout-1
    rows equal ``ObservationEncoderV1`` on the engine stepped by the same actions (with
    the batched game's reshuffles, as ``test_batched`` scripts them)."""
    from pis_env.batched import BatchedGame, RandomPolicy
    from tests.pis_env.batched.test_differential import reference_state

    rules = Rules.from_options(num_players=n, **options)
    B = 96
    rng = np.random.default_rng(n)
    decks = np.stack([np.stack([rng.permutation(52) for _ in range(rules.num_deals)])
                      for _ in range(B)])
    dealers = rng.integers(n, size=B)
    game = BatchedGame(B, rules, seed=n, layout_version=1)
    game.reset(decks=decks, dealers=dealers)
    refs = [reference_state(rules, decks[b].tolist(), int(dealers[b]), game, b)
            for b in range(B)]
    encoders = [ObservationEncoderV1(n, rules.num_deals) for _ in range(B)]
    policy = RandomPolicy(B, seed=n + 1)
    active = np.ones(B, dtype=bool)
    positions = dropped = 0
    slot = Layout.of(n, rules.num_deals, 1).offsets["events_dropped"].start
    while active.any():
        games = np.flatnonzero(active)
        other = (game.st[games, 0] + 1 + games % (n - 1)) % n
        want = np.stack([encoders[b].encode(refs[b], refs[b].current) for b in games])
        want_other = np.stack([encoders[b].encode(refs[b], int(o))
                               for b, o in zip(games, other)])
        assert np.array_equal(game.obs[games], want)
        assert np.array_equal(game.observe(seats=other, games=games), want_other)
        positions += 2 * len(games)
        dropped += int((want[:, slot] > 0).sum())
        actions = policy(game).copy()
        actions[~active] = -1
        game.step(actions)
        for b in games:
            refs[b].apply(int(actions[b]))
            if refs[b].deal_over:
                if refs[b].match_over:
                    active[b] = False
                    finals = np.stack([encoders[b].encode(refs[b], s) for s in range(n)])
                    assert np.array_equal(
                        game.observe(seats=np.arange(n), games=np.full(n, b)), finals)
                else:
                    refs[b].next_deal()
    assert positions > 5000  # about 120,000 over the six cases
    if n == 7:
        assert dropped, "no overflowing log at 7 players"


def test_the_batched_v1_record_follows_auto_resets_and_terminal_observations():
    """With ``auto_reset`` a finished match's terminal row is the final observation of the
    same match stepped without it (which the differential test above holds to the
    reference), and the new match's first row is the v1 encoding of its start."""
    from pis_env.batched import BatchedGame, RandomPolicy

    rules = Rules.from_options(num_players=3, num_deals=2)
    B = 48
    games = [BatchedGame(B, rules, seed=5, layout_version=1) for _ in range(2)]
    policies = [RandomPolicy(B, seed=6) for _ in range(2)]
    resetting, twin = games
    terminal = np.zeros((B, resetting.obs_size), np.float32)
    live = np.ones(B, dtype=bool)
    encoder = ObservationEncoderV1(3, 2)
    checked = 0
    while live.any():
        actions = policies[0](resetting).copy()
        twin_actions = policies[1](twin).copy()
        twin_actions[~live] = -1
        actor = resetting.st[:, 0].copy()
        resetting.step(actions, auto_reset=True, terminal_obs=terminal)
        twin.step(twin_actions)
        for b in np.flatnonzero(live & resetting.done):
            live[b] = False
            final = twin.observe(seats=int(actor[b]), games=[b])[0]
            assert np.array_equal(terminal[b], final)
            start = resetting.game_state(int(b))
            assert np.array_equal(resetting.obs[b], encoder.encode(start, start.current))
            checked += 1
    assert checked == B
