"""The HTTP API and the static page: ``create_app(config, bots)`` returns a FastAPI app.

Plain JSON requests (no websockets). A bot's move is started by ``advance`` and made in a
bot lane (``bots``): the answer comes at once with status ``bot_thinking`` and the page
polls ``GET /api/games/{id}`` until the move is in. Every error, whatever its status
(400, 403, 404, 405, 409, 413, 415, 422, 500, 503), is ``{"error": "message"}``; a 500
says no more than that (the traceback goes to the server's log).

=======  ===================================  ==============================================
method   path                                 what
=======  ===================================  ==============================================
GET      ``/``                                the page (``static/index.html``)
GET      ``/api/config``                      table size, rules, bots offered, delay, policies
POST     ``/api/games``                       new game ``{bots?, deck?, dealer?, seed?}``
GET      ``/api/games/{id}``                  the game as seat 0 sees it
POST     ``/api/games/{id}/move``             your move ``{action, version}``
POST     ``/api/games/{id}/advance``          start one bot move ``{version}``
POST     ``/api/games/{id}/next-deal``        the next deal of a match ``{version}``
GET      ``/api/games/{id}/history``          ``export_history()`` JSON, once the game is over
POST     ``/api/replays``                     load a history ``{history: "<JSON text>"}``
GET      ``/api/replays/{id}/frames/{k}``     frame ``k``; ``?view=table|SEAT&policy=1``
=======  ===================================  ==============================================

``guard.Guard`` checks every request first (host, origin, content type, body size) and
adds the security headers.
"""

from __future__ import annotations

import json
import logging
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, StrictInt
from starlette.exceptions import HTTPException

from agents.ui.web.bots import BotWorkers
from agents.ui.web.guard import Guard
from agents.ui.web.policy import PolicyView
from agents.ui.web.replay import ReplayStore
from agents.ui.web.tables import GameStore, TableConfig, WebError, bot_bytes

log = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NewGame(_Body):
    bots: list[str] | None = None
    deck: list[StrictInt | str] | None = None
    dealer: StrictInt | None = None
    seed: StrictInt | None = None


class Move(_Body):
    action: StrictInt
    version: StrictInt | None = None


class Version(_Body):
    version: StrictInt | None = None


class History(_Body):
    history: str | dict[str, Any]


def create_app(config: TableConfig, bots: dict[str, Any], *,
               allowed_hosts: tuple[str, ...] = (), allowed_origins: tuple[str, ...] = (),
               max_body_bytes: int = 2_000_000) -> FastAPI:
    """The server for one table configuration. ``bots`` maps each spec offered to its
    prototype agent (built once, at start-up: ``server.build``); each ``ppo:`` one also
    gets a ``PolicyView`` for the policy toggle. The bot lanes start with the app and
    stop with it (its lifespan)."""
    missing = [spec for spec in config.offered if spec not in bots]
    if missing:
        raise ValueError(f"no prototype agent for the offered bot(s) {missing}")
    views = {spec: PolicyView(spec, agent) for spec, agent in bots.items()
             if spec.startswith("ppo:")}
    workers = BotWorkers(dict(bots), processes=config.bot_workers,
                         time_limit=config.move_time_limit)
    games = GameStore(config, workers, views, {spec: bot_bytes(a) for spec, a in bots.items()},
                      {spec: getattr(a, "layout_version", 0) for spec, a in bots.items()})
    replays = ReplayStore(list(views.values()))

    @asynccontextmanager
    async def lifespan(_: FastAPI):
        yield
        workers.close()

    app = FastAPI(title="Pis Yedili table", docs_url=None, redoc_url=None,
                  openapi_url=None, lifespan=lifespan)
    app.state.games = games
    app.state.replays = replays
    app.state.workers = workers
    app.add_middleware(Guard, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins,
                       max_body_bytes=max_body_bytes)

    @app.exception_handler(WebError)
    async def web_error(_: Request, e: WebError):
        return JSONResponse({"error": e.message}, status_code=e.status)

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, e: HTTPException):
        message = {404: "not found", 405: "method not allowed"}.get(e.status_code, e.detail)
        if e.status_code == 400 and e.detail == "There was an error parsing the body":
            message = "bad request: the body is not valid JSON (or nested too deeply)"
        return JSONResponse({"error": message}, status_code=e.status_code,
                            headers=getattr(e, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def bad_body(_: Request, e: RequestValidationError):
        parts = []
        for err in e.errors():
            where = ".".join(str(x) for x in err.get("loc", ()) if x != "body")
            parts.append(f"{where or 'body'}: {err.get('msg')}")
        return JSONResponse({"error": "bad request: " + "; ".join(parts)}, status_code=422)

    @app.exception_handler(Exception)
    async def server_error(request: Request, e: Exception):
        log.error("%s %s failed", request.method, request.url.path, exc_info=e)
        return JSONResponse({"error": "internal server error (the server's log has the "
                                      "details)"}, status_code=500)

    @app.get("/", include_in_schema=False)
    def index():
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/api/config")
    async def get_config():
        return {
            "num_players": config.rules.num_players,
            "rules": config.rules.to_dict(),
            "bots": list(config.bots),
            "offered": list(config.offered),
            "delay_ms": config.delay_ms,
            "policies": sorted(views),
            "show_bot_policy": config.show_bot_policy,
        }

    @app.post("/api/games", status_code=201)
    async def new_game(body: NewGame | None = None):
        body = body or NewGame()
        session = games.create(body.bots, body.deck, body.dealer, body.seed)
        with session.lock:
            return session.state()

    @app.get("/api/games/{game_id}")
    async def get_game(game_id: str):
        session = games.get(game_id)
        with session.lock:
            return session.state()

    @app.post("/api/games/{game_id}/move")
    async def move(game_id: str, body: Move):
        session = games.get(game_id)
        with session.lock:
            session.move(body.action, body.version)
            return session.state()

    @app.post("/api/games/{game_id}/advance")
    async def advance(game_id: str, body: Version):
        session = games.get(game_id)
        with session.lock:
            session.advance(body.version)
            return session.state()

    @app.post("/api/games/{game_id}/next-deal")
    async def next_deal(game_id: str, body: Version):
        session = games.get(game_id)
        with session.lock:
            session.next_deal(body.version)
            return session.state()

    @app.get("/api/games/{game_id}/history")
    async def history(game_id: str):
        session = games.get(game_id)
        with session.lock:
            text = session.history()
        return Response(text, media_type="application/json", headers={
            "Content-Disposition": f'attachment; filename="pis-yedili-{game_id}.json"'})

    @app.post("/api/replays", status_code=201)
    def load_replay(body: History):
        # sync: a replay is stepped through once here (bounded by the body limit and
        # replay.MAX_REPLAY_ACTIONS), in the server's thread pool, off the event loop
        try:
            text = body.history if isinstance(body.history, str) else json.dumps(body.history)
        except RecursionError:
            raise WebError(400, "not a replayable history: nested too deeply") from None
        return replays.load(text).summary()

    @app.get("/api/replays/{replay_id}/frames/{k}")
    def frame(replay_id: str, k: int, view: str = "table", policy: bool = False):
        return replays.get(replay_id).frame(k, view, policy)

    return app
