"""The browser table in a real browser: Debian's headless Chromium through Selenium.

The server runs in a thread on a free 127.0.0.1 port; the page is clicked like a person
would. What the DOM showed during a game is compared, once the game is over, with the
independent reference rules (``tests/pis_env/reference_rules.py``) in the positions its
exported history reaches, and the policy panel with the ONNX export of the policy run by
onnxruntime (not ``agents.ppo``'s forward pass). The page runs under the server's content
security policy: a violation in the browser's console fails the run. Screenshots go to
``$PIS_WEB_ARTIFACTS`` (default ``runs/test-artifacts/web``); the folder is printed at the
end of the run.

A missing browser is a failure that says how to install it, never a silent skip:
``apt-get install -y chromium chromium-driver``.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import tempfile
import threading
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from pis_env import card_name, raw_env
from tests.agents.ui.web.test_api import live_positions, onnx_probabilities
from tests.conftest import finished_history, stacked_deck
from tests.pis_env import reference_rules

ROOT = Path(__file__).resolve().parents[4]
ARTIFACTS = Path(os.environ.get("PIS_WEB_ARTIFACTS", ROOT / "runs" / "test-artifacts" / "web"))
INSTALL = ("the browser tests need Debian's chromium and chromium-driver: "
           "apt-get install -y chromium chromium-driver (and the dev extra: "
           "pip install -e '.[train,dev]')")
PPO = "ppo:models/ppo_2p.zip"
#: Chromium flags: headless, as root, and nothing fetched or updated in the background.
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--disable-background-networking", "--disable-component-update", "--no-first-run",
         "--disable-sync", "--disable-extensions", "--window-size=1280,1000"]
SETTLED = ("your_turn", "deal_over", "match_over")


def _browser_paths() -> tuple[str, str]:
    chromium = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.fail(f"chromium={chromium!r}, chromedriver={driver!r}: {INSTALL}",
                    pytrace=False)
    return chromium, driver


def serve(*argv: str):
    """``pis-serve ARGV`` on a free port in a thread, as ``main`` runs it (uvicorn with
    the request deadline and the concurrency limit): ``(base_url, app, stop)``."""
    try:
        import uvicorn

        from agents.ui.web.server import app_from_args, build_parser, uvicorn_config
    except ImportError as e:
        pytest.fail(f"{e}: {INSTALL}", pytrace=False)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = build_parser().parse_args(["--delay", "0", "--bot-workers", "0", "--port",
                                      str(port), *argv])
    app = app_from_args(args)
    srv = uvicorn.Server(uvicorn_config(app, args))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)

    def stop():
        srv.should_exit = True
        thread.join(timeout=10)
    return f"http://127.0.0.1:{port}", app, stop


@pytest.fixture(scope="module")
def server():
    """The app on a free port in a thread: ``(base_url, app)``; single deals, arranged
    games allowed (the tests stack decks)."""
    base, app, stop = serve("--allow", f"random,{PPO}", "--allow-arranged", "--seed", "0",
                            "--deals", "1", "--show-bot-policy")
    yield base, app
    stop()


@pytest.fixture(scope="module")
def browser():
    chromium, driver_path = _browser_paths()
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as e:
        pytest.fail(f"{e}: {INSTALL}", pytrace=False)
    options = webdriver.ChromeOptions()
    options.binary_location = chromium  # Selenium Manager downloads nothing
    profile = tempfile.mkdtemp(prefix="pis-chromium-")
    for flag in FLAGS + [f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # CSP violations
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    driver.set_page_load_timeout(30)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def screenshot(driver, name: str, capsys) -> None:
    """Save a test artifact and say where it is (in the test output, not captured)."""
    path = ARTIFACTS / name
    driver.save_screenshot(str(path))
    with capsys.disabled():
        print(f"\nscreenshot: {path}")


# ---------------------------------------------------------------------- helpers
def css(driver, selector):
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, selector)


def wait(driver, predicate, what: str, timeout: float = 20):
    """Poll ``predicate`` until it holds; an element the page re-rendered between being
    found and being read (a stale reference) only means: look again."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.02,
                         ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: predicate(d), message=f"timed out waiting for {what}")


