"""The browser table's front door and its critic, read closely: the guard's refusals as
bytes on the wire (their headers and words), origins compared without case, the request
deadline's timer armed, cancelled and fired at each step of uvicorn's protocol (with
uvicorn's own steps stubbed), and the page's value estimate against torch's."""

from __future__ import annotations

import logging

import h11
import numpy as np
import pytest
import torch
from uvicorn.protocols.http.h11_impl import H11Protocol

from agents.ui.web.deadline import DeadlineProtocol
from agents.ui.web.policy import ValueHead

from .test_api import BASE, client


# ---------------------------------------------------------------------- the guard
def test_a_refusal_is_json_with_its_own_length():
    api = client()
    r = api.get("/api/config", headers={"Host": "evil.example"})
    assert r.status_code == 400
    assert r.headers["content-type"] == "application/json"
    assert r.headers["content-length"] == str(len(r.content))
    assert r.json() == {"error": "this server does not answer to Host 'evil.example' "
                                 "(pis-serve --allow-host NAME to add one)"}


def test_a_body_over_the_limit_is_refused_in_words():
    api = client("--max-body-bytes", "1024")
    r = api.post("/api/games", content=b"{" + b" " * 2000 + b"}",
                 headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    assert r.json() == {"error": "request body too large: at most 1024 bytes "
                                 "(pis-serve --max-body-bytes)"}


def test_origins_are_compared_without_case():
    api = client()
    for origin in (BASE, BASE.upper(), "http://127.0.0.1:8000/"):
        r = api.post("/api/games", json={}, headers={"Origin": origin})
        assert r.status_code == 201, origin
    named = client(base_url="http://localhost:8000")
    for origin in ("http://localhost:8000", "http://LocalHost:8000"):
        r = named.post("/api/games", json={}, headers={"Origin": origin})
        assert r.status_code == 201, origin
    proxied = client("--allow-host", "cards.example.com",
                     "--allow-origin", "HTTPS://Cards.Example.com",
                     base_url="http://cards.example.com")
    r = proxied.post("/api/games", json={}, headers={"Origin": "https://CARDS.example.com"})
    assert r.status_code == 201


# ---------------------------------------------------------------------- the deadline
class Timer:
    def __init__(self, delay, callback):
        self.delay, self.callback, self.cancelled = delay, callback, False

    def cancel(self):
        self.cancelled = True


class Loop:
    def __init__(self):
        self.timers: list[Timer] = []

    def call_later(self, delay, callback):
        self.timers.append(Timer(delay, callback))
        return self.timers[-1]


class Transport:
    def __init__(self, closing=False):
        self.closing, self.closed = closing, False

    def is_closing(self):
        return self.closing

    def close(self):
        self.closed = True


class Conn:
    def __init__(self, state):
        self.their_state = state


def protocol(state=h11.SEND_BODY, closing=False, deadline=0.5) -> DeadlineProtocol:
    """A ``DeadlineProtocol`` with only what its own methods read: a loop that records
    its timers, a transport, h11's state and a logger."""
    p = DeadlineProtocol.__new__(DeadlineProtocol)
    p.loop, p.transport, p.conn = Loop(), Transport(closing), Conn(state)
    p.logger = logging.getLogger("test.deadline")
    p.deadline = deadline
    return p


@pytest.fixture
def uvicorn_steps(monkeypatch):
    """uvicorn's own steps as no-ops that note their calls."""
    calls = []
    for name in ("connection_made", "handle_events", "on_response_complete",
                 "connection_lost"):
        monkeypatch.setattr(H11Protocol, name,
                            lambda self, *args, name=name: calls.append((name, args)))
    return calls


def test_a_connection_is_given_the_deadline_and_a_too_slow_one_is_closed(uvicorn_steps,
                                                                         caplog):
    p = protocol(state=h11.SEND_BODY)
    transport = p.transport
    p.connection_made(transport)
    assert uvicorn_steps == [("connection_made", (transport,))]
    (timer,) = p.loop.timers
    assert timer.delay == 0.5 and p._deadline_timer is timer
    with caplog.at_level(logging.INFO, logger="test.deadline"):
        timer.callback()
    assert transport.closed and p._deadline_timer is None
    assert caplog.messages == ["dropped a client that sent its request too slowly"]


@pytest.mark.parametrize("state, closing", [(h11.DONE, False), (h11.SEND_BODY, True)])
def test_the_deadline_spares_a_request_that_is_in_or_a_closing_connection(state, closing,
                                                                          caplog):
    p = protocol(state=state, closing=closing)
    p._deadline_timer = None
    with caplog.at_level(logging.INFO, logger="test.deadline"):
        p._too_slow()
    assert not p.transport.closed and caplog.messages == []


def test_the_clock_stops_once_the_request_is_in(uvicorn_steps):
    p = protocol(state=h11.SEND_BODY)
    p.connection_made(p.transport)
    (timer,) = p.loop.timers
    p.handle_events()
    assert not timer.cancelled and p._deadline_timer is timer  # still coming in
    p.conn.their_state = h11.DONE
    p.handle_events()
    assert timer.cancelled and p._deadline_timer is None
    assert [name for name, _ in uvicorn_steps] == ["connection_made", "handle_events",
                                                   "handle_events"]


@pytest.mark.parametrize("state, closing, rearmed", [
    (h11.IDLE, False, True), (h11.SEND_BODY, False, True),
    (h11.DONE, False, False), (h11.MUST_CLOSE, False, False), (h11.IDLE, True, False)])
def test_an_answer_sent_restarts_the_clock_for_the_next_request(uvicorn_steps, state,
                                                                closing, rearmed):
    p = protocol(state=state, closing=closing)
    p._deadline_timer = None
    p.on_response_complete()
    assert uvicorn_steps == [("on_response_complete", ())]
    assert bool(p.loop.timers) is rearmed
    if rearmed:
        assert p._deadline_timer is p.loop.timers[0] and p.loop.timers[0].delay == 0.5


def test_a_lost_connection_cancels_its_timer_and_tells_uvicorn_why(uvicorn_steps):
    p = protocol()
    p._arm()
    (timer,) = p.loop.timers
    p._arm()  # arming again replaces the timer
    assert timer.cancelled and p._deadline_timer is p.loop.timers[1]
    why = ConnectionResetError("peer")
    p.connection_lost(why)
    assert p.loop.timers[1].cancelled and p._deadline_timer is None
    assert uvicorn_steps == [("connection_lost", (why,))]
    bare = DeadlineProtocol.__new__(DeadlineProtocol)
    bare._disarm()  # before connection_made: nothing to cancel


# ---------------------------------------------------------------------- the critic
@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_the_value_head_is_the_critics_forward_pass(activation):
    rng = np.random.default_rng(0)
    sizes = [9, 7, 5, 1]
    net = torch.nn.Sequential()
    for a, b in zip(sizes[:-2], sizes[1:-1]):
        net.append(torch.nn.Linear(a, b))
        net.append(torch.nn.ReLU() if activation == "relu" else torch.nn.Tanh())
    net.append(torch.nn.Linear(sizes[-2], 1))
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 1, p.shape).astype(np.float32)))
    linear = [m for m in net if isinstance(m, torch.nn.Linear)]
    head = ValueHead([(m.weight.detach().numpy().T, m.bias.detach().numpy())
                      for m in linear], activation, "public")
    for _ in range(20):
        x = rng.normal(0, 2, sizes[0]).astype(np.float32)
        with torch.no_grad():
            want = float(net(torch.from_numpy(x))[0])
        assert head(x) == pytest.approx(want, rel=1e-5, abs=1e-5)
