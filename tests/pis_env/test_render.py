"""rgb_array rendering: frames show what their seat may see, and the recorders of
gymnasium, PettingZoo and SB3 write videos of a deal from them; the text views of a fixed
seat and ``"human"`` mode, and the render arguments refused word for word.

The reference for "what a seat may see" is not the renderer: it is the engine's own
``determinize`` (a clone whose hidden cards are dealt anew, public counts kept) and the
observation vector (everything the seat is told)."""

from __future__ import annotations

import builtins
import sys

import gymnasium as gym
import numpy as np
import pytest

import pis_env
from pis_env.cards import cards_of
from pis_env.render import FRAME_SIZE, render_frame, render_table
from pis_env.wrappers import SingleAgentEnv

SHAPE = (FRAME_SIZE[1], FRAME_SIZE[0], 3)


def random_positions(num_players: int, seed: int, count: int):
    """``count`` positions of random deals (the env stepped by random legal moves)."""
    env = pis_env.env(num_players=num_players)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    out = []
    while len(out) < count:
        game = env.unwrapped.game
        if not env.agents:
            env.reset()
            continue
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            continue
        out.append(game.copy(np.random.default_rng(0)))
        mask = env.observe(agent)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
    return out


@pytest.mark.parametrize("num_players", [2, 4, 7])
def test_frames_do_not_depend_on_hidden_cards(num_players):
    """A clone with every card hidden from the seat dealt anew draws the same frame for
    that seat; with every hand face up (``reveal``) the frames differ, so the clones
    did move cards and the frame would show a leak."""
    rng = np.random.default_rng(num_players)
    revealed_differs = 0
    for game in random_positions(num_players, seed=10 + num_players, count=12):
        for seat in rng.choice(num_players, size=2, replace=False).tolist():
            other = game.determinize(seat, rng)
            frame = render_frame(game, seat)
            assert frame.shape == SHAPE and frame.dtype == np.uint8
            np.testing.assert_array_equal(frame, render_frame(other, seat))
            if other.hands != game.hands:
                revealed_differs += not np.array_equal(render_frame(game, seat, reveal=True),
                                                       render_frame(other, seat, reveal=True))
    assert revealed_differs >= 12


@pytest.mark.parametrize("num_players", [2, 4])
def test_a_frame_changes_when_what_the_seat_sees_changes(num_players):
    """Over random deals (several, with reshuffles and ends), whenever a seat's
    observation vector (everything it is told) changes from one position to the next,
    its frame changes too; seats that see different hands get different frames."""
    positions = random_positions(num_players, seed=num_players, count=70)
    encoder = pis_env.observation.ObservationEncoder(num_players, 1)
    seen = [[encoder.encode(p, s) for s in range(num_players)] for p in positions]
    frames = [[render_frame(p, s) for s in range(num_players)] for p in positions]
    changes = 0
    for t in range(1, len(positions)):
        for seat in range(num_players):
            if not np.array_equal(seen[t - 1][seat], seen[t][seat]):
                changes += 1
                assert not np.array_equal(frames[t - 1][seat], frames[t][seat]), (t, seat)
    assert changes > 50 * num_players
    assert not np.array_equal(frames[0][0], frames[0][1])


def _variants(game):
    """Copies of ``game`` that each differ from it in one thing seat 0 can see."""
    def changed(**fields):
        other = game.copy(np.random.default_rng(0))
        for name, value in fields.items():
            setattr(other, name, value)
        return other

    opponent = 1
    spare = game.stock[0]  # a card in no hand and not on the pile
    own = cards_of(game.hands[0])[0]
    drew = list(game.drew_on)
    drew[opponent] ^= 1 << 2
    yield "top card", changed(top=spare)
    yield "active suit", changed(active_suit=(game.active_suit + 1) % 4)
    yield "pending sevens", changed(pending_sevens=(game.pending_sevens + 1) % 5)
    yield "direction", changed(direction=-game.direction)
    yield "stock size", changed(stock=game.stock[1:])
    yield "discard size", changed(pile=[spare, *game.pile])
    yield "drew on", changed(drew_on=drew)
    yield "has drawn", changed(has_drawn=not game.has_drawn)
    yield "player to move", changed(current=opponent)
    yield "opponent's hand size", changed(hands=[game.hands[0], game.hands[1] | 1 << spare,
                                                 *game.hands[2:]])
    yield "own card", changed(hands=[game.hands[0] & ~(1 << own) | 1 << spare,
                                     *game.hands[1:]])
    yield "deal over", changed(deal_over=True, end_reason="out", charges=[0, 30, 12],
                               winners=[True, False, False])
    yield "deal number", changed(deal_index=game.deal_index + 1)