def settled(driver, after_version: int = -1) -> dict:
    """Wait until no request is in flight and the person must act (or the deal ended)."""
    def ready(d):
        data = d.execute_script("return Object.assign({}, document.body.dataset)")
        if data.get("busy") or data.get("status") not in SETTLED:
            return False
        return data if int(data.get("version", -1)) > after_version else False
    return wait(driver, ready, "the page to settle")


def clickable(driver) -> list[int]:
    return sorted(int(b.get_attribute("data-action"))
                  for b in css(driver, "#play-view button[data-action]:not([disabled])"))


def history(base: str, game_id: str, driver) -> str:
    """A finished game's history, fetched with the browser's session cookie (a game is
    its session's only)."""
    cookie = driver.get_cookie("pis_session")
    request = urllib.request.Request(f"{base}/api/games/{game_id}/history",
                                     headers={"Cookie": f"pis_session={cookie['value']}"})
    with urllib.request.urlopen(request, timeout=10) as r:
        return r.read().decode()


def positions(text: str):
    """Every position of a one-deal history: a fresh env stepped through its actions."""
    done = raw_env.from_history(text)
    env = raw_env(**done.rules.to_dict())
    env.reset(options={"deck": done.game.deal_decks[0], "dealer": done.game.deal_dealers[0]})
    yield env
    for _, action in done.game.histories[0]:
        env.step(action)
        yield env


def choose(legal: list[int]) -> int:
    """A Jack when one is legal (to reach a nomination), else the first card, else draw."""
    jacks = [a for a in legal if a < 52 and a % 13 == 9]
    cards = [a for a in legal if a < 52]
    return (jacks or cards or [a for a in legal if a == 56] or legal)[0]


# ---------------------------------------------------------------------- play
HAND = [0, 1, 3, 35, 14, 46, 24]  # 2♣ 3♣ 5♣ J♥ 3♦ 9♠ K♦


def hold_bots(driver) -> None:
    """Make the page's next bot move wait until ``release_bots``: its ``advance`` only
    marks that the page asked (``data-held``), so a test reads the page in between on a
    condition, not a delay."""
    driver.execute_script("window.realAdvance = advance; delete document.body.dataset.held;"
                          "advance = () => { document.body.dataset.held = '1'; };")


def release_bots(driver) -> None:
    driver.execute_script("advance = window.realAdvance; delete document.body.dataset.held;"
                          "advance();")


