"""``train.common.schema``, the config machinery of every entry point, on a toy config
built inside the tests (so that what runs at import for the real configs is exercised
here too): keys, short names, help, overrides, limits and every error word for word.
No ``from __future__ import annotations``: the type hints of classes made in a function
must be objects for ``typing.get_type_hints``."""

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from train.common.schema import (
    ConfigError,
    Schema,
    add_arguments,
    as_dict,
    dump,
    find_file,
    mapping,
    param,
    section,
    yaml_error,
)


def make_root() -> type:
    """The toy config's root dataclass, made when a test runs (not at import), so that
    ``param``, ``section`` and ``mapping`` run under the test too."""

    @dataclass
    class Sched:
        final: float = param(0.1, "final fraction", ge=0, le=1)

    @dataclass
    class Opt:
        learning_rate: float = param(3e-4, "step size", gt=0)
        batch_size: int = param(64, "minibatch", ge=1, le=4096)
        clip: float = param(0.2, "clip range", ge=0, le=1)
        sched: Sched = section(Sched, "schedule")

    @dataclass
    class Net:
        widths: list[int] = param([32, 32], "hidden widths")
        act: str = param("tanh", "activation", choices=("tanh", "relu"))
        batch_size: int = param(8, "net batch", ge=1)
        depth: int = param(2, "layers", ge=0, le=2)
        name: str = param("mlp", "the network's name")

    @dataclass
    class Root:
        name: str = param("toy", "run name")
        seed: int = param(0, "seed", ge=0)
        minutes: float | None = param(None, "time limit", gt=0)
        rules_file: str | None = param(None, "rules YAML", path=True)
        rules: dict[str, Any] = mapping({"players": 2}, "rules options",
                                        keys=lambda: ["players", "deals"])
        kwargs: dict[str, Any] = mapping({}, "free options")
        mix: dict[str, float] = param({"a": 1.0}, "weights")
        rival: str = param("heuristic", "who", choices=("heuristic", "random"),
                           also="ppo:PATH")
        opt: Opt = section(Opt, "optimiser")
        net: Net = section(Net, "network", act="relu")

    return Root


@pytest.fixture
def schema() -> Schema:
    return Schema(make_root(), prefer="opt")


HELP = """\
Config keys (key=value on the command line; a short name works where shown):
  name: str = toy
      run name
  seed: int = 0  (>= 0)
      seed
  minutes: float or null = null  (> 0)
      time limit
  rules_file: str or null = null
      rules YAML
  rules: a mapping of str to anything = {players: 2}  (merged key by key: rules.KEY=value)
      rules options
  kwargs: a mapping of str to anything = {}  (merged key by key: kwargs.KEY=value)
      free options
  mix: a mapping of str to float = {a: 1.0}
      weights
  rival: str = heuristic  (one of heuristic, random or ppo:PATH)
      who
opt: optimiser
  opt.learning_rate: float = 0.0003  (short: learning_rate; > 0)
      step size
  opt.batch_size: int = 64  (short: batch_size; in 1..4096)
      minibatch
  opt.clip: float = 0.2  (short: clip; in [0, 1])
      clip range
  opt.sched.final: float = 0.1  (short: final; in [0, 1])
      final fraction
net: network
  net.widths: a list of int = [32, 32]  (short: widths)
      hidden widths
  net.act: str = relu  (short: act; one of tanh, relu)
      activation
  net.batch_size: int = 8  (>= 1)
      net batch
  net.depth: int = 2  (short: depth; in 0..2)
      layers
  net.name: str = mlp
      the network's name"""


