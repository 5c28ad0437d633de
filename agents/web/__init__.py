"""The browser table: play the bots, replay exported histories, see what a policy thinks.

``pis-serve`` (``python -m agents.web``) serves one static page (``static/``: plain HTML,
JavaScript and CSS, no build step) and a small JSON API (``app``) on 127.0.0.1. Games live
in memory (``tables``), replays are loaded with ``raw_env.from_history`` (``replay``), and
the policy toggle shows ``agents.ppo``'s probabilities (``policy``). Needs the ``web``
extra (FastAPI, uvicorn).
"""