def test_every_public_part_of_the_table_shows_in_the_frame():
    """Changing any one thing seat 0 may see (the top card, the suit to follow, the
    sevens, the direction, the stock and discard counts, what an opponent drew on,
    whose turn, a hand size, a card of its own, the end of the deal) changes its frame."""
    game = next(p for p in random_positions(3, seed=7, count=30)[10:] if p.current == 0
                and p.stock)
    base = render_frame(game, 0)
    for what, other in _variants(game):
        assert not np.array_equal(render_frame(other, 0), base), what


def test_aec_env_renders_the_seat_to_move_a_named_seat_or_the_full_table():
    env = pis_env.env(num_players=3, render_mode="rgb_array")
    env.reset(seed=4)
    game = env.unwrapped.game
    np.testing.assert_array_equal(env.render(), render_frame(game, game.current))
    fixed = pis_env.env(num_players=3, render_mode="rgb_array", render_view="player_2")
    fixed.reset(seed=4)
    np.testing.assert_array_equal(fixed.render(), render_frame(game, 2))
    full = pis_env.env(num_players=3, render_mode="rgb_array", render_view="full")
    full.reset(seed=4)
    np.testing.assert_array_equal(full.render(), render_frame(game, None, reveal=True))
    assert not np.array_equal(full.render(), env.render())
    replay = pis_env.raw_env.from_history(env.unwrapped.export_history(),
                                          render_mode="rgb_array", render_view="full")
    np.testing.assert_array_equal(replay.render(), full.render())


def test_pettingzoo_render_test_and_gymnasium_check_env_pass(capsys):
    from gymnasium.utils.env_checker import check_env
    from pettingzoo.test import render_test

    render_test(lambda render_mode=None: pis_env.env(render_mode=render_mode))
    check_env(gym.make("PisYedili-v0", render_mode="rgb_array").unwrapped)


def test_bad_render_arguments_name_the_allowed_values():
    with pytest.raises(ValueError, match="'rgb_array'"):
        pis_env.env(render_mode="rgb")
    with pytest.raises(ValueError, match="'full'.*player_0, player_1"):
        pis_env.env(render_view="player_5")
    with pytest.raises(ValueError, match="'current'"):
        pis_env.raw_env.from_history(_history(), render_view="nobody")
    assert "rgb_array" in pis_env.raw_env.metadata["render_modes"]
    assert "rgb_array" in SingleAgentEnv.metadata["render_modes"]


def _history() -> str:
    env = pis_env.env()
    env.reset(seed=0)
    return env.unwrapped.export_history()


def test_without_pillow_the_env_builds_and_render_says_what_to_install(monkeypatch):
    """SB3 asks every env for rgb_array: building one must not need Pillow; drawing a
    frame says which extra brings it."""
    real_import = builtins.__import__

    def no_pil(name, *args, **kwargs):
        if name == "PIL" or name.startswith("PIL."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pil)
    for key in [k for k in sys.modules if k == "PIL" or k.startswith("PIL.")]:
        monkeypatch.delitem(sys.modules, key)
    env = pis_env.env(render_mode="rgb_array")
    env.reset(seed=0)
    with pytest.raises(ImportError, match=r"Pillow.*pis-yedili\[agents\]"):
        env.render()