def test_a_whole_deal_by_clicking(server, browser, capsys):
    base, _ = server
    deck, dealer = stacked_deck([HAND], num_players=2, seed=4)
    browser.get(f"{base}/?deck={','.join(card_name(c) for c in deck)}&dealer={dealer}&delay=0")
    data = settled(browser)
    hand_text = [e.text for e in css(browser, "#hand .card")]
    assert hand_text == [card_name(c, unicode=True) for c in sorted(HAND)]
    assert [e.get_attribute("class").split()[1] for e in css(browser, "#hand .card")] == [
        "red" if c // 13 in (1, 2) else "black" for c in sorted(HAND)]
    game_id = data["game"]
    nominated = False
    shown = {}  # version -> (clickable, hand, top, stock text): checked at the end
    while data["status"] == "your_turn":
        version = int(data["version"])
        legal = clickable(browser)
        top = css(browser, "#top .card")[0].text
        shown[version] = (legal, [e.text for e in css(browser, "#hand .card")], top,
                          css(browser, "#stock")[0].text)
        assert not css(browser, "#to-replay")[0].is_displayed()  # not while a deal is live
        assert not css(browser, "#download")[0].is_displayed()
        nominate = [a for a in legal if 52 <= a < 56]
        action = 54 if nominate else choose(legal)
        if action == 54:
            hold_bots(browser)
        css(browser, f"#play-view button[data-action='{action}']")[0].click()
        if action == 54:
            wait(browser, lambda d: d.execute_script("return document.body.dataset.held"),
                 "the page to ask for the bot's move")
            assert "hearts" in css(browser, "#active-suit")[0].text
            assert "named ♥ hearts" in css(browser, "#log")[0].text
            assert "to move" in css(browser, "#turn")[0].text
            release_bots(browser)
            nominated = True
        if len(shown) == 3:
            screenshot(browser, "table-mid-deal.png", capsys)
        data = settled(browser, version)
    assert nominated, "the deal ended before a Jack could be played"
    assert data["status"] == "match_over"
    text = history(base, game_id, browser)
    positions = live_positions(text)
    for version, (legal, hand, top, stock) in shown.items():
        game = positions[version]
        assert game.current == 0
        assert legal == sorted(reference_rules.legal_actions(game)), version
        assert hand == [card_name(c, unicode=True) for c in reference_rules.hand_cards(
            game.hands[0])]
        assert top == (card_name(game.top, unicode=True) if game.top >= 0 else "none yet")
        assert f"Stock: {len(game.stock)} cards" in stock
    env = raw_env.from_history(text)
    charges = [int(td.text) for td in css(browser, "#result td.charge")]
    assert charges == env.game.charges
    verdict = css(browser, "#verdict")[0].text
    assert verdict == ("You win the deal!" if env.game.winners[0] else "The deal is lost.")
    assert "null" not in css(browser, "#result")[0].text  # no absent part written as text
    assert clickable(browser) == []
    screenshot(browser, "table-deal-over.png", capsys)
    # the game is over: now its history may be replayed
    css(browser, "#to-replay")[0].click()
    wait(browser, lambda d: css(d, "#rp-pos")[0].text == f"position 0 of {len(positions) - 1}",
         "the replay of the game")
    css(browser, "#tab-play")[0].click()


def test_bad_input_shows_a_message_and_changes_nothing(server, browser):
    base, app = server
    browser.get(f"{base}/?delay=0&seed=5")
    data = settled(browser)
    session = app.state.games.peek(data["game"])
    before = session.state()
    # a stale click: the page still shows version N, the server is asked for an illegal move
    illegal = next(a for a in range(58) if a not in {m["action"] for m in before["legal"]})
    browser.execute_script("playMove(arguments[0])", illegal)
    wait(browser, lambda d: not css(d, "#message")[0].get_attribute("hidden"), "the message")
    assert "illegal move" in css(browser, "#message")[0].text
    assert session.state() == before
    # an unknown game (a server restart): a message, and a new game to play
    browser.execute_script("sessionStorage.setItem('pis-game', 'gone')")
    browser.get(f"{base}/?delay=0")
    settled(browser)
    assert "unknown game 'gone'" in css(browser, "#message")[0].text


# ---------------------------------------------------------------------- replay
def test_load_a_replay_and_step_through_it(server, browser, tmp_path):
    base, _ = server
    text = finished_history(seed=12)
    path = tmp_path / "history.json"
    path.write_text(text)
    css(browser, "#tab-replay")[0].click()
    bad = tmp_path / "bad.json"
    bad.write_text('{"deals": "nope"}')
    css(browser, "#replay-file")[0].send_keys(str(bad))
    wait(browser, lambda d: "not a replayable history" in css(d, "#message")[0].text,
         "the bad-history message")
    css(browser, "#replay-file")[0].send_keys(str(path))
    frames = list(_snapshots(text))
    wait(browser, lambda d: css(d, "#rp-pos")[0].text == f"position 0 of {len(frames) - 1}",
         "the replay")
    assert not css(browser, "#message")[0].is_displayed()

    def shown(k, view="table"):
        wait(browser, lambda d: d.execute_script("return document.body.dataset.frame")
             .startswith(f"{k}:{view}:"), f"frame {k}")
        hands = [[e.text for e in seat.find_elements("css selector", ".card")]
                 for seat in css(browser, "#replay-table .seat")]
        top = css(browser, "#replay-table #top .card")[0].text
        return hands, top

    def expected(k):
        game = frames[k]
        return ([[card_name(c, unicode=True) for c in range(52) if game.hands[i] >> c & 1]
                 for i in range(2)],
                card_name(game.top, unicode=True) if game.top >= 0 else "none yet")

    assert shown(0) == expected(0)
    for k in (1, 2, 3):
        css(browser, "#rp-forward")[0].click()
        assert shown(k) == expected(k)
    css(browser, "#rp-back")[0].click()
    assert shown(2) == expected(2)
    jump = css(browser, "#rp-jump")[0]
    jump.clear()
    jump.send_keys(str(len(frames) - 1))
    css(browser, "#rp-go")[0].click()
    assert shown(len(frames) - 1) == expected(len(frames) - 1)
    assert css(browser, "#replay-result")[0].is_displayed()
    css(browser, "#replay-moves li[data-frame='1']")[0].click()
    assert shown(1) == expected(1)
    from selenium.webdriver.support.ui import Select

    Select(css(browser, "#replay-seat")[0]).select_by_value("1")
    wait(browser, lambda d: d.execute_script("return document.body.dataset.frame")
         .startswith("1:1:"), "the seat view")
    own = [e.text for e in css(browser, "#replay-table .own .card")]
    assert own == expected(1)[0][1]
    assert css(browser, "#replay-table .seat .backs")  # player_0's cards face down
    Select(css(browser, "#replay-seat")[0]).select_by_value("table")


def _snapshots(text):
    """Positions as the replay view lists them (one deal: the start, then each move)."""
    for env in positions(text):
        yield env.game.copy()


# ---------------------------------------------------------------------- policy
@pytest.fixture
def onnx_actor():
    return onnx_probabilities()


def test_policy_view_shows_the_policys_probabilities(server, browser, capsys, onnx_actor):
    from selenium.webdriver.support.ui import Select

    base, _ = server
    browser.get(f"{base}/?delay=0&seed=31&policy=1")
    settled(browser)
    Select(css(browser, "#bot-choice select")[0]).select_by_value(PPO)
    old = browser.execute_script("return document.body.dataset.game")
    css(browser, "#new-game")[0].click()
    wait(browser, lambda d: d.execute_script("return document.body.dataset.game") != old,
         "the new game")
    data = settled(browser)
    panels = {}  # version -> {action: (data-p, shown percent)} of the last ppo decision
    while data["status"] == "your_turn":
        rows = css(browser, "#policy tr[data-action]")
        if rows:
            panels[int(data["version"])] = {
                int(r.get_attribute("data-action")): (
                    float(r.get_attribute("data-p")),
                    float(r.find_element("css selector", "td.p").text.rstrip("%")))
                for r in rows}
            assert "--show-bot-policy" in css(browser, "#policy-label")[0].text
            assert "full-table" in css(browser, "#policy")[0].text  # no hidden-card value
        if len(panels) == 2:
            screenshot(browser, "table-policy-view.png", capsys)
        css(browser, "#play-view button[data-action]:not([disabled])")[0].click()
        data = settled(browser, int(data["version"]))
    assert panels
    done = raw_env.from_history(history(base, data["game"], browser))
    env = raw_env(**done.rules.to_dict())
    env.reset(options={"deck": done.game.deal_decks[0], "dealer": done.game.deal_dealers[0]})
    last = None
    for version, (player, action) in enumerate(done.game.histories[0]):
        if player == 1:
            last = env.observe("player_1")
        env.step(action)
        if version + 1 in panels:
            shown = panels[version + 1]
            expected = onnx_actor(last)
            legal = np.flatnonzero(last["action_mask"]).tolist()
            assert sorted(shown) == legal
            assert [shown[a][0] for a in legal] == pytest.approx(expected[legal].tolist(),
                                                                 abs=2e-5)
            assert [shown[a][1] for a in legal] == pytest.approx(
                (100 * expected[legal]).tolist(), abs=0.006)
    # the toggle hides the panel
    css(browser, "#policy-toggle")[0].click()
    assert not css(browser, "#policy")[0].is_displayed()


def test_the_page_runs_under_its_content_security_policy(server, browser):
    """The server's CSP is on the page, and nothing the tests above did broke it."""
    base, _ = server
    with urllib.request.urlopen(f"{base}/", timeout=10) as r:
        assert "script-src 'self'" in r.headers["Content-Security-Policy"]
        assert r.headers["X-Frame-Options"] == "DENY"
    browser.get(f"{base}/?delay=0&seed=2")
    settled(browser)
    logs = browser.get_log("browser")
    violations = [e["message"] for e in logs if "Content Security Policy" in e["message"]
                  or "Refused to" in e["message"]]
    assert not violations, violations


# ---------------------------------------------------------------------- a match
def play_out_the_deal(driver) -> dict:
    """The page's own functions play seat 0's moves (the first legal one) until the deal
    is over (clicks are the first test's): the settled page's data."""
    driver.set_script_timeout(60)
    status = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        (async () => {
          while (ui.game.status !== "deal_over") {
            if (ui.game.status === "your_turn" && !ui.busy) await playMove(ui.game.legal[0].action);
            else await new Promise((r) => setTimeout(r, 5));
          }
          done(ui.game.status);
        })();""")
    assert status == "deal_over"
    return settled(driver)


@pytest.fixture(scope="module")
def match_server():
    """``pis-serve`` as it starts by default (a four-deal match), random bots, arranged
    games allowed."""
    base, app, stop = serve("--bots", "random", "--allow-arranged")
    yield base, app
    stop()


def test_a_match_shows_the_running_score_across_deals(match_server, browser):
    base, app = match_server
    browser.get(f"{base}/?delay=0&seed=3")
    data = settled(browser)
    assert css(browser, "#arranged")[0].is_displayed()  # a seed from the address
    table = css(browser, "#score-table")[0]
    assert "4 deals" in css(browser, "#scores h2")[0].text
    assert len(table.find_elements("css selector", "tbody tr[data-deal]")) == 4
    data = play_out_the_deal(browser)
    session = app.state.games.peek(data["game"])
    charges = session.deals[0]["charges"]

    def texts(selector):  # read in one script: the page may re-render in between
        return browser.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map((e) => e.textContent)",
            selector)

    def row(deal):
        return texts(f"#score-table tr[data-deal='{deal}'] td")
    assert row(0) == ["1", *map(str, charges)]
    totals = texts("#score-table tr.totals td")
    assert totals == ["Total", *map(str, charges)]
    css(browser, "#next-deal")[0].click()
    wait(browser, lambda d: css(d, "#score-table tr[data-deal='1'].current"),
         "the second deal in play")
    assert row(1)[1:] == ["…", "…"] and row(0) == ["1", *map(str, charges)]
    browser.get(f"{base}/?delay=0")  # this tab's game again: the score is still there
    settled(browser)
    assert row(0) == ["1", *map(str, charges)]
    assert css(browser, "#arranged")[0].is_displayed()
    browser.execute_script("sessionStorage.clear()")
    browser.get(f"{base}/?delay=0")  # a new game, dealt by the server
    settled(browser)
    assert not css(browser, "#arranged")[0].is_displayed()


# ---------------------------------------------------------------------- the page's layout
#: A desktop window and a phone's (CSS pixels).
WINDOWS = [(1280, 800), (390, 844)]


@pytest.fixture(scope="module")
def big_table():
    """A seven-player match (the widest table: eight columns in the score table), random
    bots, arranged games allowed."""
    base, app, stop = serve("--players", "7", "--bots", "random", "--allow-arranged")
    yield base, app
    stop()


@contextmanager
def window(driver, width: int, height: int):
    """The page laid out in a ``width`` x ``height`` window (DevTools' device metrics, so
    a width below the browser's own minimum window works too), then the window restored."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    try:
        yield
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def sideways_overflow(driver) -> dict:
    """``{"page": px, "window": px, "board": px, "side": px}``: how wide the page's
    content is, the window, and the play view's board and side column."""
    return driver.execute_script("""
        const width = (sel) => document.querySelector(sel).getBoundingClientRect().width;
        return {page: document.documentElement.scrollWidth, window: window.innerWidth,
                board: width("#table"), side: width("#play-view .side")};""")


def test_a_seven_player_match_fits_a_desktop_and_a_phone_window(big_table, browser, capsys):
    """The score table of seven players is wider than the side column: it scrolls in its
    own box, and the page never scrolls sideways. The result panel of a deal that is not
    the match's last shows no absent verdict as the text "null"."""
    base, _ = big_table
    browser.get(f"{base}/?delay=0&seed=3")
    settled(browser)
    play_out_the_deal(browser)
    assert css(browser, "#score-table")[0].is_displayed()
    result = css(browser, "#result")[0]
    assert result.is_displayed() and "Next deal" in result.text
    assert "null" not in result.text and "undefined" not in result.text
    for width, height in WINDOWS:
        with window(browser, width, height):
            size = sideways_overflow(browser)
            assert size["window"] == width
            assert size["page"] <= size["window"], (width, size)
            # the board is not squeezed beside the side column (a phone stacks them)
            assert size["board"] >= size["side"], (width, size)
            if width < 500:
                screenshot(browser, "table-seven-players-phone.png", capsys)


def test_three_digit_move_numbers_are_shown_whole(big_table, browser):
    """A match's replay lists 300 positions: every number from 100 on lies inside its own
    box and inside the list's visible box (a list marker in a 28 px padding lost its first
    digit: "198" read ".98"). The replay view fits both windows too."""
    base, _ = big_table
    browser.get(f"{base}/?delay=0&seed=3")
    settled(browser)
    text = finished_history(seed=12, num_deals=4)
    browser.execute_script("loadReplay(arguments[0])", text)
    wait(browser, lambda d: css(d, "#rp-pos")[0].text == "position 0 of 299", "the replay")
    boxes = browser.execute_script("""
        const list = document.querySelector("#replay-moves");
        const outer = list.getBoundingClientRect();
        const inner = {left: outer.left + list.clientLeft,
                       right: outer.left + list.clientLeft + list.clientWidth};
        return [...list.querySelectorAll("li")].filter((li) => li.dataset.frame >= 100)
          .map((li) => {
            const num = li.querySelector(".num");
            const range = document.createRange();
            range.selectNodeContents(num);
            const text = range.getBoundingClientRect(), box = num.getBoundingClientRect();
            return {frame: li.dataset.frame, shown: num.textContent, text: [text.left, text.right],
                    box: [box.left, box.right], list: [inner.left, inner.right]};
          });""")
    assert len(boxes) == 200
    for b in boxes:
        assert b["shown"] == f"{b['frame']}.", b
        assert b["box"][0] <= b["text"][0] and b["text"][1] <= b["box"][1], b
        assert b["list"][0] <= b["box"][0] and b["box"][1] <= b["list"][1], b
    for width, height in WINDOWS:
        with window(browser, width, height):
            size = sideways_overflow(browser)
            assert size["page"] <= size["window"], (width, size)
    # the first and last buttons: words every font has, not media symbols (U+23EE, U+23ED)
    # that many system fonts lack and draw as empty boxes
    for button in css(browser, "#replay-controls button"):
        assert button.get_attribute("aria-label") or button.text.isascii()
        assert all(ord(c) < 0x2000 or 0x25A0 <= ord(c) < 0x2600 for c in button.text), \
            button.text
    css(browser, "#tab-play")[0].click()


def test_the_icon_is_served_under_the_servers_headers(big_table):
    """Browsers ask for ``/favicon.ico`` whatever the page links: it is an icon (not a
    404), with the security headers of every answer; the page's own link resolves too."""
    base, _ = big_table
    with urllib.request.urlopen(f"{base}/favicon.ico", timeout=10) as r:
        assert r.status == 200
        assert r.headers["Content-Type"] == "image/x-icon"
        assert r.read(4) == b"\x00\x00\x01\x00"  # an ICO file's header
        assert "default-src 'none'" in r.headers["Content-Security-Policy"]
        assert r.headers["X-Content-Type-Options"] == "nosniff"
    with urllib.request.urlopen(f"{base}/", timeout=10) as r:
        page = r.read().decode()
    icon = re.search(r'<link rel="icon" href="([^"]+)" type="image/svg\+xml">', page)
    assert icon, "the page links no icon"
    with urllib.request.urlopen(f"{base}{icon[1]}", timeout=10) as r:
        assert r.status == 200 and r.headers["Content-Type"] == "image/svg+xml"
        assert r.read().startswith(b"<svg")
