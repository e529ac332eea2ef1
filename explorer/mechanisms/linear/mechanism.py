"""Kernel attention with a normaliser, as a mechanism: linear attention (no decay), and the
base of RetNet and GLA, which only add a log decay a_t <= 0 on the state's rows:

    S_t = exp(a_t) (.) S_{t-1} + k_t v_t^T,   z_t = exp(a_t) (.) z_{t-1} + k_t,
    o_t = S_t^T q_t / q_t.z_t.

Its map is the kernel map with the decay mask, w_ij = q_i.k_j exp(B_i - B_j) (B the
cumulative log decay) normalised by its row sums; the fast forms are ``forms``.

The papers of RetNet, GLA and the scalar gate (and flash-linear-attention, which follows
them) read the state with no normaliser, o_t = S_t^T q_t, and scale the query by d_k^-1/2:
a mechanism that offers that form (``PAPER_SWITCHES`` among its ``params``) takes
``normalise=False`` and ``scale=d_k ** -0.5``; its unnormalised forms are ``unnormalised``."""

from __future__ import annotations

import torch

from ...maps import create
from ...text import Message
from ..recurrence import Recurrence, WRITES_FEATURES, as_float64
from .decay import prepare_log_decay
from .forms import linear_attention
from .map import weights_from_features
from .unnormalised import chunked as unnormalised_chunked, recurrent as unnormalised_recurrent
from . import STATE_KIND, WRITES


class AsGiven:
    """The identity feature map in the shape the linear forms expect: the keys and
    queries are used as the caller gives them."""

    name = "as given"
    nonfinite_rows = True          # a non-finite input row gives non-finite features

    def __init__(self, dim: int):
        self.head_dim = self.num_features = dim

    def __call__(self, x, is_query=False, offset=0, total=None, out=None):
        return x

    def parameters(self):
        return iter(())


# The papers' form: read without the normaliser, and the query scaled (by d_k^-1/2 there).
PAPER_SWITCHES = ("normalise", "scale")


class KernelRecurrence(Recurrence):
    """Additive state with a normaliser; ``log_decay`` None (no decay) or broadcastable to
    (..., N, 1) (one decay per token) or (..., N, d_k) (one per key feature). Where
    ``params`` holds ``PAPER_SWITCHES``, ``normalise`` (default True) and ``scale`` (a
    positive number multiplying q, default none) select the papers' form."""

    has_normaliser = True
    writes = WRITES_FEATURES
    params: tuple[str, ...] = ()
    map_features = "elu1"     # the feature map of q and k its map reads in the maps tab

    @property
    def has_paper_form(self) -> bool:
        return all(switch in self.params for switch in PAPER_SWITCHES)

    def paper_form(self, settings) -> bool:
        """Whether the maps tab draws the papers' form (asked for, and this one has it)."""
        return bool(getattr(settings, "paper", False)) and self.has_paper_form

    def map_inputs(self, q, k, settings, head=None, should_stop=None) -> tuple:
        """elu+1 features of the queries and keys (a normalised kernel map), and the
        parameters ``decay_params`` gives for them; in the papers' form (``settings.paper``),
        q and k as given, no normaliser and q scaled by d_k^-1/2."""
        if self.paper_form(settings):
            q, k = q.double(), k.double()
            decay = self.decay_params(q, k, settings, head, should_stop, None)
            return q, k, as_float64({**decay, "normalise": False, "scale": q.shape[-1] ** -0.5})
        features = create(self.map_features, q.shape[-1])
        fq, fk = features(q.double(), is_query=True).double(), features(k.double()).double()
        return fq, fk, as_float64(self.decay_params(fq, fk, settings, head, should_stop, features))

    def label_qualifiers(self, settings) -> tuple[str, ...]:
        return ("maps.form_paper",) if self.paper_form(settings) else ()

    def in_paper_form(self, note: Message, settings) -> Message:
        """A settings note, followed by the papers' form where it is drawn."""
        return Message("maps.note_paper_form", note=note) if self.paper_form(settings) else note

    def settings_note(self, settings, head=None) -> Message:
        return self.in_paper_form(super().settings_note(settings, head), settings)

    def decay_params(self, fq, fk, settings, head, should_stop, features) -> dict:
        """The maps tab's decay on features fq, fk: ``default_params`` with the drawer's seed."""
        return self.default_params(fq, fk, settings.seed)

    def _decay(self, q, params):
        return prepare_log_decay(params.get("log_decay"), tuple(q.shape[:-2]), q.shape[-2], q.shape[-1],
                                 q.dtype, q.device)

    def _switches(self, q, params) -> tuple[torch.Tensor, bool]:
        """(q scaled as asked, whether the read-out divides by q.z)."""
        normalise, scale = params.get("normalise", True), params.get("scale")
        if not isinstance(normalise, bool):
            raise ValueError(f"normalise: expected True or False, got {str(normalise)[:40]!r}")
        if scale is not None:
            if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale < float("inf"):
                raise ValueError(f"scale: expected a positive number, got {str(scale)[:40]!r}")
            q = q * scale
        return q, normalise

    def _map(self, q, k, **params) -> torch.Tensor:
        decay = self._decay(q, params)
        q, normalise = self._switches(q, params)
        w = weights_from_features(q, k, True, decay)
        return w / w.sum(-1, keepdim=True) if normalise else w

    def _reference(self, q, k, v, **params) -> torch.Tensor:
        decay = self._decay(q, params)
        q, normalise = self._switches(q, params)
        q, k, v = q.double(), k.double(), v.double()
        n = q.shape[-2]
        g = None if decay is None else torch.exp(decay.double()).expand(*q.shape[:-2], n, decay.shape[-1])
        s = q.new_zeros(*q.shape[:-2], q.shape[-1], v.shape[-1])
        z = q.new_zeros(*q.shape[:-2], q.shape[-1])
        out = []
        for t in range(n):
            if g is not None:
                s = g[..., t, :, None] * s
                z = g[..., t, :] * z
            s = s + k[..., t, :, None] * v[..., t, None, :]
            z = z + k[..., t, :]
            read = (s.transpose(-1, -2) @ q[..., t, :, None])[..., 0]
            out.append(read / (z * q[..., t, :]).sum(-1, keepdim=True) if normalise else read)
        return torch.stack(out, dim=-2)

    def _output(self, q, k, v, method, **params) -> torch.Tensor:
        decay = self._decay(q, params)
        q, normalise = self._switches(q, params)
        if normalise:
            return linear_attention(q, k, v, AsGiven(q.shape[-1]), causal=True, method=method,
                                    log_decay=params.get("log_decay"))
        lead, n = q.shape[:-2], q.shape[-2]
        a = q.new_zeros(q.shape) if decay is None else decay.to(q.dtype).expand(q.shape)
        q2, k2, a2, v2 = (t.reshape(-1, n, t.shape[-1]) for t in (q, k, a, v))
        out = unnormalised_recurrent(q2, k2, v2, a2) if method == "recurrent" else unnormalised_chunked(q2, k2, v2, a2)
        return out.reshape(*lead, n, v.shape[-1])


class Linear(KernelRecurrence):
    name = __package__.rpartition(".")[2]     # registered under its folder's name
    state_kind = STATE_KIND
    writes = WRITES


MECHANISM = Linear()
