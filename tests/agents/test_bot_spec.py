"""One bot spec: ``agents.spec`` is the one reader of spec strings and ``agents.registry``
the one place that maps a bot's name to its batched port and its opponent model. The
known answers here are written out by hand; the AST checks read the source, so a second
parser or a second name switch added anywhere fails them."""

from __future__ import annotations

import ast
import warnings
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

import agents
from agents import registry
from agents.spec import BotSpec, parse
from pis_env import Rules

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [p for d in ("pis_env", "agents", "train") for p in sorted((ROOT / d).rglob("*.py"))]


# ------------------------------------------------------------------ the parser
def test_a_spec_reads_its_name_and_its_options_as_yaml_scalars():
    assert parse("heuristic") == BotSpec("heuristic", "heuristic", {})
    assert parse(" mc?samples=8&greedy=true&eps=0.5&name=x&empty= ") == BotSpec(
        "mc", "mc", {"samples": 8, "greedy": True, "eps": 0.5, "name": "x", "empty": ""})
    assert parse("mc?x=a=b").options == {"x": "a=b"}  # only the first '=' splits


def test_ppo_path_is_the_ppo_bot_with_its_path_even_with_a_drive_letter():
    assert parse("ppo:models/a.zip") == BotSpec("ppo:models/a.zip", "ppo",
                                                {"path": "models/a.zip"})
    spec = parse("ppo:C:/nets/a.zip?deterministic=0")
    assert (spec.name, spec.options) == ("ppo", {"path": "C:/nets/a.zip", "deterministic": 0})
    assert spec.query == {"deterministic": 0}
    # a registered name that starts with 'ppo:' is that bot, not a path
    assert parse("ppo:mine", lambda base: base == "ppo:mine").name == "ppo:mine"


def test_a_class_of_yours_is_an_import_and_a_name_is_not():
    assert parse("mybot:Shedder").is_import
    assert not parse("heuristic?x=1").is_import
    assert not parse("ppo:a.zip").is_import


@pytest.mark.parametrize("bad, message", [
    ("", "an agent spec must be a non-empty string, got ''"),
    ("mc?samples", "agent spec 'mc?samples': expected key=value after '?', got 'samples'"),
    ("mc?=3", "agent spec 'mc?=3': expected key=value after '?', got '=3'"),
])
def test_malformed_specs_are_refused_word_for_word(bad, message):
    with pytest.raises(ValueError) as e:
        parse(bad)
    assert str(e.value) == message


# ------------------------------------------------------------------ the registry
def test_every_model_set_port_plays_legal_moves_on_the_batched_engine():
    """Each port the registry hands out, at 4 players (a size with a ``ppo_v2`` file),
    picks a legal action in every unfinished game (an independent check: the engine's
    own legal mask)."""
    from agents.panel import MODEL_SET
    from pis_env.batched import BatchedGame

    rules = Rules(num_players=4)
    for name in MODEL_SET:
        if not registry.REGISTRY[name].batched:
            continue
        game = BatchedGame(8, rules, seed=1)
        policy = registry.batched_port(name, 8, rules, seed=0)
        for _ in range(6):
            acts = policy(game)
            masks = game.action_masks(games=np.arange(8))
            live = acts >= 0
            assert live.any(), name
            assert masks[np.flatnonzero(live), acts[live]].all(), name
            game.step(acts)


def test_bots_without_a_port_say_why():
    for name, why in (("mc", "'mc' has no batched policy: a search of its own"),
                      ("counter", "'counter' is in the evaluation set"),
                      ("human", "'human' has no batched policy: a person")):
        with pytest.raises(ValueError, match=why):
            registry.batched_port(name, 1)
    with pytest.raises(ValueError, match="'held_out' is in the evaluation set: nothing may "
                                         "model it"):
        registry.opponent_model_of("held_out")
    with pytest.raises(ValueError, match="no opponent model for 'mc': one of "):
        registry.opponent_model_of("mc")


def test_a_registered_bot_brings_its_port_and_model(monkeypatch):
    made = []

    def port(name, num_games, rules, seed=None, **options):
        made.append((name, num_games, rules.num_players, seed, options))
        return "port"

    monkeypatch.setitem(registry.REGISTRY, "x_bot", registry.BotEntry(
        "agents.random_agent:RandomAgent", port, lambda name, n, eps: (name, n, eps)))
    assert registry.batched_port("x_bot?k=2", 4, Rules(num_players=3), seed=9) == "port"
    assert made == [("x_bot", 4, 3, 9, {"k": 2})]
    assert registry.opponent_model_of("x_bot", 3, 0.2) == ("x_bot", 3, 0.2)
    assert agents.make("x_bot", num_players=2).name == "random"


