"""The HTTP API and the static page: ``create_app(config, bots)`` returns a FastAPI app.

Plain JSON requests (no websockets). A bot's move is started by ``advance`` and made in a
bot lane (``bots``): the answer comes at once with status ``bot_thinking`` and the page
polls ``GET /api/games/{id}`` until the move is in. Every error, whatever its status
(400, 403, 404, 405, 409, 413, 415, 422, 429, 500, 503), is ``{"error": "message"}`` (a
429 or 503 with ``Retry-After``); a 500 says no more than that (the traceback goes to the
server's log).

=======  ======================================  ===========================================
method   path                                    what
=======  ======================================  ===========================================
GET      ``/``                                   the page (``static/index.html``)
GET      ``/favicon.ico``                        the page's icon (``static/favicon.ico``)
GET      ``/api/config``                         table size, rules, bots offered, delay, ...
POST     ``/api/games``                          new game ``{bots?, deck?, dealer?, seed?}``
GET      ``/api/games/{id}?since=N``             the game as seat 0 sees it, log from move N
POST     ``/api/games/{id}/move``                your move ``{action, version}``
POST     ``/api/games/{id}/advance``             start one bot move ``{version}``
POST     ``/api/games/{id}/next-deal``           the next deal of a match ``{version}``
GET      ``/api/games/{id}/history``             ``export_history()`` JSON, once it is over
POST     ``/api/replays``                        load a history ``{history: "<JSON text>"}``
GET      ``/api/replays/{id}/moves?start=&count=``  a page of the replay's move list
GET      ``/api/replays/{id}/frames/{k}``        frame ``k``; ``?view=table|SEAT&policy=1``
=======  ======================================  ===========================================

A game belongs to the browser session that made it (``sessions``: a cookie issued on
the first request). A ``POST`` that changes a game answers with the move log from the
``version`` it named on; a ``GET`` from ``since`` (default 0). A chosen ``deck``,
``dealer`` or ``seed`` is refused (``403``) unless the server allows arranged games.

``guard.Guard`` checks every request first (host, origin, content type, body size) and
adds the security headers. Replay answers are encoded in the thread pool (the endpoints
are plain functions that return encoded ``JSONResponse``s), never on the event loop.
"""

from __future__ import annotations

import json
import logging
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, StrictInt
from starlette.exceptions import HTTPException

from agents.ppo import PPOAgent
from agents.ui.web.bots import BotWorkers
from agents.ui.web.guard import SECURITY_HEADERS, SERVER_ERROR, Guard
from agents.ui.web.policy import PolicyView
from agents.ui.web.replay import MOVES_PAGE, ReplayStore
from agents.ui.web.sessions import Sessions
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
    version: StrictInt


class Version(_Body):
    version: StrictInt


class History(_Body):
    history: str | dict[str, Any]


