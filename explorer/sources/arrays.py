"""Q, K, V the user brings: in-memory arrays, or an uploaded .npy / .npz / .pt file.

An upload is untrusted. Nothing is ever unpickled: .npy and .npz are read with
``allow_pickle=False`` and .pt with ``torch.load(weights_only=True)``, which only rebuilds
plain tensors, dicts and lists. Sizes are capped before and after reading.

Accepted layouts (N tokens, d dims, H heads):
  .npz   arrays named "q", "k" and optionally "v", each (N, d) or (H, N, d).
  .pt    a dict {"q": tensor, "k": tensor, "v": tensor (optional)}, same shapes; or one
         stacked tensor laid out like a .npy.
  .npy   one array with q, k (and v) stacked on the first axis: (2 or 3, N, d) or
         (2 or 3, H, N, d). v must then have the same d as q and k; otherwise use .npz.
Floating dtypes are converted to float32; integer arrays are converted with a notice;
bool, complex, object, string and structured arrays are refused.
"""

from __future__ import annotations

import math
import os
import zipfile
from pathlib import Path

import numpy as np
import torch

from ..checks import check_qkv
from ..text import Message
from .sample import MAX_ELEMENTS, MAX_HEAD_DIM, MAX_TOKENS, Sample, position_labels

MAX_FILE_BYTES = 128 * 2 ** 20    # on disk, and unpacked for .npz and .pt (zip bombs)
MAX_MEMBERS = 4096                # entries of an .npz or .pt archive
MAX_RATIO = 50                    # unpacked / packed size of one member: arrays never deflate further
MAX_PICKLE_BYTES = 4 * 2 ** 20    # the .pt's data.pkl: a dict of three tensors is a few hundred bytes
# What the storages of q, k and v may hold together: each at the element cap in float64. A
# view onto a larger storage keeps all of it alive, whatever part of it the view shows.
MAX_STORAGE_BYTES = 3 * MAX_ELEMENTS * 8
MAX_LISTED = 8                    # names listed in a notice; the rest are counted
ARRAY_NAMES = ("q", "k", "v")
VALUE_SEED = 0


def from_arrays(q, k, v=None) -> Sample:
    """Validate q, k (and v), each (N, d) or (H, N, d), and wrap them as a one-layer Sample.

    Without v, values are drawn N(0, 1) from a fixed seed (they change outputs, never the
    attention map), and a notice says so.
    """
    notices: list[str] = []
    q = _as_float32(q, "q", notices)
    k = _as_float32(k, "k", notices)
    if v is not None:
        v = _as_float32(v, "v", notices)
    q, k, v = check_qkv(q, k, v)
    # Dot products past the float32 range make every logit infinite: no map is defined, softmax included.
    reach = (float(q.double().norm(dim=-1).max()) * float(k.double().norm(dim=-1).max())
             if q.numel() and k.numel() else 0.0)
    if not reach <= float(np.finfo(np.float32).max):
        raise ValueError(Message("sources.err_reach", reach=f"{reach:.1e}"))
    n = q.shape[-2]
    if n > MAX_TOKENS:
        raise ValueError(Message("sources.err_tokens_cap", n=n, cap=MAX_TOKENS))
    if q.shape[-1] > MAX_HEAD_DIM:
        raise ValueError(Message("sources.err_head_dim_cap", d=q.shape[-1], cap=MAX_HEAD_DIM))
    if v is None:
        gen = torch.Generator().manual_seed(VALUE_SEED)
        v = torch.randn(k.shape, generator=gen)
        notices.append(Message("common.src_no_v", seed=VALUE_SEED))
    q, k, v = (t.reshape(1, -1, *t.shape[-2:]).contiguous() for t in (q, k, v))
    return Sample(
        q=q, k=k, v=v, tokens=position_labels(n), notices=notices, layer_names=["arrays"],
        source=Message("sources.from_arrays", n=n, d=q.shape[-1], heads=q.shape[1]),
    )


SHOWN_NAME_CHARS = 60     # how much of an uploaded file's name a message repeats


def _file_name(file: Path) -> str:
    name = file.name
    return name if len(name) <= SHOWN_NAME_CHARS else name[:SHOWN_NAME_CHARS - 1] + "…"


# Floating dtypes numpy cannot hold (bfloat16, the float8 kinds): converted by torch, once priced.
NUMPY_FLOATS = (torch.float16, torch.float32, torch.float64)
INTEGERS = (torch.int8, torch.uint8, torch.int16, torch.uint16, torch.int32, torch.uint32, torch.int64, torch.uint64)