def test_a_table_size_outside_the_entry_is_refused_before_the_bot_is_built(monkeypatch):
    built = []

    def factory(**kwargs):
        built.append(kwargs)
        return agents.make("random", **kwargs)

    monkeypatch.setitem(registry.REGISTRY, "two_only", registry.BotEntry(factory,
                                                                         players=(2, 2)))
    monkeypatch.setitem(registry.REGISTRY, "three_up", registry.BotEntry(factory,
                                                                         players=(3, 7)))
    for name, n, message in (("two_only", 3, "two_only sits at tables of 2 players, not 3"),
                             ("three_up", 2, "three_up sits at tables of 3 to 7 players, "
                                             "not 2"),
                             ("three_up", 8, "three_up sits at tables of 3 to 7 players, "
                                             "not 8")):
        with pytest.raises(ValueError) as e:
            agents.make(name, num_players=n)
        assert str(e.value) == message
    assert built == []
    assert agents.make("three_up", num_players=7).num_players == 7
    assert agents.make_for_table("two_only", {"num_players": 2}).num_players == 2


@pytest.fixture
def registry_kept():
    """The registry as it was before the test, whatever the test registered."""
    before = dict(registry.REGISTRY)
    yield
    registry.REGISTRY.clear()
    registry.REGISTRY.update(before)


def test_a_registered_bots_port_and_model_are_what_register_was_given(registry_kept):
    def port(name, num_games, rules, seed=None, **options):
        return ("port", name, num_games, rules.num_players, seed, options)

    def model(name, num_players, epsilon):
        return ("model", name, num_players, epsilon)

    agents.register("mine", "agents.random_agent:RandomAgent", batched=port, model=model)
    assert registry.batched_port("mine?k=1", 3, Rules(num_players=4), seed=5) == (
        "port", "mine", 3, 4, 5, {"k": 1})
    assert registry.opponent_model_of("mine") == ("model", "mine", 2, 0.1)  # the defaults
    assert registry.opponent_model_of("mine", 3, 0.25) == ("model", "mine", 3, 0.25)
    assert agents.make("mine").name == "random"

    agents.register("bare", "agents.random_agent:RandomAgent")
    with pytest.raises(ValueError) as e:
        registry.batched_port("bare", 1)
    assert str(e.value) == ("'bare' has no batched policy: it registered none "
                            "(agents.register(..., batched=))")
    with pytest.raises(ValueError) as e:
        registry.opponent_model_of("bare")
    head, _, listed = str(e.value).partition(": one of ")
    assert head == "no opponent model for 'bare'"
    listed = listed.split(", ")  # the bots that have a model, in order
    assert {"heuristic", "greedy", "random", "mine"} <= set(listed) and listed == sorted(listed)
    assert not {"bare", "mc", "human"} & set(listed)


@pytest.mark.parametrize("name, factory, message", [
    ("my:bot", "agents.random_agent:RandomAgent",
     "agent name 'my:bot': use letters, digits, '_', '.' or '-', starting with a letter or "
     "'_' (no ':', '?', ',' or spaces: they separate specs)"),
    ("mine", "agents.random_agent.RandomAgent",
     "factory 'agents.random_agent.RandomAgent': a string factory is 'module:attr'"),
    ("again", "agents.random_agent:RandomAgent",
     "agent 'again' is already registered ('agents.greedy:GreedyAgent'); pass replace=True "
     "to replace it"),
])
def test_a_registration_that_cannot_stand_says_what_fits(name, factory, message,
                                                         registry_kept):
    agents.register("again", "agents.greedy:GreedyAgent")
    with pytest.raises(ValueError) as e:
        agents.register(name, factory)
    assert str(e.value) == message


def test_a_registered_name_that_starts_with_ppo_is_that_bot_not_a_policy_file(monkeypatch):
    """What ``agents.spec.parse`` promises for a registered ``ppo:mine``: the bot's own
    port and its own options (a ``path`` too), not the policy file ``mine``."""
    from agents.tournament.specs import parse_spec, spec_kind

    monkeypatch.setitem(registry.REGISTRY, "ppo:mine", registry.BotEntry(
        "agents.random_agent:RandomAgent", lambda name, n, rules, seed=None, **o: (name, o)))
    assert registry.batched_port("ppo:mine?path=x.zip", 1) == ("ppo:mine", {"path": "x.zip"})
    assert parse_spec("ppo:mine?path=x.zip") == ("ppo:mine", {"path": "x.zip"})
    assert spec_kind("ppo:mine?path=x.zip") == "ppo:mine"  # a tournament's kind of seat
    monkeypatch.setitem(registry.REGISTRY, "ppo:portless",
                        registry.BotEntry("agents.random_agent:RandomAgent"))
    assert registry.has_port("ppo:mine") and not registry.has_port("ppo:portless")


#: What an installed package names in ``pis_yedili.agents``, in the order read: a taken name
#: with another bot (warned), a taken name with the same bot (a package that lists the
#: shipped bots: silent), a name no spec can hold, a value that is no ``module:attr``, then
#: one that is added.
ENTRY_POINTS = [("heuristic", "mybot:Lowest"), ("random", "agents.random_agent:RandomAgent"),
                ("my bot", "mybot:Lowest"), ("nocolon", "mybot"), ("lowest", "mybot:Lowest")]


