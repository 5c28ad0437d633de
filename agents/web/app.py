"""The HTTP API and the static page: ``create_app(config)`` returns a FastAPI app.

Plain JSON requests (no websockets): the page polls nothing, it asks for one step at a
time. Every error is ``{"error": "message"}`` with a 4xx status, shown on the page.

=======  ===================================  ==============================================
method   path                                 what
=======  ===================================  ==============================================
GET      ``/``                                the page (``static/index.html``)
GET      ``/api/config``                      table size, rules, bots offered, delay, policies
POST     ``/api/games``                       new game ``{bots?, deck?, dealer?, seed?}``
GET      ``/api/games/{id}``                  the game as seat 0 sees it
POST     ``/api/games/{id}/move``             your move ``{action, version}``
POST     ``/api/games/{id}/advance``          one bot move ``{version}``
POST     ``/api/games/{id}/next-deal``        the next deal of a match ``{version}``
GET      ``/api/games/{id}/history``          ``export_history()`` JSON
POST     ``/api/replays``                     load a history ``{history: "<JSON text>"}``
GET      ``/api/replays/{id}/frames/{k}``     frame ``k``; ``?view=table|SEAT&policy=1``
=======  ===================================  ==============================================
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, StrictInt

from .policy import PolicyView
from .replay import ReplayStore
from .tables import GameStore, TableConfig, WebError

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


def create_app(config: TableConfig, policy_views: dict[str, PolicyView] | None = None
               ) -> FastAPI:
    """The server for one table configuration; ``policy_views`` maps each ``ppo:`` spec
    offered to its ``PolicyView`` (for the policy toggle)."""
    views = dict(policy_views or {})
    games = GameStore(config, views)
    replays = ReplayStore(list(views.values()))
    app = FastAPI(title="Pis Yedili table", docs_url=None, redoc_url=None)
    app.state.games = games
    app.state.replays = replays

    @app.exception_handler(WebError)
    async def web_error(_: Request, e: WebError):
        return JSONResponse({"error": e.message}, status_code=e.status)

    @app.exception_handler(RequestValidationError)
    async def bad_body(_: Request, e: RequestValidationError):
        parts = []
        for err in e.errors():
            where = ".".join(str(x) for x in err.get("loc", ()) if x != "body")
            parts.append(f"{where or 'body'}: {err.get('msg')}")
        return JSONResponse({"error": "bad request: " + "; ".join(parts)}, status_code=422)

    @app.get("/", include_in_schema=False)
    def index():
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/api/config")
    def get_config():
        return {
            "num_players": config.rules.num_players,
            "rules": config.rules.to_dict(),
            "bots": list(config.bots),
            "offered": list(config.offered),
            "delay_ms": config.delay_ms,
            "policies": sorted(views),
        }

    @app.post("/api/games", status_code=201)
    def new_game(body: NewGame | None = None):
        body = body or NewGame()
        session = games.create(body.bots, body.deck, body.dealer, body.seed)
        with session.lock:
            return session.state()

    @app.get("/api/games/{game_id}")
    def get_game(game_id: str):
        session = games.get(game_id)
        with session.lock:
            return session.state()

    @app.post("/api/games/{game_id}/move")
    def move(game_id: str, body: Move):
        session = games.get(game_id)
        with session.lock:
            session.move(body.action, body.version)
            return session.state()

    @app.post("/api/games/{game_id}/advance")
    def advance(game_id: str, body: Version):
        session = games.get(game_id)
        with session.lock:
            session.advance(body.version)
            return session.state()

    @app.post("/api/games/{game_id}/next-deal")
    def next_deal(game_id: str, body: Version):
        session = games.get(game_id)
        with session.lock:
            session.next_deal(body.version)
            return session.state()

    @app.get("/api/games/{game_id}/history")
    def history(game_id: str):
        session = games.get(game_id)
        with session.lock:
            text = session.history()
        return Response(text, media_type="application/json", headers={
            "Content-Disposition": f'attachment; filename="pis-yedili-{game_id}.json"'})

    @app.post("/api/replays", status_code=201)
    def load_replay(body: History):
        import json

        text = body.history if isinstance(body.history, str) else json.dumps(body.history)
        return replays.load(text).summary()

    @app.get("/api/replays/{replay_id}/frames/{k}")
    def frame(replay_id: str, k: int, view: str = "table", policy: bool = False):
        return replays.get(replay_id).frame(k, view, policy)

    return app
