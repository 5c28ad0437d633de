"""Break the code each rewritten test guards, once, and check that the test then fails.

A test that stays green when the code it guards is wrong proves nothing. Every entry of
``MUTANTS`` below is one deliberate mistake (a pretraining that learns nothing, a mask with
one illegal action added, a wrong Wilson bound, ...) and the pytest node id of the test that
must catch it. The script copies the working tree once into a temporary directory, applies
each mutation there in turn, runs the named test against it, and restores the file before
the next one; the working tree itself is never written, so an interrupted run (Ctrl-C) or
several engineers running it at once leave nothing behind.

    python scripts/mutants.py              # every mutant; exit 1 unless all are killed
    python scripts/mutants.py --list       # the mutants, their files and tests
    python scripts/mutants.py --only NAME  # one mutant (repeat --only for several)
    python scripts/mutants.py --check      # only check that every entry still applies

A mutant is KILLED when its test fails (pytest exit status 1) or runs past ``--timeout``;
an entry naming several tests is killed only when each of them fails on its own.
It SURVIVES when the test passes or is skipped (a skip that hides a regression is exactly
what this catches). Anything else (no test collected, a collection error, an entry whose
old text is not found exactly once) is an ERROR in the entry. Before the mutants run, the
named tests run once on the unmutated copy: a test that already fails kills nothing.

Adding a mutant: append a ``Mutant(...)`` to ``MUTANTS`` with a short unique ``name``, the
``file`` to change (relative to the repository root), an ``old`` text that occurs exactly
once in it, the ``new`` text, the ``test`` node id(s) that must fail, and ``why`` in one
line. ``tests/test_mutants.py`` checks in CI that every entry still applies.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutant:
    """One deliberate mistake in one file and the test(s) that must catch it."""

    name: str
    file: str
    old: str
    new: str
    test: str | tuple[str, ...]
    why: str

    @property
    def tests(self) -> tuple[str, ...]:
        return (self.test,) if isinstance(self.test, str) else tuple(self.test)


MUTANTS: list[Mutant] = [
    # ---- tests that can fail (issue 21, test side) ----
    Mutant(
        name="ci-skip-allowed",
        file="tests/ci_skips.py",
        old='    elif ci_enabled():\n        _as_failure(report, "this test")',
        new='    elif False:\n        _as_failure(report, "this test")',
        test="tests/test_ci_skips.py::test_under_ci_every_skip_but_a_platform_skip_fails",
        why="under CI a skipped test stays a skip",
    ),
    Mutant(
        name="ci-module-skip-allowed",
        file="tests/ci_skips.py",
        old="    if report.skipped and ci_enabled():",
        new="    if False:",
        test="tests/test_ci_skips.py::test_under_ci_a_module_skipped_at_collection_fails",
        why="under CI a module skipped at collection (importorskip) stays a skip",
    ),
    Mutant(
        name="ci-platform-skip-fails",
        file="tests/ci_skips.py",
        old="            item.stash[_PLATFORM_SKIPPED] = True\n",
        new="",
        test="tests/test_ci_skips.py::test_under_ci_every_skip_but_a_platform_skip_fails",
        why="a declared platform skip fails under CI like any other skip",
    ),
    Mutant(
        name="pretrain-learns-nothing",
        file="train/common/pretrain.py",
        old="            loss = ce + value_coef * v_loss\n",
        new="            loss = 0 * ce + value_coef * v_loss\n",
        test=("tests/train/sb3/test_train.py::test_pretrain_then_ppo",
              "tests/train/sb3/test_train_pretrain.py::"
              "test_pretraining_steps_the_runs_own_batched_env"),
        why="pretraining fits the value head only: the policy learns nothing of the teacher",
    ),
    Mutant(
        name="kernel-reshuffle-keeps-pile",
        file="pis_env/batched/kernels.py",
        old="    st[b, PILE] = np.int64(1) << top\n",
        new="    st[b, PILE] = st[b, PILE] | (np.int64(1) << top)\n",
        test="tests/pis_env/batched/test_differential.py::"
             "test_differential[num_players=6-empty_stock=reshuffle-max_turns=300]",
        why="the numba kernels' reshuffle leaves the reshuffled cards in the pile",
    ),
    Mutant(
        name="checkpoint-wrong-layout-version",
        file="train/common/checkpoint.py",
        old='"layout_version": meta["layout_version"],',
        new='"layout_version": meta["layout_version"] + 1,',
        test="tests/train/sb3/test_train.py::test_smoke_run_writes_everything",
        why="checkpoints record an observation layout version other than the env's",
    ),
    Mutant(
        name="long-config-wrong-table",
        file="configs/ppo_4p_long.yaml",
        old="extends: ppo_4p.yaml\n",
        new="extends: ppo_2p.yaml\n",
        test="tests/train/sb3/test_train.py::test_shipped_configs_resolve[ppo_4p_long.yaml]",
        why="the 4-player long recipe builds a 2-player run",
    ),
    Mutant(
        name="ei-config-wrong-table",
        file="configs/expert_iteration_2p.yaml",
        old="ppo_config: configs/ppo_2p.yaml\n",
        new="ppo_config: configs/ppo_4p.yaml\n",
        test="tests/train/sb3/test_train.py::"
             "test_expert_iteration_configs_that_made_the_shipped_bots_resolve[2]",
        why="the 2-player expert iteration trains each iteration at a 4-player table",
    ),
    Mutant(
        name="ei-config-missing-init-policy",
        file="configs/expert_iteration_4p.yaml",
        old="init_policy: models/ppo_4p_v2.zip\n",
        new="init_policy: models/ppo_4p_v9.zip\n",
        test="tests/train/sb3/test_train.py::"
             "test_expert_iteration_configs_that_made_the_shipped_bots_resolve[4]",
        why="the 4-player expert iteration starts from a bot that is not shipped",
    ),
    Mutant(
        name="progress-line-every-update",
        file="agents/tournament/progress.py",
        old="        if now - self._last >= self.every and self.done < self.total:",
        new="        if self.done < self.total:",
        test=("tests/agents/tournament/test_runner.py::"
              "test_line_progress_prints_every_interval_and_at_the_end",
              "tests/agents/tournament/test_runner.py::test_progress_in_a_log_is_a_line_now_and_then"),
        why="a log gets a progress line at every chunk, not every 30 s",
    ),
    Mutant(
        name="progress-interval-from-the-start",
        file="agents/tournament/progress.py",
        old="            self._last = now\n",
        new="",
        test="tests/agents/tournament/test_runner.py::"
             "test_line_progress_prints_every_interval_and_at_the_end",
        why="the interval is counted from the start, not from the last line",
    ),
    Mutant(
        name="agent-seed-ignored",
        file="agents/base.py",
        old="        self.seed = seed\n        self.rng = np.random.default_rng(seed)\n",
        new="        self.seed = seed\n        self.rng = np.random.default_rng(0)\n",
        test="tests/agents/test_agents_bots.py::test_mc_seed_changes_its_samples_not_its_legality",
        why="a bot's seed does not seed its generator: every seed samples alike",
    ),
    Mutant(
        name="heuristic-plays-lowest-action",
        file="agents/heuristic/bot.py",
        old="        if legal & (legal - 1) == 0:\n            return legal.bit_length() - 1\n",
        new="        if legal:\n            return (legal & -legal).bit_length() - 1\n",
        test="tests/agents/test_agents_bots.py::test_heuristic_beats_greedy_on_duplicate_deals",
        why="the heuristic plays its lowest legal action id, no strategy",
    ),
    Mutant(
        name="weights-saved-without-digest",
        file="agents/common/weights_file.py",
        old="    data = dict(payload, **{DIGEST_KEY: payload_digest(payload)})\n",
        new="    data = dict(payload)\n",
        test="tests/train/sb3/test_train_hardening.py::"
             "test_damaged_policy_pt_is_refused_naming_the_file",
        why="exports carry no digest: an intact policy.pt loads with a warning",
    ),
    Mutant(
        name="digest-ignores-tensor-bytes",
        file="agents/common/weights_file.py",
        old="        h.update(np.ascontiguousarray(array).tobytes())\n",
        new="        pass\n",
        test="tests/train/sb3/test_train_hardening.py::test_shipped_models_carry_a_digest[belief_4p.pt]",
        why="the digest leaves out the tensors' bytes (a flipped weight goes unnoticed)",
    ),
    Mutant(
        name="recording-rewrites-records",
        file="scripts/record_shipped_moves.py",
        old="        if key in arrays:\n            continue\n",
        new="",
        test="tests/agents/test_shipped_models.py::"
             "test_recording_adds_a_missing_record_and_keeps_the_others",
        why="the recording tool records every model again, old records included",
    ),
    Mutant(
        name="cards-bytes-read-as-a-name",
        file="pis_env/cards.py",
        old="    if not isinstance(card, str):\n",
        new="    if not isinstance(card, (str, bytes)):\n",
        test="tests/pis_env/test_cards.py::test_parse_bad_raises_value_error",
        why="bytes are read as a card name (a misleading 'not a card name' error)",
    ),
    # ---- one way to do each thing (issue 21, code side) ----
    Mutant(
        name="missing-weights-said-corrupt",
        file="agents/common/weights_file.py",
        old="    except FileNotFoundError as e:\n        raise WeightsFileNotFoundError",
        new="    except OSError as e:\n        raise WeightsFileError",
        test=("tests/agents/common/test_weights_file.py::"
              "test_a_missing_file_is_not_found_naming_the_path"),
        why="a missing weights file is no FileNotFoundError (the wheel said corrupt)",
    ),
    Mutant(
        name="compare-b-minus-a",
        file="agents/tournament/compare.py",
        old="mean_ci([a[k] - b[k] for k in keys])",
        new="mean_ci([b[k] - a[k] for k in keys])",
        test=("tests/agents/tournament/test_compare.py::"
              "test_compare_prints_the_paired_difference"),
        why="the paired comparison reports B - A",
    ),
    Mutant(
        name="held-out-is-the-heuristic",
        file="agents/heuristic/variants.py",
        old="        super().__init__(params=HELD_OUT[variant], **kwargs)",
        new="        super().__init__(**kwargs)",
        test=("tests/agents/heuristic/test_variants.py::"
              "test_each_variant_plays_differently_from_the_heuristic"),
        why="the held-out bot plays with the default weights",
    ),
    Mutant(
        name="config-no-nearest-key",
        file="train/common/schema.py",
        old="        return _hint(close)\n",
        new="        return \"\"\n",
        test=("tests/train/sb3/test_train_config.py::"
              "test_every_entry_point_has_one_config_system"),
        why="an unknown key's error names no nearest key",
    ),
    Mutant(
        name="export-error-own-format",
        file="train/common/export.py",
        old="        return error_exit(parser.prog, str(e))\n",
        new="        print(f\"error: {e}\", file=sys.stderr)\n        return 2\n",
        test=("tests/test_cli_errors.py::test_a_bad_argument_is_one_line_in_argparse_format_"
              "and_exit_2[train.common.export:nowhere.zip]"),
        why="an entry point prints its own error format (error: ...) instead of argparse's",
    ),
    # ---- the gymnasium VectorEnv over the batched engine (issue 20) ----
    Mutant(
        name="vector-env-no-terminal-obs",
        file="train/vector/gym_vector_env.py",
        old="            obs[ended] = out.ended.terminal_obs\n",
        new="",
        test="tests/train/vector/test_gym_vector_env.py::test_plays_the_same_games_as_the_single_agent_view",
        why="next-step auto-reset shows the new match instead of the final position",
    ),
    Mutant(
        name="vector-env-reset-step-plays",
        file="train/vector/gym_vector_env.py",
        old="hold=held if held.any() else None)",
        new="hold=None)",
        test="tests/train/vector/test_gym_vector_env.py::test_plays_the_same_games_as_the_single_agent_view",
        why="the action of a next-step reset is played in the new match",
    ),
    Mutant(
        name="vector-env-terminal-mask-kept",
        file="train/vector/gym_vector_env.py",
        old="            self._masks[ended] = False\n",
        new="",
        test="tests/train/vector/test_gym_vector_env.py::test_plays_the_same_games_as_the_single_agent_view",
        why="a game showing its final position still offers legal actions",
    ),
    Mutant(
        name="vector-env-truncation-terminates",
        file="train/vector/gym_vector_env.py",
        old="        terminated = out.dones & ~out.truncated",
        new="        terminated = out.dones",
        test="tests/train/vector/test_gym_vector_env.py::test_plays_the_same_games_as_the_single_agent_view",
        why="a max_turns truncation is reported as a termination (no bootstrapping)",
    ),
    Mutant(
        name="vector-env-reset-ignores-seed",
        file="train/vector/gym_vector_env.py",
        old="obs = self.core.reset(seed, decks=",
        new="obs = self.core.reset(None, decks=",
        test="tests/train/vector/test_gym_vector_env.py::test_reset_seed_makes_runs_reproducible",
        why="reset(seed=) does not restart the games' streams",
    ),
    Mutant(
        name="vector-env-illegal-action-rows",
        file="train/vector/gym_vector_env.py",
        old='put("illegal_action", idx[f], ended.illegal_action[f], 0, np.int64)',
        new='put("illegal_action", idx, ended.illegal_action, 0, np.int64)',
        test="tests/train/vector/test_gym_vector_env.py::test_an_illegal_action_forfeits_and_is_reported",
        why="illegal_action is reported for matches the learner did not forfeit",
    ),
    Mutant(
        name="vector-env-no-autoreset-flag",
        file="train/vector/gym_vector_env.py",
        old="        self._autoreset = out.dones\n",
        new="        self._autoreset = out.dones & False\n",
        test=("tests/train/vector/test_gym_vector_env.py::test_gymnasium_vector_wrappers_run_on_it",
              "tests/train/vector/test_gym_vector_env.py::test_plays_the_same_games_as_the_single_agent_view"),
        why="the step after a match's end plays on instead of starting the new match",
    ),
    Mutant(
        name="vector-entry-agents-batched",
        file="train/vector/entry.py",
        old='    if hasattr(opponent, "act"):\n        return True\n',
        new="",
        test="tests/train/vector/test_gym_vector_env.py::test_python_bots_keep_working_through_make_vec",
        why="make_vec hands Python agents to the batched engine (they break it)",
    ),
    Mutant(
        name="vector-entry-no-fallback-without-numba",
        file="train/vector/entry.py",
        old='        if kwargs.get("opponents") is None and not set(kwargs) & set(BATCHED_ONLY):',
        new="        if False:",
        test="tests/train/vector/test_gym_vector_env.py::test_without_the_batched_engine_the_error_says_what_to_do",
        why="without numba, make_vec of the plain single-agent view fails",
    ),
    Mutant(
        name="vector-entry-v1-layout-0",
        file="train/vector/entry.py",
        old="    return PisYediliVectorEnv(num_envs, layout_version=layout_version, **kwargs)",
        new="    return PisYediliVectorEnv(num_envs, layout_version=0, **kwargs)",
        test=("tests/train/vector/test_gym_vector_env.py::"
              "test_make_vec_of_v1_returns_it_with_the_v1_observation_space"),
        why="make_vec of PisYedili-Events-v0 steps the engine at the v0 layout",
    ),
    Mutant(
        name="learner-loop-v1-deal-unrecorded",
        file="pis_env/batched/stepping.py",
        old=("% n)\n                        if pub is not None:\n"
             "                            P.new_deal("),
        new=("% n)\n                        if pub is not None and n < 0:\n"
             "                            P.new_deal("),
        test=("tests/train/vector/test_gym_vector_env.py::"
              "test_v1_plays_the_same_games_as_the_v1_single_agent_view"),
        why="BatchedEnv's one loop does not start the v1 record of a match's next deal",
    ),
    Mutant(
        name="learner-loop-v1-terminal-without-record",
        file="pis_env/batched/stepping.py",
        old="P.write_public(pub, st, cfg, b, seat, term_obs[b],\n",
        new="P.write_public(pub, st, cfg, b, seat, obs[b],\n",
        test=("tests/train/vector/test_gym_vector_env.py::"
              "test_v1_plays_the_same_games_as_the_v1_single_agent_view"),
        why="the learner's final v1 observation lacks its public record",
    ),
    Mutant(
        name="sb3-adapter-layout-ignored",
        file="train/vector/sb3_vec_env.py",
        old="            learner=learner, seed=seed, bot_factory=bot_factory, **options)",
        new=("            learner=learner, seed=seed, bot_factory=bot_factory,\n"
             "            **{k: v for k, v in options.items() if k != \"layout_version\"})"),
        test=("tests/train/vector/test_sb3_vec_env.py::"
              "test_rewards_and_observations_match_the_reference_env"),
        why="BatchedVecEnv(layout_version=1) trains on the v0 observation",
    ),
    Mutant(
        name="league-vec-env-version-ignored",
        file="train/vector/sb3_vec_env.py",
        old="                      layout_version=int(cfg.env_version))",
        new="                      layout_version=0)",
        test="tests/train/vector/test_sb3_vec_env.py::test_make_league_vec_env_with_the_real_league",
        why="train/sb3/run.py's batched VecEnv ignores env_version",
    ),
    Mutant(
        name="batched-mixed-table-one-layout",
        file="pis_env/batched/env.py",
        old="layout_version=layout_of(policy, self.layout_version))",
        new="layout_version=None)",
        test=("tests/train/vector/test_sb3_vec_env.py::"
              "test_v0_and_v1_networks_at_one_table_each_see_their_own_layout"),
        why="the batched engine shows every network the learner's layout, not its own",
    ),
    Mutant(
        name="batched-mixed-table-no-record",
        file="train/vector/learner_batch.py",
        old="public_record=any(layout_of(o, layout_version)",
        new="public_record=any(0 and layout_of(o, layout_version)",
        test=("tests/train/vector/test_sb3_vec_env.py::"
              "test_v0_and_v1_networks_at_one_table_each_see_their_own_layout"),
        why="a v0 learner's table keeps no public record for its v1 network opponents",
    ),
    Mutant(
        name="agent-policy-layout-dropped",
        file="train/vector/learner_batch.py",
        old='        self.layout_version = getattr(agent, "layout_version", None)',
        new="        self.layout_version = None",
        test=("tests/train/vector/test_sb3_vec_env.py::"
              "test_a_v1_agent_row_by_row_at_a_v0_table_is_shown_v1"),
        why="a v1 agent played row by row is shown the v0 learner's layout",
    ),
    Mutant(
        name="vector-ppo-mask-ignored",
        file="train/vector/gym_vector_env.py",
        old="        return self._masks.copy()",
        new="        return np.ones_like(self._masks)",
        test="tests/train/vector/test_gym_vector_env.py::test_a_cleanrl_style_masked_ppo_loop_runs_and_plays_legally",
        why="the masks a PPO loop reads allow illegal actions",
    ),
    Mutant(
        name="render-shows-hidden-hands",
        file="pis_env/render.py",
        old="        cards = cards_of(game.hands[player]) if reveal else [None] * size\n",
        new="        cards = cards_of(game.hands[player])\n",
        test="tests/pis_env/test_render.py::test_frames_do_not_depend_on_hidden_cards",
        why="a seat's frame shows the other hands face up",
    ),
    Mutant(
        name="render-drops-drew-on",
        file="pis_env/render.py",
        old="        painter.suit_row((box[0] + 10, 60), game.drew_on[player])\n",
        new="",
        test="tests/pis_env/test_render.py::"
             "test_every_public_part_of_the_table_shows_in_the_frame",
        why="the frame leaves out the suits an opponent drew on",
    ),
    Mutant(
        name="shipped-before-working-directory",
        file="pis_env/shipped.py",
        old="    if given.exists() or given.is_absolute():\n",
        new="    if given.is_absolute():\n",
        test="tests/test_wheel.py::"
             "test_a_file_in_the_working_directory_wins_and_unknown_names_stay_as_given",
        why="a shipped file shadows the user's file of the same relative path",
    ),
    Mutant(
        name="env-typed-as-plain-aecenv",
        file="pis_env/aec.py",
        old="        **options: Unpack[RulesOptions]) -> OrderEnforcingWrapper:\n",
        new="        **options: Unpack[RulesOptions]) -> AECEnv:\n",
        test="tests/test_types.py::test_mypy_passes_and_typed_user_code_checks",
        why="env() is annotated as a plain AECEnv: env.unwrapped.game is an error in user code",
    ),
    Mutant(
        name="pis-env-type-error",
        file="pis_env/shipped.py",
        old="    return shipped if shipped is not None else given\n",
        new="    return str(shipped) if shipped is not None else given\n",
        test="tests/test_types.py::test_mypy_passes_and_typed_user_code_checks",
        why="resolve returns a str where it promises a Path",
    ),
    # ---- RLlib on the vector env (issue 20); these run in .venv-rllib:
    # make mutants-rllib ARGS="--only NAME" ----
    Mutant(
        name="rllib-resume-any-env",
        file="train/rllib/ppo.py",
        old="        if saved != getattr(cfg, key):",
        new="        if False:",
        test="tests_rllib/test_rllib_vector.py::test_an_aec_checkpoint_from_before_the_vector_env_is_refused",
        why="an aec run's checkpoint is restored into the vector env's modules (a traceback)",
    ),
    Mutant(
        name="rllib-fragment-auto",
        file="train/rllib/ppo.py",
        old="rollout_fragment_length=rollout_fragment_length(cfg),",
        new='rollout_fragment_length="auto",',
        test="tests_rllib/test_rllib_vector.py::test_config_sets_the_fragment_and_passes_the_learners",
        why="the rollout fragment is not the one the config checked",
    ),
    Mutant(
        name="rllib-learners-dropped",
        file="train/rllib/ppo.py",
        old="            .learners(num_learners=learners.num_learners,",
        new="            .learners(num_learners=0,",
        test="tests_rllib/test_rllib_vector.py::test_config_sets_the_fragment_and_passes_the_learners",
        why="learners.num_learners does not reach RLlib",
    ),
    Mutant(
        name="rllib-vector-env-unused",
        file="train/rllib/ppo.py",
        old='    if cfg.env == "vector":\n        return _vector_config(cfg)',
        new='    if False:\n        return _vector_config(cfg)',
        test="tests_rllib/test_rllib_cluster.py::test_env_runners_on_both_nodes_train_and_export",
        why="env=vector still samples the AEC env",
    ),
    Mutant(
        name="rllib-dict-mask-all-legal",
        file="train/vector/gym_vector_env.py",
        old="            return {OBS_KEY: flat, MASK_KEY: self._masks.astype(np.float32)}",
        new="            return {OBS_KEY: flat, MASK_KEY: np.ones_like(self._masks, np.float32)}",
        test="tests_rllib/test_rllib_cluster.py::test_env_runners_on_both_nodes_train_and_export",
        why="the dict observation's mask (what RLlib's masking module reads) allows all",
    ),
    Mutant(
        name="rllib-snapshots-not-played",
        file="train/rllib/env.py",
        old="    env.set_opponent_mix(mix)\n    return ids",
        new='    env.set_opponent_mix(dict(payload["bots"]))\n    return ids',
        test="tests_rllib/test_rllib_cluster.py::test_env_runners_on_both_nodes_train_and_export",
        why="env runners receive the snapshots but keep playing the bots only",
    ),
    Mutant(
        name="rllib-pool-never-refreshed",
        file="train/rllib/ppo.py",
        old='state["iterations"] % cfg.snapshots.every == 0:',
        new='state["iterations"] % cfg.snapshots.every == -1:',
        test="tests_rllib/test_rllib_vector.py::test_runs_warm_start_resume_export_and_play",
        why="the snapshot pool keeps the first snapshot for the whole run",
    ),
    Mutant(
        name="rllib-runner-resources-dropped",
        file="train/rllib/ppo.py",
        old="custom_resources_per_env_runner=dict(runners.custom_resources))",
        new="custom_resources_per_env_runner={})",
        test="tests_rllib/test_rllib_cluster.py::test_env_runners_on_both_nodes_train_and_export",
        why="env_runners.custom_resources does not reach RLlib: both runners on one node",
    ),
    Mutant(
        name="rllib-pretrain-needs-sb3",
        file="train/rllib/pretrain.py",
        old="            import numba  # noqa: F401\n",
        new=("            import numba  # noqa: F401\n"
             "            import stable_baselines3  # noqa: F401\n"),
        test="tests_rllib/test_rllib_vector.py::test_runs_warm_start_resume_export_and_play",
        why="without stable-baselines3 the warm start falls back to the slow AEC collector",
    ),
    Mutant(
        name="rllib-pretrain-learns-nothing",
        file="train/rllib/pretrain.py",
        old="    stats = fit_module(module, data, int(p.epochs),",
        new="    stats = fit_module(module, data, 0 * int(p.epochs),",
        test="tests_rllib/test_rllib_vector.py::test_runs_warm_start_resume_export_and_play",
        why="the RLlib warm start collects the teacher's moves and fits nothing",
    ),
    Mutant(
        name="rllib-extra-without-omegaconf",
        file="pyproject.toml",
        old=('    "omegaconf>=2.4",  # train.sb3.config, the config machinery of every training '
             'entry point\n'),
        new="",
        test="tests_rllib/test_rllib_vector.py::test_the_rllib_extra_installs_what_the_run_imports",
        why="pip install pis-yedili[rllib] alone cannot read a config (no omegaconf)",
    ),
    Mutant(
        name="rllib-extra-without-numba",
        file="pyproject.toml",
        old='    "pis-yedili[agents,fast]",  # fast: numba, the batched vector env RLlib samples',
        new='    "pis-yedili[agents]",  # fast: numba, the batched vector env RLlib samples',
        test="tests_rllib/test_rllib_vector.py::test_the_rllib_extra_installs_what_the_run_imports",
        why="pip install pis-yedili[rllib] alone cannot step the batched vector env (no numba)",
    ),
    Mutant(
        name="rllib-v1-vector-env-v0",
        file="train/rllib/env.py",
        old='layout_version=int(config.pop("env_version", 0)))',
        new='layout_version=0 * int(config.pop("env_version", 0)))',
        test="tests_rllib/test_rllib_v1.py::test_a_v1_run_samples_v1_and_exports_a_layout_1_policy",
        why="env_version=1 samples the vector env at the v0 observation",
    ),
    Mutant(
        name="rllib-v1-warm-start-v0",
        file="train/rllib/pretrain.py",
        old="seed=seed, layout_version=cfg.env_version)",
        new="seed=seed)",
        test="tests_rllib/test_rllib_v1.py::test_a_v1_run_samples_v1_and_exports_a_layout_1_policy",
        why="the v1 warm start collects the teacher's moves at the v0 table",
    ),
    Mutant(
        name="rllib-v1-policy-records-layout-0",
        file="train/rllib/export.py",
        old="        layout_version=layout_version,\n    )",
        new="        layout_version=0,\n    )",
        test="tests_rllib/test_rllib_v1.py::test_a_v1_run_samples_v1_and_exports_a_layout_1_policy",
        why="a v1 run's exported policy and snapshots record layout 0",
    ),
    Mutant(
        name="rllib-v1-module-v0-spaces",
        file="train/rllib/ppo.py",
        old="    probe = make_aec_env(cfg.rules, cfg.env_version)",
        new="    probe = make_aec_env(cfg.rules)",
        test="tests_rllib/test_rllib_v1.py::test_the_aec_path_and_the_module_read_the_v1_observation",
        why="the learner module is built for the v0 observation at a v1 table",
    ),
    Mutant(
        name="rllib-v1-aec-env-v0",
        file="train/rllib/env.py",
        old='                                      int(env_config.get("env_version", 0))))',
        new="                                      0))",
        test="tests_rllib/test_rllib_v1.py::test_the_aec_path_and_the_module_read_the_v1_observation",
        why="env=aec env_version=1 steps the v0 AEC env",
    ),
    Mutant(
        name="rllib-v1-resume-any-layout",
        file="train/rllib/ppo.py",
        old='    for key, default in (("env", "aec"), ("env_version", 0)):',
        new='    for key, default in (("env", "aec"),):',
        test="tests_rllib/test_rllib_v1.py::test_a_checkpoint_of_the_other_layout_is_refused",
        why="a v0 checkpoint resumes into a v1 run (a shape error inside RLlib)",
    ),
    Mutant(
        name="rllib-resume-other-network",
        file="train/rllib/ppo.py",
        old='        for key in ("rules", "model"):',
        new="        for key in ():",
        test="tests_rllib/test_rllib_vector.py::test_resuming_with_another_table_or_network_is_refused",
        why="--resume model.fcnet_hiddens=[64] reaches RLlib's restore (a traceback)",
    ),
    Mutant(
        name="rule-based-bots-refuse-v1",
        file="agents/base.py",
        old="    reads_later_layouts = True\n",
        new="    reads_later_layouts = False\n",
        test="tests/pis_env/test_observation_v1.py::test_every_rule_based_bot_plays_at_a_v1_table_as_at_a_v0_one",
        why="the rule-based bots refuse a v1 table although they read only its v0 segments",
    ),
    Mutant(
        name="tournament-one-layout-for-all-seats",
        file="agents/tournament/worker.py",
        old="    if version == env.layout_version:\n        return observation",
        new="    if True:\n        return observation",
        test="tests/pis_env/test_observation_v1.py::test_a_mixed_table_shows_each_seat_the_layout_of_its_bot",
        why="a mixed table shows every seat the table's layout, not its bot's",
    ),
    Mutant(
        name="batched-v1-opening-refuses-diamonds",
        file="pis_env/batched/public.py",
        old="        return np.int64(1) << SUM_SUITS  # clubs",
        new="        return np.int64(2) << SUM_SUITS  # clubs",
        test="tests/pis_env/test_observation_v1.py::test_the_batched_engine_writes_v1_byte_for_byte",
        why="the batched v1 summary records an opening draw as refusing diamonds",
    ),
    Mutant(
        name="batched-v1-run-of-draws-not-counted",
        file="pis_env/batched/public.py",
        old="        rec[b, last] += count << E_COUNT  # the seat's run of draws goes on",
        new="        rec[b, last] += 0 << E_COUNT  # the seat's run of draws goes on",
        test="tests/pis_env/test_observation_v1.py::test_the_batched_engine_writes_v1_byte_for_byte",
        why="the batched v1 log counts only the first card of a seat's run of draws",
    ),
    Mutant(
        name="batched-v1-terminal-without-record",
        file="pis_env/batched/stepping.py",
        old="P.write_public(pub, st, cfg, b, seat, term_obs[b], size_tab)",
        new="P.write_public(pub, st, cfg, b, (seat + 1) % cfg[K.C_N], term_obs[b], size_tab)",
        test="tests/pis_env/test_observation_v1.py::test_the_batched_v1_record_follows_auto_resets_and_terminal_observations",
        why="an auto-reset match's terminal v1 row has another seat's public record",
    ),
    # ---- training on pis_yedili_v1 (issue 19 part 3) ----
    Mutant(
        name="v1-league-opponent-shown-the-table",
        file="train/common/league.py",
        old="            if needs_own_layout(bot, self.env_version):\n",
        new="            if False:\n",
        test="tests/train/sb3/test_ppo_v1.py::"
             "test_the_learner_sees_v1_and_a_v0_network_opponent_sees_v0",
        why="a v0 network opponent at the v1 learner's table is shown the v1 observation",
    ),
    Mutant(
        name="v1-league-env-v0-table",
        file="train/common/league.py",
        old="        self.inner = learner_env_class(self.env_version)(\n",
        new="        self.inner = learner_env_class(0)(\n",
        test="tests/train/sb3/test_ppo_v1.py::"
             "test_the_learner_sees_v1_and_a_v0_network_opponent_sees_v0",
        why="LeagueEnv ignores env_version: the learner plays the v0 table",
    ),
    Mutant(
        name="v1-policy-metadata-layout-0",
        file="train/common/checkpoint.py",
        old="    return int(cfg.env_version)",
        new="    return 0",
        test="tests/train/sb3/test_ppo_v1.py::test_a_v1_run_records_layout_1_everywhere",
        why="a v1 run's policy and checkpoints record layout 0",
    ),
    Mutant(
        name="v1-checkpoint-layout-unchecked",
        file="train/common/checkpoint.py",
        old="    if saved != layout_version or state.get(\"layout_size\") != size:",
        new="    if state.get(\"layout_size\") is None:",
        test="tests/train/sb3/test_ppo_v1.py::"
             "test_resuming_a_v0_checkpoint_into_a_v1_run_is_a_clear_error",
        why="a v0 checkpoint resumes into a v1 run (a shape error later, or worse)",
    ),
    Mutant(
        name="v1-resume-may-change-env-version",
        file="train/sb3/run.py",
        old="(\"rules\", \"num_players\", \"env_version\", \"policy\", \"n_envs\")",
        new="(\"rules\", \"num_players\", \"policy\", \"n_envs\")",
        test="tests/train/sb3/test_ppo_v1.py::"
             "test_resuming_a_v0_checkpoint_into_a_v1_run_is_a_clear_error",
        why="--resume env_version=1 rewrites a v0 run's config",
    ),
    Mutant(
        name="v1-init-policy-any-layout",
        file="train/common/checkpoint.py",
        old="                     source=str(path), layout_version=have if own else version)",
        new="                     source=str(path), layout_version=None)",
        test="tests/train/sb3/test_ppo_v1.py::"
             "test_a_v0_initial_policy_or_data_in_a_v1_run_is_refused_up_front",
        why="a v0 init_policy is read into a v1 run without naming the layouts",
    ),
    Mutant(
        name="v1-pretrain-teacher-shown-v1",
        file="train/common/pretrain.py",
        old="    version = getattr(teacher, \"layout_version\", 0)\n",
        new="    version = None\n",
        test="tests/train/sb3/test_ppo_v1.py::test_a_v1_run_records_layout_1_everywhere",
        why="the numba heuristic teacher is handed v1 rows it cannot read",
    ),
    Mutant(
        name="v1-ei-labels-at-v0-table",
        file="train/expert/iteration.py",
        old="    env = table_env_class(job.env_version)(**rules)\n",
        new="    env = table_env_class(0)(**rules)\n",
        test="tests/train/expert/test_iteration.py::"
             "test_v1_labels_are_v1_positions_next_to_a_v0_network",
        why="expert iteration labels v0 positions for a v1 network",
    ),
    Mutant(
        name="v1-ei-opponent-shown-the-table",
        file="train/expert/iteration.py",
        old="                env.step(seats[s].act(seat_observation(env, s, version, encoders)))\n",
        new="                env.step(seats[s].act(env.observe(names[s])))\n",
        test="tests/train/expert/test_iteration.py::"
             "test_v1_labels_are_v1_positions_next_to_a_v0_network",
        why="a v0 network opponent of a labelled v1 game is shown the v1 observation",
    ),
    Mutant(
        name="v1-ei-train-stage-env-version-dropped",
        file="train/expert/iteration.py",
        old="    overrides[\"env_version\"] = cfg.env_version\n",
        new="",
        test="tests/train/expert/test_iteration.py::"
             "test_env_version_is_the_runs_own_key_and_reaches_every_train_stage",
        why="the train stages of a v1 expert iteration train v0 networks",
    ),
    Mutant(
        name="v1-torch-policy-reads-the-whole-row",
        file="agents/batched_policy.py",
        old="            return obs[:, :size]\n",
        new="            return obs\n",
        test="tests/agents/test_ppo_layouts.py::"
             "test_a_v0_network_at_a_v1_table_plays_as_at_a_v0_one",
        why="a v0 network opponent in the batched engine is handed the v1 rows",
    ),
    Mutant(
        name="v1-torch-policy-any-width",
        file="agents/batched_policy.py",
        old="        if obs.shape[1] in self._later_sizes:\n",
        new="        if True:\n",
        test=("tests/agents/test_ppo_layouts.py::"
              "test_a_v1_network_refuses_v0_rows_and_reads_v1_ones",
              "tests/agents/test_ppo_layouts.py::test_rows_of_another_table_are_refused"),
        why="rows of an earlier layout or another table are cut instead of refused",
    ),
    Mutant(
        name="v1-widen-zeros-after-the-mask",
        file="train/common/checkpoint.py",
        old="            wide[:, new:] = w[:, old:]\n",
        new="            wide[:, old:old + w.shape[1] - old] = w[:, old:]\n",
        test="tests/train/sb3/test_ppo_v1.py::"
             "test_init_widen_starts_a_v1_network_that_plays_as_the_v0_one",
        why="widening appends the new columns after the mask's: the mask weights misread",
    ),
    # ---- policy-based inference (issue 19 part 2) ----
    Mutant(
        name="inference-no-reweighting",
        file="agents/belief/particles.py",
        old="            self.logw += np.where(np.isfinite(after), after - before, -np.inf)",
        new="            self.logw += np.where(np.isfinite(after), 0.0, -np.inf)",
        test="tests/agents/belief/test_inference.py::test_reweighting_reads_a_deterministic_opponent",
        why="the worlds are never weighed by the opponents' moves",
    ),
    Mutant(
        name="inference-mh-accepts-everything",
        file="agents/belief/particles.py",
        old="                accept = proposing & (np.log(self.rng.random(p)) < delta)",
        new="                accept = proposing",
        test="tests/agents/belief/test_inference.py::test_rejuvenation_helps",
        why="rejuvenation swaps cards whatever the likelihood says",
    ),
    Mutant(
        name="inference-no-rejuvenation",
        file="agents/belief/particles.py",
        old="        for _ in range(self.moves):",
        new="        for _ in range(0):",
        test="tests/agents/belief/test_inference.py::test_rejuvenation_helps",
        why="resampled copies are never moved: the population degenerates",
    ),
    Mutant(
        name="inference-repair-ignores-history",
        file="agents/belief/worlds.py",
        old="        if _keeps_legal(b, x, y, hist, scratch, cfg):",
        new="        if True:",
        test="tests/agents/belief/test_inference.py::test_worlds_consistent_after_every_update",
        why="a repair may give an opener who drew in the opening a club it never drew",
    ),
    Mutant(
        name="inference-own-draws-misplaced",
        file="agents/belief/particles.py",
        old="                    cards = np.array(queue[:value], dtype=np.int64)",
        new="                    cards = np.array(queue[:0], dtype=np.int64)",
        test="tests/agents/belief/test_inference.py::test_worlds_consistent_after_every_update",
        why="the seat's own draws are not the cards it saw: the worlds fall out of step",
    ),
    Mutant(
        name="inference-unseeded-worlds",
        file="agents/belief/particles.py",
        old="        hands, stocks = sample_hidden_batch(flat, sizes, unseen, self.rng, p)",
        new=("        hands, stocks = sample_hidden_batch(flat, sizes, unseen, "
             "np.random.default_rng(), p)"),
        test="tests/agents/belief/test_inference.py::test_deterministic_for_a_seed",
        why="the deal's worlds come from an unseeded generator",
    ),
    Mutant(
        name="inference-heuristic-model-unnormalised",
        file="agents/belief/opponent_models.py",
        old="(1 - self.epsilon) * chosen",
        new="chosen",
        test="tests/agents/belief/test_inference.py::test_opponent_models_give_what_they_claim",
        why="the heuristic model's probabilities do not sum to one",
    ),
    Mutant(
        name="inference-network-model-raw-logits",
        file="agents/belief/opponent_models.py",
        old="            logp = torch.log_softmax(logits, dim=1)",
        new="            logp = logits - logits.max(dim=1, keepdim=True).values",
        test="tests/agents/belief/test_inference.py::test_opponent_models_give_what_they_claim",
        why="the self-model reads the network's logits as log-probabilities",
    ),
    Mutant(
        name="search-particles-ignore-filter",
        file="agents/search.py",
        old="            return (*self.filter.sample(count, rng), None)",
        new=("            return (*sample_hidden_batch(uniform_belief(decoded), "
             "decoded[\"hand_sizes\"], unseen, rng, count), None)"),
        test="tests/agents/test_search_particles.py::test_particles_mode_deals_the_filters_worlds",
        why="determinize='particles' deals uniform determinizations",
    ),
    Mutant(
        name="search-particles-asks-for-v0",
        file="agents/search.py",
        old="            self.layout_version = PARTICLES_LAYOUT",
        new="            self.layout_version = 0",
        test="tests/agents/test_search_particles.py::test_particles_mode_in_a_tournament",
        why="the tournament shows the particle search v0 observations: every update projects",
    ),
    Mutant(
        name="inference-v0-ace-extra-play-forgotten",
        file="agents/belief/v0_events.py",
        old='        events.append((1, "pass", None))  # the extra play it did not use',
        new="        pass",
        test="tests/agents/belief/test_inference_v0.py::test_rebuilt_windows_equal_the_v1_log",
        why="a rebuilt v0 window forgets the pass that ends an unused Ace extra play",
    ),
    Mutant(
        name="search-particles-one-deal-rules",
        file="agents/search.py",
        old="num_deals=num_deals, **belief.filter_options())",
        new="num_deals=1, **belief.filter_options())",
        test="tests/agents/test_search_particles.py::test_particles_mode_plays_a_match",
        why="the particle search cannot be built for a match of several deals",
    ),
    Mutant(
        name="v1-vec-env-size-unchecked",
        file="train/sb3/run.py",
        old="    if have != want:\n        vec_env.close()\n",
        new="    if False:\n        vec_env.close()\n",
        test="tests/train/sb3/test_ppo_v1.py::test_a_vec_env_of_another_layout_is_refused",
        why="a VecEnv factory that ignores env_version trains a network its metadata misnames",
    ),
    Mutant(
        name="batched-heuristic-shown-v1-rows",
        file="agents/heuristic/batched.py",
        old="    layout_version = 0\n",
        new="    layout_version = None\n",
        test="tests/train/vector/test_gym_vector_env.py::test_the_numba_heuristic_plays_at_v1_tables_as_at_v0",
        why="the batched heuristic is handed v1 rows it cannot read at a v1 learner's table",
    ),
    Mutant(
        name="ei-widened-start-not-widened",
        file="train/expert/iteration.py",
        old="    if meta[\"layout_version\"] < cfg.env_version:\n",
        new="    if False:\n",
        test="tests/train/expert/test_iteration.py::"
             "test_init_widen_starts_at_v1_from_a_v0_network_that_plays_as_before",
        why="expert iteration's init_widen copies the v0 network without widening it",
    ),
    Mutant(
        name="observer-positions-discard-unseen",
        file="train/belief_model/observer_positions.py",
        old="    holders[list(decoded[\"discard\"])] = -1\n",
        new="",
        test="tests/train/belief_model/test_observer_positions.py::"
             "test_positions_carry_the_truth_and_the_observers_own_moves",
        why="the belief's data counts the discard pile's cards as hidden",
    ),
    Mutant(
        name="search-default-back-to-the-learned-belief",
        file="agents/search_options.py",
        old='DEFAULT_DETERMINIZE = "particles"\n',
        new='DEFAULT_DETERMINIZE = "belief"\n',
        test="tests/agents/test_search_particles.py::test_particles_mode_asks_for_v1_and_reads_v0",
        why="the search's default deals from the learned belief, which the particle filter beat",
    ),
    Mutant(
        name="search-ignores-belief-path",
        file="agents/search_options.py",
        old='    if o.get("belief_path") is not None and determinize != "belief":\n',
        new='    if False:\n',
        test="tests/agents/common/test_weights_file.py::"
             "test_the_search_bot_says_its_missing_belief_model_is_not_found",
        why="a belief model passed to a search that does not read it is silently ignored",
    ),
    Mutant(
        name="particles-reset-forgets-opponents",
        file="agents/belief/particles.py",
        old=("        if getattr(self, \"st\", None) is not None and self.used:\n"
             "            self.seat_logprior = np.log(np.maximum(self.type_posterior(), 1e-6))\n"
             "        elif not hasattr(self, \"seat_logprior\"):"),
        new="        if False:\n            pass\n        else:",
        test="tests/agents/belief/test_opponent_types.py::test_the_posterior_carries_across_deals_and_resets_when_told",
        why="reset() between deals drops what the filter learnt of who the opponent is",
    ),
    Mutant(
        name="particles-types-from-the-seat-not-the-world",
        file="agents/belief/particles.py",
        old="        post = self.world_type_posterior(idx)\n",
        new="        post = np.repeat(self.type_posterior()[None], count, axis=0)\n",
        test="tests/agents/belief/test_opponent_types.py::test_each_rollout_world_plays_the_type_it_was_weighed_with",
        why="a rollout world's opponent type is drawn regardless of what that world says",
    ),
    Mutant(
        name="typed-rollouts-play-the-heuristic",
        file="agents/typed_rollouts.py",
        old="        style = style_of[k] if k >= 0 else HEURISTIC\n",
        new="        style = HEURISTIC\n",
        test="tests/agents/belief/test_opponent_types.py::test_typed_rollout_moves_are_each_types_own_bot",
        why="the type rollouts play the heuristic at every seat",
    ),
    Mutant(
        name="tournament-carries-no-posterior",
        file="agents/tournament/worker.py",
        old="            p.set_opponent_prior(prior)\n",
        new="            pass\n",
        test="tests/agents/belief/test_opponent_types.py::test_the_repeated_opponent_mode_carries_the_posterior_between_rotations",
        why="search?carry_posterior=1 starts every rotation knowing nothing of the opponent",
    ),
    # ---- independent references for the numba kernels (issue 60) ----
    Mutant(
        name="batched-stream-not-splitmix64",
        file="pis_env/batched/kernels.py",
        old="    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)\n",
        new="    z = (z ^ (z >> np.uint64(26))) * np.uint64(0x94D049BB133111EB)\n",
        test="tests/pis_env/batched/test_draws.py::test_the_stream_is_splitmix64_with_lemires_reduction",
        why="the games' random stream is not splitmix64: an unvetted generator",
    ),
    Mutant(
        name="batched-deal-shuffle-never-in-place",
        file="pis_env/batched/kernels.py",
        old=("    for i in range(NUM_CARDS - 1, 0, -1):\n"
             "        j = rand_below(rng, b, i + 1)\n"),
        new=("    for i in range(NUM_CARDS - 1, 0, -1):\n"
             "        j = rand_below(rng, b, i)\n"),
        test="tests/pis_env/batched/test_draws.py::test_a_seeded_deal_is_a_uniform_shuffle_from_a_uniform_dealer",
        why="a seeded deal's shuffle is Sattolo's (no card stays in place): not uniform",
    ),
    Mutant(
        name="batched-dealer-never-last-seat",
        file="pis_env/batched/kernels.py",
        old="        dealer = rand_below(rng, b, n)\n",
        new="        dealer = rand_below(rng, b, n - 1)\n",
        test="tests/pis_env/batched/test_draws.py::test_a_seeded_deal_is_a_uniform_shuffle_from_a_uniform_dealer",
        why="a seeded match's dealer is never the last seat",
    ),
    Mutant(
        name="batched-reshuffle-never-in-place",
        file="pis_env/batched/kernels.py",
        old="    for i in range(k - 1, 0, -1):\n        j = rand_below(rng, b, i + 1)\n",
        new="    for i in range(k - 1, 0, -1):\n        j = rand_below(rng, b, i)\n",
        test="tests/pis_env/batched/test_draws.py::test_a_reshuffle_is_a_uniform_permutation_of_the_pile_under_its_top",
        why="a reshuffled stock is Sattolo's permutation of the pile: not uniform",
    ),
    Mutant(
        name="batched-learner-seat-never-last",
        file="pis_env/batched/kernels.py",
        old="            learner[b, L_SEAT] = rand_below(seat_rng, b, n)\n",
        new="            learner[b, L_SEAT] = rand_below(seat_rng, b, n - 1)\n",
        test="tests/pis_env/batched/test_draws.py::test_a_random_learner_seat_is_redrawn_uniformly_for_every_match",
        why="a reset never seats a random learner at the last seat",
    ),
    Mutant(
        name="learner-loop-keeps-the-seat",
        file="pis_env/batched/stepping.py",
        old="                            learner[b, K.L_SEAT] = K.rand_below(seat_rng, b, n)\n",
        new="                            learner[b, K.L_SEAT] = learner[b, K.L_SEAT]\n",
        test="tests/pis_env/batched/test_draws.py::test_a_random_learner_seat_is_redrawn_uniformly_for_every_match",
        why="a random learner seat is drawn at reset only, never again for a new match",
    ),
    Mutant(
        name="learner-loop-keeps-the-opponents",
        file="pis_env/batched/stepping.py",
        old=("                            K.draw_opponents(kinds, b, n, cum, table,"
             " per_game, mix_rng)\n"),
        new="                            pass\n",
        test="tests/pis_env/batched/test_draws.py::test_opponents_are_drawn_per_seat_at_the_configured_shares",
        why="a game plays the opponents drawn at reset for every later match",
    ),
    Mutant(
        name="opponent-mix-weights-reversed",
        file="pis_env/batched/env.py",
        old="        cum = np.cumsum(w / w.sum())\n",
        new="        cum = np.cumsum(w[::-1] / w.sum())\n",
        test="tests/pis_env/batched/test_draws.py::test_opponents_are_drawn_per_seat_at_the_configured_shares",
        why="the opponent mix's weights go to the kinds in reverse order",
    ),
    Mutant(
        name="opponent-mix-never-last-kind",
        file="pis_env/batched/kernels.py",
        old="            while j < cum.shape[0] - 1 and u >= cum[j]:\n",
        new="            while j < cum.shape[0] - 1 and u >= cum[j + 1]:\n",
        test="tests/pis_env/batched/test_draws.py::test_the_draw_kernel_reaches_every_kind_of_a_mix",
        why="the mix's draw shifts every share down one kind: the last kind is never drawn",
    ),
    Mutant(
        name="opponent-mix-per-game-inverted",
        file="pis_env/batched/kernels.py",
        old="        if seat == 0 or not per_game:\n",
        new="        if seat == 0 or per_game:\n",
        test="tests/pis_env/batched/test_draws.py::test_opponents_drawn_per_game_share_one_kind_at_the_configured_shares",
        why="per_game draws each seat on its own (and per seat draws one kind for all)",
    ),
    Mutant(
        name="panel-policy-one-uniform-for-both",
        file="agents/panel/batched.py",
        old=("            mix(out, np.ascontiguousarray(rows[:, K.LEGAL]), self.epsilon,"
             " u, v, out)\n"),
        new=("            mix(out, np.ascontiguousarray(rows[:, K.LEGAL]), self.epsilon,"
             " u, u, out)\n"),
        test="tests/agents/panel/test_mixing.py::test_a_panel_policy_plays_a_uniform_random_move_at_its_epsilon[0.25]",
        why="the panel's random moves reuse the mixing draw: only the low legal moves come up",
    ),
    Mutant(
        name="panel-policy-half-epsilon",
        file="agents/panel/batched.py",
        old=("            mix(out, np.ascontiguousarray(rows[:, K.LEGAL]), self.epsilon,"
             " u, v, out)\n"),
        new=("            mix(out, np.ascontiguousarray(rows[:, K.LEGAL]), self.epsilon"
             " / 2, u, v, out)\n"),
        test="tests/agents/panel/test_mixing.py::test_a_panel_policy_plays_a_uniform_random_move_at_its_epsilon[0.8]",
        why="a panel style mixes at half its epsilon",
    ),
    Mutant(
        name="typed-rollouts-one-epsilon",
        file="agents/typed_rollouts.py",
        old="        e = eps_of[k]\n",
        new="        e = eps_of[-1]\n",
        test="tests/agents/panel/test_mixing.py::test_typed_rollouts_play_each_types_style_mixed_at_its_own_epsilon",
        why="every rollout type mixes at the last type's epsilon, not its own",
    ),
    Mutant(
        name="typed-rollouts-one-uniform-per-row",
        file="agents/typed_rollouts.py",
        old="        v[b] = K.rand_unit(rng, b)\n",
        new="        v[b] = u[b]\n",
        test="tests/agents/panel/test_mixing.py::test_the_rows_uniforms_are_two_draws_of_each_rows_own_stream",
        why="a rollout row's random move reuses its mixing draw",
    ),
    Mutant(
        name="worlds-relabel-skips-the-next-draw",
        file="agents/belief/worlds.py",
        old="    for i in range(st[b, K.SPOS], st[b, K.SLEN]):\n        if stock[b, i] == x:\n",
        new="    for i in range(st[b, K.SPOS] + 1, st[b, K.SLEN]):\n        if stock[b, i] == x:\n",
        test="tests/agents/belief/test_world_kernels.py::test_a_relabel_exchanges_two_names_in_hands_live_stock_and_recorded_hands",
        why="a renaming leaves the next card to be drawn under its old name (a card twice)",
    ),
    Mutant(
        name="worlds-relabel-forgets-the-last-decision",
        file="agents/belief/worlds.py",
        old=("    for t in range(used):\n        dec_hand[b, t] = _swap_bits(dec_hand[b,"
             " t], bx, by)\n"),
        new=("    for t in range(used - 1):\n        dec_hand[b, t] ="
             " _swap_bits(dec_hand[b, t], bx, by)\n"),
        test="tests/agents/belief/test_world_kernels.py::test_a_relabel_exchanges_two_names_in_hands_live_stock_and_recorded_hands",
        why="a renaming leaves the latest recorded hand under the old names",
    ),
    Mutant(
        name="worlds-step-finished-worlds",
        file="agents/belief/worlds.py",
        old="        if st[b, K.OVER] == 0:\n            apply_action(",
        new="        if True:\n            apply_action(",
        test="tests/agents/belief/test_world_kernels.py::test_refreshed_legal_masks_and_a_step_in_every_world_are_the_engines",
        why="the action is applied in worlds whose deal is over too",
    ),
    Mutant(
        name="worlds-stock-shuffle-never-in-place",
        file="agents/belief/worlds.py",
        old="            j = lo + rand_below(rng, b, i - lo + 1)\n",
        new="            j = lo + rand_below(rng, b, i - lo)\n",
        test="tests/agents/belief/test_world_kernels.py::test_a_shuffle_of_the_stocks_permutes_what_is_left_uniformly",
        why="resampled worlds' stocks get Sattolo's shuffle: no card stays in place",
    ),
    Mutant(
        name="worlds-proposals-never-from-the-stock",
        file="agents/belief/worlds.py",
        old="        hidden = (held | _stock_mask(stock, st, b)) & ~public\n",
        new="        hidden = held\n",
        test="tests/agents/belief/test_world_kernels.py::test_proposals_pair_every_hidden_opponent_card_with_every_other_holders_card",
        why="rejuvenation only exchanges cards between opponents, never with the stock",
    ),
    Mutant(
        name="worlds-proposal-count-one-short",
        file="agents/belief/worlds.py",
        old=("        for t in range(used):\n            h = dec_hand[b, t]\n"
             "            if ((h & bx) != 0)"),
        new=("        for t in range(used - 1):\n"
             "            h = dec_hand[b, t]\n            if ((h & bx) != 0)"),
        test="tests/agents/belief/test_world_kernels.py::test_proposals_pair_every_hidden_opponent_card_with_every_other_holders_card",
        why="a proposal's count of changed decisions misses the latest one",
    ),
    Mutant(
        name="worlds-swapped-rows-stale-legal",
        file="agents/belief/worlds.py",
        old="                rows[k, K.LEGAL] = legal_of(rows, k, cfg)\n",
        new="                rows[k, K.LEGAL] = dec_rows[t, K.LEGAL]\n",
        test="tests/agents/belief/test_world_kernels.py::test_swapped_rows_are_the_changed_decisions_with_the_movers_hand_renamed",
        why="a renamed decision keeps the legal moves of the hand it had",
    ),
    Mutant(
        name="worlds-hand-bits-skip-last-seat",
        file="agents/belief/worlds.py",
        old="        for k in range(hands.shape[1]):\n",
        new="        for k in range(hands.shape[1] - 1):\n",
        test="tests/agents/belief/test_world_kernels.py::test_hand_bits_are_the_cards_of_each_mask",
        why="the belief's card bits leave out the last opponent's hand",
    ),
    Mutant(
        name="worlds-repair-legal-not-refreshed",
        file="agents/belief/worlds.py",
        old="        st[b, K.LEGAL] = legal_of(st, b, cfg)\n        repaired[b] = 1 if",
        new="        repaired[b] = 1 if",
        test="tests/agents/belief/test_world_kernels.py::test_a_repair_makes_a_played_card_legal_by_renaming_hidden_cards_only",
        why="a repaired world keeps its old legal mask: every repair reads as failed",
    ),
    Mutant(
        name="worlds-repair-reuses-a-stock-card",
        file="agents/belief/worlds.py",
        old="                    stock_pool &= ~(np.int64(1) << np.int64(y))\n",
        new="",
        test="tests/agents/belief/test_world_kernels.py::test_a_repair_makes_an_opening_draw_legal_by_taking_the_clubs_away",
        why="an opening draw's repair renames two clubs with the same stock card",
    ),
    Mutant(
        name="worlds-own-draws-last-not-placed",
        file="agents/belief/worlds.py",
        old="        for i in range(cards.shape[0]):\n            pos = start + i\n",
        new="        for i in range(cards.shape[0] - 1):\n            pos = start + i\n",
        test="tests/agents/belief/test_world_kernels.py::test_the_observers_draws_are_put_on_top_of_every_worlds_stock",
        why="the observer's last drawn card is not put on the worlds' stocks",
    ),
    Mutant(
        name="match-futures-winner-never-last-seat",
        file="agents/match_value.py",
        old="            charges[rows, rng.integers(num_players, size=samples)] = 0\n",
        new="            charges[rows, rng.integers(num_players - 1, size=samples)] = 0\n",
        test="tests/agents/test_match_value_enumeration.py::test_each_seat_of_a_sampled_future_follows_the_model",
        why="a model deal is never won by the last seat: its futures charge it too much",
    ),
    Mutant(
        name="match-value-ties-broken-for-seat-0",
        file="agents/match_value.py",
        old="    share = (own < best_other).astype(np.float64)\n",
        new="    share = (own <= best_other).astype(np.float64)\n    return share\n",
        test="tests/agents/test_match_value_enumeration.py::test_the_win_share_is_the_plain_rule_on_random_totals",
        why="a tied match counts as won outright for the searching seat",
    ),
    Mutant(
        name="worlds-pick-fallback-lowest-card",
        file="agents/belief/worlds.py",
        old="    return K.nth_bit(pool, start)\n",
        new="    return lowbit_index(pool)\n",
        test="tests/agents/belief/test_world_kernels.py::"
             "test_a_repair_picks_the_first_candidate_from_a_random_start_that_keeps_history",
        why="a repair with no history-keeping candidate always renames with the lowest card",
    ),
    Mutant(
        name="worlds-keeps-legal-skips-last-decision",
        file="agents/belief/worlds.py",
        old=("    for t in range(used):\n        h = dec_hand[b, t]\n"
             "        new = _swap_bits(h, bx, by)\n        if new != h:\n            for f"),
        new=("    for t in range(used - 1):\n        h = dec_hand[b, t]\n"
             "        new = _swap_bits(h, bx, by)\n        if new != h:\n            for f"),
        test="tests/agents/belief/test_world_kernels.py::"
             "test_a_repair_picks_the_first_candidate_from_a_random_start_that_keeps_history",
        why="a repair's history check leaves out the latest decision",
    ),
    Mutant(
        name="worlds-repair-pool-of-the-movers-own-hand",
        file="agents/belief/worlds.py",
        old="                if s != m:\n",
        new="                if s == m:\n",
        test="tests/agents/belief/test_world_kernels.py::"
             "test_an_opening_repair_takes_another_opponents_cards_when_the_stock_is_public",
        why="a draw's repair falls back to the mover's own cards instead of the other hands'",
    ),
    Mutant(
        name="worlds-own-draws-no-public-fallback",
        file="agents/belief/worlds.py",
        old="                        pool = _stock_mask(stock, st, b) & ~known\n",
        new="                        pool = _stock_mask(stock, st, b) & ~known & ~public\n",
        test="tests/agents/belief/test_world_kernels.py::"
             "test_an_observers_draw_held_by_an_opponent_is_renamed_with_a_public_stock_card_last",
        why="an observer's draw held by an opponent kills the world when the stock is public",
    ),
    Mutant(
        name="panel-model-forgets-the-bots-epsilon",
        file="agents/panel/models.py",
        old="        self.epsilon = 1.0 - (1.0 - epsilon) * (1.0 - bot_epsilon)\n",
        new="        self.epsilon = 1.0 - (1.0 - epsilon)\n",
        test="tests/agents/panel/test_mixing.py::"
             "test_a_style_bots_model_gives_the_probabilities_its_batched_bot_plays_with[greedy_eps]",
        why="a style bot's opponent model leaves out the bot's own epsilon",
    ),
]


def entry_problems(mutant: Mutant, root: Path = ROOT) -> list[str]:
    """Why ``mutant`` cannot be applied to the tree at ``root`` (empty when it can)."""
    problems = []
    path = root / mutant.file
    if not path.is_file():
        problems.append(f"{mutant.file}: no such file")
    else:
        count = path.read_text(encoding="utf-8").count(mutant.old)
        if count != 1:
            problems.append(f"{mutant.file}: old text found {count} times, expected once")
    if mutant.old == mutant.new:
        problems.append("old and new text are the same")
    for node in mutant.tests:
        test_file = node.split("::", 1)[0]
        if not (root / test_file).is_file():
            problems.append(f"test {node}: no such file {test_file}")
    return problems


def check_entries(mutants: list[Mutant], root: Path = ROOT) -> list[str]:
    """Every problem of every entry, plus duplicate names."""
    problems = []
    seen: set[str] = set()
    for mutant in mutants:
        if mutant.name in seen:
            problems.append(f"{mutant.name}: duplicate name")
        seen.add(mutant.name)
        problems += [f"{mutant.name}: {p}" for p in entry_problems(mutant, root)]
    return problems


def _tree_files(root: Path) -> list[str]:
    """The working tree as git sees it: tracked and untracked-but-not-ignored files."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root, check=True, capture_output=True,
    ).stdout
    return [name for name in out.decode().split("\0") if name]


