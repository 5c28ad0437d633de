"""The opponent panel: bots of clearly different styles, split once, here, into a model
set and an evaluation set.

* :data:`MODEL_SET`: the bots opponent models, rollouts, leagues and teachers may use.
  Every one that the batched engine can play has a batched policy
  (:func:`batched_policy`); ``mc`` (a search) and ``ppo_v2`` (a torch network) are the
  costly ones.
* :data:`EVALUATION_SET`: bots that nothing in training or modelling may use, so that a
  score against them measures play against strangers. ``tests/agents/panel/test_panel.py``
  fails when a config's league, teacher or opponents, a ``DEFAULT_*`` constant, an
  opponent-model spec or a rollout policy names one (``eval`` sections may);
  :func:`evaluation_names` finds them in a config, for a config check to refuse.

Why one place: the split is only worth something if it is never crossed, and a test can
only guard a split it can read.

``PANEL_REGISTRY`` (name -> ``"module:Class"``) is merged into ``agents.REGISTRY`` as
:func:`panel_entries` (each with its port and model), so ``agents.make("hoarder")`` and
``--agents search,hoarder`` work. ``python -m
benchmarks.panel`` plays the shipped bots against every member.
"""

from __future__ import annotations

from agents.registry import SHIPPED

#: The panel's own bots (the members named in the sets that ``agents`` did not have).
PANEL_REGISTRY = {
    "greedy_eps": "agents.panel.bots:GreedyEpsAgent",
    "high_shedder": "agents.panel.bots:HighShedderAgent",
    "hoarder": "agents.panel.bots:HoarderAgent",
    "sevens": "agents.panel.bots:SevensAgent",
    "cautious": "agents.panel.bots:CautiousAgent",
    "miser": "agents.panel.bots:MiserAgent",
    "suit_keeper": "agents.panel.bots:SuitKeeperAgent",
    "drawer": "agents.panel.bots:DrawerAgent",
    "jack_happy": "agents.panel.bots:JackHappyAgent",
    "ppo_v2": "agents.panel.networks:ppo_v2",
    "attacker": "agents.panel.evaluation:AttackerAgent",
    "rank_switcher": "agents.panel.evaluation:RankSwitcherAgent",
    "counter": "agents.panel.evaluation:CounterAgent",
    "held_out_tight": "agents.panel.evaluation:HeldOutTightAgent",
}

#: Opponent models, rollouts, leagues and teachers may use these.
MODEL_SET = (
    "heuristic", "greedy", "random", "mc", "ppo_v2",
    "greedy_eps", "high_shedder", "hoarder", "sevens", "cautious", "miser", "suit_keeper",
    "drawer", "jack_happy",
)
#: Nothing in training or modelling may use these (``eval`` sections may).
EVALUATION_SET = ("held_out", "held_out_tight", "attacker", "rank_switcher", "counter")
#: Model-set bots the batched engine cannot play (why, as their registry entry says):
#: rollouts and opponent models leave them out.
NOT_BATCHED = {"mc": SHIPPED["mc"].no_port}

#: Model-set style bots -> (style of ``agents.panel.styles``, epsilon).
STYLE_BOTS = {
    "greedy_eps": ("greedy", 0.3),
    **{name: (name, 0.0) for name in ("high_shedder", "hoarder", "sevens", "cautious",
                                      "miser", "suit_keeper", "drawer", "jack_happy")},
}


#: ``"module:Class"`` specs of the named bots -> their names (a spec may name the class).
_CLASS_NAMES = {path: name for name, path in PANEL_REGISTRY.items()} | {
    "agents.heuristic.variants:HeldOutHeuristic": "held_out"}


def panel_entries() -> dict:
    """The panel's bots as ``agents.registry`` entries (merged by ``agents``): each style
    with its numba port and exact model, ``ppo_v2`` with its network's, and every member of
    the evaluation set with none, so that nothing can model or roll it out."""
    from agents.registry import HELD_OUT, BotEntry

    ports = "agents.ports"
    entries = {}
    for name, target in PANEL_REGISTRY.items():
        if name in STYLE_BOTS:
            entries[name] = BotEntry(target, f"{ports}:style_port", f"{ports}:style_model")
        elif name == "ppo_v2":
            entries[name] = BotEntry(target, f"{ports}:ppo_v2_port", f"{ports}:ppo_v2_model")
        else:
            entries[name] = BotEntry(target)
    for name in EVALUATION_SET:
        factory = entries[name].factory if name in entries else SHIPPED[name].factory
        entries[name] = BotEntry(factory, no_port=HELD_OUT)
    return entries


def panel() -> tuple[str, ...]:
    """Every member: the model set, then the evaluation set."""
    return MODEL_SET + EVALUATION_SET


def spec_names(spec: str) -> list[str]:
    """The agent names in a spec string: ``"heuristic"``, ``"held_out?variant=x"``
    (``held_out``), an opponent-model mixture ``"heuristic:0.5,uniform:0.5"``
    (``heuristic``, ``uniform``), ``"ppo:PATH"`` (``ppo``), a panel bot's
    ``"module:Class"`` (its name)."""
    from agents.spec import base_of

    names = []
    for part in str(spec).split(","):
        base = base_of(part)
        head, sep, tail = base.rpartition(":")
        if sep:
            try:
                float(tail)
                base = head  # a mixture weight
            except ValueError:
                base = head if head == "ppo" else base
        base = base.strip()
        names.append(_CLASS_NAMES.get(base, base))
    return names


def evaluation_names(value, path: tuple = ()) -> list[tuple[tuple, str]]:
    """``(path, name)`` of every evaluation-set bot named in a config value (a parsed
    YAML file or a schema's defaults) outside the sections whose key is ``eval``: in
    strings, list items and mapping keys, read as agent specs (:func:`spec_names`). A
    config that may feed training or modelling should find none."""
    if any(str(p) == "eval" for p in path):
        return []
    found = []
    if isinstance(value, dict):
        for k, v in value.items():
            found += [(path + (k,), n) for n in spec_names(k) if n in EVALUATION_SET]
            found += evaluation_names(v, path + (k,))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            found += evaluation_names(v, path + (i,))
    elif isinstance(value, str):
        found += [(path, n) for n in spec_names(value) if n in EVALUATION_SET]
    return found


def batched_policy(name: str, num_games: int, rules=None, seed: int | None = None):
    """The batched policy of a model-set bot for ``num_games`` games of a table with
    ``rules`` (a ``pis_env.Rules``; default two players): ``policy(game) -> actions`` on
    a ``pis_env.batched.BatchedGame``, the port of its ``agents.registry`` entry. An
    evaluation-set name, or one in ``NOT_BATCHED``, is a ``ValueError``: the split is
    the panel's to keep."""
    from agents.registry import batched_port

    if name in EVALUATION_SET:
        raise ValueError(f"{name!r} is in the evaluation set: nothing may model or roll it out")
    if name in NOT_BATCHED:
        raise ValueError(f"{name!r} has no batched policy: {NOT_BATCHED[name]}")
    if name not in MODEL_SET:
        raise ValueError(f"{name!r} is not in the model set ({', '.join(MODEL_SET)})")
    return batched_port(name, num_games, rules, seed)


__all__ = ["EVALUATION_SET", "MODEL_SET", "NOT_BATCHED", "PANEL_REGISTRY", "STYLE_BOTS",
           "batched_policy", "evaluation_names", "panel", "panel_entries", "spec_names"]
