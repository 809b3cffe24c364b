"""Exercises for notebook 07, multi-head attention and the KV cache.

``ch07.split_heads`` (write the split) and ``ch07.kv_cache_bytes`` (size a grouped-query cache).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import kv_cache_bytes
from .. import split_heads as reference_split
from .checking import (
    FunctionExercise,
    NumberExercise,
    Wrong,
    call_student,
    close,
    result_array,
    vec,
)

__all__ = ["kv_cache_bytes", "split_heads"]


def _cases() -> list[tuple[str, np.ndarray, int]]:
    return [
        ("x of shape (3, 4) with n_heads = 2", np.arange(12.0).reshape(3, 4), 2),
        ("x of shape (5, 12) with n_heads = 3", np.arange(60.0).reshape(5, 12), 3),
        ("x of shape (2, 6) with n_heads = 1", np.arange(12.0).reshape(2, 6), 1),
    ]


def _grade(func: Callable) -> str:
    for case, x, n_heads in _cases():
        T, width = x.shape
        d_head = width // n_heads
        result = call_student(func, case, x, n_heads)
        if np.shape(result) == (T, n_heads, d_head) and n_heads > 1:
            raise Wrong(
                f"On {case}, your result has shape {(T, n_heads, d_head)} = (T, n_heads,"
                f" d_head): put the head axis first with .transpose(1, 0, 2), giving (n_heads,"
                f" T, d_head)."
            )
        heads = result_array(result, case, (n_heads, T, d_head))
        expected = reference_split(x, n_heads)
        if close(heads, expected):
            continue
        if close(heads, x.reshape(n_heads, T, d_head)):
            raise Wrong(
                f"On {case}, you reshaped x straight to (n_heads, T, d_head), which cuts the"
                f" flat list of numbers in order: head 0 got {vec(heads[0])}, the first rows of"
                f" x, not columns 0 to d_head - 1 of every token. Reshape to (T, n_heads, d_head)"
                f" first, then swap the first two axes."
            )
        if close(heads, x.reshape(T, d_head, n_heads).transpose(2, 0, 1)):
            raise Wrong(
                f"On {case}, head 0 got columns 0, {n_heads}, {2 * n_heads}, ... (every"
                f" n_heads-th column). Each head owns a block of d_head neighbouring columns:"
                f" reshape to (T, n_heads, d_head), not (T, d_head, n_heads)."
            )
        raise Wrong(
            f"On {case}, head 0 should be columns 0 to {d_head - 1} of every row of x,"
            f" {vec(expected[0])}; yours holds {vec(heads[0])}."
        )
    return (
        "Head i owns columns i*d_head to (i+1)*d_head - 1 of every token; merging heads is the"
        " reverse: transpose back and reshape to (T, n_heads * d_head)."
    )


split_heads = FunctionExercise(
    "ch07.split_heads",
    _grade,
    hint="Two steps: x.reshape(T, n_heads, d_head) gives each head its block of columns;"
    " .transpose(1, 0, 2) then puts the head axis first.",
    solution="""
    def split_heads(x, n_heads):
        T, width = x.shape
        d_head = width // n_heads
        return x.reshape(T, n_heads, d_head).transpose(1, 0, 2)  # (n_heads, T, d_head)""",
)

# A grouped-query model: 16 query heads share 4 KV heads; float32 cache.
LAYERS, N_HEADS, N_KV_HEADS, D_HEAD, T, BYTES = 24, 16, 4, 64, 2048, 4
_bytes = kv_cache_bytes(T, LAYERS, N_KV_HEADS, D_HEAD, dtype=np.float32)  # BYTES = 4

kv_cache_bytes = NumberExercise(
    "ch07.kv_cache_bytes",
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