def copy_tree(root: Path, dest: Path) -> None:
    """Copy the working tree to ``dest``, with the numba caches (they are keyed by the
    source file's mtime and size, which ``copy2`` keeps, so only a mutated kernel file is
    compiled again)."""
    for name in _tree_files(root):
        src = root / name
        if not src.is_file():  # deleted in the working tree but still tracked
            continue
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    for pattern in ("*.nbi", "*.nbc"):
        for src in root.glob(f"[!.]*/**/__pycache__/{pattern}"):
            target = dest / src.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)


def run_tests(copy: Path, nodes: tuple[str, ...], timeout: float) -> tuple[str, str]:
    """Run pytest on ``nodes`` inside ``copy``; return (outcome, output tail).

    outcome is "passed", "failed", "timeout" or "error: ..."."""
    env = dict(os.environ)
    # The copy's packages first: the editable install points at the working tree, and
    # PYTHONPATH also reaches subprocesses (tournament workers, Ray tasks, CLIs).
    env["PYTHONPATH"] = os.pathsep.join([str(copy), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("PYTEST_ADDOPTS", None)
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *nodes]
    try:
        proc = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
    if proc.returncode == 0:
        return "passed", tail
    if proc.returncode == 1:
        return "failed", tail
    reason = {2: "interrupted or collection error", 3: "internal error",
              4: "usage error", 5: "no tests collected"}.get(proc.returncode, "")
    return f"error: pytest exit {proc.returncode} {reason}".rstrip(), tail


SUITES = ("tests", "tests_rllib")


def suite_of(mutant: Mutant) -> str:
    """The test folder of a mutant's tests: tests_rllib runs in its own virtualenv."""
    suites = {node.split("/", 1)[0] for node in mutant.tests}
    if len(suites) != 1 or not suites <= set(SUITES):
        raise ValueError(f"{mutant.name}: its tests must all be in one of {SUITES}")
    return suites.pop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--only", action="append", metavar="NAME", default=[],
                        help="run only this mutant (repeatable)")
    parser.add_argument("--check", action="store_true",
                        help="only check that every entry applies to the working tree")
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip running the tests on the unmutated tree first")
    parser.add_argument("--suite", choices=SUITES, default="tests",
                        help="run the mutants whose tests are in this folder (default tests; "
                        "tests_rllib needs .venv-rllib); --only picks from every suite")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds per test run before the mutant counts as killed "
                        "(default 600)")
    args = parser.parse_args(argv)
    if not args.timeout > 0:
        parser.error(f"--timeout must be positive, got {args.timeout}")

    names = {m.name for m in MUTANTS}
    unknown = [n for n in args.only if n not in names]
    if unknown:
        parser.error(f"unknown mutant(s): {', '.join(unknown)} (see --list)")
    if args.only:
        selected = [m for m in MUTANTS if m.name in args.only]
    else:
        selected = [m for m in MUTANTS if suite_of(m) == args.suite]

    if args.list:
        for m in selected:
            print(f"{m.name}\n    {m.file}: {m.why}\n    test: {' '.join(m.tests)}")
        print(f"{len(selected)} mutants")
        return 0

    problems = check_entries(selected)
    if problems:
        for problem in problems:
            print(f"ERROR   {problem}")
        return 1
    if args.check:
        print(f"{len(selected)} mutants apply to the working tree")
        return 0

    failures = 0
    with tempfile.TemporaryDirectory(prefix="pis-mutants-") as tmp:
        copy = Path(tmp)
        copy_tree(ROOT, copy)
        if not args.no_baseline:
            nodes = tuple(dict.fromkeys(n for m in selected for n in m.tests))
            outcome, tail = run_tests(copy, nodes, args.timeout * max(1, len(nodes)))
            if outcome != "passed":
                print(f"ERROR   the tests fail on the unmutated tree ({outcome}):\n{tail}")
                return 1
            print(f"baseline: {len(nodes)} tests pass on the unmutated tree")
        for m in selected:
            path = copy / m.file
            original = path.read_bytes()
            text = original.decode("utf-8")
            start = time.monotonic()
            try:
                path.write_text(text.replace(m.old, m.new, 1), encoding="utf-8")
                for node in m.tests:  # every named test must catch the mutant
                    outcome, tail = run_tests(copy, (node,), args.timeout)
                    if outcome not in ("failed", "timeout"):
                        break
            finally:
                path.write_bytes(original)
            seconds = time.monotonic() - start
            if outcome in ("failed", "timeout"):
                how = "test failed" if outcome == "failed" else "test timed out"
                print(f"KILLED   {m.name} ({how}, {seconds:.0f} s): {m.why}")
            else:
                failures += 1
                label = "SURVIVED" if outcome == "passed" else "ERROR   "
                print(f"{label} {m.name} ({outcome}, {seconds:.0f} s): {m.why}\n"
                      f"    test: {node}\n{tail}")
            sys.stdout.flush()
    killed = len(selected) - failures
    print(f"{killed} of {len(selected)} mutants killed")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
