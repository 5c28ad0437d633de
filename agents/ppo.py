"""A trained PPO policy as an agent: ``agents.make("ppo", path="models/ppo_2p.zip")``.

Two file formats are read, both written by ``train/sb3/run.py``:

* the SB3 archive (``.zip``) that ``MaskablePPO.save`` writes, with a ``pis_yedili.json``
  member that records the observation layout, the rules and the network. Only the
  weights (``policy.pth``, read with ``torch.load(weights_only=True)``) and that JSON are
  read here; the archive's pickled ``data`` member is never unpickled. (``MaskablePPO.load``
  does unpickle it: treat a ``.zip`` from elsewhere as code.)
* any other SB3 ``PPO`` or ``MaskablePPO`` archive of an ``MlpPolicy`` trained on the
  gymnasium views (``PisYedili-v0``, ``PisYedili-Events-v0``), e.g. through SB3's own
  ``make_vec_env``: the layout is read from the observation space's readable ``_shape``
  that SB3 writes beside the pickled one in the ``data`` JSON (``sb3_metadata``; a
  single deal unless ``num_deals`` is given), the activation from ``policy_kwargs``'
  readable ``activation_fn``; nothing is unpickled. ``VecNormalize`` statistics live
  outside the archive: such a model is refused only if its weights do not fit.
* the weights-only export (``.pt``, ``python -m train.export``): a plain dict of tensors
  and strings, loaded with ``torch.load(weights_only=True)`` and checked against the
  SHA-256 stored in it (``agents.common.weights_file``; a mismatch is a ``PolicyLoadError``
  naming the file, a file without a digest loads with a warning).

The agent runs the policy network in numpy (a few matrix products, no SB3 ``predict``
overhead) and always chooses among the legal actions of the mask: the argmax of the
logits by default, a sample with ``deterministic=False``.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent
from pis_env import LAYOUT_VERSION, LAYOUT_VERSIONS
from pis_env.engine import NUM_ACTIONS
from pis_env.observation import Layout, deal_view_indices, layout_mismatch

#: ``"format"`` of the metadata, and its version (bumped when the file layout changes).
POLICY_FORMAT = "pis-yedili-ppo-policy"
FORMAT_VERSION = 1
#: The metadata member of an SB3 archive.
META_NAME = "pis_yedili.json"
#: The shipped network of a table size: what ``agents.make("ppo", num_players=n)`` plays
#: without a path.
DEFAULT_PATH = "models/ppo_{n}p.zip"
#: Input features a policy may be trained on (concatenated in this order).
FEATURES = ("obs", "mask")
ACTIVATIONS = ("tanh", "relu")


class PolicyLoadError(ValueError):
    """A policy file that is missing, corrupt, or made for another observation layout."""


# ---------------------------------------------------------------------- metadata
def make_metadata(
    *,
    rules: dict,
    net_arch: dict,
    activation: str,
    features: list[str],
    obs_norm: dict | None = None,
    extra: dict | None = None,
    layout_version: int = LAYOUT_VERSION,
) -> dict:
    """The metadata saved with every policy and checkpoint; ``layout_version`` is that of
    the env version it was trained on (``pis_yedili_v{N}``: layout N)."""
    n, d = int(rules["num_players"]), int(rules.get("num_deals", 1))
    layout_size = Layout.of(n, d, layout_version).size
    input_size = input_size_of(layout_size, features)
    meta = {
        "format": POLICY_FORMAT,
        "format_version": FORMAT_VERSION,
        "layout_version": layout_version,
        "layout_size": layout_size,
        "num_players": n,
        "num_deals": d,
        "rules": dict(rules),
        "features": list(features),
        "input_size": input_size,
        "net_arch": {"pi": list(net_arch["pi"]), "vf": list(net_arch["vf"])},
        "activation": activation,
        "obs_norm": obs_norm,
    }
    if extra:
        meta.update(extra)
    return meta


def input_size_of(layout_size: int, features) -> int:
    size = 0
    for f in features:
        if f not in FEATURES:
            raise ValueError(f"unknown policy feature {f!r}; allowed: {', '.join(FEATURES)}")
        size += layout_size if f == "obs" else NUM_ACTIONS
    return size


def check_metadata(meta: Any, source: str = "policy") -> dict:
    """Validates the structure of a metadata dict (format, version, fields)."""
    if not isinstance(meta, dict) or meta.get("format") != POLICY_FORMAT:
        raise PolicyLoadError(
            f"{source}: not a pis-yedili PPO policy (no {POLICY_FORMAT} metadata)"
        )
    if meta.get("format_version") != FORMAT_VERSION:
        raise PolicyLoadError(
            f"{source}: policy file format {meta.get('format_version')!r}; this version reads "
            f"format {FORMAT_VERSION}"
        )
    for key in ("layout_version", "layout_size", "num_players", "num_deals", "features",
                "net_arch", "activation", "rules"):
        if key not in meta:
            raise PolicyLoadError(f"{source}: policy metadata lacks {key!r}")
    if meta["activation"] not in ACTIVATIONS:
        raise PolicyLoadError(f"{source}: unknown activation {meta['activation']!r}")
    return meta


def check_layout(meta: dict, num_players: int, num_deals: int = 1, source: str = "policy",
                 layout_version: int | None = None) -> None:
    """Refuses a policy saved for another observation layout (version, size, table). A
    policy loads at its own layout version (any this pis_env has); ``layout_version``,
    when given, is the table's, and a policy of another one is refused naming both."""
    version = meta["layout_version"]
    if isinstance(version, bool) or version not in LAYOUT_VERSIONS:
        raise PolicyLoadError(
            f"{source} was saved with observation layout version {version!r} "
            f"(size {meta['layout_size']}), but this pis_env has layout versions "
            f"{', '.join(map(str, LAYOUT_VERSIONS))}: retrain or export it with one of them"
        )
    if layout_version is not None and version != layout_version:
        raise PolicyLoadError(f"{source}: " + layout_mismatch(version, layout_version))
    expected = Layout.of(num_players, num_deals, version).size
    if meta["num_players"] == num_players and meta["num_deals"] == 1 < num_deals:
        raise PolicyLoadError(
            f"{source} was trained on single deals (observation size {meta['layout_size']}); "
            f"this observation is of {num_deals}-deal matches (size {expected}): a "
            "single-deal network plays each deal of a match through its deal view "
            "(agents.make('ppo', ..., num_deals=N))"
        )
    if meta["num_players"] == num_players and meta["num_deals"] != num_deals:
        raise PolicyLoadError(
            f"{source} was trained for {meta['num_deals']}-deal matches (observation size "
            f"{meta['layout_size']}); this table plays {num_deals} deal(s) (observation size "
            f"{expected}): seat it at a {meta['num_deals']}-deal table (num_deals="
            f"{meta['num_deals']}), or use a network trained on single deals, which plays "
            "each deal of a match of any length"
        )
    if meta["num_players"] != num_players or meta["num_deals"] != num_deals:
        raise PolicyLoadError(
            f"{source} was trained for {meta['num_players']} players and {meta['num_deals']} "
            f"deal(s) (observation size {meta['layout_size']}); this table has {num_players} "
            f"players and {num_deals} deal(s) (observation size {expected})"
        )
    if meta["layout_size"] != expected:
        raise PolicyLoadError(
            f"{source} expects observations of size {meta['layout_size']}, but layout version "
            f"{version} for {num_players} players has size {expected}"
        )


