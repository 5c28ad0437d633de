"""The opponent panel (``agents.panel``): its bots, their numba ports, the split between
the model set and the evaluation set, and the benchmark's arithmetic.

* Every style's batched policy makes the Python bot's move on every position of random
  and self-play deals at 2, 3 and 4 players; the ``greedy`` style also equals
  ``agents.greedy`` (an independent implementation), and the styles differ from each
  other on many positions.
* Nothing outside an ``eval`` section of a config, no training schema default, no
  ``DEFAULT_*``-like constant or keyword default in ``agents/`` and ``train/``, no
  opponent model and no rollout policy names an evaluation-set bot.
* ``benchmarks.panel``'s cells equal the tournament's own win rates.
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import numpy as np
import pytest
import yaml

import agents
from agents.greedy import GreedyAgent
from agents.panel import (
    EVALUATION_SET,
    MODEL_SET,
    NOT_BATCHED,
    PANEL_REGISTRY,
    STYLE_BOTS,
    batched_policy,
    evaluation_names,
    panel,
    spec_names,
)
from agents.panel.batched import PanelPolicy, mix
from agents.panel.bots import StyleAgent
from agents.panel.styles import STYLES, mixed_action
from pis_env.batched import BatchedGame, RandomPolicy
from pis_env.batched import kernels as K
from pis_env.rules import Rules

ROOT = Path(__file__).resolve().parents[3]


# ---------------------------------------------------------------------- the bots
def _style_positions(rules: Rules, style: str, num_games: int, steps: int, seed: int):
    """Yield (game, batched base actions) along deals where half the games are played by
    the style itself and half at random."""
    game = BatchedGame(num_games, rules, seed=seed)
    rnd = RandomPolicy(num_games, seed=seed + 1)
    policy = PanelPolicy(num_games, style)
    own = np.arange(num_games) % 2 == 0
    for _ in range(steps):
        chosen = policy(game).copy()
        yield game, chosen
        actions = rnd(game).copy()
        actions[own] = chosen[own]
        game.step(actions, auto_reset=True)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_batched_styles_make_the_python_bots_moves(n):
    rules = Rules(num_players=n)
    choices: dict[str, list[np.ndarray]] = {}
    greedy = GreedyAgent(n)
    for style in STYLES:
        bot = StyleAgent(n, style=style)
        checked = 0
        for game, batched in _style_positions(rules, style, 24, 50, seed=11 + n):
            for b in range(game.num_games):
                ob = {"observation": game.obs[b], "action_mask": game.masks[b]}
                expected = bot.act(ob)
                assert batched[b] == expected, (style, b, expected, batched[b])
                if style == "greedy":
                    assert expected == greedy.act(ob)
                checked += int(game.masks[b].sum() > 1)
        assert checked > 400
    # the styles play differently: on the same positions (the random-play games of one
    # run), every pair disagrees often
    game = BatchedGame(256, rules, seed=3)
    rnd = RandomPolicy(256, seed=4)
    for _ in range(30):
        for style in STYLES:
            choices.setdefault(style, []).append(PanelPolicy(256, style)(game).copy())
        game.step(rnd(game), auto_reset=True)
    stacked = {s: np.concatenate(v) for s, v in choices.items()}
    for a, b in itertools.combinations(STYLES, 2):
        assert (stacked[a] != stacked[b]).mean() > 0.03, (a, b)


def test_mixing_is_the_same_in_python_and_numba():
    rng = np.random.default_rng(0)
    legal = rng.integers(1, 1 << 58, size=2000, dtype=np.int64)
    base = np.array([(x & -x).bit_length() - 1 for x in legal.tolist()], dtype=np.int64)
    u, v = rng.random(2000), rng.random(2000)
    out = np.empty(2000, dtype=np.int64)
    mix(base, legal, 0.4, u, v, out)
    expected = [mixed_action(int(a), int(m), 0.4, float(x), float(y))
                for a, m, x, y in zip(base, legal, u, v)]
    np.testing.assert_array_equal(out, expected)
    assert ((legal >> out) & 1).all()
    assert 0.33 < (out != base).mean() < 0.44  # 40% random, a few of them the base again


def test_style_bots_are_seeded_by_reset_and_mix_at_their_epsilon():
    game = BatchedGame(64, Rules(num_players=2), seed=5)
    rnd = RandomPolicy(64, seed=6)
    base = StyleAgent(2, style="greedy")
    bot = agents.make("greedy_eps", seed=1)
    differs = total = 0
    for step in range(40):
        for g in range(64):
            ob = {"observation": game.obs[g], "action_mask": game.masks[g]}
            if game.masks[g].sum() < 2:
                continue
            bot.reset(seed=1000 * step + g)
            first = bot.act(ob)
            bot.reset(seed=1000 * step + g)
            assert bot.act(ob) == first
            differs += first != base.act(ob)
            total += 1
        game.step(rnd(game), auto_reset=True)
    assert 0.1 < differs / total < 0.3  # epsilon 0.3; some random moves are the base's


def test_every_member_plays_a_legal_game():
    from pis_env.aec import raw_env

    assert len(PANEL_REGISTRY) >= 10
    assert set(PANEL_REGISTRY) <= set(panel())
    for name in panel():
        if name in ("mc", "ppo_v2"):
            continue  # slow to play here; built below
        env = raw_env(num_players=2)
        env.reset(seed=1)
        bots = [agents.make(name, num_players=2, seed=0), agents.make("random", seed=0)]
        for agent in env.agent_iter(max_iter=400):
            ob, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = bots[int(agent.split("_")[1])].act(ob)
            assert ob["action_mask"][action] == 1, name
            env.step(action)
    for name in ("mc", "ppo_v2"):
        assert agents.make(name, num_players=2, seed=0) is not None


@pytest.mark.parametrize("n", [2, 4])
def test_every_batched_model_set_bot_plays_the_batched_engine(n):
    rules = Rules(num_players=n)
    for name in MODEL_SET:
        if name in NOT_BATCHED or (name == "ppo_v2" and n not in (2, 4)):
            continue
        game = BatchedGame(16, rules, seed=2)
        policy = batched_policy(name, 16, rules, seed=0)
        for _ in range(3000):
            acts = policy(game)
            if (acts < 0).all():
                break
            live = acts >= 0
            assert ((game.st[live, K.LEGAL] >> acts[live]) & 1).all(), name
            game.step(acts)
        assert game.st[:, K.OVER].all(), name


def test_as_batched_env_opponent_same_trajectory_as_the_agent():
    """``BatchedEnv`` with a style's batched policy (its ``state_actions`` route) plays the
    very matches it plays with the Python bot."""
    from pis_env.batched import BatchedEnv
    from train.vector.sb3_vec_env import AgentPolicy

    rules = Rules(num_players=3)
    for style in ("hoarder", "drawer"):
        fast = BatchedEnv(16, rules, opponent=PanelPolicy(16, style), seed=5)
        slow = BatchedEnv(16, rules, opponent=AgentPolicy(StyleAgent(3, style=style)), seed=5)
        obs_f, masks_f = fast.reset()
        obs_s, masks_s = slow.reset()
        rng = np.random.default_rng(0)
        for _ in range(30):
            np.testing.assert_array_equal(obs_f, obs_s)
            np.testing.assert_array_equal(masks_f, masks_s)
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks_f])
            obs_f, rew_f, _, _ = fast.step(actions)
            obs_s, rew_s, _, _ = slow.step(actions)
            np.testing.assert_array_equal(rew_f, rew_s)


def test_the_v2_networks_batched_policy_makes_the_agents_moves():
    game = BatchedGame(32, Rules(num_players=2), seed=8)
    rnd = RandomPolicy(32, seed=9)
    policy = batched_policy("ppo_v2", 32)
    agent = agents.make("ppo_v2", num_players=2)
    checked = 0
    for _ in range(25):
        batched = policy(game)
        for b in range(32):
            if game.masks[b].sum() > 1:
                ob = {"observation": game.obs[b], "action_mask": game.masks[b]}
                assert batched[b] == agent.act(ob)
                checked += 1
        game.step(rnd(game), auto_reset=True)
    assert checked > 300


def test_random_is_uniform_and_style_bots_keep_their_epsilon():
    assert STYLE_BOTS["greedy_eps"] == ("greedy", 0.3)
    assert batched_policy("random", 4).epsilon == 1.0
    assert agents.make("greedy_eps").epsilon == 0.3


def test_model_set_opponent_models_are_the_bots_move_probabilities():
    from agents.belief.opponent_models import panel_model

    game = BatchedGame(48, Rules(num_players=3), seed=9)
    rnd = RandomPolicy(48, seed=10)
    names = [m for m in MODEL_SET if m not in NOT_BATCHED and m != "ppo_v2"]
    models = {name: panel_model(name, 3, epsilon=0.2) for name in names}
    for _ in range(25):
        rows = game.st[game.st[:, K.LEGAL] != 0]
        for name, model in models.items():
            total = sum(model.probs(rows, np.full(rows.shape[0], a), game.cfg)
                        for a in range(K.NUM_ACTIONS))
            np.testing.assert_allclose(total, 1.0, err_msg=name)
            if name in STYLE_BOTS:
                style, bot_eps = STYLE_BOTS[name]
                base = PanelPolicy(1, style).base_actions(rows)
                floor = (1 - 0.2) * (1 - bot_eps)
                assert (model.probs(rows, base, game.cfg) >= floor - 1e-12).all(), name
        game.step(rnd(game), auto_reset=True)
    for name in EVALUATION_SET:
        with pytest.raises(ValueError, match="evaluation set"):
            panel_model(name)


# ---------------------------------------------------------------------- the split
def test_the_sets_are_disjoint_and_held_out_is_evaluation():
    assert not set(MODEL_SET) & set(EVALUATION_SET)
    assert "held_out" in EVALUATION_SET
    assert len(EVALUATION_SET) >= 4
    for name in panel():
        assert name in agents.REGISTRY, name


def test_the_scanner_finds_evaluation_bots_outside_eval_sections():
    bad = {"league": {"opponents": {"attacker": 0.5, "heuristic": 0.5}},
           "pretrain": {"teacher": "held_out?variant=heuristic_tight"},
           "search": {"opponent_model": "heuristic:0.5,counter:0.5"},
           "opponents": ["rank_switcher"],
           "teacher": "agents.heuristic.variants:HeldOutHeuristic?variant=heuristic_tight",
           "eval": {"opponents": ["held_out", "attacker"]}}
    found = sorted(n for _, n in evaluation_names(bad))
    assert found == ["attacker", "counter", "held_out", "held_out", "rank_switcher"]
    assert evaluation_names({"eval": {"opponents": list(EVALUATION_SET)}}) == []
    assert spec_names("ppo:models/ppo_2p.zip") == ["ppo"]


@pytest.mark.parametrize("path", sorted((ROOT / "configs").rglob("*.yaml")),
                         ids=lambda p: p.name)
def test_no_config_names_an_evaluation_bot(path):
    cfg = yaml.safe_load(path.read_text())
    assert evaluation_names(cfg) == [], f"{path.name} names an evaluation-set bot"


def test_no_training_default_names_an_evaluation_bot():
    from train.expert.iteration import CONFIG as EXPERT
    from train.rllib.config import CONFIG as RLLIB
    from train.sb3.config import TRAIN

    for schema in (TRAIN, RLLIB, EXPERT):
        assert evaluation_names(schema.defaults) == [], schema.root.__name__


_CONSTANT = ("DEFAULT", "OPPONENT", "LEAGUE", "TEACHER", "ROLLOUT", "LABELLER", "TRAIN_",
             "MODEL")
_KEYWORD = ("opponent", "league", "teacher", "rollout", "labeller", "model", "mix")


def code_defaults(root: Path) -> list[tuple[str, str]]:
    """(where, string) for every string in a module-level constant whose name says it
    is a default, an opponent, a league, a teacher, a rollout or a model, and in the
    default of every keyword parameter named like those, in the modules under ``root``
    (the panel itself, which lists the sets, is left out)."""
    out = []
    for file in sorted(root.rglob("*.py")):
        if "panel" in file.relative_to(ROOT).parts[:2]:
            continue
        tree = ast.parse(file.read_text())
        where = str(file.relative_to(ROOT))
        for node in tree.body:
            targets = []
            if isinstance(node, ast.Assign):
                targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                targets = [node.target.id]
            if any(k in t.upper() for t in targets for k in _CONSTANT) and node.value:
                out += [(f"{where}:{targets[0]}", c.value) for c in ast.walk(node.value)
                        if isinstance(c, ast.Constant) and isinstance(c.value, str)]
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args
                pos = args.posonlyargs + args.args
                pairs = list(zip(pos[len(pos) - len(args.defaults):], args.defaults))
                pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d]
                for arg, default in pairs:
                    if any(k in arg.arg.lower() for k in _KEYWORD):
                        out += [(f"{where}:{node.name}({arg.arg})", c.value)
                                for c in ast.walk(default)
                                if isinstance(c, ast.Constant) and isinstance(c.value, str)]
    return out


def test_no_code_default_names_an_evaluation_bot():
    defaults = code_defaults(ROOT / "agents") + code_defaults(ROOT / "train")
    assert len(defaults) > 20  # the scan sees DEFAULT_MODEL, the league mixes, ...
    assert any(s == "heuristic:0.5,uniform:0.5" for _, s in defaults)
    bad = [(w, s) for w, s in defaults if set(spec_names(s)) & set(EVALUATION_SET)]
    assert bad == []


def test_no_opponent_model_or_rollout_policy_is_an_evaluation_bot():
    from agents.belief.opponent_models import opponent_model
    from agents.search import ROLLOUT_POLICIES

    for name in EVALUATION_SET:
        for spec in (name, f"{name}:0.5,uniform:0.5"):
            with pytest.raises(ValueError):
                opponent_model(spec, 2)
        assert name not in ROLLOUT_POLICIES
        with pytest.raises(ValueError, match="evaluation set"):
            batched_policy(name, 4)


# ---------------------------------------------------------------------- the benchmark
def test_benchmark_cells_are_the_tournaments_win_rates():
    from agents.tournament import run_tournament
    from benchmarks.panel import format_markdown, format_matrix, panel_matrix

    out = panel_matrix(["heuristic"], ["greedy", "heuristic", "attacker"], 2, decks=4,
                       seed=3, workers=1, progress=False)
    for member in ("greedy", "attacker"):
        ref = run_tournament(["heuristic", member], num_players=2, deals=4, seed=3,
                             workers=1, progress=False)
        rate, low, high, games = out["cells"]["heuristic"][member]
        assert rate == pytest.approx(ref.stats["heuristic"].win_rate)
        assert (low, high) == pytest.approx((ref.stats["heuristic"].win_low,
                                             ref.stats["heuristic"].win_high))
        assert games == ref.stats["heuristic"].games == 8
    assert out["cells"]["heuristic"]["heuristic"][0] == pytest.approx(0.5)
    mean_model = out["means"]["heuristic"]["model"][0]
    assert mean_model == pytest.approx(np.mean([out["cells"]["heuristic"][m][0]
                                                for m in ("greedy", "heuristic")]))
    text = format_matrix(out)
    assert "mean, evaluation set" in text and "attacker" in text
    table = format_markdown(out).splitlines()
    assert len(table) == 2 + 3 + 2 and table[-1].startswith("| **mean, evaluation set**")


def test_the_benchmark_pairs_every_bot_with_the_first_deck_by_deck():
    from benchmarks.panel import format_matrix, panel_matrix

    out = panel_matrix(["heuristic", "greedy", "random"], ["greedy", "attacker", "counter"],
                       2, decks=6, seed=4, workers=1, progress=False)
    assert set(out["paired"]) == {"greedy", "random"}
    cells = out["cells"]
    for bot in ("greedy", "random"):
        # every deck has both rotations, so the paired mean is the difference of the cells
        for name, members in (("model", ["greedy"]), ("evaluation", ["attacker", "counter"])):
            want = np.mean([cells[bot][m][0] - cells["heuristic"][m][0] for m in members])
            mean, low, high = out["paired"][bot][name]
            assert mean == pytest.approx(want) and low <= mean <= high
    assert "minus heuristic, paired" in format_matrix(out)


def test_table_shares_count_shared_wins_and_truncations_as_the_tournament_does():
    from agents.tournament.results import summarize
    from agents.tournament.worker import REASONS, TableResult
    from benchmarks.panel import table_shares

    rng = np.random.default_rng(1)
    deals, n = 50, 3
    lineup = ["bot", "m#1", "m#2"]
    seating = [lineup[-r:] + lineup[:-r] for r in range(n)]
    winners = rng.random((deals, n, n)) < 0.4  # ties included
    reasons = rng.choice([0, 1, REASONS.index("truncated")], size=(deals, n)).astype(np.uint8)
    tr = TableResult(lineup=lineup, seating=seating,
                     charges=rng.integers(0, 50, (deals, n, n)).astype(np.int32),
                     winners=winners, reasons=reasons,
                     decisions=np.ones((deals, n), np.int32))
    stats, *_ = summarize(lineup, {a: a for a in lineup}, [tr], deals)
    wins, games = table_shares(tr, "bot")
    assert wins.sum() == pytest.approx(stats["bot"].wins)
    assert games.sum() == stats["bot"].games
