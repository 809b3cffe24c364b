"""Exercises for notebook 08, grouped-query attention and the KV cache: ``ch08.kv_cache_bytes``
(size a grouped-query cache)."""

from __future__ import annotations

import numpy as np

from .. import kv_cache_bytes
from .checking import NumberExercise

__all__ = ["kv_cache_bytes"]

# A grouped-query model: 16 query heads share 4 KV heads; float32 cache.
LAYERS, N_HEADS, N_KV_HEADS, D_HEAD, T, BYTES = 24, 16, 4, 64, 2048, 4
_bytes = kv_cache_bytes(T, LAYERS, N_KV_HEADS, D_HEAD, dtype=np.float32)  # BYTES = 4

kv_cache_bytes = NumberExercise(
    "ch08.kv_cache_bytes",
    _bytes,
    rtol=1e-9,
    mistakes=[
        (
            _bytes * N_HEADS // N_KV_HEADS,
            "That is the cache of plain multi-head attention,"
            " with all 16 heads. In grouped-query attention only the n_kv_heads = 4 KV heads are"
            " cached; the query heads share them.",
        ),
        (_bytes // 2, "Half the right size: the cache holds keys AND values, a factor of 2."),
        (_bytes // BYTES, "That counts values, not bytes: each float32 takes 4 bytes."),
        (_bytes // LAYERS, "That is one layer; every one of the 24 layers keeps its own cache."),
        (_bytes / 2**20, "That is the size in MiB; the question asks for bytes."),
        (_bytes / 2**30, "That is the size in GiB; the question asks for bytes."),
    ],
    hint="bytes = 2 (K and V) * layers * n_kv_heads * d_head * T * bytes_per_value.",
    solution=f"2 * {LAYERS} * {N_KV_HEADS} * {D_HEAD} * {T} * {BYTES} = {_bytes:,} bytes"
    f" ({_bytes / 2**20:g} MiB). Plain multi-head attention, caching all {N_HEADS} heads, would"
    f" need {N_HEADS // N_KV_HEADS} times as much.",
    correct_message="Four query heads share each KV head, so the cache is 4 times smaller than"
    " with plain multi-head attention.",
)
