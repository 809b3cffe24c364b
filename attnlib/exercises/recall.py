"""Exercises for notebook 12, active recall: questions across notebooks 01-11, answered from memory.

Questions 1-6 are the six active-recall questions of a common lesson text (the shapes of one
head; one input and three projections; the derivation Var(q . k) = d_k; the query of "late" and
the weights that stay equal; why unscaled training fails at d_k = 1024; the scale for entries of
variance sigma^2). Question 7 (Var(XY)) comes from a second lesson text; the others come from
the later chapters. Every answer is recalled, not recognised: a number, a vector, shapes, a set
or the steps of a derivation, never a pick among options. Every "Not yet." names the notebook
to revisit (:data:`NOTEBOOKS` holds their titles).
"""

from __future__ import annotations

import numpy as np

from .. import examples, kv_cache_bytes, softmax
from .ch08 import cache_mistakes
from .checking import ArrayExercise, NumberExercise, SetExercise, ShapeExercise, StepsExercise

__all__ = [
    "NOTEBOOKS",
    "decode_keys",
    "equal_keys",
    "gqa_cache",
    "head_scale",
    "head_shapes",
    "late_output",
    "loss_gradients",
    "mask_after_softmax",
    "overflow_and_spread",
    "product_variance",
    "projection_parameters",
    "projection_shapes",
    "rope_offset",
    "saturated_gradient",
    "scale_denominator",
    "score_variance_steps",
    "tile_scores",
    "word_order",
]

#: File name -> title of the notebooks a miss sends the student back to.
NOTEBOOKS = {
    "01_qkv_projections": "Queries, keys and values: three projections of one input",
    "02_why_sqrt_dk": "Why divide by sqrt(d_k)? The variance of a dot product",
    "03_worked_example_it": "The worked example: what does 'it' attend to?",
    "04_softmax_saturation": "Softmax saturation: why unscaled scores stop a network from learning",
    "05_overflow_misconception": "'We scale to avoid overflow': a misconception",
    "06_masking": "Masking: who may attend to whom",
    "07_multi_head": "Multi-head attention",
    "08_gqa_and_kv_cache": "Grouped-query attention and the KV cache",
    "09_positions": "Positions: how attention learns word order",
    "10_cost_and_tiling": "The cost of attention, and computing it in tiles",
    "11_gradients": "Gradients: attention is differentiable, and why unscaled training stalls",
}


def _revisit(stem: str) -> str:
    return f'notebook {stem} ("{NOTEBOOKS[stem]}")'


def _step(name: str, expected: float, mistakes=(), **tolerance) -> NumberExercise:
    """One step of a derivation (its hint and solution are the derivation's)."""
    return NumberExercise(name, expected, hint="", solution="", mistakes=mistakes, **tolerance)


# --- From the lesson text (its six active-recall questions) --------------------------------------

# 1. Shapes of the projections ----------------------------------------------------------------
projection_shapes = ShapeExercise(
    "recall.projection_shapes",
    {"T": 6, "d_model": 16, "d_k": 8, "d_v": 2},
    {
        "X": ("T", "d_model"),
        "W_Q": ("d_model", "d_k"),
        "W_K": ("d_model", "d_k"),
        "W_V": ("d_model", "d_v"),
        "Q": ("T", "d_k"),
        "K": ("T", "d_k"),
        "V": ("T", "d_v"),
    },
    notes={
        "W_V": {
            ("d_model", "d_k"): "Values are never compared with keys, so W_V has its own width d_v."
        },
        "V": {("T", "d_k"): "Values are never compared with keys, so V has its own width d_v."},
    },
    hint="Q = X W_Q: (T, d_model) @ (d_model, d_k). Q and K share d_k because they meet in a"
    " dot product; V has its own width d_v.",
    solution="""
    X: (T, d_model) = (6, 16)
    W_Q, W_K: (d_model, d_k) = (16, 8); W_V: (d_model, d_v) = (16, 2)
    Q = X @ W_Q, K = X @ W_K: (T, d_k) = (6, 8); V = X @ W_V: (T, d_v) = (6, 2)""",
    correct_message="Q and K share d_k because they meet in a dot product; V has its own d_v.",
    revisit=_revisit("01_qkv_projections"),
)


