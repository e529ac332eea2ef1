"""Hostile inputs, built small on disk: used by scripts/stress.py and the hardening tests.

    deflate_bomb_pt(path, unpacked)      a .pt whose one storage deflates to ``unpacked`` bytes
    many_member_npz(path, members)       an .npz with q, k and ``members - 2`` other tiny arrays
    quantized_pt(path), sparse_pt(path)  tensors the app cannot read as plain numbers
    huge_int_query()                     a link with integers of 2^64 and more
    long_chinese_text(chars)             a text whose link would be far too long
"""

from __future__ import annotations

import io
import random
import zipfile
from pathlib import Path

import numpy as np

CHUNK = 1 << 24


def deflate_bomb_pt(path, unpacked: int = 1 << 30) -> Path:
    """A real torch.save archive whose first storage entry is replaced by ``unpacked`` zero
    bytes, deflated (about 1 MB on disk per GiB)."""
    import torch

    path = Path(path)
    buf = io.BytesIO()
    torch.save({"q": torch.zeros(4, 2), "k": torch.zeros(4, 2)}, buf)
    buf.seek(0)
    zeros = bytes(CHUNK)
    with zipfile.ZipFile(buf) as src, zipfile.ZipFile(path, "w") as dst:
        replaced = False
        for info in src.infolist():
            if "/data/" in info.filename and not info.filename.endswith(".pkl") and not replaced:
                replaced = True
                entry = zipfile.ZipInfo(info.filename)
                entry.compress_type = zipfile.ZIP_DEFLATED
                with dst.open(entry, "w", force_zip64=True) as out:
                    left = unpacked
                    while left > 0:
                        out.write(zeros[: min(CHUNK, left)])
                        left -= CHUNK
            else:
                dst.writestr(info, src.read(info.filename))
    return path


def many_member_npz(path, members: int = 50_000) -> Path:
    """q and k (N = 4, d = 2) and ``members - 2`` tiny arrays named a0, a1, ..."""
    path = Path(path)

    def npy(array) -> bytes:
        out = io.BytesIO()
        np.lib.format.write_array(out, np.asarray(array), allow_pickle=False)
        return out.getvalue()

    tiny = npy(np.zeros(1, dtype=np.float32))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("q.npy", npy(np.random.default_rng(0).standard_normal((4, 2)).astype(np.float32)))
        archive.writestr("k.npy", npy(np.random.default_rng(1).standard_normal((4, 2)).astype(np.float32)))
        for i in range(members - 2):
            archive.writestr(f"a{i}.npy", tiny)
    return path


def quantized_pt(path) -> Path:
    import warnings

    import torch
    with warnings.catch_warnings():     # torch says quantized tensors are deprecated: that is the point
        warnings.simplefilter("ignore")
        q = torch.quantize_per_tensor(torch.randn(4, 2), 0.1, 0, torch.qint8)
    torch.save({"q": q, "k": q}, path)
    return Path(path)


def sparse_pt(path) -> Path:
    import torch
    s = torch.randn(4, 2).to_sparse()
    torch.save({"q": s, "k": s}, path)
    return Path(path)


def huge_int_query() -> str:
    return f"src=random&n=64&d=16&dseed={'9' * 23}&seed={2 ** 64}&m={-2 ** 70}&tab=maps"


def long_chinese_text(chars: int = 8000, seed: int = 0) -> str:
    """Chinese-looking prose: common characters and punctuation, as zlib sees real text."""
    common = ("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面"
              "而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性"
              "好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第"
              "注意力机制核函数线性特征映射查询键值矩阵")
    rng = random.Random(seed)
    out = []
    while len(out) < chars:
        out.extend(rng.choice(common) for _ in range(rng.randint(8, 30)))
        out.append(rng.choice("，。；、"))
    return "".join(out[:chars])