# ---------------------------------------------------------------------- files
def resolve_path(path: str | Path) -> Path:
    """``path`` as given when it exists, else the shipped policy of that name
    (``models/ppo_2p.zip``, ``ppo_2p``: ``pis_env.shipped``), else ``path`` unchanged."""
    from pis_env.shipped import resolve

    return resolve(path, "model")


def read_policy(path: str | Path, num_players: int | None = None,
                num_deals: int | None = None) -> tuple[dict, dict[str, np.ndarray]]:
    """``(metadata, state_dict as numpy arrays)`` of a ``.zip`` or ``.pt`` policy file.

    Raises ``FileNotFoundError`` for a missing file and ``PolicyLoadError`` for anything
    that is not a readable policy. Never unpickles. ``num_players``/``num_deals`` only
    choose the table of an SB3 archive that was not saved here (``sb3_metadata``)."""
    p = resolve_path(path)
    if not p.exists():
        raise FileNotFoundError(f"policy file not found: {path} (shipped policies: "
                                f"{', '.join(_shipped_policies())})")
    if p.is_dir():
        raise PolicyLoadError(
            f"{p} is a directory; pass a policy file (a run's policy.zip or policy.pt)"
        )
    if _is_sb3_archive(p):
        try:
            with zipfile.ZipFile(p) as archive:
                names = set(archive.namelist())
                if META_NAME not in names and "data" not in names:
                    raise PolicyLoadError(
                        f"{p}: an archive with neither {META_NAME} nor SB3's data member, "
                        "so its observation layout cannot be checked"
                    )
                meta = data = None
                if META_NAME in names:
                    meta = json.loads(archive.read(META_NAME).decode("utf-8"))
                else:
                    data = json.loads(archive.read("data").decode("utf-8"))
                if "policy.pth" not in names:
                    raise PolicyLoadError(f"{p}: the archive holds no policy.pth weights")
                raw = archive.read("policy.pth")
        except (zipfile.BadZipFile, OSError, EOFError, KeyError, ValueError) as e:
            if isinstance(e, PolicyLoadError):
                raise
            raise PolicyLoadError(f"{p}: corrupt policy archive ({e})") from e
        state = _torch_load(io.BytesIO(raw), p)
        if meta is None:
            if not isinstance(state, dict):
                raise PolicyLoadError(f"{p}: the weights are not a state dict")
            meta = sb3_metadata(data, state, str(p), num_players, num_deals)
    else:
        data = _load_verified(p)
        if data.get("format") != POLICY_FORMAT:
            raise PolicyLoadError(f"{p}: not a pis-yedili policy export")
        try:
            meta = json.loads(data["meta"])
            state = data["state_dict"]
        except (KeyError, TypeError, ValueError) as e:
            raise PolicyLoadError(f"{p}: corrupt policy export ({e})") from e
    check_metadata(meta, str(p))
    if not isinstance(state, dict):
        raise PolicyLoadError(f"{p}: the weights are not a state dict")
    arrays = {k: v.detach().cpu().numpy() for k, v in state.items() if hasattr(v, "detach")}
    return meta, arrays


