"""The browser table's two middlewares (``agents.ui.web.guard``, ``.sessions``) driven as
raw ASGI, below any framework: which hosts and origins pass, the body limit at its
boundary whether announced or streamed, an app's failure before and after it answered,
and the session cookie's form and its checks."""

from __future__ import annotations

import asyncio
import json
import logging
import re

import pytest

from agents.ui.web.guard import SECURITY_HEADERS, SERVER_ERROR, BodyTooLarge, Guard
from agents.ui.web.sessions import COOKIE, Sessions


async def _answer(scope, receive, send):
    """An app that reads its whole body and answers with its length, headers omitted."""
    size, more = 0, True
    while more:
        message = await receive()
        size += len(message.get("body", b""))
        more = message.get("more_body", False)
    scope.setdefault("seen", []).append(size)
    await send({"type": "http.response.start", "status": 200})
    await send({"type": "http.response.body", "body": str(size).encode()})


def call(app, headers: dict | list | None = None, method="GET", scheme="http",
         chunks=(b"",), path="/x"):
    """``app`` run on one request: ``(status, headers, body, scope)``."""
    if headers is None:
        headers = {"host": "127.0.0.1:8000"}
    pairs = headers.items() if isinstance(headers, dict) else headers
    scope = {"type": "http", "method": method, "path": path, "scheme": scheme,
             "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in pairs]}
    pending = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
               for i, c in enumerate(chunks)]
    sent = []

    async def receive():
        return pending.pop(0)

    async def send(message):
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    assert [m["type"] for m in sent] == ["http.response.start"] + [
        "http.response.body"] * (len(sent) - 1)
    start = sent[0]
    return start["status"], start.get("headers", []), b"".join(
        m.get("body", b"") for m in sent[1:]), scope


def error(result) -> tuple[int, str]:
    status, headers, body, _ = result
    assert (b"content-type", b"application/json") in headers
    assert (b"content-length", str(len(body)).encode()) in headers
    assert all(h in headers for h in SECURITY_HEADERS)
    return status, json.loads(body)["error"]


def host(name: str) -> dict:
    return {"host": name}


def test_the_hosts_answered_to_any_case_with_a_port():
    guard = Guard(_answer, allowed_hosts=["Example.COM", "[fe80::1]", "fe80::2", "Cards",
                                          " FE80::4 ", "table.example:8443"])
    for name in ("localhost:8000", "LOCALHOST", "127.0.0.1", "[::1]:80", "example.com",
                 "EXAMPLE.com:8080", "[FE80::1]:8000", "[fe80::2]", "cards:81", "[fe80::4]",
                 "table.example:8443", "table.example"):
        status, headers, _, _ = call(guard, host(name))
        assert status == 200, name
        assert headers == SECURITY_HEADERS  # added to an answer that had none
    # "xxample.cox" differs from an allowed name only in its first and last letters
    for name in ("evil.example", "example.com.evil", "localhost:port", "", "[fe80::3]",
                 "xxample.cox"):
        assert error(call(guard, host(name))) == (
            400, f"this server does not answer to Host {name!r} (pis-serve --allow-host "
                 "NAME to add one)")
    assert error(call(guard, {})) == (400, "this server does not answer to Host '' "
                                           "(pis-serve --allow-host NAME to add one)")
    anywhere = Guard(_answer, allowed_hosts=["*"])
    assert call(anywhere, host("anything.example:81"))[0] == 200


def test_origins_must_be_the_servers_own_on_its_scheme_or_allowed():
    guard = Guard(_answer, allowed_origins=["https://Proxy.example"])
    same = {"host": "localhost:8443", "origin": "https://localhost:8443"}
    assert call(guard, same, scheme="https")[0] == 200
    plain = {"host": "localhost:8000", "origin": "http://localhost:8000"}
    assert call(guard, plain)[0] == 200  # the same origin over plain http
    assert call(guard, {**same, "origin": "https://proxy.example"}, scheme="https")[0] == 200
    assert error(call(guard, same)) == (
        403, "requests from 'https://localhost:8443' are not allowed (pis-serve "
             "--allow-origin URL to add one)")
    assert error(call(guard, {**same, "origin": "null"})) == (
        403, "requests from an opaque origin are not allowed")
    assert call(guard, {"host": "localhost:8443"})[0] == 200  # no Origin: not a browser's


def test_a_post_must_say_json_whatever_its_parameters_or_case():
    guard = Guard(_answer)
    for kind in ("application/json", "application/json; charset=utf-8",
                 " Application/JSON ;q=1"):
        assert call(guard, {"host": "localhost", "content-type": kind},
                    method="POST")[0] == 200
    for headers in ({"host": "localhost", "content-type": "text/plain"}, host("localhost")):
        assert error(call(guard, headers, method="POST")) == (
            415, "a POST body must be JSON with Content-Type: application/json")


def test_an_announced_body_is_measured_before_it_is_read():
    guard = Guard(_answer, max_body_bytes=10)
    base = {"host": "localhost"}
    assert call(guard, {**base, "content-length": "10"}, chunks=(b"x" * 10,))[0] == 200
    too_large = (413, "request body too large: at most 10 bytes (pis-serve "
                      "--max-body-bytes)")
    result = call(guard, {**base, "content-length": "11"}, chunks=(b"x" * 11,))
    assert error(result) == too_large and "seen" not in result[3]
    for bad in ("ten", "-1", "1e3", ""):
        assert error(call(guard, {**base, "content-length": bad})) == (
            400, "bad Content-Length header")
    default = Guard(_answer)
    assert error(call(default, {**base, "content-length": "2000001"}))[1] == (
        "request body too large: at most 2000000 bytes (pis-serve --max-body-bytes)")
    assert call(default, {**base, "content-length": "2000000"}, chunks=(b"",))[0] == 200