# 2. One input, three learned projections ------------------------------------------------------
P_D_MODEL, P_D_K, P_D_V, P_T = 12, 4, 3, 5
_params = P_D_MODEL * P_D_K * 2 + P_D_MODEL * P_D_V

projection_parameters = NumberExercise(
    "recall.projection_parameters",
    _params,
    rtol=1e-9,
    mistakes=[
        (
            _params + P_T * P_D_MODEL,
            f"You counted the {P_T} x {P_D_MODEL} numbers of X too. X is the input, one shared"
            " matrix of embeddings; only W_Q, W_K and W_V are learned.",
        ),
        (
            3 * P_D_MODEL * P_D_K,
            "You gave W_V the width d_k. Values are never compared with keys, so W_V is"
            " (d_model, d_v).",
        ),
        (
            P_D_MODEL * P_D_K,
            "That is one matrix. The three roles (look for, offer, hand over) come from three"
            " learned matrices applied to the same X.",
        ),
        (
            P_D_MODEL * P_D_K + P_D_MODEL * P_D_V,
            "That is two matrices, as if Q and K shared W. Then every score would be"
            " symmetric, and what a token offers would be tied to what it looks for.",
        ),
    ],
    hint="Q = X W_Q, K = X W_K, V = X W_V: one input, three learned matrices. Count the"
    " entries of the matrices that training changes.",
    solution=f"W_Q and W_K are (d_model, d_k) = ({P_D_MODEL}, {P_D_K}), W_V is (d_model, d_v) ="
    f" ({P_D_MODEL}, {P_D_V}): {P_D_MODEL * P_D_K} + {P_D_MODEL * P_D_K} +"
    f" {P_D_MODEL * P_D_V} = {_params}. X is data, not a parameter. One sentence: one input,"
    " projected three times by three learned matrices, one per role.",
    correct_message="Three learned matrices act on one shared input X; nothing about Q, K and"
    " V is picked by hand.",
    revisit=_revisit("01_qkv_projections"),
)

# 3. The derivation Var(q . k) = d_k, step by step ----------------------------------------------
V_D_K = 36

score_variance_steps = StepsExercise(
    "recall.score_variance_steps",
    {
        "E[q_m k_m]": _step(
            "E[q_m k_m]",
            0.0,
            [(1.0, "E[q_m k_m] = E[q_m] E[k_m] for independent entries, and both means are 0.")],
            atol=1e-9,
        ),
        "Var(q_m k_m)": _step(
            "Var(q_m k_m)",
            1.0,
            [
                (
                    2.0,
                    "Variances add for a sum; for a product of independent zero-mean factors"
                    " Var(q_m k_m) = E[q_m^2] E[k_m^2] = 1 * 1.",
                ),
                (0.0, "A product of two random numbers still varies: E[q_m^2] E[k_m^2] = 1."),
            ],
        ),
        "Var(q . k)": _step(
            "Var(q . k)",
            V_D_K,
            [
                (
                    np.sqrt(V_D_K),
                    "That is the standard deviation; the variances of the d_k"
                    " independent terms add up to d_k.",
                ),
                (
                    1.0,
                    "That is one term; q . k adds d_k independent terms, and their variances add.",
                ),
                (V_D_K**2, "Variances of independent terms add: d_k * 1, not d_k^2."),
            ],
        ),
        "std(q . k)": _step(
            "std(q . k)",
            np.sqrt(V_D_K),
            [(V_D_K, "That is the variance; the standard deviation is its square root.")],
        ),
        "Var(q . k / sqrt(d_k))": _step(
            "Var(q . k / sqrt(d_k))",
            1.0,
            [
                (
                    np.sqrt(V_D_K),
                    "Dividing by c divides the variance by c^2, not c: d_k / (sqrt(d_k))^2 = 1.",
                ),
                (V_D_K, "Dividing a variable by c divides its variance by c^2."),
            ],
        ),
    },
    hint="Independence gives E[q_m k_m] = E[q_m] E[k_m] and Var(q_m k_m) = E[q_m^2] E[k_m^2] -"
    " (E[q_m] E[k_m])^2. Variances of independent terms add; Var(x / c) = Var(x) / c^2.",
    solution=f"""
    E[q_m k_m] = E[q_m] E[k_m] = 0
    Var(q_m k_m) = E[q_m^2] E[k_m^2] - 0 = 1 * 1 = 1
    Var(q . k) = sum of d_k independent terms = d_k = {V_D_K}
    std(q . k) = sqrt(d_k) = {np.sqrt(V_D_K):g}
    Var(q . k / sqrt(d_k)) = d_k / d_k = 1: the scale 1 / sqrt(d_k)""",
    correct_message="Whatever d_k is, dividing by sqrt(d_k) brings the scores back to"
    " variance 1: that is the scale the derivation justifies.",
    revisit=_revisit("02_why_sqrt_dk"),
)

