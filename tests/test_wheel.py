"""The package works installed, not cloned: a wheel built from the tracked files, installed
into a fresh virtualenv, and used from a directory that is not a checkout.

The wheel is built from a copy of the files git knows (tracked, or new and not ignored),
so a stale ``build/`` or ``*.egg-info`` of the working tree cannot leak into it. The
virtualenv is layered on the test's own environment (a ``.pth`` file puts its
site-packages after the new one's, as the Makefile's ``.venv-rllib`` does), so torch and
the other dependencies come from there and the wheel installs with ``--no-deps``, offline.
The first tests check the name resolution (``pis_env.shipped``) in this interpreter.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

import pytest

import agents
from agents.ppo import PolicyLoadError
from pis_env import Rules, shipped

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------------- resolution
@pytest.mark.parametrize("name, kind, file", [
    ("ppo_2p", "model", "ppo_2p.pt"),
    ("ppo_2p.pt", "model", "ppo_2p.pt"),
    ("models/ppo_4p_v2.pt", "model", "ppo_4p_v2.pt"),
    ("belief_4p", "model", "belief_4p.pt"),
    ("strict", "rules", "strict.yaml"),
    ("configs/rules/match.yaml", "rules", "match.yaml"),
    ("ppo_4p", "config", "ppo_4p.yaml"),
    ("configs/ppo_4p.yaml", "config", "ppo_4p.yaml"),
])
def test_shipped_names_resolve_from_any_directory(tmp_path, monkeypatch, name, kind, file):
    monkeypatch.chdir(tmp_path)
    path = shipped.resolve(name, kind)
    assert path.is_absolute() and path.name == file and path.is_file()


def test_a_file_in_the_working_directory_wins_and_unknown_names_stay_as_given(tmp_path,
                                                                              monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs" / "rules").mkdir(parents=True)
    own = tmp_path / "configs" / "rules" / "strict.yaml"
    own.write_text("draw_rule: one\n")
    assert shipped.resolve("configs/rules/strict.yaml", "rules") == Path(
        "configs/rules/strict.yaml")
    assert Rules.from_yaml("configs/rules/strict.yaml").draw_rule == "one"
    assert Rules.from_yaml("strict").draw_rule != "one"  # the bare name is the shipped one
    for name in ("models/nothing.pt", "../models/ppo_2p.pt", "other/ppo_2p.pt", ""):
        assert shipped.resolve(name, "model") == Path(name)
    not_a_kind: Any = "policy"
    with pytest.raises(ValueError, match="unknown kind"):
        shipped.resolve("ppo_2p", not_a_kind)


def test_missing_files_say_not_found(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="not found.*shipped policies: ppo_2p"):
        agents.make("ppo", path="models/no_such_bot.zip")
    with pytest.raises(ValueError, match="rules file not found"):
        Rules.from_yaml("configs/rules/no_such_rules.yaml")
    with pytest.raises((FileNotFoundError, PolicyLoadError), match="not found"):
        agents.make("search", determinize="belief", belief_path=str(tmp_path / "belief_9p.pt"))


def test_the_shipped_files_are_the_repository_folders():
    """The editable install maps models/ and configs/ themselves (one copy of each file)."""
    assert shipped.shipped_dir("model") == ROOT / "models"
    assert shipped.shipped_dir("rules") == ROOT / "configs" / "rules"
    assert set(shipped.shipped_names("rules")) == {p.stem for p in
                                                   (ROOT / "configs/rules").glob("*.yaml")}


# ---------------------------------------------------------------------- the wheel
def tracked_copy(dest: Path) -> Path:
    """The files git knows, copied to ``dest`` (deleted ones skipped)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return dest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    source = tracked_copy(work / "src")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--no-index", "-q", "-w", str(work / "dist"), str(source)],
                   check=True, capture_output=True)
    (built,) = (work / "dist").glob("pis_yedili-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """``(python, bin directory, environment, a working directory outside the tree)``."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "_layered_on_test_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index",
                    "--ignore-installed", "-q", str(wheel)], check=True, capture_output=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    cwd = tmp_path_factory.mktemp("elsewhere")
    return python, venv / "bin", env, cwd