def test_the_keys_sections_mappings_and_short_names(schema):
    assert list(schema.fields) == [
        "name", "seed", "minutes", "rules_file", "rules", "kwargs", "mix", "rival",
        "opt.learning_rate", "opt.batch_size", "opt.clip", "opt.sched.final", "net.widths",
        "net.act", "net.batch_size", "net.depth", "net.name"]
    assert schema.fields["net.act"].default == "relu"  # the section's own default
    assert schema.fields["net.act"].metadata["choices"] == ("tanh", "relu")
    assert schema.sections == {"opt": "optimiser", "net": "network"}
    assert list(schema.mappings) == ["rules", "kwargs"]
    # batch_size is shared: the preferred section's; name is shared outside it: no one's
    assert schema.short_names == {
        "seed": "seed", "minutes": "minutes", "rules_file": "rules_file", "rules": "rules",
        "kwargs": "kwargs", "mix": "mix", "rival": "rival",
        "learning_rate": "opt.learning_rate",
        "batch_size": "opt.batch_size", "clip": "opt.clip", "final": "opt.sched.final",
        "widths": "net.widths", "act": "net.act", "depth": "net.depth"}
    assert schema.defaults["net"] == {"widths": [32, 32], "act": "relu", "batch_size": 8,
                                      "depth": 2, "name": "mlp"}
    # a list default is copied for every instance
    root = schema.root
    one, two = root(), root()
    one.net.widths.append(1)
    one.mix["b"] = 2.0
    assert two.net.widths == [32, 32] and root().mix == {"a": 1.0}
    assert (schema.fields["seed"].metadata["help"], schema.fields["seed"].metadata["ge"]) == (
        "seed", 0)
    assert schema.fields["rules"].merge and not schema.fields["mix"].merge
    without = Schema(root)
    assert "batch_size" not in without.short_names


def test_the_help_lists_every_key_word_for_word(schema):
    assert schema.help_text() == HELP


def test_the_hyperparameter_table(schema):
    long = list(range(40))
    table = schema.hyperparameters_markdown(schema.build(None, [
        "seed=3", f"net.widths={long}", "kwargs.l=[1, 2]", "rival=ppo:x.zip"]))
    assert f"| net.widths | {long} |" in table.splitlines()  # one line, however long
    assert "| kwargs | {l: [1, 2]} |" in table.splitlines()
    assert "| rival | ppo:x.zip |" in table.splitlines()
    assert table.splitlines()[:4] == ["| key | value |", "| --- | --- |", "| name | toy |",
                                      "| seed | 3 |"]
    assert table.splitlines()[-2:] == ["| net.depth | 2 |", "| net.name | mlp |"]


def test_overrides_short_names_mappings_and_files(schema):
    cfg = schema.build(None, ["rules.deals=3", "batch_size=9", "kwargs.x=1", "seed=2e0",
                              "rules=r.yaml", "net.widths=[4, 5]", "minutes=1.5"])
    assert isinstance(cfg, schema.root) and type(cfg.opt) is type(schema.root().opt)
    assert as_dict(cfg) == {"name": "toy", "seed": 2, "minutes": 1.5, "rules_file": "r.yaml",
                   "rules": {"players": 2, "deals": 3}, "kwargs": {"x": 1},
                   "mix": {"a": 1.0}, "rival": "heuristic",
                   "opt": {"learning_rate": 3e-4, "batch_size": 9, "clip": 0.2,
                           "sched": {"final": 0.1}},
                   "net": {"widths": [4, 5], "act": "relu", "batch_size": 8, "depth": 2,
                           "name": "mlp"}}
    # a plain mapping replaces, a merged one is merged
    assert schema.build(None, {"mix": {"b": 2.0}, "rules": {"players": 3}}).mix == {"b": 2.0}
    assert schema.build(None, {"rules": {"deals": 2}}).rules == {"players": 2, "deals": 2}
    assert schema.build(None, {"opt": {"clip": 0.5}}).opt.clip == 0.5


LONG = "a" * 30