def _as_float32(x, name: str, notices: list[str]) -> torch.Tensor:
    """x as a float32 tensor (N, d) or (H, N, d); refuses dtypes that are not numbers.

    A tensor is priced on its metadata before anything is converted or copied: a view
    can show far more elements than its storage holds (a stride-0 ``expand`` of one
    bfloat16 element to 25,000 x 25,000 is 2 bytes in a file, and 2.5 GB once converted).
    """
    if isinstance(x, torch.Tensor):
        _price_tensor(x, name)
        x = x.detach()
        if x.is_floating_point() and x.dtype not in NUMPY_FLOATS:
            x = x.float()
        x = x.numpy(force=True)
    else:
        try:
            x = np.asarray(x)
        except Exception as exc:
            raise ValueError(Message("sources.err_not_array", name=name, kind=type(exc).__name__)) from None
        _check_kind(x.dtype.kind, x.dtype, name)
        _check_shape(tuple(x.shape), name)
    kind = x.dtype.kind
    if kind in "iu":
        notices.append(Message("common.src_integer", name=name, dtype=str(x.dtype)))
    if not np.isfinite(x).all():
        raise ValueError(Message("sources.err_not_finite", name=name, count=int((~np.isfinite(x)).sum())))
    if kind == "f" and x.size and np.abs(x).max() > np.finfo(np.float32).max:
        raise ValueError(Message("sources.err_float32_range", name=name))
    return torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))