def test_single_agent_view_renders_the_learners_seat():
    env = SingleAgentEnv(num_players=4, learner_seat=None, render_mode="rgb_array")
    seats = set()
    for seed in range(8):
        env.reset(seed=seed)
        seats.add(env.seat)
        np.testing.assert_array_equal(env.render(), render_frame(env.game, env.seat))
    assert len(seats) > 1
    # At the end of a deal the seat to move is often not the learner's: still its view.
    others = 0
    for seed in range(6):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        done = False
        while not done:
            _, _, terminated, truncated, _ = env.step(
                int(rng.choice(np.flatnonzero(env.action_masks()))))
            done = terminated or truncated
        others += env.game.current != env.seat
        np.testing.assert_array_equal(env.render(), render_frame(env.game, env.seat))
    assert others
    wrapped = gym.make("PisYedili-v0", render_mode="rgb_array")
    wrapped.reset(seed=1)
    frame = wrapped.render()
    assert frame.shape == SHAPE and frame.dtype == np.uint8


def test_single_agent_view_honours_render_view():
    """``render_view="full"`` shows every hand, an agent name that seat, through
    ``gymnasium.make`` as through the AEC env."""
    views = {}
    for view in ("current", "full", "player_2"):
        env = gym.make("PisYedili-v0", num_players=3, render_mode="ansi", render_view=view,
                       learner_seat=1)
        env.reset(seed=3)
        views[view] = env.render()
        game = env.unwrapped.game
    assert views["current"] == render_table(game, 1)
    assert views["full"] == render_table(game, 1, reveal=True) != views["current"]
    assert views["player_2"] == render_table(game, 2) != views["current"]


def test_single_agent_human_mode_prints_the_learners_table_only(capsys):
    """After reset and after every step, the learner's table; never an opponent's hand
    (the AEC env's own human mode prints each move from the mover's seat)."""
    env = SingleAgentEnv(num_players=3, learner_seat=1, render_mode="human")
    env.reset(seed=2)
    expected = [render_table(env.game, 1)]
    rng = np.random.default_rng(2)
    done = False
    while not done:
        _, _, terminated, truncated, _ = env.step(
            int(rng.choice(np.flatnonzero(env.action_masks()))))
        done = terminated or truncated
        expected.append(render_table(env.game, 1))
    assert capsys.readouterr().out == "".join(text + "\n" for text in expected)


def test_sb3_make_vec_env_and_rl_zoo_defaults():
    """``make_vec_env(env_id)`` asks for ``render_mode="rgb_array"`` (and once refused
    it); RL Zoo's ``create_test_env``/``record_video`` pass it in ``env_kwargs``."""
    from stable_baselines3.common.env_util import make_vec_env

    vec = make_vec_env("PisYedili-v0", n_envs=2, seed=0)
    assert vec.render_mode == "rgb_array"
    obs = vec.reset()
    assert obs.shape == (2, 178)
    tiled = vec.render()
    assert tiled.shape == (2 * SHAPE[0], SHAPE[1], 3)
    vec.close()
    zoo = make_vec_env("PisYedili-v0", n_envs=1, seed=0,
                       env_kwargs={"render_mode": "rgb_array", "num_players": 4})
    zoo.reset()
    assert zoo.render().shape == SHAPE
    zoo.close()


# ---------------------------------------------------------------------- videos
def _read_video(path) -> np.ndarray:
    from moviepy import VideoFileClip

    with VideoFileClip(str(path)) as clip:
        return np.stack(list(clip.iter_frames()))


def _close(recorded: np.ndarray, expected: list[np.ndarray]) -> None:
    """The video holds the expected frames in order, up to the encoder's loss: each
    recorded frame is near its own expected frame and nearer to it than to the
    neighbouring frames that differ from it (compared on every 4th pixel)."""
    assert len(recorded) == len(expected)
    want = np.stack(expected)[:, ::4, ::4].astype(np.int16)
    got = recorded[:, ::4, ::4].astype(np.int16)
    for i in range(len(got)):
        error = np.abs(want[i] - got[i]).mean()
        assert error < 4.0, (i, error)
        for j in (i - 1, i + 1):
            if 0 <= j < len(want) and not np.array_equal(want[j], want[i]):
                assert error < np.abs(want[j] - got[i]).mean(), (i, j)


