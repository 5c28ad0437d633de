"""The rules configuration: defaults, allowed values, validation and the YAML files."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import yaml

from pis_env.rules import CHOICES, RESHUFFLE_DEFAULT_MAX_TURNS, Rules

CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs" / "rules"

DEFAULTS = {
    "num_players": 2,
    "draw_rule": "free",
    "seven_penalty": "add",
    "after_penalty": "end_turn",
    "nominate": "any",
    "opening": "opener",
    "empty_stock": "end_deal",
    "num_deals": 1,
    "max_turns": None,
    "reward": "points",
    "illegal_action": "raise",
}

ALLOWED = {
    "draw_rule": ["free", "one", "until_playable"],
    "seven_penalty": ["add", "double"],
    "after_penalty": ["end_turn", "continue"],
    "nominate": ["any", "other"],
    "opening": ["opener", "first_round"],
    "empty_stock": ["end_deal", "reshuffle"],
    "reward": ["points", "win"],
    "illegal_action": ["raise", "terminate"],
}


def test_defaults():
    assert Rules().to_dict() == DEFAULTS
    assert set(Rules.keys()) == set(DEFAULTS)
    for key, value in DEFAULTS.items():
        assert getattr(Rules(), key) == value


def test_string_options_match_spec():
    assert {k: list(v) for k, v in CHOICES.items()} == ALLOWED
    for key, values in ALLOWED.items():
        assert values[0] == DEFAULTS[key]


@pytest.mark.parametrize(
    "key, value", [(k, v) for k, values in ALLOWED.items() for v in values]
)
def test_every_allowed_value(key, value):
    rules = Rules(**{key: value})
    assert getattr(rules, key) == value
    assert Rules.from_options(**{key: value}) == rules


@pytest.mark.parametrize("key", sorted(ALLOWED))
@pytest.mark.parametrize("bad", ["bogus", "", None, 1, "FREE"])
def test_bad_string_value_names_allowed_values(key, bad):
    with pytest.raises(ValueError) as info:
        Rules(**{key: bad})
    message = str(info.value)
    assert key in message
    for allowed in ALLOWED[key]:
        assert allowed in message


@pytest.mark.parametrize("n", range(2, 8))
def test_num_players_allowed(n):
    assert Rules(num_players=n).num_players == n


@pytest.mark.parametrize("bad", [0, 1, 8, 52, -2, "2", 2.0, True, None])
def test_num_players_rejected(bad):
    with pytest.raises(ValueError, match="num_players"):
        Rules(num_players=bad)


@pytest.mark.parametrize("deals", [1, 2, 4, 100])
def test_num_deals_allowed(deals):
    assert Rules(num_deals=deals).num_deals == deals


@pytest.mark.parametrize("bad", [0, -1, 1.5, "4", True, None])
def test_num_deals_rejected(bad):
    with pytest.raises(ValueError, match="num_deals"):
        Rules(num_deals=bad)


def test_max_turns():
    assert Rules().max_turns is None
    assert Rules(max_turns=50).max_turns == 50
    assert RESHUFFLE_DEFAULT_MAX_TURNS == 1000
    assert Rules(empty_stock="reshuffle").max_turns == 1000
    assert Rules(empty_stock="reshuffle", max_turns=30).max_turns == 30
    for bad in (0, -5, 2.5, "10", True):
        with pytest.raises(ValueError, match="max_turns"):
            Rules(max_turns=bad)


def test_unknown_key_names_the_allowed_options():
    with pytest.raises(ValueError) as info:
        Rules.from_options(num_player=3)
    message = str(info.value)
    assert "num_player" in message
    for key in DEFAULTS:
        assert key in message
    with pytest.raises(ValueError, match="unknown rules option 'seven'; allowed options: "):
        Rules.from_options(seven="double")


def test_frozen_hashable_and_replace():
    rules = Rules(num_players=4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.num_players = 5
    assert hash(rules) == hash(Rules(num_players=4))
    assert rules.replace(draw_rule="one") == Rules(num_players=4, draw_rule="one")
    assert rules == Rules(num_players=4)
    with pytest.raises(ValueError, match="draw_rule='many' is not allowed"):
        rules.replace(draw_rule="many")
    with pytest.raises(ValueError, match="unknown rules option 'colour'"):
        rules.replace(colour="red")
    assert Rules(**Rules(nominate="other").to_dict()) == Rules(nominate="other")


# ---------------------------------------------------------------------- YAML files
EXPECTED_FILES = {
    "seed.yaml": {},
    "quick_draw.yaml": {"draw_rule": "one"},
    "doubling_sevens.yaml": {"seven_penalty": "double"},
    "strict.yaml": {"nominate": "other", "draw_rule": "until_playable",
                    "after_penalty": "continue"},
    "big_table.yaml": {"num_players": 6, "empty_stock": "reshuffle", "max_turns": 1000},
    "match.yaml": {"num_deals": 4},
    "first_round.yaml": {"opening": "first_round"},
}


def yaml_files():
    return sorted(p.name for p in CONFIG_DIR.glob("*.yaml"))


def test_expected_files_exist():
    assert set(EXPECTED_FILES) <= set(yaml_files())


@pytest.mark.parametrize("name", yaml_files())
def test_every_rules_file_loads(name):
    path = CONFIG_DIR / name
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    assert isinstance(data, dict)
    assert set(data) <= set(DEFAULTS), f"{name}: unknown keys {set(data) - set(DEFAULTS)}"
    rules = Rules.from_yaml(path)
    for key, value in data.items():
        assert getattr(rules, key) == value
    assert Rules.from_yaml(str(path)) == rules


@pytest.mark.parametrize("name, changes", sorted(EXPECTED_FILES.items()))
def test_named_variant_files(name, changes):
    assert Rules.from_yaml(CONFIG_DIR / name) == Rules(**changes)


def test_seed_file_writes_out_every_default():
    data = yaml.safe_load((CONFIG_DIR / "seed.yaml").read_text(encoding="utf-8"))
    assert data == DEFAULTS
    assert Rules.from_yaml(CONFIG_DIR / "seed.yaml") == Rules()


def test_yaml_overrides_and_errors(tmp_path):
    assert Rules.from_yaml(CONFIG_DIR / "match.yaml", num_players=3) == Rules(
        num_deals=4, num_players=3)
    empty = tmp_path / "empty.yaml"
    empty.write_text("", encoding="utf-8")
    assert Rules.from_yaml(empty) == Rules()
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("draw_rules: one\n", encoding="utf-8")
    with pytest.raises(ValueError, match="draw_rule"):
        Rules.from_yaml(unknown)
    bad_value = tmp_path / "bad.yaml"
    bad_value.write_text("seven_penalty: triple\n", encoding="utf-8")
    with pytest.raises(ValueError, match="double"):
        Rules.from_yaml(bad_value)
    not_mapping = tmp_path / "list.yaml"
    not_mapping.write_text("- draw_rule\n- one\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{re.escape(str(not_mapping))}: a rules file must"):
        Rules.from_yaml(not_mapping)


@pytest.mark.parametrize("text, line", [
    ("draw_rule: free\nnominate: [x\n", 2),       # an unclosed flow sequence
    ('draw_rule: "free\n', 1),                    # an unclosed quote
    ("draw_rule: one\n  seven_penalty: add\n", 2),  # bad indentation
    ("num_players: 3\n\tnominate: any\n", 2),     # a tab
])
def test_malformed_yaml_is_a_one_line_error_with_file_and_line(tmp_path, text, line):
    path = tmp_path / "broken.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{path}:{line}: malformed YAML: ") as info:
        Rules.from_yaml(path)
    assert "\n" not in str(info.value)


def test_missing_rules_file_is_a_value_error_naming_it_and_the_shipped_ones(tmp_path):
    path = tmp_path / "nowhere.yaml"
    with pytest.raises(ValueError, match=rf"^{path}: rules file not found \(shipped rules: "
                       r"big_table, .*strict\)$"):
        Rules.from_yaml(path)


def test_bad_option_in_a_file_names_the_file(tmp_path):
    path = tmp_path / "opts.yaml"
    path.write_text("num_players: 9\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{path}: num_players=9"):
        Rules.from_yaml(path)


def test_numpy_integers_are_plain_ints_in_the_rules():
    import numpy as np
    rules = Rules(num_players=np.int64(3), num_deals=np.int32(2), max_turns=np.int16(40))
    assert rules == Rules(num_players=3, num_deals=2, max_turns=40)
    assert all(type(v) is int for v in (rules.num_players, rules.num_deals, rules.max_turns))
    with pytest.raises(ValueError, match="num_players"):
        Rules(num_players=np.bool_(True))


def test_did_you_mean_lists_each_suggestion_once():
    from pis_env.rules import _nearest

    assert _nearest("draw_rul", ["draw_rule", "draw_rule", "num_deals"]) == (
        " (did you mean 'draw_rule'?)")
    with pytest.raises(ValueError, match=r"did you mean 'free'\?"):
        Rules(draw_rule="fre")


def test_the_typed_options_are_the_rules_fields():
    """``RulesOptions`` (the typed keywords of ``env()``) holds the fields of ``Rules``."""
    import dataclasses

    from pis_env.rules import RulesOptions

    fields = {f.name: f.type for f in dataclasses.fields(Rules)}
    assert RulesOptions.__annotations__.keys() == fields.keys()


@pytest.mark.parametrize("text, message", [
    ("draw_rule: free\nnominate: [x\n", "2: malformed YAML: while parsing a flow sequence "
     "(line 2) expected ',' or ']', but got '<stream end>' (line 3)"),
    ('draw_rule: "free\n', "1: malformed YAML: while scanning a quoted scalar (line 1) found "
     "unexpected end of stream (line 2)"),
    ("a: b: c\n", "1: malformed YAML: mapping values are not allowed here (line 1)"),
])
def test_a_yaml_error_reads_as_pyyaml_said_it_on_one_line(tmp_path, text, message):
    """PyYAML's context and problem, each with its 1-based line, then nothing else."""
    path = tmp_path / "broken.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as info:
        Rules.from_yaml(path)
    assert str(info.value) == f"{path}:{message}"