def start(installed, *args: str) -> subprocess.Popen:
    _, _, env, cwd = installed
    return subprocess.Popen(list(args), cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen, timeout: float = 300) -> str:
    """The output of a finished command; a failure shows what it printed."""
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, out + err
    return out


def run(installed, *args: str, timeout: float = 300) -> str:
    return finish(start(installed, *args), timeout)


def test_the_wheel_holds_the_code_the_exports_and_the_configs_only(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    models = sorted(n for n in names if n.startswith("pis_yedili_models/"))
    assert models == sorted([f"pis_yedili_models/{p.name}" for p in
                             (ROOT / "models").glob("*.pt")] + ["pis_yedili_models/__init__.py"])
    configs = {n.removeprefix("pis_yedili_configs/") for n in names
               if n.startswith("pis_yedili_configs/")}
    assert {str(p.relative_to(ROOT / "configs")) for p in
            (ROOT / "configs").rglob("*.yaml")} < configs
    for package in ("pis_env", "agents", "train"):
        assert f"{package}/py.typed" in names
    assert "agents/ui/web/static/index.html" in names
    assert not [n for n in names if n.endswith(".zip") or n.startswith(("tests/", "models/"))]
    # the exports (about 0.6 MB a network, one per table size to come) fit; the .zip
    # archives would add 23 MB
    assert wheel.stat().st_size < 12_000_000


def test_installed_wheel_plays_serves_and_trains_outside_a_checkout(installed):
    python, bindir, env, cwd = installed
    where = run(installed, str(python), "-c",
                "import pis_env, agents, train, pis_yedili_models; "
                "print(pis_env.__file__, agents.__file__, train.__file__, "
                "pis_yedili_models.__file__); "
                "print(agents.make('ppo', path='models/ppo_2p.zip').policy.meta['num_players'], "
                "agents.make('search', num_players=4, determinize='belief').model is not None)")
    assert str(ROOT) not in where and where.count(str(bindir.parent)) == 4, where
    assert where.split()[-2:] == ["2", "True"], where

    # Three commands at once (a fresh install compiles the numba kernels of search first):
    # bots by the names the docs use, a shipped rules file and search with its belief
    # model; a missing policy; training from a shipped config, as a module.
    tournament = start(installed, str(bindir / "pis-tournament"),
                       "--agents", "ppo:models/ppo_2p.zip,search?rollouts=8",
                       "--deals", "2", "--workers", "1", "--no-progress", "--no-save",
                       "--rules", "configs/rules/strict.yaml")
    missing = start(installed, str(bindir / "pis-tournament"), "--agents",
                    "ppo:models/nope.zip,random", "--deals", "1", "--no-save")
    training = start(installed, str(python), "-m", "train.sb3.run", "--config",
                     "configs/ppo_4p.yaml", "total_timesteps=512", "vec_env=dummy", "n_envs=2",
                     "ppo.n_steps=256", "ppo.batch_size=256", "policy.net_arch=[16]",
                     "eval.deals=0", "pretrain.teacher=null", "log.tensorboard=false",
                     "log.progress=false", "max_minutes=null", "run_dir=run4p")

    # The browser table on a free loopback port, the shipped bot and rules by bare name.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([str(bindir / "pis-serve"), "--port", str(port), "--bots",
                               "ppo:ppo_2p", "--rules", "strict"], cwd=cwd, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        page = _get(f"http://127.0.0.1:{port}/", server)
        assert "<html" in page.lower()
    finally:
        server.terminate()
        server.wait(timeout=30)

    _, error = missing.communicate(timeout=300)
    assert missing.returncode != 0 and "not found" in error and "corrupt" not in error
    out = finish(training)
    assert (cwd / "run4p" / "policy.pt").is_file(), out
    assert "--config" in run(installed, str(bindir / "pis-train"), "--help")
    out = finish(tournament)
    assert "search" in out and "ppo:models/ppo_2p.zip" in out, out


def _get(url: str, server: subprocess.Popen, wait: float = 60) -> str:
    deadline = time.monotonic() + wait
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.read().decode()
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                output = server.stdout.read().decode() if server.stdout else ""
                raise AssertionError(f"pis-serve did not answer: {output}") from None
            time.sleep(0.2)