# 4. The query of "late", and the weights that stay equal ---------------------------------------
_Q = examples.ORDER_X @ examples.ORDER_W_Q
_K = examples.ORDER_X @ examples.ORDER_W_K
_V = examples.ORDER_X @ examples.ORDER_W_V
_late, _it = examples.ORDER_TOKENS.index("late"), examples.ORDER_TOKENS.index("it")
_raw_late = _K @ _Q[_late]

late_output = ArrayExercise(
    "recall.late_output",
    softmax(_raw_late / 2.0) @ _V,
    what="The output",
    atol=0.01,  # the output to two decimals, from weights carried to three; mistakes are further
    mistakes=[
        (
            softmax(_raw_late / 4.0) @ _V,
            "That output divides the scores by d_k = 4; the scale is sqrt(d_k) = 2.",
        ),
        (
            softmax(_raw_late) @ _V,
            "That output uses the raw scores; divide them by sqrt(d_k) = 2 before the softmax.",
        ),
        (
            softmax(_K @ _Q[_it] / 2.0) @ _V,
            "That is the output of the query of 'it', Q[3]; the query of 'late' is Q[2].",
        ),
        (softmax(_raw_late / 2.0), "Those are the weights; the output is weights @ V."),
    ],
    hint="q_late = Q[2]; scores K @ q_late; divide by sqrt(4) = 2; softmax; then weights @ V."
    " Carry the weights to three decimals: rounded to two, they sum to 1.01.",
    solution="""
    q_late = Q[2]
    weights = softmax(K @ q_late / np.sqrt(4))
    output = weights @ V""",
    correct_message="The output leans towards V_was, because the 'late' query's largest"
    " weight is on 'was'.",
    revisit=_revisit("03_worked_example_it"),
)


equal_keys = SetExercise(
    "recall.equal_keys",
    {"late", "it"},
    {**{t.lower(): t for t in examples.ORDER_TOKENS}, **dict(enumerate(examples.ORDER_TOKENS))},
    what="The tokens",
    mistakes=[
        (
            {"Order", "was"},
            "Their keys differ, [1, 1, 2, 0] and [1, 1, 0, 2], so a query can tell them apart:"
            " the query of 'it' gives Order more weight, the query of 'late' gives was more.",
        ),
        (set(), "Two keys of K are the same vector; look for them."),
        (
            set(examples.ORDER_TOKENS),
            "Only equal scores give equal weights, and only equal keys give equal scores for"
            " every query.",
        ),
    ],
    hint="Compare the rows of K: which two keys are the same vector?",
    solution="late and it (indices 2 and 3): K_late = K_it = [1, 1, 1, 1], so q . k_late ="
    " q . k_it for every query q, and equal scores give equal weights.",
    correct_message="Equal keys get equal scores from every query, so equal weights; that the"
    " two queries give the pair the same weight as each other is a coincidence of these numbers.",
    revisit=_revisit("03_worked_example_it"),
)