def test_a_yaml_error_without_marks_is_its_own_text():
    import yaml

    from pis_env.rules import _yaml_problem, _yaml_where

    bare = yaml.YAMLError("the reader  gave\nup")
    assert _yaml_where(bare) == "" and _yaml_problem(bare) == "the reader gave up"


def test_a_rules_path_that_cannot_be_read_says_so(tmp_path):
    with pytest.raises(ValueError, match=rf"^{tmp_path}: cannot read the rules file: .*"
                       "Is a directory"):
        Rules.from_yaml(tmp_path)


def test_did_you_mean_offers_three_of_the_closest():
    """Three suggestions, in difflib's order of similarity, and none for a stranger."""
    from pis_env.rules import _nearest

    allowed = ["seven_a", "seven_b", "seven_c", "seven_d", "other"]
    assert _nearest("seven_", allowed) == " (did you mean 'seven_d', 'seven_c', 'seven_b'?)"
    assert _nearest("zzzz", allowed) == ""


def test_rules_errors_word_for_word():
    """The messages the CLIs print as they are: the option, the suggestion, every allowed
    value or option."""
    with pytest.raises(ValueError) as info:
        Rules(draw_rule="fre")
    assert str(info.value) == ("draw_rule='fre' is not allowed (did you mean 'free'?); "
                               "allowed values: 'free', 'one', 'until_playable'")
    with pytest.raises(ValueError) as info:
        Rules.from_options(num_player=2)
    assert str(info.value) == (
        "unknown rules option 'num_player' (did you mean 'num_players'?); allowed options: "
        "num_players, draw_rule, seven_penalty, after_penalty, nominate, opening, "
        "empty_stock, num_deals, max_turns, reward, illegal_action")
    from pis_env.rules import _nearest

    assert _nearest(3, ["draw_rule"]) == ""  # a value that is no name suggests nothing


def test_max_turns_takes_its_limit():
    from pis_env.rules import MAX_MAX_TURNS

    assert Rules(max_turns=MAX_MAX_TURNS).max_turns == MAX_MAX_TURNS
    with pytest.raises(ValueError, match="max_turns"):
        Rules(max_turns=MAX_MAX_TURNS + 1)


def test_a_shipped_rules_file_loads_by_its_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no configs/ folder here: the name is the shipped file's
    assert Rules.from_yaml("strict") == Rules.from_yaml(CONFIG_DIR / "strict.yaml")


def test_a_rules_file_is_read_as_utf8_whatever_the_locale(ascii_locale, tmp_path):
    path = tmp_path / "şartlar.yaml"
    path.write_text("# Pis Yedili, kurallar: çekme kuralı\ndraw_rule: one\n", encoding="utf-8")
    assert Rules.from_yaml(path) == Rules(draw_rule="one")