def _price_tensor(x: torch.Tensor, name: str) -> None:
    """Refuse ``x`` from its metadata alone: layout, dtype, shape, the elements its shape
    shows (a stride-0 or overlapping view shows more than it stores) and the storage it
    keeps alive. Nothing of its data is read."""
    if x.is_quantized or x.layout != torch.strided:
        kind = Message("sources.kind_quantized") if x.is_quantized else Message("sources.kind_sparse", layout=str(x.layout))
        raise ValueError(Message("sources.err_layout", name=name, kind=kind))
    if not (x.is_floating_point() or x.dtype in INTEGERS):
        raise ValueError(Message("sources.err_dtype_tensor", name=name, dtype=str(x.dtype)))
    stored = x.untyped_storage().nbytes()
    _check_shape(tuple(x.shape), name, stored // max(x.element_size(), 1))
    if stored > MAX_STORAGE_BYTES:
        raise ValueError(Message("sources.upload_storage", name=name, stored=f"{stored:,}",
                                 limit=f"{MAX_STORAGE_BYTES:,}"))


def _check_kind(kind: str, dtype, name: str) -> None:
    if kind not in "iuf":
        raise ValueError(Message("sources.err_dtype", name=name, dtype=str(dtype)))


def _check_shape(shape: tuple, name: str, stored: int | None = None) -> None:
    """Refuse a shape over the element cap (counted from the shape itself, whatever the
    storage behind it holds) or of the wrong rank. ``stored``: the elements a tensor's
    storage really holds, said when a view repeats them."""
    elements = math.prod(shape)
    if elements > MAX_ELEMENTS:
        if stored is not None and stored < elements:
            raise ValueError(Message("sources.upload_repeated", name=name, count=f"{elements:,}",
                                     stored=f"{stored:,}", cap=f"{MAX_ELEMENTS:,}"))
        raise ValueError(Message("sources.err_elements_cap", name=name, count=elements, cap=MAX_ELEMENTS))
    if len(shape) not in (2, 3):
        raise ValueError(Message("sources.err_rank", name=name, shape=str(shape)))


def load_file(path) -> Sample:
    """Read q, k (and v) from an untrusted .npy, .npz or .pt file (layouts: module doc)."""
    file = Path(path) if isinstance(path, (str, os.PathLike)) else None
    if file is None or not file.is_file():
        raise ValueError(Message("sources.err_no_file", path=repr(path)))
    size = file.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ValueError(Message("sources.err_file_bytes", file=_file_name(file), size=size, limit=MAX_FILE_BYTES))
    readers = {".npy": _read_npy, ".npz": _read_npz, ".pt": _read_pt, ".pth": _read_pt}
    reader = readers.get(file.suffix.lower())
    if reader is None:
        raise ValueError(Message("sources.err_file_type", file=_file_name(file)))
    notices: list[str] = []
    arrays = reader(file, notices)
    sample = from_arrays(**arrays)
    sample.notices[:0] = notices
    sample.source = Message("sources.from_file", file=_file_name(file), **sample.source.values)
    sample.layer_names = ["upload"]
    return sample


def _unstack(stacked, what: str) -> dict:
    """Split a (2|3, N, d) or (2|3, H, N, d) array into q, k (, v)."""
    if stacked.ndim not in (3, 4) or stacked.shape[0] not in (2, 3):
        raise ValueError(Message("sources.err_stacked", what=what, shape=str(tuple(stacked.shape))))
    return dict(zip(ARRAY_NAMES, stacked))


def _pick_named(found: dict, what: str, notices: list[str]) -> dict:
    names = [str(name) for name in found]
    missing = [name for name in ("q", "k") if name not in found]
    if missing:
        raise ValueError(Message("sources.err_names", what=what, found=_listed(names)))
    extra = sorted(set(names) - set(ARRAY_NAMES))
    if extra:
        notices.append(Message("common.src_ignored", names=_listed(extra)))
    return {name: found[name] for name in ARRAY_NAMES if name in found}


def _listed(names: list[str]) -> str:
    """A bounded list of names for a message: the first few, shortened, and a count of the rest."""
    shown = [name if len(name) <= 40 else name[:37] + "..." for name in sorted(names)[:MAX_LISTED]]
    rest = len(names) - len(shown)
    if not names:
        return Message("sources.listed_nothing")
    if rest > 0:
        return Message("sources.listed_more", names=", ".join(shown), rest=f"{rest:,}")
    return Message("sources.listed", names=", ".join(shown))


def _check_archive(file: Path, what: str) -> list:
    """The members of a zip archive, refused before anything is unpacked when the archive
    holds too many of them, unpacks beyond MAX_FILE_BYTES, or deflates suspiciously far."""
    try:
        with zipfile.ZipFile(file) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ValueError(Message("sources.err_archive", file=_file_name(file), what=what, kind=type(exc).__name__)) from None
    if len(members) > MAX_MEMBERS:
        raise ValueError(Message("sources.err_members", file=_file_name(file), count=f"{len(members):,}",
                                 limit=f"{MAX_MEMBERS:,}"))
    unpacked = sum(member.file_size for member in members)
    if unpacked > MAX_FILE_BYTES:
        raise ValueError(Message("sources.err_unpacked", file=_file_name(file), size=f"{unpacked:,}",
                                 limit=f"{MAX_FILE_BYTES:,}"))
    for member in members:
        if member.file_size > 2 ** 20 and member.file_size > MAX_RATIO * max(member.compress_size, 1):
            raise ValueError(Message("sources.err_deflates", file=_file_name(file), entry=_listed([member.filename]),
                                     ratio=f"{member.file_size // max(member.compress_size, 1):,}"))
    return members


def _read_npy(file: Path, notices: list[str]) -> dict:
    try:
        data = np.load(file, allow_pickle=False)
    except Exception as exc:
        raise ValueError(Message("sources.err_npy", file=_file_name(file), kind=type(exc).__name__)) from None
    if not isinstance(data, np.ndarray):
        data.close()
        raise ValueError(Message("sources.err_npz_named_npy", file=_file_name(file)))
    return _unstack(data, Message("sources.what_npy"))


def _read_npz(file: Path, notices: list[str]) -> dict:
    _check_archive(file, ".npz")
    try:
        with np.load(file, allow_pickle=False) as archive:
            # Read only q, k, v: the other entries are named in a notice, never unpacked.
            found = {name: (archive[name] if name in ARRAY_NAMES else None) for name in archive.files}
    except ValueError as exc:
        raise ValueError(Message("sources.err_npz_objects", file=_file_name(file), kind=type(exc).__name__)) from None
    except Exception as exc:
        raise ValueError(Message("sources.err_archive", file=_file_name(file), what=".npz",
                                 kind=type(exc).__name__)) from None
    return _pick_named(found, Message("sources.what_npz"), notices)


def _read_pt(file: Path, notices: list[str]) -> dict:
    # torch.load unpacks every storage before anything can be checked: read the archive's
    # own directory first (a .pt is a zip since torch 1.6; the older format is refused).
    if not zipfile.is_zipfile(file):
        raise ValueError(Message("sources.err_pt_not_zip", file=_file_name(file)))
    members = _check_archive(file, ".pt")
    pickles = [m for m in members if m.filename.endswith(".pkl")]
    if any(m.file_size > MAX_PICKLE_BYTES for m in pickles):
        raise ValueError(Message("sources.err_pt_pickle", file=_file_name(file)))
    storages = [m for m in members if "/data/" in m.filename and not m.filename.endswith(".pkl")]
    if sum(m.file_size for m in storages) > MAX_STORAGE_BYTES:
        raise ValueError(Message("sources.err_pt_storages", file=_file_name(file), cap=f"{MAX_ELEMENTS:,}"))
    try:
        data = torch.load(file, map_location="cpu", weights_only=True)
    except Exception as exc:
        why = (Message("sources.why_pt_objects") if "Weights only load failed" in str(exc)
               else Message("sources.why_kind", kind=type(exc).__name__))
        raise ValueError(Message("sources.err_pt_load", file=_file_name(file), why=why)) from None
    if isinstance(data, torch.Tensor):
        return _unstack(data, Message("sources.what_pt_one"))
    if isinstance(data, dict):
        return _pick_named(data, Message("sources.what_pt"), notices)
    raise ValueError(Message("sources.err_pt_type", kind=type(data).__name__))