@pytest.mark.parametrize("override, message", [
    ("lerning_rate=1",
     "unknown config key 'lerning_rate'; did you mean learning_rate, opt.learning_rate?"),
    ("opt.lernin_rate=1", "unknown config key 'opt.lernin_rate'; did you mean "
     "opt.learning_rate, learning_rate, opt.sched.final?"),
    (f"{LONG}.learnin_rate=1",
     f"unknown config key '{LONG}.learnin_rate'; did you mean opt.learning_rate?"),
    ("zzzz=1", "unknown config key 'zzzz'"),
    ("rules.player=3", "unknown rules option 'rules.player'; did you mean rules.players?"),
    ("opt=1", "'opt' is a section (optimiser), not a value: give its keys "
     "(opt.learning_rate, opt.batch_size, opt.clip, opt.sched.final)"),
    ("net.dept=1",
     "unknown config key 'net.dept'; did you mean net.depth, net.widths, net.act?"),
    ("opt.sched.fina=1", "unknown config key 'opt.sched.fina'; did you mean "
     "opt.sched.final, opt.clip, opt.learning_rate?"),
    ("net.depth=3", "net.depth=3: must be in 0..2"),
    ("rival=greedy", "rival='greedy': allowed values are heuristic, random or ppo:PATH"),
    (f"{LONG}.fina=1", f"unknown config key '{LONG}.fina'; did you mean opt.sched.final?"),
    (f"{LONG}.{LONG}.learnin_rate=1",
     f"unknown config key '{LONG}.{LONG}.learnin_rate'; did you mean opt.learning_rate?"),
    ("seed", "override 'seed' is not key=value (e.g. seed=0); did you mean seed=...?"),
    ("sed", "override 'sed' is not key=value (e.g. seed=0); "),
    ("net.act=sigmoid", "net.act='sigmoid': allowed values are tanh, relu"),
    ("seed=-1", "seed=-1: must be >= 0"),
    ("minutes=0", "minutes=0.0: must be > 0 (or null)"),
    ("opt.clip=2", "opt.clip=2.0: must be in [0, 1]"),
    ("opt.batch_size=0", "opt.batch_size=0: must be in 1..4096"),
    ("opt.batch_size=5000", "opt.batch_size=5000: must be in 1..4096"),
    ("net.batch_size=0", "net.batch_size=0: must be >= 1"),
    ("seed=x", "seed='x': expected int (Value 'x' of type 'str' could not be converted to "
     "Integer)"),
    ("name=null", "name may not be null"),
    ("rules=5", "rules=5: a mapping of rules options or a rules YAML"),
    ("kwargs=5", "kwargs=5: a mapping of kwargs options"),
], ids=lambda case: "".join(c if c.isalnum() else "_" for c in case)[:40])
def test_every_bad_override_says_word_for_word_what_is_wrong(schema, override, message):
    with pytest.raises(ConfigError) as info:
        schema.build(None, [override])
    assert str(info.value) == message


def test_a_config_file_extends_another_and_keeps_its_paths(schema, tmp_path):
    (tmp_path / "r.yaml").write_text("players: 3\n")
    (tmp_path / "base.yaml").write_text("seed: 4\nopt: {clip: 0.1}\n")
    (tmp_path / "run.yaml").write_text("extends: base.yaml\nrules_file: r.yaml\nclip: 0.3\n")
    cfg = schema.build(tmp_path / "run.yaml")
    assert (cfg.seed, cfg.opt.clip, cfg.rules_file) == (
        4, 0.3, str(tmp_path / "r.yaml"))
    (tmp_path / "loop.yaml").write_text("extends: loop.yaml\n")
    with pytest.raises(ConfigError, match="'extends' loops back to itself"):
        schema.build(tmp_path / "loop.yaml")
    (tmp_path / "list.yaml").write_text("- 1\n")
    with pytest.raises(ConfigError) as info:
        schema.build(tmp_path / "list.yaml")
    assert str(info.value) == f"{tmp_path / 'list.yaml'}: a config file must be a mapping of keys"


def test_a_config_file_is_read_as_utf8_whatever_the_locale(schema, tmp_path, ascii_locale):
    (tmp_path / "run.yaml").write_text("# eğitim: çok kısa\nseed: 4\n", encoding="utf-8")
    assert schema.build(tmp_path / "run.yaml").seed == 4