def sb3_metadata(data: Any, state: dict, source: str, num_players: int | None = None,
                 num_deals: int | None = None) -> dict:
    """The metadata of an SB3 (Maskable)PPO archive saved elsewhere, from the readable
    fields of its ``data`` JSON (never the pickled ones) and the weights' shapes: the
    observation size gives the layout (version and table: the ``num_players`` whose size
    fits at one deal, or at ``num_deals`` when given), ``policy_kwargs``' readable
    ``activation_fn`` the activation (SB3's default Tanh when absent). An observation
    space that is not a flat ``Box`` of one of the layouts is a ``PolicyLoadError``."""
    space = data.get("observation_space") if isinstance(data, dict) else None
    shape = space.get("_shape") if isinstance(space, dict) else None
    if not (isinstance(shape, list) and len(shape) == 1 and isinstance(shape[0], int)):
        raise PolicyLoadError(
            f"{source}: an SB3 archive whose observation space is not a flat Box "
            f"(readable shape {shape!r}); a policy of the gymnasium views PisYedili-v0 or "
            "PisYedili-Events-v0 plays here")
    size = shape[0]
    counts = sorted({1, num_deals or 1})  # a deal-level network also plays a match table
    fits = [(n, d, v) for v in LAYOUT_VERSIONS for n in range(2, 8) for d in counts
            if (num_players is None or n == num_players) and Layout.of(n, d, v).size == size]
    if len(fits) != 1:
        table = (f"{num_players or '2..7'} players and "
                 f"{' or '.join(map(str, counts))} deal(s)")
        what = "several observation layouts" if fits else "no observation layout"
        alone = [f"{n} players at one deal (layout {v})" for v in LAYOUT_VERSIONS
                 for n in range(2, 8) if Layout.of(n, 1, v).size == size]
        raise PolicyLoadError(
            f"{source}: an SB3 archive with observations of size {size}, which is {what} "
            f"of {table}" + (f"; it fits {alone[0]}" if alone and not fits else "")
            + "; pass the num_players/num_deals it was trained for")
    n, deals, version = fits[0]
    kwargs = data.get("policy_kwargs") if isinstance(data.get("policy_kwargs"), dict) else {}
    activation = str(kwargs.get("activation_fn", "Tanh")).lower()
    found = [a for a in ACTIVATIONS if a in activation]
    if len(found) != 1:
        raise PolicyLoadError(f"{source}: activation {kwargs.get('activation_fn')!r}; this "
                              f"reader runs {', '.join(ACTIVATIONS)}")

    def widths(net: str) -> list[int]:
        keys = sorted((k for k in state if k.startswith(f"mlp_extractor.{net}.")
                       and k.endswith(".weight")), key=lambda k: int(k.split(".")[2]))
        return [int(np.shape(state[k])[0]) for k in keys]

    return make_metadata(rules={"num_players": n, "num_deals": deals},
                         net_arch={"pi": widths("policy_net"), "vf": widths("value_net")},
                         activation=found[0], features=["obs"], layout_version=version,
                         extra={"source": "sb3"})