@pytest.fixture
def installed(monkeypatch, registry_kept):
    """``ENTRY_POINTS`` as ``importlib.metadata`` lists them for the registry's group."""
    def entry_points(*, group):
        return ([metadata.EntryPoint(name, value, group) for name, value in ENTRY_POINTS]
                if group == registry.ENTRY_POINT_GROUP else [])

    monkeypatch.setattr(metadata, "entry_points", entry_points)


def test_an_installed_packages_bots_are_added_and_the_rest_skipped_with_a_warning(installed):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert registry.load_entry_points() == ["lowest"]
    assert registry.REGISTRY["lowest"] == registry.BotEntry("mybot:Lowest")
    assert registry.REGISTRY["heuristic"] is registry.SHIPPED["heuristic"]
    assert "my bot" not in registry.REGISTRY and "nocolon" not in registry.REGISTRY
    assert [(w.category, str(w.message)) for w in caught] == [
        (RuntimeWarning, "entry point heuristic = 'mybot:Lowest' (pis_yedili.agents) is "
                         "skipped: the name is taken by 'agents.heuristic:HeuristicAgent'"),
        (RuntimeWarning, "entry point my bot = 'mybot:Lowest' (pis_yedili.agents) is "
                         "skipped: it needs a plain name and a 'module:attr' value"),
        (RuntimeWarning, "entry point nocolon = 'mybot' (pis_yedili.agents) is skipped: it "
                         "needs a plain name and a 'module:attr' value")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert registry.load_entry_points() == []  # read again: nothing new
    assert len(caught) == 3  # and none for 'lowest', now taken by the same bot
    assert not any("lowest" in str(w.message) for w in caught)


def test_an_entry_point_warning_points_at_the_callers_line(installed):
    """Deselected under mutmut, whose trampoline is one more frame (pyproject.toml)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry.load_entry_points()
    assert [w.filename for w in caught] == [__file__] * 3


# ------------------------------------------------------------------ one place each
def _calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            yield node


def test_spec_queries_are_split_in_agents_spec_only():
    """No ``.partition("?")``, ``.split("?")`` or ``parse_qsl`` outside ``agents/spec.py``."""
    found = []
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for call in _calls(tree):
            f = call.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            question = any(isinstance(a, ast.Constant) and a.value == "?" for a in call.args)
            if (name in ("partition", "split", "rpartition") and question) or name == "parse_qsl":
                found.append(f"{path.relative_to(ROOT)}:{call.lineno}")
    assert {f.split(":")[0] for f in found} <= {"agents/spec.py"}, found


#: The modules that need a bot's batched port or opponent model, and the registry function
#: each must ask.
CONSUMERS = {
    "agents/panel/__init__.py": "batched_port",
    "train/vector/learner_batch.py": "batched_port",
    "train/common/pretrain.py": "batched_port",
    "agents/belief/opponent_models.py": "opponent_model_of",
}
#: The classes behind the ports and models: only the registry names them.
PORTS = {"HeuristicPolicy", "GreedyPolicy", "PanelPolicy", "NetworkGamePolicy", "StyleModel"}


@pytest.mark.parametrize("path, function", sorted(CONSUMERS.items()))
def test_each_consumer_asks_the_registry_for_ports_and_models(path, function):
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    names = {n.attr if isinstance(n, ast.Attribute) else n.id
             for n in ast.walk(tree) if isinstance(n, (ast.Name, ast.Attribute))}
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                for a in n.names}
    assert function in names | imported, f"{path} does not ask agents.registry.{function}"
    assert not (PORTS & (names | imported)), f"{path} builds a port itself: {PORTS & names}"


def test_a_load_that_fails_names_the_bot_only_when_it_has_another_name():
    """The message of ``agents.spec.load``: the bot's name first when it differs from the
    target, the attribute path followed dot by dot, and a target that is not callable."""
    from agents.spec import load

    missing = "cannot load 'json:nothing_here': module 'json' has no attribute 'nothing_here'"
    for what in (None, "json:nothing_here"):
        with pytest.raises(ValueError) as e:
            load("json:nothing_here", what=what)
        assert str(e.value) == missing
    with pytest.raises(ValueError) as e:
        load("json:nothing_here", what="mine")
    assert str(e.value) == f"agent 'mine': {missing}"
    import os.path
    assert load("os:path.join") is os.path.join
    with pytest.raises(ValueError) as e:
        load("math:pi")
    assert str(e.value) == "'math:pi' is not a class or function, but 3.141592653589793"


@pytest.mark.parametrize("name", ["", "  ", 5, None])
def test_a_name_that_is_no_string_or_blank_is_refused(name):
    with pytest.raises(ValueError) as e:
        registry.entry_of(name)
    assert str(e.value) == f"an agent name must be a non-empty string, got {name!r}"


def test_the_installed_packages_are_read_once_at_the_first_lookup(monkeypatch):
    """``REGISTRY`` reads the entry points at its first lookup, not at import, and only
    then."""
    calls = []
    monkeypatch.setattr(registry, "load_entry_points", lambda: calls.append(1))
    fresh = registry._Registry()
    assert calls == []
    assert "heuristic" not in fresh and fresh.get("x") is None and list(fresh) == []
    assert calls == [1]
