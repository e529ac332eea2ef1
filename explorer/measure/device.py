"""The device a measurement runs on: parsed and checked (``_device``), and waited for
(``_sync``) so that a clock or a memory counter reads finished work. Used by the sweep in
``bench`` and by ``peak_memory``.
"""

from __future__ import annotations

import torch


def _device(device) -> torch.device:
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device: cannot parse {device!r} ({exc})") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device: {device!r} was asked for but CUDA is not available on this machine "
                         f"(torch {torch.__version__}); use device='cpu'")
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device: only 'cpu' and 'cuda' are supported, got {device!r}")
    return dev


def _sync(dev: torch.device) -> None:
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
