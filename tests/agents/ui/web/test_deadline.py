"""Slow clients at a real server (uvicorn on a loopback port, as ``pis-serve`` runs it):
a request's headers and body must arrive within ``--request-deadline``, and
``--max-connections`` bounds the connections served at once. Every trickle is bounded:
a client gives up once it has sent its whole request."""

from __future__ import annotations

import http.client
import select
import socket
import time
from urllib.parse import urlsplit

import pytest

from .test_browser import serve

#: Seconds between the bytes of a trickling client.
TRICKLE = 0.02


@pytest.fixture(scope="module")
def server():
    base, app, stop = serve("--request-deadline", "0.5", "--max-connections", "4",
                            "--deals", "1")
    yield urlsplit(base).port, app
    stop()


def trickle(port: int, head: bytes, slow: bytes) -> int:
    """Send ``head`` at once and ``slow`` a byte at a time; the number of slow bytes
    sent before the server closed the connection (``len(slow)``: it never did)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(head)
        for i in range(len(slow)):
            readable, _, _ = select.select([s], [], [], TRICKLE)
            if readable and not s.recv(65536):
                return i
            try:
                s.send(slow[i:i + 1])
            except OSError:  # reset by the server
                return i
        return len(slow)


def test_a_client_trickling_its_headers_is_dropped(server):
    port, _ = server
    request = b"GET /api/config HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * 300 + b"\r\n\r\n"
    sent = trickle(port, b"", request)
    assert sent < len(request) / 2, "the server waited for the whole trickled request"


def test_a_client_trickling_its_body_is_dropped(server):
    port, _ = server
    body = b'{"bots": null' + b" " * 300 + b"}"
    head = (b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
            b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n")
    sent = trickle(port, head, body)
    assert sent < len(body) / 2, "the server waited for the whole trickled body"


def test_prompt_clients_keep_their_connection(server):
    port, _ = server
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    for _ in range(3):  # keep-alive: the deadline restarts with each answer
        conn.request("GET", "/api/config")
        r = conn.getresponse()
        assert r.status == 200 and r.read()
    conn.close()


def test_connections_past_the_limit_get_503(server):
    port, _ = server
    idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(4)]
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/api/config")
        assert conn.getresponse().status == 503
        conn.close()
    finally:
        for s in idle:
            s.close()
    for _ in range(200):  # the server sees the idle ones go (a condition, not a delay)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/api/config")
        status = conn.getresponse().status
        conn.close()
        if status == 200:
            break
        time.sleep(0.01)
    assert status == 200
