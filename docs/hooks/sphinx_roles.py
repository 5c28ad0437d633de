"""MkDocs hook: Sphinx cross-reference roles in docstrings read as plain code.

Some docstrings name objects as ``:class:`GameState``` (the Sphinx habit); the Markdown
renderer of mkdocstrings shows the role's prefix as text (":class:GameState"). The API
pages drop the prefix and keep the name as code, so the docstrings need not change style.
"""

from __future__ import annotations

import re

_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|obj|exc):(<code>)")


def on_page_content(html: str, **kwargs) -> str:
    return _ROLE.sub(r"\1", html)