# 5. Why unscaled training fails at d_k = 1024 --------------------------------------------------
GAP = 30.0  # a routine gap between the top two raw scores when their std is 32
_p_top = 1 / (1 + np.exp(-GAP))
_p_scaled = 1 / (1 + np.exp(-GAP / 32))

saturated_gradient = NumberExercise(
    "recall.saturated_gradient",
    _p_top * (1 - _p_top),
    rtol=0.02,  # e^-30 from a calculator is as good
    mistakes=[
        (
            0.25,
            "0.25 is p (1 - p) at p = 1/2, two equal scores. With a gap of 30 the softmax"
            " is nearly one-hot.",
        ),
        (
            np.exp(GAP),
            "That is e^30, how many times larger the top weight is than the other;"
            " the Jacobian entry is about its inverse.",
        ),
        (
            0.0,
            "Not exactly 0 in exact arithmetic: p (1 - p) with 1 - p ~ e^-30. Tiny, but give"
            " its value.",
        ),
        (1.0, "That is (nearly) the top weight p itself; the entry is p (1 - p)."),
    ],
    hint="Two keys: p = 1 / (1 + e^-30) for the top one. The Jacobian entry is p_i (delta_ij -"
    " p_j); on the diagonal p (1 - p), and 1 - p ~ e^-30.",
    solution=f"p = 1 / (1 + e^-30) and 1 - p ~ e^-30, so p (1 - p) ~ e^-30 ="
    f" {_p_top * (1 - _p_top):.3g}: every entry of the Jacobian is that small, so the gradient"
    f" reaching the scores vanishes and W_Q, W_K stop learning where to look. With the scale"
    f" the gap is 30 / 32 and the entry is {_p_scaled * (1 - _p_scaled):.3g}.",
    correct_message="That factor multiplies every gradient that reaches the scores: a"
    " saturated softmax passes (almost) nothing back, so the network fails to learn rather than"
    " merely computing large numbers.",
    revisit=_revisit("04_softmax_saturation"),
)

# 6. The scale when the entries have variance sigma^2 -----------------------------------------
D_K, SIGMA_Q, SIGMA_K = 64, 0.5, 3.0
_denominator = np.sqrt(D_K) * SIGMA_Q * SIGMA_K

scale_denominator = NumberExercise(
    "recall.scale_denominator",
    _denominator,
    mistakes=[
        (
            np.sqrt(D_K),
            "That is sqrt(d_k), exact only when sigma_q sigma_k = 1. Here the score"
            " has variance d_k sigma_q^2 sigma_k^2.",
        ),
        (_denominator**2, "That is the variance of the score; divide by its standard deviation."),
        (
            np.sqrt(D_K) * SIGMA_Q**2 * SIGMA_K**2,
            "You multiplied by the variances; the"
            " standard deviation of the score is sqrt(d_k) sigma_q sigma_k.",
        ),
        (
            D_K,
            "That is Var(q . k) for unit-variance entries; the divisor is a standard"
            " deviation, and here the entries do not have variance 1.",
        ),
    ],
    hint="Var(q_m k_m) = sigma_q^2 sigma_k^2 for independent zero-mean entries; add d_k such"
    " terms; divide by the standard deviation.",
    solution=f"Var(q . k) = d_k sigma_q^2 sigma_k^2 = {_denominator**2:g}, so divide by its"
    f" square root sqrt(d_k) sigma_q sigma_k = {np.sqrt(D_K):g} * {SIGMA_Q:g} * {SIGMA_K:g} ="
    f" {_denominator:g}. The textbook sqrt(d_k) = {np.sqrt(D_K):g} would leave a variance of"
    f" {SIGMA_Q**2 * SIGMA_K**2:g}.",
    correct_message="The textbook 1/sqrt(d_k) is exact only for unit-variance entries, which"
    " is why transformers keep activations near variance 1 (initialisation, LayerNorm).",
    revisit=_revisit("02_why_sqrt_dk"),
)