def _shipped_policies() -> list[str]:
    from pis_env.shipped import shipped_names

    return [n for n in shipped_names("model") if n.startswith("ppo_")]


def shipped_sizes() -> str:
    """The table sizes with a shipped network (``DEFAULT_PATH``), as the errors name them:
    ``"2, 3, 4"``, or ``"none"``."""
    sizes = sorted(int(m[1]) for m in map(re.compile(r"ppo_(\d)p").fullmatch,
                                          _shipped_policies()) if m)
    return ", ".join(map(str, sizes)) or "none"


def default_policy(num_players: int) -> str:
    """The shipped network of a ``num_players`` table (``DEFAULT_PATH``), or a
    ``ValueError`` naming the sizes that have one."""
    from pis_env.shipped import resolve

    path = DEFAULT_PATH.format(n=num_players)
    if resolve(path, "model").is_file():
        return path
    raise ValueError(f'"ppo": no shipped network for {num_players} players (shipped for '
                     f'{shipped_sizes()}); give path= to a policy file, '
                     f'e.g. agents.make("ppo", path="runs/ppo_{num_players}p/policy.zip")')


def _is_sb3_archive(p: Path) -> bool:
    """An SB3 archive (``data``/``policy.pth`` members), not a torch.save zip."""
    if not zipfile.is_zipfile(p):
        return False
    try:
        with zipfile.ZipFile(p) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return p.suffix == ".zip"
    return bool(names & {"data", "policy.pth", META_NAME})


def _load_verified(p: Path) -> dict:
    """A ``.pt`` export, its SHA-256 digest checked (``agents.common.weights_file``)."""
    from agents.common.weights_file import WeightsFileError, load_weights_file

    try:
        return load_weights_file(p)
    except WeightsFileError as e:
        raise PolicyLoadError(str(e)) from e


def _torch_load(source, path):
    """``agents.common.weights_file.read_weights`` with its errors as ``PolicyLoadError``."""
    from agents.common.weights_file import WeightsFileError, read_weights

    try:
        return read_weights(source, path)
    except WeightsFileError as e:
        raise PolicyLoadError(str(e)) from e


