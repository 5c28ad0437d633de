"""Browser sessions: an unguessable cookie issued on a client's first request.

A game belongs to the session that created it (``tables.GameStore``), and the
per-session quotas count by it. The cookie ``pis_session`` is a random 192-bit id and an
HMAC-SHA256 tag of it under a key drawn when the server starts, so the server checks a
cookie without keeping a table of the ids it issued, and a cookie it did not issue (or one
of an earlier run of the server) is replaced by a new session. The cookie is
``HttpOnly`` (no script reads it), ``SameSite=Strict`` (no other site's page sends it)
and ``Secure`` on HTTPS.

``Sessions`` is an ASGI middleware: it puts the session id in the request's state
(``request.state.session``) and adds ``Set-Cookie`` to the answer when it issued one.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from http.cookies import CookieError, SimpleCookie

COOKIE = "pis_session"


class Sessions:
    """The ASGI middleware (see the module docstring)."""

    def __init__(self, app, key: bytes | None = None):
        self.app = app
        self.key = key or secrets.token_bytes(32)

    def _tag(self, sid: str) -> str:
        return hmac.new(self.key, sid.encode(), hashlib.sha256).hexdigest()[:32]

    def issue(self) -> tuple[str, str]:
        """A new session: ``(id, cookie value)``."""
        sid = secrets.token_urlsafe(24)
        return sid, f"{sid}.{self._tag(sid)}"

    def check(self, value: str) -> str | None:
        """The session id of a cookie value this server issued, else ``None``."""
        sid, _, tag = value.partition(".")
        if not sid or len(value) > 100 or not hmac.compare_digest(tag, self._tag(sid)):
            return None
        return sid

    def _from_headers(self, headers) -> str | None:
        for name, value in headers:
            if name != b"cookie":
                continue
            try:
                jar = SimpleCookie(value.decode("latin-1"))
            except CookieError:
                continue
            if COOKIE in jar:
                return self.check(jar[COOKIE].value)
        return None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        sid = self._from_headers(scope["headers"])
        cookie = None
        if sid is None:
            sid, value = self.issue()
            secure = "; Secure" if scope.get("scheme") == "https" else ""
            cookie = (f"{COOKIE}={value}; Path=/; HttpOnly; SameSite=Strict{secure}"
                      ).encode("latin-1")
        scope.setdefault("state", {})["session"] = sid

        async def send_cookie(message):
            if cookie is not None and message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie)]
            await send(message)

        await self.app(scope, receive, send_cookie)
