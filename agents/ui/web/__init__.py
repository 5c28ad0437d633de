"""The browser table: play the bots, replay exported histories, see what a policy thinks.

``pis-serve`` (``python -m agents.ui.web``; ``server``) serves one static page (``static/``:
plain HTML, JavaScript and CSS, no build step) and a small JSON API (``app``) on
127.0.0.1. Games live in memory (``tables``), their bots think in worker processes off
the request path (``bots``), replays are loaded with ``raw_env.from_history``
(``replay``), the policy toggle shows ``agents.ppo``'s probabilities (``policy``),
every request passes ``guard`` first (host, origin, content type, body size, security
headers) and then ``sessions`` (the browser session a game belongs to), and uvicorn
serves it with a deadline for receiving each request (``deadline``).
docs/browser-table.md is the user's page. Needs the ``web`` extra (FastAPI, uvicorn).
"""