# --- From a second lesson text --------------------------------------------------------------------

# 7. Var(XY) for independent zero-mean factors ------------------------------------------------
VAR_X, VAR_Y = 4.0, 9.0

product_variance = NumberExercise(
    "recall.product_variance",
    VAR_X * VAR_Y,
    mistakes=[
        (
            VAR_X + VAR_Y,
            "Variances add for a sum of independent variables; for a product of"
            " zero-mean ones they multiply.",
        ),
        (
            np.sqrt(VAR_X * VAR_Y),
            "That is the standard deviation of XY; the question asks for its variance.",
        ),
        (0.0, "E[XY] = E[X] E[Y] = 0 is the mean; the variance is E[X^2 Y^2] - 0."),
    ],
    hint="Var(XY) = E[X^2] E[Y^2] - (E[X] E[Y])^2, and with zero means E[X^2] = Var(X).",
    solution=f"Var(XY) = E[X^2] E[Y^2] - 0 = Var(X) Var(Y) = {VAR_X:g} * {VAR_Y:g} ="
    f" {VAR_X * VAR_Y:g}. (With non-zero means two more terms appear:"
    f" mu_X^2 Var(Y) + mu_Y^2 Var(X).)",
    correct_message="This is the step Var(q_m k_m) = 1 of the sqrt(d_k) derivation; it needs"
    " the zero means.",
    revisit=_revisit("02_why_sqrt_dk"),
)


# --- From the later chapters ---------------------------------------------------------------------

# 8. Heads ------------------------------------------------------------------------------------
head_shapes = ShapeExercise(
    "recall.head_shapes",
    {"T": 10, "d_model": 512, "n_heads": 8, "d_head": 64},
    {
        "split": ("n_heads", "T", "d_head"),
        "scores": ("n_heads", "T", "T"),
        "merged": ("T", "d_model"),
    },
    notes={
        "split": {
            ("T", "n_heads", "d_head"): "That is the reshape alone; transpose it so that the"
            " head axis comes first.",
            ("n_heads", "T", "d_model"): "Each head gets d_head = d_model / n_heads = 64"
            " columns, not all 512.",
        },
        "scores": {
            ("n_heads", "T", "d_head"): "One score per (query, key) pair in each head: the last"
            " two axes are (T, T).",
        },
    },
    hint="512 = 8 x 64: split Q (T, d_model) into n_heads blocks of d_head columns and put the"
    " head axis first. Each head has its own (T, T) scores; merging undoes the split.",
    solution="""
    split:  (n_heads, T, d_head) = (8, 10, 64)
    scores: (n_heads, T, T) = (8, 10, 10)
    merged: (T, n_heads * d_head) = (T, d_model) = (10, 512)""",
    correct_message="Eight heads of width 64 cost the same as one of width 512, and each head"
    " scales by 1/sqrt(64).",
    revisit=_revisit("07_multi_head"),
)


# 9. The per-head scale -------------------------------------------------------------------------
head_scale = NumberExercise(
    "recall.head_scale",
    np.sqrt(64),
    mistakes=[
        (
            np.sqrt(512),
            "That is sqrt(d_model). Each head's dot products have d_head = 64 terms,"
            " so its scores have variance 64 and the scale is sqrt(64).",
        ),
        (
            64,
            "That is d_head itself; the scale is its square root, the scores' standard deviation.",
        ),
        (1, "Every head scales its own scores, by sqrt(d_head)."),
    ],
    hint="The variance of a dot product is the number of terms it adds. How many terms has a"
    " dot product inside one head?",
    solution="sqrt(d_head) = sqrt(512 / 8) = sqrt(64) = 8.",
    correct_message="Each head divides by sqrt(d_head), the length of its own dot products,"
    " not by sqrt(d_model).",
    revisit=_revisit("07_multi_head"),
)

