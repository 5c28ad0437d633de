"""A deadline for receiving each request, which uvicorn does not have.

uvicorn waits for a request's headers and body as long as bytes keep coming: its
keep-alive timeout restarts on every byte, so a client sending a byte every few seconds
holds a connection (and a place under ``--max-connections``) for ever. ``DeadlineProtocol``
is uvicorn's own h11 protocol with one timer more; ``server.uvicorn_config`` sets its
``deadline`` (``--request-deadline``).
"""

from __future__ import annotations

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


class DeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline: a request's headers and body must be in
    within ``deadline`` seconds of the connection being made or of the previous answer
    being sent, else the connection is closed. The clock stops once the request is in,
    so a slow answer (a long replay load) is not cut off."""

    deadline = 10.0

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._deadline_timer = None
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._deadline_timer = self.loop.call_later(self.deadline, self._too_slow)

    def _disarm(self) -> None:
        timer = getattr(self, "_deadline_timer", None)
        if timer is not None:
            timer.cancel()
            self._deadline_timer = None

    def _too_slow(self) -> None:
        self._deadline_timer = None
        if not self.transport.is_closing() and self.conn.their_state is not h11.DONE:
            self.logger.info("dropped a client that sent its request too slowly")
            self.transport.close()

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is h11.DONE:
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state in (h11.IDLE,
                                                                         h11.SEND_BODY):
            self._arm()

    def connection_lost(self, exc) -> None:
        self._disarm()
        super().connection_lost(exc)
