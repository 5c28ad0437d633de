"""Every refusal of ``train/ppo.py``'s config that relates several keys
(``train.sb3.config._check_train``), word for word, in process: a user reads these
messages to fix a run before it starts, and each names the key and the way out."""

from __future__ import annotations

import pytest

from train.sb3 import config as C

#: The observation segments at every table of layout 0 (7 players, matches), and the
#: ones layout 1 adds: the names ``policy.hide_from_actor`` takes.
V0 = ["hand", "top_card", "active_suit", "pending_sevens", "phase", "has_drawn", "direction",
      "hand_sizes", "stock_size", "discard", "drew_on_suit", "deal", "scores"]
V1 = [*V0, "opp_drawn", "opp_drawn_since_play", "opp_refused_suits", "opp_refused_ranks",
      "opp_nominated", "event_seat", "event_action", "event_count", "events_dropped"]


def refusal(*overrides: str) -> str:
    with pytest.raises(C.ConfigError) as err:
        C.build(None, list(overrides))
    return str(err.value)


@pytest.mark.parametrize("overrides,message", [
    (["policy.net_arch=[]"], "policy.net_arch=[]: a list of positive layer widths"),
    (["policy.net_arch=[32,0]"], "policy.net_arch=[32, 0]: a list of positive layer widths"),
    (["policy.features=[obs,obs]"],
     "policy.features=['obs', 'obs']: 'obs', optionally with 'mask'"),
    (["policy.features=[mask]"], "policy.features=['mask']: 'obs', optionally with 'mask'"),
    (["policy.features=[obs,belief]"],
     "policy.features=['obs', 'belief']: 'obs', optionally with 'mask'"),
    (["policy.hide_from_actor=[hand,opp_drawn]"],
     "policy.hide_from_actor: unknown observation segment(s) ['opp_drawn']; the segments "
     f"are {', '.join(V0)}"),
    (["env_version=1", "policy.hide_from_actor=[nope]"],
     "policy.hide_from_actor: unknown observation segment(s) ['nope']; the segments are "
     f"{', '.join(V1)}"),
    (["pretrain.teacher=heuristic", "pretrain.data=[x.npz]"],
     "pretrain.teacher and pretrain.data are alternatives: set one (the other null)"),
    (["eval.opponents=[random,heuristik]"],
     "eval.opponents: unknown agent 'heuristik'; did you mean heuristic?"),
    (["eval.opponents=[zzzz]"], "eval.opponents: unknown agent 'zzzz'"),
    (["league.learner_seat=2"], "league.learner_seat=2: must be in 0..1"),
    (["num_players=4", "league.learner_seat=4"], "league.learner_seat=4: must be in 0..3"),
    (["league.learner_seat=-1"], "league.learner_seat=-1: must be in 0..1"),
    (["policy.oracle_actor=true", "policy.privileged_critic=false"],
     "policy.oracle_actor=true: policy.privileged_critic is false (the hidden cards are "
     "not in the input)"),
    (["policy.oracle_actor=true", "league.opponents={heuristic: 1, 'ppo:a.zip': 1}"],
     "policy.oracle_actor=true: league.opponents has ['ppo:a.zip'] (a network opponent is "
     "played without the hidden cards)"),
    (["policy.oracle_actor=true", "league.opponents={heuristic: 1}", "eval.deals=7"],
     "policy.oracle_actor=true: eval.deals=7 (no table can show it the hidden cards)"),
    (["rules.num_deals=0"], "rules: num_deals=0: must be an int 1..100"),
])
def test_each_refusal_names_the_key_and_the_way_out(overrides, message):
    assert refusal(*overrides) == message


def test_what_the_checks_accept_passes_through():
    cfg = C.build(None, ["policy.hide_from_actor=[deal,scores]", "policy.features=[obs]",
                         "env_version=1", "policy.net_arch=[8]",
                         "eval.opponents=['ppo:x.zip', search]", "league.learner_seat=1",
                         "policy.oracle_actor=true", "league.opponents={heuristic: 1}",
                         "eval.deals=0"])
    assert cfg.policy.hide_from_actor == ["deal", "scores"]
    assert cfg.league.learner_seat == 1
    cfg = C.build(None, ["env_version=1", "policy.hide_from_actor=[opp_drawn]",
                         "pretrain.teacher=null", "pretrain.data=[x.npz]"])
    assert cfg.pretrain.data == ["x.npz"]


def test_num_players_sets_the_rules_and_the_rules_file_sits_under_the_rules():
    cfg = C.build(None, ["num_players=3", "rules.num_players=5", "rules.num_deals=4"])
    assert cfg.rules["num_players"] == 3 and cfg.num_players == 3
    assert cfg.rules["num_deals"] == 4 and "illegal_action" not in cfg.rules
    cfg = C.build(None, ["num_players=null", "rules.num_players=4"])
    assert cfg.num_players == 4


def test_resolve_checks_a_whole_config_into_a_new_object():
    cfg = C.build(None, ["seed=5"])
    again = C.resolve(cfg)
    assert again == cfg and again is not cfg and again.seed == 5
    cfg.policy.net_arch = []
    with pytest.raises(C.ConfigError, match=r"^policy.net_arch=\[\]: "):
        C.resolve(cfg)


def test_a_rules_file_is_found_read_and_overridden_by_the_rules_options(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("draw_rule: bogus\n", encoding="utf-8")
    assert refusal(f"rules_file={bad}") == (
        f"rules_file: {bad}: draw_rule='bogus' is not allowed; allowed values: 'free', "
        "'one', 'until_playable'")
    assert refusal("rules_file=nowhere.yaml") == (
        "rules_file not found: nowhere.yaml (shipped rules: big_table, doubling_sevens, "
        "first_round, match, quick_draw, seed, strict)")
    good = tmp_path / "good.yaml"
    good.write_text("draw_rule: one\nnum_deals: 4\n", encoding="utf-8")
    cfg = C.build(None, [f"rules_file={good}", "rules.num_deals=2"])
    assert cfg.rules["draw_rule"] == "one" and cfg.rules["num_deals"] == 2


def test_the_mix_and_teacher_refusals_name_their_key():
    assert refusal("league.opponents={heuristc: 1}").startswith(
        "league.opponents: unknown bot 'heuristc'; did you mean heuristic? (the built-in bots: ")
    assert refusal("pretrain.teacher=heuristc").startswith(
        "pretrain.teacher='heuristc': a built-in bot (")


def test_an_unknown_evaluation_opponent_gets_at_most_three_suggestions(monkeypatch):
    import agents

    for name in ("bot_a", "bot_b", "bot_c", "bot_d"):
        monkeypatch.setitem(agents.REGISTRY, name, agents.REGISTRY["random"])
    message = refusal("eval.opponents=[bot_x]")
    assert message.startswith("eval.opponents: unknown agent 'bot_x'; did you mean ")
    assert message.count("bot_") == 1 + 3


def test_the_smallest_network_and_seat_are_allowed_and_the_rules_illegal_action_dropped():
    """The training env decides what an illegal action does: the rules' own
    ``illegal_action`` is dropped before the rules are checked, whatever it says."""
    cfg = C.build(None, ["policy.net_arch=[1]", "league.learner_seat=0",
                         "rules.illegal_action=bogus"])
    assert cfg.policy.net_arch == [1] and cfg.league.learner_seat == 0
    assert "illegal_action" not in cfg.rules


def test_a_shipped_rules_file_is_found_by_its_name():
    cfg = C.build(None, ["rules_file=quick_draw"])
    assert cfg.rules["draw_rule"] == "one"