def create_app(config: TableConfig, bots: dict[str, Any], *,
               allowed_hosts: tuple[str, ...] = (), allowed_origins: tuple[str, ...] = (),
               max_body_bytes: int = 2_000_000,
               bot_weights: dict[str, int] | None = None) -> FastAPI:
    """The server for one table configuration. ``bots`` maps each spec offered to its
    prototype agent (built once, at start-up: ``server.build``); each ``ppo`` one (a
    ``PPOAgent``: ``ppo:PATH``, or ``ppo``, the shipped network of the table) also gets a
    ``PolicyView`` for the policy toggle. ``bot_weights``: what each spec's bot
    holds in a game (``bots.warm_weight``; default: its prototype's pickled size). The bot
    lanes start with the app and stop with it (its lifespan)."""
    missing = [spec for spec in config.offered if spec not in bots]
    if missing:
        raise ValueError(f"no prototype agent for the offered bot(s) {missing}")
    views = {spec: PolicyView(spec, agent) for spec, agent in bots.items()
             if isinstance(agent, PPOAgent)}  # ppo:PATH, and ppo: its table's network
    workers = BotWorkers(dict(bots), processes=config.bot_workers,
                         time_limit=config.move_time_limit, rules=config.rules.to_dict())
    weights = {spec: bot_bytes(a) for spec, a in bots.items()} | dict(bot_weights or {})
    games = GameStore(config, workers, views, weights,
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
    app.add_middleware(Sessions)
    app.add_middleware(Guard, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins,
                       max_body_bytes=max_body_bytes)

    @app.exception_handler(WebError)
    async def web_error(_: Request, e: WebError):
        return JSONResponse({"error": e.message}, status_code=e.status, headers=e.headers)

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
        # Guard answers an app's exception first; this is the framework's last resort
        # (outside every middleware), so it adds the security headers itself.
        log.error("%s %s failed", request.method, request.url.path, exc_info=e)
        return JSONResponse({"error": SERVER_ERROR}, status_code=500,
                            headers={k.decode(): v.decode() for k, v in SECURITY_HEADERS})

    @app.get("/", include_in_schema=False)
    def index():
        return FileResponse(STATIC / "index.html")

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon():
        # Browsers ask for it by this path whatever the page links (a JSON answer opened
        # in a tab, a bookmark): a 404 there only fills the log.
        return FileResponse(STATIC / "favicon.ico", media_type="image/x-icon")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/api/config")
    async def get_config():
        return {
            "num_players": config.rules.num_players,
            "num_deals": config.rules.num_deals,
            "rules": config.rules.to_dict(),
            "bots": list(config.bots),
            "offered": list(config.offered),
            "delay_ms": config.delay_ms,
            "bot_min_ms": round(config.bot_min_s * 1000),
            "allow_arranged": config.allow_arranged,
            "policies": sorted(views),
            "show_bot_policy": config.show_bot_policy,
        }

    def owner(request: Request) -> str:
        return request.state.session

    @app.post("/api/games", status_code=201)
    async def new_game(request: Request, body: NewGame | None = None):
        body = body or NewGame()
        session = games.create(owner(request), body.bots, body.deck, body.dealer, body.seed)
        with session.lock:
            return session.state()

    @app.get("/api/games/{game_id}")
    async def get_game(request: Request, game_id: str, since: int = Query(0, ge=0)):
        session = games.get(game_id, owner(request))
        with session.lock:
            return session.state(since)

    @app.post("/api/games/{game_id}/move")
    async def move(request: Request, game_id: str, body: Move):
        session = games.get(game_id, owner(request))
        with session.lock:
            session.move(body.action, body.version)
            return session.state(body.version)

    @app.post("/api/games/{game_id}/advance")
    async def advance(request: Request, game_id: str, body: Version):
        session = games.get(game_id, owner(request))
        with session.lock:
            session.advance(body.version)
            return session.state(body.version)

    @app.post("/api/games/{game_id}/next-deal")
    async def next_deal(request: Request, game_id: str, body: Version):
        session = games.get(game_id, owner(request))
        with session.lock:
            session.next_deal(body.version)
            return session.state(body.version)

    @app.get("/api/games/{game_id}/history")
    async def history(request: Request, game_id: str):
        session = games.get(game_id, owner(request))
        with session.lock:
            text = session.history()
        return Response(text, media_type="application/json", headers={
            "Content-Disposition": f'attachment; filename="pis-yedili-{game_id}.json"'})

    @app.post("/api/replays", status_code=201)
    def load_replay(body: History):
        # A plain function: FastAPI runs it in the thread pool, and the answer is encoded
        # here too (a JSONResponse renders when it is made), off the event loop.
        try:
            text = body.history if isinstance(body.history, str) else json.dumps(body.history)
        except RecursionError:
            raise WebError(400, "not a replayable history: nested too deeply") from None
        return JSONResponse(replays.load(text).summary(), status_code=201)

    @app.get("/api/replays/{replay_id}/moves")
    def replay_moves(replay_id: str, start: int = Query(0, ge=0),
                     count: int = Query(MOVES_PAGE, ge=1, le=MOVES_PAGE)):
        return JSONResponse(replays.get(replay_id).moves(start, count))

    @app.get("/api/replays/{replay_id}/frames/{k}")
    def frame(replay_id: str, k: int, view: str = Query("table", max_length=8),
              policy: bool = False):
        return JSONResponse(replays.get(replay_id).frame(k, view, policy))

    return app