async def _framework(scope, receive, send):
    """``_answer`` inside a framework that answers an ``HTTPException`` itself, with the
    exception's status and detail (as FastAPI does while it reads a body)."""
    try:
        await _answer(scope, receive, send)
    except BodyTooLarge as e:
        await send({"type": "http.response.start", "status": e.status_code})
        await send({"type": "http.response.body", "body": e.detail.encode()})


def test_a_streamed_body_is_refused_once_its_bytes_pass_the_limit():
    guard = Guard(_answer, max_body_bytes=10)
    too_large = "request body too large: at most 10 bytes (pis-serve --max-body-bytes)"
    assert call(guard, host("localhost"), chunks=(b"x" * 4, b"x" * 6)) [0] == 200
    assert error(call(guard, host("localhost"), chunks=(b"x" * 6, b"x" * 5))) == (
        413, too_large)
    framed = call(Guard(_framework, max_body_bytes=10), host("localhost"),
                  chunks=(b"x" * 6, b"x" * 5))
    assert framed[:3:2] == (413, too_large.encode())


def test_an_apps_failure_is_a_logged_500_unless_it_had_started_answering(caplog):
    async def broken(scope, receive, send):
        raise KeyError("boom")

    with caplog.at_level(logging.ERROR, logger="agents.ui.web.guard"):
        assert error(call(Guard(broken), path="/api/games")) == (500, SERVER_ERROR)
    (record,) = caplog.records
    assert record.getMessage() == "GET /api/games failed"
    assert isinstance(record.exc_info[1], KeyError)

    async def half(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        raise KeyError("late")

    with pytest.raises(KeyError):
        call(Guard(half))

    async def late_body(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        raise BodyTooLarge(413, "too late")

    with pytest.raises(BodyTooLarge):
        call(Guard(late_body))

    async def early_body(scope, receive, send):
        raise BodyTooLarge(413, "measured by the app")

    assert error(call(Guard(early_body))) == (413, "measured by the app")


def test_a_header_the_guard_reads_once_may_not_appear_twice():
    for name in ("host", "origin", "content-type", "content-length", "cookie"):
        pairs = [("host", "localhost"), (name, "a"), (name, "b")] if name != "host" else \
            [("host", "localhost"), ("Host", "localhost")]
        assert error(call(Guard(_answer), pairs)) == (400, f"the {name} header appears twice")
    assert call(Guard(_answer), [("host", "localhost"), ("accept", "a"),
                                 ("accept", "b")])[0] == 200


def test_other_connections_pass_through_untouched():
    seen = []

    async def app(scope, receive, send):
        seen.append(scope["type"])

    asyncio.run(Guard(app)({"type": "lifespan"}, None, None))
    asyncio.run(Sessions(app)({"type": "websocket", "headers": []}, None, None))
    assert seen == ["lifespan", "websocket"]


# ---------------------------------------------------------------------- sessions
def _sid(scope, receive, send):
    async def run():
        await send({"type": "http.response.start", "status": 200})
        await send({"type": "http.response.body", "body": scope["state"]["session"].encode()})
    return run()


def set_cookie(headers) -> str | None:
    values = [v.decode() for k, v in headers if k == b"set-cookie"]
    assert len(values) <= 1
    return values[0] if values else None


def test_a_new_session_gets_a_signed_http_only_strict_cookie():
    sessions = Sessions(_sid, key=b"k" * 32)
    status, headers, body, scope = call(sessions)
    cookie = set_cookie(headers)
    match = re.fullmatch(COOKIE + r"=([A-Za-z0-9_-]{32})\.([0-9a-f]{32}); Path=/; HttpOnly; "
                                  r"SameSite=Strict", cookie)
    assert match is not None and match.group(1) == body.decode()
    assert sessions.check(f"{match.group(1)}.{match.group(2)}") == body.decode()
    secure = set_cookie(call(sessions, scheme="https")[1])
    assert secure.endswith("; SameSite=Strict; Secure")


def test_a_cookie_this_server_issued_is_kept_and_any_other_replaced():
    sessions = Sessions(_sid, key=b"k" * 32)
    sid, value = sessions.issue()
    for cookie in (f"{COOKIE}={value}", f"other=1; {COOKIE}={value}"):
        _, headers, body, _ = call(sessions, {"host": "x", "cookie": cookie})
        assert body.decode() == sid and set_cookie(headers) is None
    # an unreadable cookie header (one the parser refuses, one it reads as empty) is
    # skipped, and the next one read
    for bad in ("a(b=c", 'bad="'):
        _, headers, body, _ = call(sessions, [("cookie", bad), ("cookie", f"{COOKIE}={value}")])
        assert body.decode() == sid and set_cookie(headers) is None
    other = Sessions(_sid, key=b"j" * 32)
    for cookie in (f"{COOKIE}={value}", f"{COOKIE}=x.y", f"{COOKIE}={sid}", "other=1"):
        _, headers, body, _ = call(other, {"host": "x", "cookie": cookie})
        assert body.decode() != sid and set_cookie(headers) is not None


def test_a_cookie_value_is_checked_for_its_form_and_length():
    sessions = Sessions(_sid, key=b"k" * 32)
    assert sessions.check("." + sessions._tag("")) is None  # no id
    longest = "a" * 67
    assert sessions.check(f"{longest}.{sessions._tag(longest)}") == longest  # 100 chars
    assert sessions.check(f"a{longest}.{sessions._tag('a' + longest)}") is None
    sid, value = sessions.issue()
    assert sessions.check(value + ".x") is None and sessions.check(value[:-1]) is None
    other, _ = sessions.issue()
    assert sessions.check(f"{other}.{value.partition('.')[2]}") is None  # a tag is its id's