# 10. The grouped-query KV cache ----------------------------------------------------------------
# 40 query heads share 8 KV heads (5 per KV head: no power of 2, so no mistakes cancel).
LAYERS, N_HEADS, N_KV_HEADS, D_HEAD, T, BYTES = 32, 40, 8, 128, 4096, 4
_cache = kv_cache_bytes(T, LAYERS, N_KV_HEADS, D_HEAD, dtype=np.float32)  # BYTES = 4

gqa_cache = NumberExercise(
    "recall.gqa_cache",
    _cache,
    rtol=1e-9,
    factors=cache_mistakes(N_HEADS, N_KV_HEADS, LAYERS, BYTES),
    hint="bytes = 2 (K and V) * layers * n_kv_heads * d_head * T * bytes_per_value.",
    solution=f"2 * {LAYERS} * {N_KV_HEADS} * {D_HEAD} * {T} * {BYTES} = {_cache:,} bytes"
    f" ({_cache / 2**30:g} GiB), a fifth of the multi-head cache.",
    correct_message="Grouped-query attention divides the cache by n_heads / n_kv_heads = 5.",
    revisit=_revisit("08_gqa_and_kv_cache"),
)

# 11. Decoding with a KV cache equals causal attention --------------------------------------------
DECODE_T, DECODE_STEP = 6, 4
_decode_row = np.arange(DECODE_T) <= DECODE_STEP

decode_keys = ArrayExercise(
    "recall.decode_keys",
    _decode_row,
    what="The row",
    mistakes=[
        (
            np.arange(DECODE_T) < DECODE_STEP,
            "Off by one: token 4 is appended to the cache before its query attends, so it sees"
            " its own key too.",
        ),
        (
            np.ones(DECODE_T, dtype=bool),
            "The cache holds only the tokens decoded so far; token 5 does not exist yet.",
        ),
        (
            np.arange(DECODE_T) == DECODE_STEP,
            "The cache keeps every earlier key and value, not only the newest.",
        ),
    ],
    hint="At step 4 the cache holds the keys of tokens 0 to 4. Which row of the 6 x 6 causal"
    " mask lets a query see exactly those?",
    solution="[True, True, True, True, True, False], row 4 of causal_mask(6): decoding step by"
    " step with a cache computes the causal attention rows one at a time.",
    correct_message="Row t of the causal mask is exactly what the cache holds at step t, which"
    " is why decoding with a cache gives the outputs of full causal attention.",
    revisit=_revisit("08_gqa_and_kv_cache"),
)

# 12. Masking after the softmax -------------------------------------------------------------------
_w = softmax(np.array([1.0, 2.0, 3.0]))

mask_after_softmax = NumberExercise(
    "recall.mask_after_softmax",
    _w[:2].sum(),
    rtol=0.01,
    mistakes=[
        (
            1.0,
            "That is the sum with the mask applied before the softmax (-inf for the third"
            " score). Zeroing the third weight afterwards leaves the first two as they were.",
        ),
        (_w[2], "That is the weight that was zeroed; the question asks what is left."),
    ],
    hint="Compute softmax([1, 2, 3]) first, then set the third weight to 0 and add the rest.",
    solution=f"softmax([1, 2, 3]) = {_w[0]:.4f}, {_w[1]:.4f}, {_w[2]:.4f}; zeroing the third"
    f" leaves {_w[:2].sum():.4f}. With -inf before the softmax the first two would be"
    f" renormalised to sum to 1.",
    correct_message="The row no longer sums to 1, and the hidden key still shaped the other"
    " weights through the normaliser: mask with -inf before the softmax.",
    revisit=_revisit("06_masking"),
)