def test_gymnasium_record_video_writes_a_deal(tmp_path):
    env = gym.wrappers.RecordVideo(gym.make("PisYedili-v0", render_mode="rgb_array"),
                                   str(tmp_path / "videos"), episode_trigger=lambda i: i == 0)
    obs, _ = env.reset(seed=3)
    base = env.unwrapped
    expected = [render_frame(base.game, base.seat)]
    rng = np.random.default_rng(0)
    done = False
    while not done:
        action = int(rng.choice(np.flatnonzero(base.action_masks())))
        _, _, terminated, truncated, _ = env.step(action)
        done = terminated or truncated
        expected.append(render_frame(base.game, base.seat))
    env.close()
    videos = sorted(tmp_path.glob("*/*.mp4"))
    assert len(videos) == 1
    _close(_read_video(videos[0]), expected)


def test_pettingzoo_record_video_writes_a_deal(tmp_path):
    from pettingzoo.utils.wrappers import RecordVideo

    env = RecordVideo(pis_env.env(render_mode="rgb_array", render_view="full"),
                      str(tmp_path / "videos"), episode_trigger=lambda i: i == 0, video_length=24)
    env.reset(seed=5)
    game = env.unwrapped.game
    expected = [render_frame(game, None, reveal=True)]
    rng = np.random.default_rng(1)
    for agent in env.agent_iter():
        _, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
        expected.append(render_frame(game, None, reveal=True))
        if len(expected) == 24:
            break
    env.close()
    videos = sorted(tmp_path.glob("*/*.mp4"))
    assert len(videos) == 1
    _close(_read_video(videos[0]), expected)


def test_sb3_vec_video_recorder_writes_frames(tmp_path):
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecVideoRecorder

    length = 12
    vec = VecVideoRecorder(make_vec_env("PisYedili-v0", n_envs=1, seed=2), str(tmp_path / "v"),
                           record_video_trigger=lambda step: step == 0, video_length=length)
    vec.reset()
    inner = vec.venv.envs[0].unwrapped
    expected = [render_frame(inner.game, inner.seat)]
    rng = np.random.default_rng(2)
    for _ in range(length):
        mask = inner.action_masks()
        vec.step(np.array([rng.choice(np.flatnonzero(mask))]))
        expected.append(render_frame(inner.game, inner.seat))
    vec.close()
    videos = sorted(tmp_path.glob("*/*.mp4"))
    assert len(videos) == 1
    recorded = _read_video(videos[0])
    assert len(recorded) >= length
    _close(recorded[:length], expected[:length])


def test_render_without_a_mode_warns_in_words():
    env = pis_env.raw_env()
    env.reset(seed=0)
    with pytest.warns(UserWarning) as record:
        assert env.render() is None
    # gymnasium's logger colours the line: WARN: and the message, nothing else
    assert str(record[0].message) == (
        "\x1b[33mWARN: render() called without a render_mode; set render_mode.\x1b[0m")


def test_a_fixed_seats_view_and_human_mode(capsys):
    env = pis_env.raw_env(num_players=3, render_mode="human", render_view="player_2")
    env.reset(seed=5)
    capsys.readouterr()
    assert env.render() is None
    assert capsys.readouterr().out == render_table(env.game, 2) + "\n"
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    assert capsys.readouterr().out == render_table(env.game, 2) + "\n"  # after every step


def test_bad_render_arguments_are_refused_word_for_word():
    with pytest.raises(ValueError) as e:
        pis_env.raw_env(render_mode="rgb")
    assert str(e.value) == ("render_mode='rgb': allowed values are None, 'human', 'ansi', "
                            "'rgb_array'")
    with pytest.raises(ValueError) as e:
        pis_env.raw_env(num_players=3, render_view="player_5")
    assert str(e.value) == ("render_view='player_5': allowed values are 'current', 'full' "
                            "and the agent names player_0, player_1, player_2")
    full = pis_env.raw_env(render_mode="ansi", render_view="full")
    full.reset(seed=0)
    assert full.render() == render_table(full.game, None, reveal=True)
