"""Exercises for notebook 14, induction heads: ``ch14.induction_target``,
``ch14.induction_score``, ``ch14.composition``."""

from __future__ import annotations

import numpy as np

from .checking import ChoiceExercise, NumberExercise

__all__ = ["composition", "induction_score", "induction_target"]

REVISIT = "14_induction_heads"

# --- where does an induction head look? ---------------------------------------------------------

#: The sequence of ``ch14.induction_target`` (printed in the notebook): five letters, repeated.
SEQUENCE = ("K", "Q", "V", "S", "M", "K", "Q", "V", "S", "M")
#: The position of the query token (counted from 0).
QUERY = 7
_HALF = len(SEQUENCE) // 2

induction_target = NumberExercise(
    "ch14.induction_target",
    QUERY - _HALF + 1,
    mistakes=[
        (
            QUERY - _HALF,
            "That is where the same token, V, stood before. A head that looks there copies V"
            " again; the induction head looks one further, at the token that followed the"
            " earlier V.",
        ),
        (
            QUERY - 1,
            "That is the previous position: the previous-token head's target. The induction"
            " head looks back a whole copy, to the token that followed the earlier V.",
        ),
        (
            QUERY + 1,
            "That position is in the future: the causal mask gives it weight 0. The token after"
            " the *earlier* V is the one to copy.",
        ),
        (
            QUERY,
            "That is the query's own position. The induction head looks for the token that"
            " followed the earlier V.",
        ),
    ],
    hint="Find the earlier occurrence of the current token V, then move one position to the"
    " right: that token came after V last time, so it is the best guess for what comes next.",
    solution="""Position 7 holds V. V appeared before at position 2, and position 3 (S) followed
it. The induction head attends to position 3 = i - h + 1 (i = 7, h = 5), and copies S,
which is indeed the next token (position 8).""",
    correct_message="The induction head attends to the token that followed the earlier copy of"
    " the current one, and copies it: the prediction for position 8.",
    rtol=0.0,
    atol=1e-9,
    revisit=REVISIT,
)

# --- the induction score of a given pattern -----------------------------------------------------

#: The attention weights of one head on ``x y z x y z`` (h = 3), for ``ch14.induction_score``:
#: row i holds the weights of query i over keys 0..i; every row sums to 1.
ATTENTION = np.array(
    [
        [1.00, 0.00, 0.00, 0.00, 0.00, 0.00],
        [0.40, 0.60, 0.00, 0.00, 0.00, 0.00],
        [0.20, 0.50, 0.30, 0.00, 0.00, 0.00],
        [0.10, 0.70, 0.05, 0.15, 0.00, 0.00],
        [0.05, 0.05, 0.80, 0.05, 0.05, 0.00],
        [0.02, 0.03, 0.10, 0.60, 0.20, 0.05],
    ]
)
_H = ATTENTION.shape[0] // 2
_ROWS = np.arange(_H, 2 * _H)
_SCORE = ATTENTION[_ROWS, _ROWS - _H + 1].mean()

induction_score = NumberExercise(
    "ch14.induction_score",
    _SCORE,
    mistakes=[
        (
            ATTENTION[_ROWS, _ROWS - _H].mean(),
            "You averaged the weights on the earlier copy of the same token, A[i, i - h]. The"
            " induction score takes the position one to the right, A[i, i - h + 1]: the token"
            " that followed it.",
        ),
        (
            ATTENTION[_ROWS, _ROWS - 1].mean(),
            "You averaged the weights on the previous position, A[i, i - 1], which is the"
            " previous-token score's entry. The induction score takes A[i, i - h + 1].",
        ),
        (
            ATTENTION[np.arange(1, 2 * _H), np.arange(2 * _H - 1)].mean(),
            "That is the previous-token score, the mean of A[i, i - 1] over i = 1 .. 2h - 1;"
            " the induction score takes A[i, i - h + 1] over the second half, i = h .. 2h - 1.",
        ),
        (
            ATTENTION[_ROWS, _ROWS - _H + 1].sum(),
            "You added the three weights: the score is their mean, so that it lies in [0, 1].",
        ),
        (
            ATTENTION[np.arange(_H - 1, 2 * _H), np.arange(0, _H + 1)].mean(),
            "You included row h - 1 = 2, which is in the first half: a token there has no"
            " earlier copy to look back to. Average over i = h .. 2h - 1 only.",
        ),
        (
            ATTENTION[_ROWS, _ROWS - _H + 1].sum() / (2 * _H),
            "You divided by all 2h = 6 rows; only the h = 3 rows of the second half are averaged.",
        ),
    ],
    hint="With h = 3, the rows of the second half are i = 3, 4, 5. In row i, the token that"
    " followed the earlier copy of token i sits at column i - h + 1. Average those three"
    " entries.",
    solution="""h = 3
rows = np.arange(h, 2 * h)                     # 3, 4, 5: the second half
ch14.ATTENTION[rows, rows - h + 1].mean()      # (0.70 + 0.80 + 0.60) / 3""",
    correct_message="Each second-half query puts most of its weight on the token after the"
    " earlier copy of itself: an induction head (chance would be about 1/5 here).",
    revisit=REVISIT,
)

# --- through which input does the induction head read the previous-token head? -----------------

composition = ChoiceExercise(
    "ch14.composition",
    {
        "a": (
            "its queries (Q-composition)",
            "the query only has to carry the current token, which the embedding already"
            " holds; without layer 0 the query would still know its own token.",
        ),
        "b": (
            "its keys (K-composition)",
            "yes: the key of position j must say 'the token before me was a', and only the"
            " previous-token head wrote that into position j's residual stream. Zero it and"
            " the keys no longer match the query, so the head looks elsewhere.",
        ),
        "c": (
            "its values (V-composition)",
            "the value has to carry the token to copy, the one at position j itself, which"
            " the embedding holds without layer 0; the values decide what is copied, not"
            " where the head looks.",
        ),
    },
    "b",
    hint="The induction score measures *where* the head looks. Which of query, key and value"
    " decides that, and which of the two (the query's position or the key's) needs to know"
    " about the token before it?",
    solution="(b), K-composition. The score q_i . k_j must be large where token j - 1 equals"
    " token i. The query knows token i from the embedding; the key at j can know token j - 1"
    " only if layer 0 moved it there, which is the previous-token head's job. So the induction"
    " head's W_K reads what the previous-token head's W_O wrote: the product"
    " W_Q^(1) W_K^(1)T W_O^(0) W_V^(0) that Elhage et al. call K-composition.",
    revisit=REVISIT,
)
