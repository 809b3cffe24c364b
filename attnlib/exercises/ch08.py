"""Exercises for notebook 08, grouped-query attention and the KV cache: ``ch08.kv_cache_bytes``
(size a grouped-query cache)."""

from __future__ import annotations

import numpy as np

from .. import kv_cache_bytes
from .checking import NumberExercise

__all__ = ["kv_cache_bytes"]

# A grouped-query model: 24 query heads share 8 KV heads; float32 cache. The sizes are chosen
# so that no combination of the mistakes below lands on the right answer (3 query heads per KV
# head is no power of 2, and 28 layers no product of the other factors).
LAYERS, N_HEADS, N_KV_HEADS, D_HEAD, T, BYTES = 28, 24, 8, 64, 2048, 4
_bytes = kv_cache_bytes(T, LAYERS, N_KV_HEADS, D_HEAD, dtype=np.float32)  # BYTES = 4


def cache_mistakes(n_heads: int, n_kv_heads: int, layers: int, n_bytes: int) -> list:
    """The compounding mistakes of a KV-cache size, as groups of factors (one per group)."""
    return [
        [
            (
                n_heads / n_kv_heads,
                f"You cached all {n_heads} query heads, as plain multi-head attention would. In"
                f" grouped-query attention only the n_kv_heads = {n_kv_heads} KV heads are"
                f" cached; the query heads share them.",
            )
        ],
        [(1 / 2, "The cache holds keys AND values: a factor of 2 is missing.")],
        [(1 / n_bytes, f"You counted numbers, not bytes: each float32 takes {n_bytes} bytes.")],
        [(1 / layers, f"That is one layer; every one of the {layers} layers keeps its own cache.")],
        [
            (2.0**-10, "That is the size in KiB (1,024 bytes); the question asks for bytes."),
            (2.0**-20, "That is the size in MiB (2^20 bytes); the question asks for bytes."),
            (2.0**-30, "That is the size in GiB (2^30 bytes); the question asks for bytes."),
            (1e-6, "That is the size in MB (10^6 bytes); the question asks for bytes."),
            (1e-9, "That is the size in GB (10^9 bytes); the question asks for bytes."),
        ],
    ]


kv_cache_bytes = NumberExercise(
    "ch08.kv_cache_bytes",
    _bytes,
    rtol=1e-9,
    factors=cache_mistakes(N_HEADS, N_KV_HEADS, LAYERS, BYTES),
    hint="bytes = 2 (K and V) * layers * n_kv_heads * d_head * T * bytes_per_value.",
    solution=f"2 * {LAYERS} * {N_KV_HEADS} * {D_HEAD} * {T} * {BYTES} = {_bytes:,} bytes"
    f" ({_bytes / 2**20:g} MiB). Plain multi-head attention, caching all {N_HEADS} heads, would"
    f" need {N_HEADS // N_KV_HEADS} times as much.",
    correct_message="Three query heads share each KV head, so the cache is 3 times smaller than"
    " with plain multi-head attention.",
)
