"""What a search bot is given: where its determinizations come from (a belief), who plays
its rollouts, and how it chooses among the actions it scored. ``agents.search.SearchAgent``
takes one object of each kind, as OpenSpiel's ``MCTSBot`` takes an evaluator object.

Why objects: the search's modes used to be three strings with options of their own
(4 beliefs x 4 rollout policies x 2 fallbacks), each option valid with only some modes, and
the constructor cross-checked them pair by pair. An object holds only the options of its
own kind, so most wrong combinations cannot be written, and the one left (type rollouts
need the particle filter's types) is one check.

The strings stay as a spec's shorthand: ``search?determinize=hints``,
``search?rollout_policy=network&rollout_path=PATH``, ``search?fallback=heuristic&
confidence=2`` (and the same keywords to ``agents.make("search", ...)`` or
``SearchAgent(...)``) are read by :func:`from_shorthand` into these objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

#: Where the default bot's determinizations come from: the particle filter, which beat the
#: learned belief at equal budget (docs/results.md, "The particle filter's search").
DEFAULT_DETERMINIZE = "particles"
#: The opponent types of the type search (``rollout_policy="types"``): the model set's
#: batched bots and uniform (``agents.belief.opponent_models``' ``"panel"`` preset without
#: its network types, which cost the filter and the rollouts over 3x the time budget).
TYPES_MODEL = "panel?networks=0"


# ------------------------------------------------------------------ beliefs
@dataclass(frozen=True)
class Particles:
    """Determinizations from a particle filter over the deal's hidden history
    (``agents.belief.ParticleBelief``; ``None`` keeps the filter's own default)."""

    name: ClassVar[str] = "particles"
    particles: int | None = None
    opponent_model: Any = None
    moves: int | None = None

    def filter_options(self) -> dict[str, Any]:
        return {k: v for k, v in (("particles", self.particles), ("moves", self.moves),
                                  ("opponent_model", self.opponent_model)) if v is not None}


@dataclass(frozen=True)
class LearnedBelief:
    """The learned card-location model of ``agents.belief.tracker`` (``path``: another
    model file than the shipped one)."""

    name: ClassVar[str] = "belief"
    path: str | None = None


@dataclass(frozen=True)
class HintBelief:
    """The ``drew_on_suit`` hints with ``agents.mc``'s weight."""

    name: ClassVar[str] = "hints"


@dataclass(frozen=True)
class UniformBelief:
    """Every unseen card equally likely in every opponent's hand."""

    name: ClassVar[str] = "uniform"


BELIEFS = {b.name: b for b in (LearnedBelief, HintBelief, UniformBelief, Particles)}
#: The belief names, in the order the refusals list them.
MODES = tuple(BELIEFS)


# ------------------------------------------------------------------ rollouts
@dataclass(frozen=True)
class HeuristicRollouts:
    """The heuristic plays every seat of a rollout (``horizon``: a cap in decisions,
    default none, 400 with ``reshuffle``)."""

    name: ClassVar[str] = "heuristic"
    horizon: int | None = None


@dataclass(frozen=True)
class NetworkRollouts:
    """A PPO policy file plays the rollouts (its argmax over the legal actions): every
    seat (``seats="all"``, ``rollout_policy="network"``) or the searching seat only, the
    heuristic the others (``"searcher"``, ``"mixed"``). ``path`` defaults to the shipped
    ``models/ppo_{n}p.zip``."""

    path: str | None = None
    seats: str = "all"
    horizon: int | None = None

    @property
    def name(self) -> str:
        return "network" if self.seats == "all" else "mixed"


@dataclass(frozen=True)
class TypeRollouts:
    """Each opponent plays, in each determinization, the opponent type its world was
    weighed with (the particle filter's types; ``temperature`` T draws them from the
    world's posterior raised to 1/T), the searching seat the heuristic."""

    name: ClassVar[str] = "types"
    temperature: float = 1.0
    horizon: int | None = None

    def __post_init__(self):
        if not 0.0 <= float(self.temperature) <= 1e6:
            raise ValueError(f"type_temperature={self.temperature!r}: must be in 0..1e6")


#: Who plays the moves of a rollout after the searched action (``rollout_policy``).
ROLLOUT_POLICIES = ("heuristic", "network", "mixed", "types")


# ------------------------------------------------------------------ choosing
@dataclass(frozen=True)
class BestMean:
    """Play the best mean score; only an exact tie for best (a decided match) goes to the
    heuristic's move."""

    name: ClassVar[str] = "mean"
    confidence: ClassVar[float] = 0.0


@dataclass(frozen=True)
class KeepHeuristic:
    """Play the heuristic's move unless another beats it by ``confidence`` standard errors
    of the paired difference (``agents.mc.choose_action``)."""

    name: ClassVar[str] = "heuristic"
    confidence: float = 1.0


#: What the search plays when the rollouts do not clearly prefer a move (``fallback``).
FALLBACKS = ("heuristic", "mean")

#: The shorthand keywords :func:`from_shorthand` reads, and the rest are the table's.
SHORTHAND = ("determinize", "belief_path", "particles", "opponent_model", "moves",
             "rollout_policy", "rollout_path", "type_temperature", "horizon", "fallback",
             "confidence")


def from_shorthand(options: dict[str, Any]) -> tuple[Any, Any, Any, dict[str, Any]]:
    """``(belief, rollout, choice, rest)`` from a search's keyword options: the
    :data:`SHORTHAND` keywords become the three objects, everything else is returned as it
    is (the table's variant options). A keyword that its mode does not read is a
    ``ValueError`` that says which mode reads it."""
    options = dict(options)
    o = {k: options.pop(k) for k in SHORTHAND if k in options}
    determinize = o.get("determinize", DEFAULT_DETERMINIZE)
    if determinize not in MODES:
        raise ValueError(f"determinize={determinize!r}: one of {', '.join(MODES)}")
    policy = o.get("rollout_policy", "heuristic")
    if policy not in ROLLOUT_POLICIES:
        raise ValueError(f"rollout_policy={policy!r}: one of {', '.join(ROLLOUT_POLICIES)}")
    if o.get("belief_path") is not None and determinize != "belief":
        raise ValueError("belief_path is the learned belief of determinize='belief'; "
                         f"determinize={determinize!r} does not read it")
    fallback = o.get("fallback", "mean")
    if fallback not in FALLBACKS:
        raise ValueError(f"fallback={fallback!r}: one of {', '.join(FALLBACKS)}")
    # rollout_policy='types' without the particle filter is refused by SearchAgent (for
    # objects and shorthand alike), a temperature out of range by TypeRollouts.
    temperature = o.get("type_temperature", 1.0)
    if temperature != 1.0 and policy != "types":
        raise ValueError("type_temperature sharpens the types the rollouts of "
                         "rollout_policy='types' play; other rollouts draw no type")
    if o.get("rollout_path") is not None and policy in ("heuristic", "types"):
        raise ValueError("rollout_path is the network of rollout_policy='network' or "
                         "'mixed'; the heuristic rollouts take no policy file")
    filter_keys = [k for k in ("particles", "moves", "opponent_model")
                   if o.get(k) is not None]
    if determinize == "particles":
        model = o.get("opponent_model")
        if model is None and policy == "types":
            model = TYPES_MODEL
        belief: Any = Particles(o.get("particles"), model, o.get("moves"))
    elif filter_keys:
        raise ValueError(f"{', '.join(filter_keys)}: options of determinize='particles'")
    elif determinize == "belief":
        belief = LearnedBelief(o.get("belief_path"))
    else:
        belief = BELIEFS[determinize]()
    horizon = o.get("horizon")
    rollout: Any
    if policy == "heuristic":
        rollout = HeuristicRollouts(horizon)
    elif policy == "types":
        rollout = TypeRollouts(float(temperature), horizon)
    else:
        rollout = NetworkRollouts(o.get("rollout_path"),
                                  "all" if policy == "network" else "searcher", horizon)
    choice: Any = (BestMean() if fallback == "mean"
                   else KeepHeuristic(float(o.get("confidence", 1.0))))
    return belief, rollout, choice, options


__all__ = ["BELIEFS", "DEFAULT_DETERMINIZE", "FALLBACKS", "MODES", "ROLLOUT_POLICIES",
           "SHORTHAND", "TYPES_MODEL", "BestMean", "HeuristicRollouts", "HintBelief",
           "KeepHeuristic", "LearnedBelief", "NetworkRollouts", "Particles", "TypeRollouts",
           "UniformBelief", "from_shorthand"]
