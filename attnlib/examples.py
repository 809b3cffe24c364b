"""The fixed data of the source lessons, as read-only arrays. Data only: answers are computed.

``ORDER_*``: the hand-traceable "Order was late it" example (the complaint-bot lesson). Rows of
X are the four tokens; Q = X @ W_Q etc. gives the Q, K, V printed in the lesson.

``T2_*``: the T=2, d_k=4, d_v=2 worked example (the symbols-and-shapes lesson), given directly as
Q, K, V.

``TWO_KEY_*``: exercise 2 of the same lesson, one query over two keys with d_k taken as 4.

``ANIMAL_*``: the numbers that the "animal crossed the road" lesson quotes from its figure
(which the text lacks): one query and one key, row 1 of the weight matrix, and the value
entries that row 1 of the output combines.
"""

from __future__ import annotations

import numpy as np


def _frozen(rows: list) -> np.ndarray:
    arr = np.array(rows, dtype=np.float64)
    arr.setflags(write=False)
    return arr


#: Token strings, in row order of ORDER_X.
ORDER_TOKENS: tuple[str, ...] = ("Order", "was", "late", "it")
#: Embeddings, shape (4, 4): one row per token of ORDER_TOKENS.
ORDER_X = _frozen([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0], [0, 0, 1, 1]])
#: Query projection W_Q, shape (d_model, d_k) = (4, 4).
ORDER_W_Q = _frozen([[1, 0, 0, 1], [0, 1, 0, 0], [1, 0, 1, 0], [0, 0, 1, 1]])
#: Key projection W_K, shape (4, 4).
ORDER_W_K = _frozen([[1, 0, 1, 0], [0, 1, 0, 1], [0, 1, 1, 0], [1, 0, 0, 1]])
#: Value projection W_V, shape (d_model, d_v) = (4, 4).
ORDER_W_V = _frozen([[2, 0, 0, 1], [0, 1, 0, 0], [0, 0, 3, 0], [1, 0, 0, 1]])

#: Queries of the T=2 example, shape (2, 4).
T2_Q = _frozen([[2.0, 0.0, 2.0, 0.0], [0.0, 4.0, 0.0, 2.0]])
#: Keys of the T=2 example, shape (2, 4).
T2_K = _frozen([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
#: Values of the T=2 example, shape (2, 2).
T2_V = _frozen([[1.0, 2.0], [3.0, 0.0]])

#: Exercise 2 of 004: the query, shape (1, 2).
TWO_KEY_Q = _frozen([[1.0, 2.0]])
#: Its keys k_0, k_1, shape (2, 2).
TWO_KEY_K = _frozen([[2.0, 1.0], [0.0, 2.0]])
#: Its values v_0, v_1, shape (2, 2).
TWO_KEY_V = _frozen([[10.0, 0.0], [0.0, 20.0]])
#: The d_k the exercise states for its scale (sqrt(4) = 2), although its vectors have length 2.
TWO_KEY_D_K = 4

#: The "animal" lesson's query of token 1, as its figure shows it, shape (2,).
ANIMAL_Q1 = _frozen([1.0, 0.5])
#: Its key of token 1, shape (2,).
ANIMAL_K1 = _frozen([1.1, 0.4])
#: Row 1 of its attention weights, over tokens 1..4, shape (4,), rounded to two decimals.
ANIMAL_WEIGHTS_ROW1 = _frozen([0.31, 0.26, 0.25, 0.18])
#: The value entries (first column of V, tokens 1..4) that output row 1 combines, shape (4,).
ANIMAL_V_COLUMN = _frozen([2.0, 0.5, 1.5, 0.0])