# 13. Word order ---------------------------------------------------------------------------------
word_order = ArrayExercise(
    "recall.word_order",
    [0, 3, 2, 1],
    what="The row indices",
    atol=0,
    rtol=0,
    mistakes=[
        (
            [0, 1, 2, 3],
            "Each word keeps its own output, so the output rows move with the words:"
            " position 1 now holds 'down', whose output was O[3].",
        ),
    ],
    hint="Without positions, a token's output depends only on its own vector and on the set"
    " of all the tokens. Swapping two tokens changes neither.",
    solution="[0, 3, 2, 1]: the outputs of 'cat' and 'down' swap positions along with the"
    " words; no number changes.",
    correct_message="Attention without positions is blind to word order: it permutes its"
    " outputs with its inputs. Positions must be added for order to matter.",
    revisit=_revisit("09_positions"),
)

# 14. The memory of a tiled pass -----------------------------------------------------------------
TILE_T, TILE = 4096, 128

tile_scores = NumberExercise(
    "recall.tile_scores",
    TILE * TILE,
    rtol=1e-9,
    factors=[
        [
            (
                (TILE_T / TILE) ** 2,
                "That is the full T x T score matrix, which tiling never holds.",
            ),
            (
                TILE_T / TILE,
                "That is a whole strip of 128 queries against all 4,096 keys; a tile is 128 x 128.",
            ),
            (1 / TILE, "That is one row of a tile; the tile has 128 rows."),
        ],
        [(4, "That counts bytes of float32; the question asks for numbers.")],
    ],
    hint="A tile is a block of 128 queries against a block of 128 keys.",
    solution=f"{TILE} * {TILE} = {TILE * TILE:,} scores, against {TILE_T:,}^2 ="
    f" {TILE_T**2:,} for the full matrix (plus a running maximum and sum per query row).",
    correct_message="The memory for scores no longer grows with T^2: it is set by the tile"
    " size, while the running maximum and sum carry the softmax across tiles.",
    revisit=_revisit("10_cost_and_tiling"),
)

# 15. A loss on the outputs vs a cross-entropy on the weights -------------------------------------
LOSS_P = np.array([0.98, 0.01, 0.01])  # one-hot on the wrong key 0; the right key is 1

loss_gradients = StepsExercise(
    "recall.loss_gradients",
    {
        "cross-entropy": _step(
            "cross-entropy",
            LOSS_P[0],
            [
                (
                    LOSS_P[1] - 1,
                    "That is the gradient at the right key's score, s_1; the"
                    " question asks for s_0.",
                ),
                (0.0, "The cross-entropy's gradient P_0 - delta_01 = P_0 has no vanishing factor."),
            ],
            rtol=0.01,
        ),
        "through the Jacobian": _step(
            "through the Jacobian",
            LOSS_P[0] * LOSS_P[1],
            [
                (LOSS_P[0], "That skips the Jacobian: dL/ds_0 = p_0 (g_0 - sum_j p_j g_j)."),
                (-LOSS_P[0] * LOSS_P[1], "Check the sign: g_0 - sum_j p_j g_j = 0 - (-0.01)."),
                (LOSS_P[1] * (LOSS_P[1] - 1), "That is dL/ds_1; the question asks for s_0."),
            ],
            rtol=0.01,
        ),
    },
    hint="Cross-entropy L = -ln p_1 has dL/ds_j = p_j - delta_1j. Through the Jacobian,"
    " dL/ds = p * (g - sum(p * g)) with g = dL/dp = [0, -1, 0].",
    solution=f"""
    cross-entropy:        p_0 - 0 = {LOSS_P[0]:g}
    through the Jacobian: p_0 (g_0 - sum p g) = {LOSS_P[0]:g} * (0 + {LOSS_P[1]:g})
                          = {LOSS_P[0] * LOSS_P[1]:g}""",
    correct_message="The cross-entropy's gradient stays full-size at a saturated softmax; a"
    " loss that reaches the scores through the Jacobian, as a loss on the outputs does, gets"
    " a factor as small as the weights.",
    revisit=_revisit("11_gradients"),
)

