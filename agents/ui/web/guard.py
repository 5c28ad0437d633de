"""The checks every request passes before the app sees it, as one ASGI middleware.

WHY each one:

- ``Host`` must be one this server answers to (``127.0.0.1``, ``localhost``, ``[::1]``
  and the address it listens on, plus ``--allow-host``), with at most a numeric port:
  otherwise a foreign page can point its own domain at 127.0.0.1 (DNS rebinding) and use
  the whole API. A request with two ``Host`` or two ``Origin`` headers is refused: the
  guard and the framework must not read different ones.
- ``Origin``, when the browser sends one, must be this server's own (the ``Host`` the
  request came to) or one named with ``--allow-origin`` (a proxy that serves the page
  under another name): a foreign page cannot create, play or load games in your tabs.
- A ``POST`` must say ``Content-Type: application/json``: a form or ``text/plain`` is a
  "simple" cross-site request that browsers send without asking; JSON is not.
- A body is refused with ``413`` before it is read when its ``Content-Length`` is over
  the limit, and as soon as the bytes received pass it when it is streamed.
- Every response carries a content security policy (nothing but this server's own
  scripts, styles and requests; no framing), ``X-Frame-Options: DENY``,
  ``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: no-referrer``.

A refusal is the app's one error shape, ``{"error": "..."}``. An exception the app did
not answer is logged and answered here, a ``500`` in the same shape with the same
headers (the framework's own last-resort handler sits outside every middleware).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.exceptions import HTTPException

log = logging.getLogger(__name__)

#: A ``Host`` value: a name, an IPv4 address or a bracketed IPv6 one, and a numeric port.
HOST_VALUE = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(:[0-9]{1,5})?")
#: Headers a request may carry once at most.
SINGLE = ("host", "origin", "content-type", "content-length", "cookie")

#: Hosts a local server answers to whatever it is told.
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")

SECURITY_HEADERS = [
    (b"content-security-policy",
     b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
     b"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


class BodyTooLarge(HTTPException):
    """Raised from ``receive`` when a streamed body passes the limit. An ``HTTPException``
    so that FastAPI's body reading passes it on as is (it wraps other errors as 400)."""


def _host_name(host: str) -> str | None:
    """The name of a ``Host`` header value (``[::1]:8000`` -> ``::1``), lower case;
    ``None`` when it is not a host and an optional numeric port."""
    host = host.strip().lower()
    match = HOST_VALUE.fullmatch(host)
    if match is None:
        return None
    name = match.group(1)
    return name[1:-1] if name.startswith("[") else name


def _allowed_name(host: str) -> str:
    """An ``--allow-host`` or ``--host`` value as the name a ``Host`` header is matched
    by: a port given with it is dropped (``cards.example:8443`` -> ``cards.example``), a
    bare IPv6 address (never a ``Host`` value's form) is kept as it is."""
    return _host_name(host) or host.strip().lower()


def _origin(url: str) -> str:
    """``scheme://host[:port]`` of an origin or URL, lower case."""
    parts = urlsplit(url.strip().lower())
    return f"{parts.scheme}://{parts.netloc}"


class Guard:
    """The ASGI middleware (see the module docstring)."""

    def __init__(self, app, *, allowed_hosts: Iterable[str] = (),
                 allowed_origins: Iterable[str] = (), max_body_bytes: int = 2_000_000):
        self.app = app
        self.hosts = {_allowed_name(h) for h in (*LOCAL_HOSTS, *allowed_hosts)}
        self.any_host = "*" in self.hosts
        self.origins = {_origin(o) for o in allowed_origins}
        self.max_body = int(max_body_bytes)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers: dict[str, str] = {}
        twice = None
        for k, v in scope["headers"]:
            name = k.decode("latin-1").lower()
            if name in headers and name in SINGLE:
                twice = name
            headers.setdefault(name, v.decode("latin-1"))

        async def send_secured(message):
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = list(message.get("headers", [])) + SECURITY_HEADERS
            await send(message)

        if twice is not None:
            return await _refuse(send_secured, 400, f"the {twice} header appears twice")
        host = headers.get("host", "")
        name = _host_name(host)
        if name is None or not self.any_host and name not in self.hosts:
            return await _refuse(send_secured, 400, f"this server does not answer to Host "
                                 f"{host!r} (pis-serve --allow-host NAME to add one)")
        origin = headers.get("origin")
        if origin is not None and origin != "null":
            scheme = "https" if scope.get("scheme") == "https" else "http"
            own = {f"{scheme}://{host.lower()}"} | self.origins
            if _origin(origin) not in own:
                return await _refuse(send_secured, 403, f"requests from {origin!r} are not "
                                     "allowed (pis-serve --allow-origin URL to add one)")
        elif origin == "null":
            return await _refuse(send_secured, 403, "requests from an opaque origin are not "
                                 "allowed")
        if scope["method"] == "POST":
            kind = headers.get("content-type", "").split(";")[0].strip().lower()
            if kind != "application/json":
                return await _refuse(send_secured, 415, "a POST body must be JSON with "
                                     "Content-Type: application/json")
        length = headers.get("content-length")
        if length is not None:
            if not length.isdigit():
                return await _refuse(send_secured, 400, "bad Content-Length header")
            if int(length) > self.max_body:
                return await _refuse(send_secured, 413, self._too_large())
        received = 0

        async def counted():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    raise BodyTooLarge(413, self._too_large())
            return message

        started = False

        async def tracked(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send_secured(message)

        try:
            await self.app(scope, counted, tracked)
        except BodyTooLarge as e:
            if started:
                raise
            await _refuse(send_secured, 413, e.detail)
        except Exception as e:
            log.error("%s %s failed", scope["method"], scope["path"], exc_info=e)
            if started:
                raise
            await _refuse(send_secured, 500, SERVER_ERROR)

    def _too_large(self) -> str:
        return (f"request body too large: at most {self.max_body} bytes "
                "(pis-serve --max-body-bytes)")


SERVER_ERROR = "internal server error (the server's log has the details)"


async def _refuse(send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