# ---------------------------------------------------------------------- the network
class NumpyPolicy:
    """The actor of a MaskableActorCriticPolicy as numpy matrix products.

    ``layers`` is a list of ``(W.T, b)``; hidden layers use ``activation``, the last one
    gives the 58 logits. Picklable and cheap to copy into other processes."""

    def __init__(self, meta: dict, state: dict[str, np.ndarray]):
        if meta.get("oracle_actor"):
            raise PolicyLoadError(
                "an oracle probe (train/ppo.py policy.oracle_actor=true): its actor reads the "
                "opponents' hidden cards, which no table shows a bot, so it cannot play; it "
                "measures what that information could buy in training")
        self.meta = meta
        self.features = tuple(meta["features"])
        self.activation = meta["activation"]
        self.input_size = int(meta.get("input_size") or input_size_of(meta["layout_size"],
                                                                        self.features))
        layers = []
        idx = 0
        try:
            while f"mlp_extractor.policy_net.{idx}.weight" in state:
                w = state[f"mlp_extractor.policy_net.{idx}.weight"]
                b = state[f"mlp_extractor.policy_net.{idx}.bias"]
                layers.append((np.ascontiguousarray(w.T, dtype=np.float32),
                               b.astype(np.float32)))
                idx += 2  # Linear, activation, Linear, ...
            layers.append((np.ascontiguousarray(state["action_net.weight"].T, dtype=np.float32),
                           state["action_net.bias"].astype(np.float32)))
        except KeyError as e:
            raise PolicyLoadError(f"the weights lack {e}") from e
        if layers[0][0].shape[0] != self.input_size or layers[-1][0].shape[1] != NUM_ACTIONS:
            raise PolicyLoadError(
                f"the weights take {layers[0][0].shape[0]} inputs and give "
                f"{layers[-1][0].shape[1]} outputs; the metadata says {self.input_size} and "
                f"{NUM_ACTIONS}"
            )
        self.layers = layers
        norm = meta.get("obs_norm")
        if norm:
            self.norm_mean: np.ndarray | None = np.asarray(norm["mean"], dtype=np.float32)
            self.norm_scale = 1.0 / np.sqrt(np.asarray(norm["var"], dtype=np.float32)
                                            + float(norm.get("epsilon", 1e-8)))
            self.norm_clip = float(norm.get("clip", 10.0))
        else:
            self.norm_mean = None

    def inputs(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The network input (features, then normalisation) of observation(s) and mask(s)."""
        if self.features == ("obs",):
            x = np.asarray(obs, dtype=np.float32)
        else:
            parts = [obs if f == "obs" else mask for f in self.features]
            x = np.concatenate([np.asarray(p, dtype=np.float32) for p in parts], axis=-1)
        if self.norm_mean is not None:
            x = np.clip((x - self.norm_mean) * self.norm_scale, -self.norm_clip, self.norm_clip)
        return x

    def logits(self, x: np.ndarray) -> np.ndarray:
        relu = self.activation == "relu"
        for w, b in self.layers[:-1]:
            x = x @ w + b
            x = np.maximum(x, 0.0) if relu else np.tanh(x)
        w, b = self.layers[-1]
        return x @ w + b

    def probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """float64[58]: the policy's distribution over the legal actions of one observation
        (a softmax of their logits, zeros elsewhere), the one ``act`` samples from."""
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise ValueError("no legal action in this observation: it is not this agent's turn")
        logits = self.logits(self.inputs(obs, mask))[legal].astype(np.float64)
        p = np.exp(logits - logits.max())
        out = np.zeros(NUM_ACTIONS)
        out[legal] = p / p.sum()
        return out

    def act(self, obs: np.ndarray, mask: np.ndarray, deterministic: bool = True,
            rng: np.random.Generator | None = None) -> int:
        """One legal action for one observation vector and its mask."""
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise ValueError("no legal action in this observation: it is not this agent's turn")
        logits = self.logits(self.inputs(obs, mask))[legal]
        if deterministic or rng is None:
            return int(legal[int(np.argmax(logits))])
        p = np.exp(logits - logits.max())
        p /= p.sum()
        return int(legal[rng.choice(legal.size, p=p)])


def check_table(meta: dict, num_players: int, num_deals: int, source: str = "policy") -> bool:
    """``check_layout`` for a table of ``num_deals`` deals, at which a network trained on
    single deals plays each deal through its deal view: True when it does so."""
    deal_level = meta["num_deals"] == 1 and num_deals > 1
    check_layout(meta, num_players, 1 if deal_level else num_deals, source=source)
    return deal_level


def load_policy(path: str | Path, num_players: int | None = None,
                num_deals: int | None = None) -> NumpyPolicy:
    """A ``NumpyPolicy`` from a file, checked against the table when its size is given."""
    meta, state = read_policy(path, num_players, num_deals)
    if num_players is not None:
        check_layout(meta, num_players, num_deals or 1, source=str(path))
    return NumpyPolicy(meta, state)


class PPOAgent(Agent):
    """A trained policy (``train/sb3/run.py``, or any SB3 (Maskable)PPO ``MlpPolicy`` of the
    gymnasium views: ``sb3_metadata``) from a ``.zip`` or weights-only ``.pt`` file, at
    the table of ``num_players`` and ``num_deals``, by default the file's. Without a
    ``path`` it plays the shipped network of its table size (``DEFAULT_PATH``, or its
    ``.pt`` export); a size without one is a ``ValueError`` naming the sizes that have
    one.

    A network trained on single deals (``num_deals=1``, the shipped ones) plays at a match
    table of any length: each observation is cut down to the deal observation it was
    trained on (``pis_env.observation.deal_view_indices``: every segment but the match's
    ``deal`` and ``scores``), so it plays every deal of the match as the single deal it
    knows. Why this rather than a match observation: the network's inputs stay exactly
    those it learned, so it plays each deal as well as it plays a single deal (a match is
    the sum of its deals' charges, and a deal-level policy that keeps its own charge low
    is most of a good match policy); what it cannot do is play to the standing, which is
    the match-aware search's job (``agents.match_value``). A network trained on matches
    plays only at tables of its own deal count (anything else is a ``PolicyLoadError``
    saying which table fits)."""

    name = "ppo"
    reads_later_layouts = False  # a network reads exactly the layout it was trained on

    def __init__(self, path: str | Path | None = None, num_players: int | None = None,
                 num_deals: int | None = None, seed: int | None = None,
                 deterministic: bool = True):
        if path is None:
            path = default_policy(2 if num_players is None else num_players)
        # The table defaults to the file's (an SB3 archive saved elsewhere: one deal).
        meta, state = read_policy(path, num_players, num_deals)
        num_players = int(meta["num_players"]) if num_players is None else num_players
        num_deals = int(meta["num_deals"]) if num_deals is None else num_deals
        super().__init__(num_players=num_players, num_deals=num_deals, seed=seed)
        self.path = str(path)
        self.deterministic = deterministic
        deal_level = check_table(meta, num_players, num_deals, source=str(path))
        self.policy = NumpyPolicy(meta, state)
        self.meta = self.policy.meta
        self.layout_version = int(self.meta["layout_version"])  # the table it reads
        #: The positions of the deal observation in the table's (``None``: the same).
        self.deal_view = (deal_view_indices(num_players, num_deals, self.layout_version)
                          if deal_level else None)
        self.observation_size = Layout.of(num_players, num_deals, self.layout_version).size
        self._readable_sizes = {self.observation_size: self.layout_version}

    def network_input(self, vector: np.ndarray) -> np.ndarray:
        """The observation the network reads: the deal view at a match table of a
        deal-level network, else ``vector`` itself."""
        return vector if self.deal_view is None else np.asarray(vector)[..., self.deal_view]

    def act(self, observation: dict) -> int:
        self.check_observation(observation["observation"])
        return self.policy.act(self.network_input(observation["observation"]),
                               observation["action_mask"], self.deterministic, self.rng)

    def probabilities(self, observation: dict) -> np.ndarray:
        """float64[58]: the policy's probabilities over the legal moves of ``observation``."""
        self.check_observation(observation["observation"])
        return self.policy.probabilities(self.network_input(observation["observation"]),
                                         observation["action_mask"])

    def __repr__(self) -> str:
        return f"PPOAgent(path={self.path!r}, num_players={self.num_players})"