# 16. Overflow is the shift's job, saturation the scale's ----------------------------------------
OVERFLOW_SCORES, OVERFLOW_D_K = np.array([996.0, 1000.0, 1004.0]), 64


def _last_weight(scores: np.ndarray) -> float:
    return float(softmax(scores)[-1])


overflow_and_spread = NumberExercise(
    "recall.overflow_and_spread",
    _last_weight(OVERFLOW_SCORES / np.sqrt(OVERFLOW_D_K)),
    rtol=0.01,
    mistakes=[
        (
            _last_weight(OVERFLOW_SCORES),
            "That is the weight of the raw scores. Subtracting the maximum stops the overflow but"
            " keeps every gap; the head still divides by sqrt(d_k) = 8, which shrinks the gaps"
            " from 4 to 0.5.",
        ),
        (
            _last_weight(OVERFLOW_SCORES / OVERFLOW_D_K),
            "You divided by d_k = 64; the scale is sqrt(d_k) = 8.",
        ),
        (
            float(softmax(OVERFLOW_SCORES / np.sqrt(OVERFLOW_D_K))[0]),
            "That is the weight of the first key (996); the question asks for the last (1004).",
        ),
        (
            float(softmax(OVERFLOW_SCORES / np.sqrt(OVERFLOW_D_K))[1]),
            "That is the weight of the middle key (1000); the question asks for the last (1004).",
        ),
        (
            1 / 3,
            "Subtracting the maximum does not make the scores equal: it moves them all by the"
            " same amount, so the gaps, and the weights, stay as they were.",
        ),
    ],
    hint="Subtracting the row's maximum never changes the weights (softmax sees only the gaps)."
    " Divide the scores by sqrt(64) = 8 first; then the gaps to the last score are 1 and 0.5.",
    solution="""
    scaled scores: [996, 1000, 1004] / 8 = [124.5, 125, 125.5]
    minus the maximum: [-1, -0.5, 0]  (nothing can overflow; the weights do not change)
    last weight: 1 / (e^-1 + e^-0.5 + 1) = 1 / (0.368 + 0.607 + 1) = 0.506""",
    correct_message="The shift (subtracting the maximum) removes the overflow and leaves the"
    " weights alone; the scale is what changes them: without it the last key would take 0.98"
    " of the weight, a saturated row.",
    revisit=_revisit("05_overflow_misconception"),
)

# 17. RoPE: scores depend on relative position ---------------------------------------------
ROPE_Q, ROPE_K, ROPE_Q2 = 7, 3, 12

rope_offset = NumberExercise(
    "recall.rope_offset",
    ROPE_Q2 - (ROPE_Q - ROPE_K),
    rtol=0,
    atol=1e-9,
    mistakes=[
        (
            ROPE_K,
            "That keeps the key's absolute position. With RoPE the score depends only on"
            " the offset m - n between query and key.",
        ),
        (
            ROPE_Q - ROPE_K,
            "That is the offset m - n = 4 itself; the question asks for the key's position.",
        ),
        (
            ROPE_Q2 + (ROPE_Q - ROPE_K),
            "That puts the key 4 after the query; the original key was 4 before it.",
        ),
    ],
    hint="RoPE rotates q by an angle proportional to its position m and k by one proportional"
    " to n; the score sees only the difference of the angles.",
    solution=f"The score depends on m - n = {ROPE_Q} - {ROPE_K} = {ROPE_Q - ROPE_K}, so the key"
    f" must sit at {ROPE_Q2} - {ROPE_Q - ROPE_K} = {ROPE_Q2 - (ROPE_Q - ROPE_K)}.",
    correct_message="Rotating both vectors leaves their angle difference, (m - n) times the"
    " frequency: the same pair of tokens scores the same wherever it stands in the text.",
    revisit=_revisit("09_positions"),
)