def test_the_entry_points_arguments():
    parser = argparse.ArgumentParser()
    add_arguments(parser, Path("configs/ppo_2p.yaml"))
    args = parser.parse_args(["a=1", "--config", "x.yaml", "--print-config"])
    assert (args.overrides, args.config, args.print_config, args.help_config) == (
        ["a=1"], "x.yaml", True, False)
    helps = {a.dest: a.help for a in parser._actions}
    overrides = next(a for a in parser._actions if a.dest == "overrides")
    assert (overrides.nargs, overrides.metavar) == ("*", "key=value")
    assert helps["config"] == "a config YAML (default ppo_2p.yaml)"
    assert helps["print_config"] == "print the resolved config and exit"
    assert helps["help_config"] == ("list every config key with its type, default and help, "
                                    "and exit")
    assert helps["overrides"] == ("config overrides (YAML values, dotted keys; --help-config "
                                  "lists every key)")
    bare = argparse.ArgumentParser()
    add_arguments(bare, None)
    assert {a.dest: a.help for a in bare._actions}["config"] == "a config YAML"


def test_a_broken_config_file_is_one_line_naming_it(schema, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("seed: [1\n")
    with pytest.raises(ConfigError) as info:
        schema.build(bad)
    assert str(info.value) == (f"{bad}, line 1: not valid YAML: expected ',' or ']', but got "
                               "'<stream end>'")
    bad.write_text("seed: 1\na: b: c\n")
    with pytest.raises(ConfigError) as info:
        schema.build(bad)
    assert str(info.value) == f"{bad}, line 2: not valid YAML: mapping values are not allowed here"
    assert yaml_error("f.yaml", yaml.YAMLError("no  marks\nhere")) == (
        "f.yaml: not valid YAML: no marks here")
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError) as info:
        schema.build(latin)
    assert str(info.value).startswith(f"{latin}: cannot read the config file (")
    with pytest.raises(ConfigError) as info:
        schema.build(tmp_path / "missing.yaml")
    assert str(info.value).startswith(f"config file not found: {tmp_path / 'missing.yaml'} "
                                      "(shipped configs: ")


def test_the_declarations_keep_their_defaults_apart_and_their_limits():
    nested = param({"a": [1]}, "nested")
    first = nested.default_factory()
    first["a"].append(2)
    assert nested.default_factory() == {"a": [1]}  # a deep copy each time
    merged = mapping({}, "options", ge=1)
    assert (merged.metadata["merge"], merged.metadata["ge"], merged.metadata["help"]) == (
        True, 1, "options")
    assert find_file("ppo_4p").name == "ppo_4p.yaml" and find_file("ppo_4p").exists()


def test_values_are_taken_as_given(schema):
    """An override's value may hold '=' and OmegaConf's interpolation syntax: both are kept
    as text (a run's config is what it says, never resolved against other keys)."""
    cfg = schema.build(None, ["name=a=b"])
    assert cfg.name == "a=b"
    assert schema.build(None, ["name=${seed}"]).name == "${seed}"
    for source in ("config", "x.yaml"):
        with pytest.raises(ConfigError) as info:
            schema.flatten(5) if source == "config" else schema.flatten([1], source)
        assert str(info.value) == f"{source}: expected a mapping of config keys"


def test_the_typed_config_round_trips_through_its_saved_dict(schema):
    """``build`` gives the root dataclass; ``as_dict`` the plain dict a run saves (``dump``)
    and ``--resume`` reads back as ``base``, which builds the same object again."""
    cfg = schema.build(None, ["seed=5", "opt.sched.final=0.5", "kwargs.z=[1]"])
    saved = yaml.safe_load(dump(cfg))
    assert saved == as_dict(cfg) and isinstance(saved["opt"]["sched"], dict)
    assert schema.build(base=saved) == cfg and schema.build(base=cfg) == cfg
    assert as_dict(saved) is saved


def test_a_type_without_a_name_is_shown_by_its_text():
    from train.common.schema import _type_name

    assert _type_name("Path") == "Path"  # e.g. a hint left as text
    assert _type_name(list[Any]) == "a list of anything"


def test_a_key_close_to_many_fields_suggests_three():
    @dataclass
    class Part:
        rate: float = param(0.1, "a rate", gt=0)

    @dataclass
    class Four:
        a: Part = section(Part, "one")
        b: Part = section(Part, "two")
        c: Part = section(Part, "three")
        d: Part = section(Part, "four")

    with pytest.raises(ConfigError) as e:
        Schema(Four).build(None, [f"{LONG}.rat=1"])
    assert str(e.value) == f"unknown config key '{LONG}.rat'; did you mean a.rate, b.rate, c.rate?"
