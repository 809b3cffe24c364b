"""Exercises for notebook 01, queries, keys and values: ``ch01.projection_shapes``."""

from __future__ import annotations

from .checking import ShapeExercise

__all__ = ["projection_shapes"]

#: The sizes of the exercise, all different so that every shape identifies its axes.
SIZES = {"B": 2, "T": 5, "d_model": 12, "d_k": 4, "d_v": 3}

projection_shapes = ShapeExercise(
    "ch01.projection_shapes",
    SIZES,
    {
        "W_Q": ("d_model", "d_k"),
        "Q": ("B", "T", "d_k"),
        "K_T": ("B", "d_k", "T"),
        "scores": ("B", "T", "T"),
        "V": ("B", "T", "d_v"),
        "output": ("B", "T", "d_v"),
        "W_o": ("d_v", "d_model"),
        "final": ("B", "T", "d_model"),
    },
    notes={
        "W_Q": {
            ("d_k", "d_model"): "X @ W_Q multiplies X (..., d_model) from the right, so W_Q"
            " has d_model rows."
        },
        "K_T": {
            ("d_k", "T", "B"): "That is K.T, which reverses all three axes and scrambles the"
            " batch; transpose only the last two: np.swapaxes(K, -1, -2).",
            ("B", "T", "d_k"): "That is K itself; the product Q @ K^T needs K's last two axes"
            " swapped.",
        },
        "scores": {
            ("B", "T", "d_k"): "There is one score per (query, key) pair, so the last two axes"
            " are (T, T); d_k is summed away inside each dot product.",
            ("B", "d_k", "d_k"): "The scores are Q K^T, (T, d_k) @ (d_k, T) = (T, T); K^T Q would"
            " give (d_k, d_k).",
        },
        "output": {
            ("B", "T", "d_k"): "Each output row is a weighted average of value rows, so it has"
            " the values' width d_v, not d_k.",
        },
        "W_o": {
            ("d_model", "d_v"): "W_o takes the head's output (width d_v) back to the model"
            " width: output @ W_o needs d_v rows.",
        },
    },
    hint="Every product (a x b) @ (b x c) has shape (a x c). Leading batch axes pass through"
    " X @ W unchanged, and K^T swaps only the last two axes of K.",
    solution="""
    shapes = {
        "W_Q": (d_model, d_k),  # (12, 4)
        "Q": (B, T, d_k),  # X @ W_Q: (2, 5, 4)
        "K_T": (B, d_k, T),  # np.swapaxes(K, -1, -2): (2, 4, 5)
        "scores": (B, T, T),  # Q @ K_T: (2, 5, 5)
        "V": (B, T, d_v),  # X @ W_V: (2, 5, 3)
        "output": (B, T, d_v),  # weights @ V: (2, 5, 3)
        "W_o": (d_v, d_model),  # (3, 12)
        "final": (B, T, d_model),  # output @ W_o: (2, 5, 12)
    }""",
    correct_message="The scores are (T, T) whatever d_k and d_v are; the output has the"
    " values' width d_v until W_o brings it back to d_model.",
)
