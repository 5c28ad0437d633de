"""The heuristic bot with other weights: opponents that play differently from the one the
search's belief model learned from.

Why: a belief model trained on games against the default heuristic could only decode that
one bot. ``train.belief_model.training`` holds these weightings out of its training data
and reports the model on them separately, and the search bot is measured against them
(``held_out`` in a tournament: ``--agents search,held_out`` or
``held_out?variant=heuristic_tight``).
"""

from __future__ import annotations

from agents.heuristic.bot import HeuristicAgent, Params

#: Other weightings of the heuristic (a looser drawer and a tighter one), by name. They
#: play the heuristic's game as it was when they joined the evaluation set, so the big
#: tables' play (``Params.big_table``) is off: an evaluation opponent does not change.
HELD_OUT = {
    "heuristic_loose": Params(draw_cost=6.0, jack_keep=15.0, shed=1.8, scarce=2.0,
                              void_hint=0.0, jack_draw=False, pass_cost=1.0, big_table=False),
    "heuristic_tight": Params(draw_cost=30.0, jack_keep=60.0, follow=4.0, stuck=14.0,
                              seven_attack=20.0, scarce=16.0, big_table=False),
}


class HeldOutHeuristic(HeuristicAgent):
    """The heuristic bot with the weights of ``HELD_OUT[variant]`` (``agents.make(
    "held_out", variant="heuristic_tight")``); every other argument is the heuristic's."""

    name = "held_out"

    def __init__(self, variant: str = "heuristic_loose", **kwargs):
        if variant not in HELD_OUT:
            raise ValueError(f"variant={variant!r}: one of {', '.join(HELD_OUT)}")
        for own in ("params", "big_table"):
            if own in kwargs:
                raise TypeError(f"held_out takes a variant, not {own} (use heuristic for "
                                "those)")
        super().__init__(params=HELD_OUT[variant], **kwargs)
        self.variant = variant


__all__ = ["HELD_OUT", "HeldOutHeuristic"]
