"""``tournament.png`` (``TournamentResult.figure``): every bar, interval, label and cell
of the figure read back from matplotlib and compared with the tournament's statistics, and
the colour bar's place and the title's size."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from agents.tournament import run_tournament  # noqa: E402


@pytest.fixture(scope="module")
def three():
    return run_tournament(["heuristic", "greedy", "random"], num_players=2, deals=6, seed=2,
                          workers=1, progress=False)


def bars(ax):
    return [p for p in ax.patches if isinstance(p, matplotlib.patches.Rectangle)]


def even_share(ax):
    """The dashed line of a fair share (the error bars' caps are lines too)."""
    (line,) = [line for line in ax.lines if line.get_linestyle() == "--"]
    return line


def error_extent(ax):
    """(low, high) of each bar's error bar."""
    container = ax.containers[0]
    segments = container.lines[2][0].get_segments()
    return [(s[0][1], s[1][1]) for s in segments]


def test_the_win_rate_and_charge_panels_are_the_tournaments_figures(three):
    fig = three.figure()
    try:
        order = three.ranking()
        labels = [s.label for s in order]
        win, charge, h2h = fig.axes[:3]
        assert [b.get_height() for b in bars(win)] == pytest.approx(
            [100 * s.win_rate for s in order])
        np.testing.assert_allclose(error_extent(win),
                                   [(100 * s.win_low, 100 * s.win_high) for s in order])
        assert all(b.get_facecolor() == to_rgba("tab:blue", 0.8) for b in bars(win))
        assert win.containers[0].lines[1][0].get_markersize() == 2 * 5  # capsize 5
        even = even_share(win)
        assert list(even.get_ydata()) == [50.0, 50.0]
        assert even.get_color() == "grey" and even.get_linewidth() == 1
        assert [t.get_text() for t in win.get_legend().get_texts()] == ["even share"]
        assert win.get_legend().get_texts()[0].get_fontsize() == 8
        assert win.get_ylabel() == "deal win rate (%)"
        assert win.get_title() == "Win rate (95% Wilson interval)"
        assert [b.get_height() for b in bars(charge)] == pytest.approx(
            [s.mean_charge for s in order])
        np.testing.assert_allclose(error_extent(charge),
                                   [(s.charge_low, s.charge_high) for s in order])
        assert all(b.get_facecolor() == to_rgba("tab:red", 0.8) for b in bars(charge))
        assert charge.containers[0].lines[1][0].get_markersize() == 2 * 5  # capsize 5
        # the three panels side by side, left to right
        boxes = [ax.get_position() for ax in (win, charge, h2h)]
        assert boxes[0].x1 <= boxes[1].x0 and boxes[1].x1 <= boxes[2].x0
        assert boxes[0].y0 == pytest.approx(boxes[1].y0, abs=0.05)
        assert charge.get_ylabel() == "mean charge per deal (points)"
        assert charge.get_title() == "Mean charge (95% interval), lower is better"
        for ax in (win, charge, h2h):
            ticks = ax.get_xticklabels()
            assert [t.get_text() for t in ticks] == labels
            assert all(t.get_rotation() == 20 and t.get_ha() == "right" for t in ticks)
        assert fig._suptitle.get_text() == "6 duplicate deals, 2 players, seed 2"
        assert fig._suptitle.get_fontsize() == 10
        assert tuple(fig.get_size_inches()) == pytest.approx((5.2 * 3, 4.4))
    finally:
        plt.close(fig)


def test_the_head_to_head_panel_is_the_matrix_in_ranking_order(three):
    fig = three.figure()
    try:
        order = [s.label for s in three.ranking()]
        h2h = fig.axes[2]
        image = h2h.images[0]
        idx = [three.agents.index(label) for label in order]
        want = three.h2h_matrix()[np.ix_(idx, idx)] * 100
        np.testing.assert_allclose(np.asarray(image.get_array().filled(np.nan)), want)
        assert image.get_clim() == (0, 100) and image.get_cmap().name == "RdYlGn"
        assert [t.get_text() for t in h2h.get_yticklabels()] == order
        cells = {(round(t.get_position()[1]), round(t.get_position()[0])): t
                 for t in h2h.texts}
        assert set(cells) == {(i, j) for i in range(3) for j in range(3) if i != j}
        for (i, j), text in cells.items():
            assert text.get_text() == f"{want[i, j]:.0f}"
            assert (text.get_ha(), text.get_va(), text.get_fontsize()) == \
                ("center", "center", 8)
        assert h2h.get_title() == "Head-to-head: row vs column (%)"
        assert len(fig.axes) == 4  # and its colour bar
    finally:
        plt.close(fig)


def test_two_agents_have_the_head_to_head_panel():
    two = run_tournament(["greedy", "random"], num_players=2, deals=2, seed=0, workers=1,
                         progress=False)
    fig = two.figure()
    try:
        assert len(fig.axes) == 4 and fig.axes[2].images
    finally:
        plt.close(fig)


def test_one_agent_has_no_head_to_head_and_a_match_its_own_words(tmp_path):
    from pis_env import Rules

    alone = run_tournament(["random"], num_players=3, deals=2, seed=1, workers=1,
                           progress=False, rules=Rules(num_players=3, num_deals=2))
    fig = alone.figure()
    try:
        assert len(fig.axes) == 2
        assert list(even_share(fig.axes[0]).get_ydata()) == pytest.approx([100 / 3] * 2)
        assert fig.axes[0].get_ylabel() == "match win rate (%)"
        assert fig.axes[1].get_ylabel() == "mean total per match (points)"
        assert fig._suptitle.get_text() == "2 duplicate matches, 3 players, seed 1"
        assert tuple(fig.get_size_inches()) == pytest.approx((5.2 * 2, 4.4))
    finally:
        plt.close(fig)
    path = tmp_path / "deep" / "er" / "t.png"
    alone.plot(path)
    from PIL import Image

    assert Image.open(path).size == (round(5.2 * 2 * 110), round(4.4 * 110))
    assert plt.get_fignums() == []


def test_the_head_to_head_panel_is_reordered_rows_and_columns():
    """Agents given worst first: the panel's matrix is the ranking's order on both axes."""
    res = run_tournament(["random", "greedy", "heuristic"], num_players=2, deals=6, seed=2,
                         workers=1, progress=False)
    order = [s.label for s in res.ranking()]
    assert order != res.agents
    fig = res.figure()
    try:
        idx = [res.agents.index(label) for label in order]
        want = res.h2h_matrix()[np.ix_(idx, idx)] * 100
        got = np.asarray(fig.axes[2].images[0].get_array().filled(np.nan))
        np.testing.assert_allclose(got, want)
        assert np.isnan(np.diag(got)).all()
    finally:
        plt.close(fig)


def test_the_colour_bar_is_a_narrow_strip_beside_the_head_to_head(two):
    """``fraction=0.046`` of the head-to-head panel for the colour bar, which reads the
    matrix's colour scale (0-100); the title is 10 points whatever matplotlib's default
    font size."""
    with matplotlib.rc_context({"font.size": 14}):
        fig = two.figure()
    try:
        win, charge, h2h, bar = fig.axes
        assert bar.get_position().x0 > h2h.get_position().x1
        ratio = bar.get_position().width / h2h.get_position().width
        assert 0.03 < ratio < 0.1, ratio
        assert bar.get_ylim() == (0.0, 100.0)
        assert fig._suptitle.get_fontsize() == 10
    finally:
        plt.close(fig)
