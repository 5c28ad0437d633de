"""``TorchPolicy``: a frozen actor network as one batched forward pass over many games.

The policy of a ``train/sb3/run.py`` file (or of a live SB3 model) applied to the observation
and mask rows of many games at once (``pis_env.batched``'s ``obs`` / ``masks`` or
``BatchedGame.observe`` / ``action_masks``): ``policy(obs [K, L], masks [K, 58]) ->
actions [K]``. ``train.vector.sb3_vec_env`` plays its snapshot opponents with it and
``agents.search`` its network rollouts (``rollout_policy="network"``); it lives here, in
``agents``, so that both can import it (``agents`` never imports ``train``). torch is
imported when a policy is built (the ``[train]`` extra, as for ``agents.ppo``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


class TorchPolicy:
    """A frozen actor network as a batched opponent: one torch forward pass for all the
    games waiting on it, logits of illegal actions masked, then argmax
    (``deterministic=True``) or a sample (Gumbel-max, its own seeded generator).

    The network input is built as ``train``'s policies expect: ``features`` ``("obs",)``
    or ``("obs", "mask")`` (``None``: whichever matches the first layer's width), then
    ``obs_norm`` (VecNormalize statistics ``{"mean", "var", "clip", "epsilon"}``) if given.

    ``layout`` ``(num_players, num_deals, layout_version)`` is the observation layout the
    network reads (a policy file's, set by :meth:`from_numpy_policy` and
    :meth:`from_file`). Shown the rows of a *later* layout of that table (a v0 network
    opponent at the v1 table of a v1 learner) it reads their first columns, which are its
    own layout's observation (every later layout begins with the earlier ones unchanged);
    rows of any other width are a ``ValueError`` naming both layouts. Without ``layout``
    the rows are taken as they come. A network of single deals built with ``table_deals``
    above 1 plays at a match table of that many deals as ``agents.ppo.PPOAgent`` does: it
    reads each row's deal view (``pis_env.observation.deal_view_indices``), every deal of
    the match as the single deal it was trained on.

    Build it with :meth:`from_sb3` (a snapshot of a live ``MaskablePPO`` or its policy),
    :meth:`from_state_dict` (SB3 ``MlpPolicy`` keys ``mlp_extractor.policy_net.*`` and
    ``action_net.*``), :meth:`from_numpy_policy` (``agents.ppo.NumpyPolicy``, e.g. the
    league's snapshots) or :meth:`from_file` (``policy.zip`` / ``policy.pt``).

    Its forward passes are small: on a busy machine run them with
    ``torch.set_num_threads(1)`` (``train``'s ``torch_threads: 1`` during rollouts); with
    more threads than free cores torch's thread pool can make them 10-100x slower."""

    def __init__(self, net, *, features: Sequence[str] | None = None,
                 obs_norm: Mapping | None = None, deterministic: bool = False,
                 seed: int | None = None, name: str = "snapshot",
                 layout: tuple[int, int, int] | None = None,
                 table_deals: int | None = None):
        import torch

        from pis_env.observation import LAYOUT_VERSIONS, Layout, deal_view_indices

        self.net = net.eval().requires_grad_(False)
        self.features = None if features is None else tuple(features)
        self.deterministic = bool(deterministic)
        self.name = name
        self.in_features = next(m for m in net.modules()
                                if isinstance(m, torch.nn.Linear)).in_features
        self.gen = torch.Generator()
        self.gen.manual_seed(int(np.random.SeedSequence(seed).generate_state(1)[0]))
        if obs_norm:
            self.norm_mean = np.asarray(obs_norm["mean"], dtype=np.float32)
            self.norm_scale = (1.0 / np.sqrt(np.asarray(obs_norm["var"], dtype=np.float32)
                                             + float(obs_norm.get("epsilon", 1e-8))))
            self.norm_clip = float(obs_norm.get("clip", 10.0))
        else:
            self.norm_mean = None
        self.layout = layout
        #: The layout it reads (the engine's protocol attribute: the batched engine shows
        #: each policy its own layout); None: whatever the table shows.
        self.layout_version: int | None = None if layout is None else int(layout[2])
        self.layout_size: int | None = None
        self._later_sizes: dict[int, int] = {}  # row width of a later layout -> version
        self._deal_views: dict[int, np.ndarray] = {}  # match row width -> its deal view
        if layout is not None:
            n, d, version = layout
            self.layout_size = Layout.of(n, d, version).size
            self._later_sizes = {Layout.of(n, d, v).size: v for v in LAYOUT_VERSIONS
                                 if v > version}
            if d == 1 and table_deals is not None and table_deals > 1:
                # a later layout's deal view begins with this layout's deal observation
                self._deal_views = {
                    Layout.of(n, table_deals, v).size:
                        deal_view_indices(n, table_deals, v)[:self.layout_size]
                    for v in LAYOUT_VERSIONS if v >= version}

    # ------------------------------------------------------------------ builders
    @staticmethod
    def _mlp(layers: list[tuple[np.ndarray, np.ndarray]], activation: str):
        """``nn.Sequential`` from ``(weight [out, in], bias)`` pairs."""
        import torch

        act = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[activation]
        mods: list = []
        for i, (w, b) in enumerate(layers):
            w = torch.as_tensor(np.asarray(w, dtype=np.float32)).clone()
            lin = torch.nn.Linear(w.shape[1], w.shape[0])
            with torch.no_grad():
                lin.weight.copy_(w)
                lin.bias.copy_(torch.as_tensor(np.asarray(b, dtype=np.float32)))
            mods.append(lin)
            if i < len(layers) - 1:
                mods.append(act())
        return torch.nn.Sequential(*mods)

    @classmethod
    def from_state_dict(cls, state_dict: Mapping, activation: str = "tanh", **kwargs):
        """From SB3 ``MlpPolicy`` weights (tensors or arrays; value-net keys ignored)."""
        def arr(v):
            return v.detach().cpu().numpy() if hasattr(v, "detach") else np.asarray(v)

        layers, i = [], 0
        while f"mlp_extractor.policy_net.{i}.weight" in state_dict:
            layers.append((arr(state_dict[f"mlp_extractor.policy_net.{i}.weight"]),
                           arr(state_dict[f"mlp_extractor.policy_net.{i}.bias"])))
            i += 2
        if "action_net.weight" not in state_dict:
            raise ValueError("not an SB3 MlpPolicy state dict (no action_net.weight)")
        layers.append((arr(state_dict["action_net.weight"]), arr(state_dict["action_net.bias"])))
        return cls(cls._mlp(layers, activation), **kwargs)

    @classmethod
    def from_sb3(cls, model, **kwargs):
        """A frozen copy of the actor of a ``MaskablePPO`` (or its policy) as it is now."""
        import torch

        policy = getattr(model, "policy", model)
        fn = getattr(policy, "activation_fn", torch.nn.Tanh)
        activation = "relu" if fn is torch.nn.ReLU else "tanh"
        if fn not in (torch.nn.ReLU, torch.nn.Tanh):
            raise ValueError(f"unsupported activation {fn!r} (tanh or relu)")
        return cls.from_state_dict(policy.state_dict(), activation, **kwargs)

    @classmethod
    def from_numpy_policy(cls, policy, **kwargs):
        """From an ``agents.ppo.NumpyPolicy`` (its features and normalisation)."""
        layers = [(w.T, b) for w, b in policy.layers]
        meta = policy.meta
        kwargs.setdefault("features", meta.get("features"))
        kwargs.setdefault("obs_norm", meta.get("obs_norm"))
        if "layout_version" in meta and "num_players" in meta:
            kwargs.setdefault("layout", (int(meta["num_players"]),
                                         int(meta.get("num_deals", 1)),
                                         int(meta["layout_version"])))
        return cls(cls._mlp(layers, policy.activation), **kwargs)

    @classmethod
    def from_file(cls, path, num_players: int | None = None, num_deals: int | None = None,
                  **kwargs):
        """From a ``train/sb3/run.py`` policy file (``.zip`` or ``.pt``), layout checked;
        a network of single deals at a table of ``num_deals`` above 1 reads the deal view."""
        from agents.ppo import NumpyPolicy, check_table, read_policy

        kwargs.setdefault("name", f"ppo:{path}")
        meta, state = read_policy(path, num_players, num_deals)
        deal_level = (check_table(meta, num_players, num_deals or 1, source=str(path))
                      if num_players is not None
                      else meta["num_deals"] == 1 and (num_deals or 1) > 1)
        if deal_level:
            kwargs.setdefault("table_deals", num_deals)
        return cls.from_numpy_policy(NumpyPolicy(meta, state), **kwargs)

    # ------------------------------------------------------------------ acting
    def observation_columns(self, obs: np.ndarray) -> np.ndarray:
        """``obs`` rows as this network reads them: its own layout's columns (see the
        class docstring)."""
        size = self.layout_size
        if size is None or obs.shape[1] == size:
            return obs
        if obs.shape[1] in self._later_sizes:
            return obs[:, :size]
        if obs.shape[1] in self._deal_views:
            return obs[:, self._deal_views[obs.shape[1]]]
        from pis_env.observation import layout_mismatch

        n, d, version = self.layout
        why = layout_mismatch(version, None, n, d, obs.shape[1]) or (
            f"it was built for observation rows of {size} entries ({n} players, {d} "
            f"deal(s), layout version {version})")
        raise ValueError(f"{self.name}: shown rows of {obs.shape[1]} entries, but {why}")

    def inputs(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs = self.observation_columns(np.asarray(obs, dtype=np.float32))
        features = self.features
        if features is None:
            features = ("obs",) if self.in_features == obs.shape[1] else ("obs", "mask")
        if features == ("obs",):
            x = obs
        else:
            x = np.concatenate([obs if f == "obs" else np.asarray(masks, dtype=np.float32)
                                for f in features], axis=1)
        if self.norm_mean is not None:
            x = np.clip((x - self.norm_mean) * self.norm_scale, -self.norm_clip, self.norm_clip)
        return np.ascontiguousarray(x, dtype=np.float32)

    def logits(self, obs: np.ndarray, masks: np.ndarray):
        """Masked logits (torch [K, 58]; illegal actions -inf)."""
        import torch

        x = torch.from_numpy(self.inputs(obs, masks))
        legal = torch.from_numpy(np.asarray(masks) != 0)
        with torch.inference_mode():
            return self.net(x).masked_fill(~legal, float("-inf"))

    def __call__(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        import torch

        logits = self.logits(obs, masks)
        if not self.deterministic:
            u = torch.rand(logits.shape, generator=self.gen).clamp_(1e-12, 1.0)
            logits = logits - torch.log(-torch.log(u))
        return logits.argmax(dim=1).numpy().astype(np.int64)

    def __repr__(self) -> str:
        return f"TorchPolicy({self.name!r}, deterministic={self.deterministic})"


__all__ = ["TorchPolicy"]
