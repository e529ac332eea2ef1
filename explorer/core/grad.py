"""Whether autograd records through a tensor: the fast forms and the feature maps write
into reused buffers only when it does not."""

from __future__ import annotations

import torch
from torch import nn


def records_grad(x: torch.Tensor, module: nn.Module | None = None) -> bool:
    """True when autograd is recording through ``x`` or ``module``'s parameters: in-place
    work and ``out=`` buffers are then off limits."""
    if not torch.is_grad_enabled():
        return False
    return x.requires_grad or (module is not None and any(p.requires_grad for p in module.parameters()))
