"""The documentation builds and its links lead somewhere.

``mkdocs build --strict`` (the site of ``docs/``, ``mkdocs.yml``) fails on a broken link
or anchor between pages, a page left out of the nav, a missing included file (RULES.md,
ARCHITECTURE.md, CHANGELOG.md are embedded, not copied) and an API reference to an object
that does not exist. It builds offline: no theme fonts, no notebook execution, nothing
fetched. The Markdown files outside ``docs/`` (README.md, RULES.md, models/README.md, ...)
are what a reader of the repository sees without the site; their relative links and
anchors are checked here, with a Markdown parser so that a link inside a code span or
block is not taken for one.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

from markdown_it import MarkdownIt
from mdit_py_plugins.anchors import anchors_plugin

ROOT = Path(__file__).resolve().parents[1]
#: Folders that hold no documentation of the project (tools' caches, build outputs).
SKIP_DIRS = {"site", "build", "dist", "runs", "node_modules", "__pycache__"}


def markdown_files(root: Path) -> list[Path]:
    """Every ``.md`` file of the tree, without hidden folders (``.venv``, ``.git``) and
    build outputs; symlinked folders (``docs/notebooks``) are not followed, so each file
    is read once."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS
                         and not d.endswith(".egg-info"))
        found += [Path(folder) / f for f in sorted(files) if f.endswith(".md")]
    return found


def _parser() -> MarkdownIt:
    # GitHub's renderer: tables, and heading ids as GitHub slugs them.
    return MarkdownIt("commonmark").enable("table").use(anchors_plugin, max_level=6)


#: A line that makes MkDocs generate a page's content (an included file, an API
#: reference): the anchors of such a page exist only in the built site, which
#: ``mkdocs build --strict`` checks.
GENERATED = re.compile(r"^(--8<--|::: )", re.MULTILINE)


def links_and_anchors(path: Path) -> tuple[list[str], set[str] | None]:
    """The link and image targets of a Markdown file, and the anchors its headings get
    (``None`` for a page whose content MkDocs generates)."""
    text = path.read_text(encoding="utf-8")
    tokens = _parser().parse(text)
    targets: list[str] = []
    anchors: set[str] | None = None if GENERATED.search(text) else set()
    for token in tokens:
        if token.type == "heading_open" and anchors is not None:
            anchors.add(str(token.attrs["id"]))
        for child in token.children or []:
            if child.type == "link_open":
                targets.append(str(child.attrs["href"]))
            elif child.type == "image":
                targets.append(str(child.attrs["src"]))
    return targets, anchors


def broken_links(files: list[Path], root: Path) -> list[str]:
    """``file: target (why)`` for every relative link that leads nowhere: a missing file,
    a target outside the repository, or an anchor no heading of the target has."""
    anchors_of: dict[Path, set[str] | None] = {}
    broken = []
    for path in files:
        targets, anchors = links_and_anchors(path)
        anchors_of[path.resolve()] = anchors
        for target in targets:
            parts = urlsplit(target)
            if parts.scheme or parts.netloc or target.startswith("/"):
                continue  # absolute URLs are not the repository's files
            where = path.parent / unquote(parts.path) if parts.path else path
            name = f"{path.relative_to(root)}: {target}"
            resolved = where.resolve()
            if not resolved.is_relative_to(root.resolve()):
                broken.append(f"{name} (outside the repository)")
            elif not where.exists():
                broken.append(f"{name} (no such file)")
            elif parts.fragment and resolved.suffix == ".md":
                if resolved not in anchors_of:
                    anchors_of[resolved] = links_and_anchors(resolved)[1]
                anchors = anchors_of[resolved]
                if anchors is not None and parts.fragment not in anchors:
                    broken.append(f"{name} (no heading #{parts.fragment})")
    return broken


def test_every_relative_link_in_the_markdown_files_resolves():
    files = markdown_files(ROOT)
    names = {str(p.relative_to(ROOT)) for p in files}
    assert {"README.md", "RULES.md", "CHANGELOG.md", "ARCHITECTURE.md", "models/README.md",
            "docs/index.md"} <= names
    assert broken_links(files, ROOT) == []


def test_the_link_check_finds_a_missing_file_a_bad_anchor_and_an_escape(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "page.md").write_text("# A `code` title (v3)\n", encoding="utf-8")
    (tmp_path / "README.md").write_text(
        "[ok](sub/page.md#a-code-title-v3) [self](#top) [web](https://example.org/x.md)\n"
        "[gone](sub/missing.md) [anchor](sub/page.md#nowhere) [out](../elsewhere.md)\n"
        "![img](sub/missing.png) `[not a link](nowhere.md)`\n\n# Top\n\n"
        "    [indented code](nowhere.md)\n", encoding="utf-8")
    found = broken_links(markdown_files(tmp_path), tmp_path)
    assert found == [
        "README.md: sub/missing.md (no such file)",
        "README.md: sub/page.md#nowhere (no heading #nowhere)",
        "README.md: ../elsewhere.md (outside the repository)",
        "README.md: sub/missing.png (no such file)",
    ]


def test_the_readme_stays_a_front_page():
    """At most 150 lines of at most 100 characters: measured figures and history belong on
    the results page and in the changelog, where the README links."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150
    assert [i + 1 for i, line in enumerate(lines) if len(line) > 100] == []


def test_the_site_builds_strict(tmp_path):
    """The whole site, API reference and notebooks included, with warnings as errors."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's banner about MkDocs 2
    # Not --quiet: it drops the warnings that --strict turns into a failure.
    out = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict",
         "--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    site = tmp_path / "site"
    for page in ["index.html", "environment/index.html", "rules/index.html",
                 "api/pis_env/index.html", "results/index.html",
                 "notebooks/01_rules_and_environment/index.html"]:
        assert (site / page).is_file(), page
    # The contract's segment table comes from the env docstring, the rules from RULES.md.
    assert "drew_on_suit" in (site / "environment/index.html").read_text(encoding="utf-8")
    assert "Gaps in the original text" in (site / "rules/index.html").read_text(
        encoding="utf-8")
    # Sphinx roles of the docstrings are plain code (docs/hooks/sphinx_roles.py).
    api = (site / "api/pis_env/index.html").read_text(encoding="utf-8")
    assert "GameState" in api and ":class:" not in api


def test_the_decode_table_of_the_environment_page_names_every_key():
    """docs/environment.md's table of ``decode_observation`` keys is the contract code
    outside the project reads: it names exactly the keys the function returns, in a deal
    and in a match (where ``deal`` and ``scores`` join)."""
    import pis_env

    text = (ROOT / "docs" / "environment.md").read_text(encoding="utf-8")
    section = text.split("## Decoding an observation", 1)[1].split("\n## ", 1)[0]
    documented = re.findall(r"^\| `(\w+)` \|", section, re.MULTILINE)
    match_only = {"deal", "scores"}
    for num_deals in (1, 3):
        env = pis_env.env(num_players=3, num_deals=num_deals)
        env.reset(seed=0)
        vector = env.observe(env.agent_selection)["observation"]
        keys = set(pis_env.decode_observation(vector, 3, num_deals))
        expected = set(documented) - (match_only if num_deals == 1 else set())
        assert keys == expected, num_deals
