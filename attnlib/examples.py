"""The fixed data of the source texts, as read-only arrays. Data only: answers are computed.

``ORDER_*``: the hand-traceable "Order was late it" example (seed 000). Rows of X are the four
tokens; Q = X @ W_Q etc. gives the Q, K, V printed in the text.

``T2_*``: the T=2, d_k=4, d_v=2 worked example (seed 004), given directly as Q, K, V.

``TWO_KEY_*``: exercise 2 of seed 004, one query over two keys with d_k taken as 4.
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
