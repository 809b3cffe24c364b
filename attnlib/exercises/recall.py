"""Exercises for notebook 12, active recall: one question per idea of notebooks 01-11.

The first questions are the six active-recall questions of the source lesson (shapes; why
three projections; the scale with sigma_q, sigma_k; the query of "late"; why unscaled training
fails; Var(XY)); the others come from the later chapters (heads, the grouped-query KV cache,
the online softmax, masks, the softmax backward pass). Every "Not yet." names the notebook to
revisit (:data:`NOTEBOOKS` holds their titles).
"""

from __future__ import annotations

import numpy as np

from .. import examples, kv_cache_bytes, softmax
from .checking import ArrayExercise, ChoiceExercise, NumberExercise, ShapeExercise

__all__ = [
    "NOTEBOOKS",
    "backward",
    "equal_keys",
    "gqa_cache",
    "head_shapes",
    "late_output",
    "mask_after_softmax",
    "product_variance",
    "projection_shapes",
    "rescale_factor",
    "scale_denominator",
    "three_projections",
    "unscaled_training",
]

#: File name -> title of the notebooks a miss sends the student back to.
NOTEBOOKS = {
    "01_qkv_projections": "Queries, keys and values: three projections of one input",
    "02_why_sqrt_dk": "Why divide by sqrt(d_k)? The variance of a dot product",
    "03_worked_example_it": "The worked example: what does 'it' attend to?",
    "04_softmax_saturation": "Softmax saturation: why unscaled scores stop a network from learning",
    "05_overflow_misconception": "'We scale to avoid overflow': a misconception",
    "06_masking": "Masking: who may attend to whom",
    "07_multi_head": "Multi-head, multi-query and grouped-query attention, and the KV cache",
    "10_cost_and_tiling": "Cost and tiling",
    "11_gradients": "Gradients: attention is differentiable, and why unscaled training stalls",
}


def _revisit(stem: str) -> str:
    return f'notebook {stem} ("{NOTEBOOKS[stem]}")'


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

# 2. Why three projections --------------------------------------------------------------------
three_projections = ChoiceExercise(
    "recall.three_projections",
    {
        "a": (
            "Q, K and V are three different features of the sentence, like three embeddings"
            " picked by hand, so each needs its own matrix.",
            "there is only one input. Every token's single embedding goes through all three"
            " projections; only the three learned matrices make Q, K and V differ.",
        ),
        "b": (
            "There is one input and three roles: each token's embedding is projected three"
            " times, so what it looks for (Q), what it offers to be matched (K) and what it"
            " hands over (V) can be learned separately.",
            "three learned projections of the same X, one per role.",
        ),
        "c": (
            "One projection could not give a (T, T) score matrix; three make the shapes fit.",
            "one projection fits the shapes fine: with Q = K = V = X W, Q K^T is (T, T). But"
            " the scores are then symmetric, and what a token offers is tied to what it seeks.",
        ),
        "d": (
            "Three projections let each token attend to three times as many tokens.",
            "there are T keys whatever the projections; they change what each token's vectors"
            " say, not how many there are.",
        ),
    },
    "b",
    hint="Count the inputs: how many matrices of token embeddings does one attention head read?",
    solution="(b). Q = X W_Q, K = X W_K, V = X W_V: one input X, three learned matrices, one"
    " per role (look for, offer, hand over).",
    revisit=_revisit("01_qkv_projections"),
)

# 3. The scale when the entries have variance sigma^2 -----------------------------------------
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

# 4. The query of "late" ----------------------------------------------------------------------
_Q = examples.ORDER_X @ examples.ORDER_W_Q
_K = examples.ORDER_X @ examples.ORDER_W_K
_V = examples.ORDER_X @ examples.ORDER_W_V
_late, _it = examples.ORDER_TOKENS.index("late"), examples.ORDER_TOKENS.index("it")
_raw_late = _K @ _Q[_late]

late_output = ArrayExercise(
    "recall.late_output",
    softmax(_raw_late / 2.0) @ _V,
    what="The output",
    mistakes=[
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
    hint="q_late = Q[2]; scores K @ q_late; divide by sqrt(4) = 2; softmax; then weights @ V.",
    solution="""
    q_late = Q[2]
    weights = softmax(K @ q_late / np.sqrt(4))
    output = weights @ V""",
    correct_message="The output leans towards V_was, because the 'late' query's largest"
    " weight is on 'was'.",
    revisit=_revisit("03_worked_example_it"),
)

equal_keys = ChoiceExercise(
    "recall.equal_keys",
    {
        "a": (
            "The weights of Order and was.",
            "their keys differ, [1, 1, 2, 0] and [1, 1, 0, 2], so a query can tell them"
            " apart: the query of 'it' gives Order far more weight than was.",
        ),
        "b": (
            "The weights of late and it.",
            "K_late = K_it = [1, 1, 1, 1], so q . k_late = q . k_it for every query q: equal"
            " scores give equal weights.",
        ),
        "c": (
            "None: which weights are equal depends on the query.",
            "two equal keys give equal scores for every query. Look for such a pair in K.",
        ),
        "d": (
            "All four, because softmax treats every key the same.",
            "only equal scores give equal weights; the query of 'it' gives Order more weight"
            " than was.",
        ),
    },
    "b",
    hint="Compare the rows of K: which two keys are the same vector?",
    solution="(b). K_late = K_it, so every query gives them equal scores and equal weights.",
    revisit=_revisit("03_worked_example_it"),
)

# 5. Why unscaled training fails --------------------------------------------------------------
unscaled_training = ChoiceExercise(
    "recall.unscaled_training",
    {
        "a": (
            "exp overflows to inf, and the loss becomes NaN.",
            "softmax implementations subtract the row maximum, so nothing overflows at any d_k"
            " (notebook 05_overflow_misconception). The failure is silent.",
        ),
        "b": (
            "Scores with standard deviation 32 make the softmax nearly one-hot; its Jacobian"
            " p_i (delta_ij - p_j) is then almost 0, so almost no gradient reaches the scores"
            " and W_Q, W_K stop learning where to look.",
            "a saturated softmax passes almost no gradient back to the scores.",
        ),
        "c": (
            "Large scores make the loss large, and the optimiser overshoots.",
            "the loss need not be large; the trouble is that the gradient through a saturated"
            " softmax is almost 0.",
        ),
        "d": (
            "The outputs grow like sqrt(d_k) and blow up the next layer.",
            "each output is a weighted average of value rows, so it never grows with the"
            " scores: saturation picks one value row, it does not enlarge it.",
        ),
    },
    "b",
    hint="Look at the softmax Jacobian p_i (delta_ij - p_j) when p is one-hot.",
    solution="(b). With one weight near 1 and the rest near 0, every entry"
    " p_i (delta_ij - p_j) is near 0: the gradient to the scores vanishes and learning stalls.",
    revisit=_revisit("04_softmax_saturation"),
)

# 6. Var(XY) for independent zero-mean factors ------------------------------------------------
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

# 7. Heads ------------------------------------------------------------------------------------
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

# 8. The grouped-query KV cache ---------------------------------------------------------------
LAYERS, N_HEADS, N_KV_HEADS, D_HEAD, T, BYTES = 32, 32, 8, 128, 4096, 2
_cache = kv_cache_bytes(T, LAYERS, N_KV_HEADS, D_HEAD, dtype=np.float16)  # BYTES = 2

gqa_cache = NumberExercise(
    "recall.gqa_cache",
    _cache,
    rtol=1e-9,
    mistakes=[
        (
            _cache * N_HEADS // N_KV_HEADS,
            "That is the cache of plain multi-head attention. In"
            " grouped-query attention only the 8 KV heads are cached; the 32 query heads share"
            " them.",
        ),
        (
            _cache // 2,
            "Half the right size: count both K and V (a factor 2) and 2 bytes per float16 value.",
        ),
        (
            _cache // 4,
            "A quarter of the right size: count both K and V (a factor 2) and 2 bytes"
            " per float16 value.",
        ),
        (_cache // LAYERS, "That is one layer; each of the 32 layers keeps its own cache."),
        (_cache / 2**20, "That is the size in MiB; the question asks for bytes."),
        (_cache / 2**30, "That is the size in GiB; the question asks for bytes."),
    ],
    hint="bytes = 2 (K and V) * layers * n_kv_heads * d_head * T * bytes_per_value.",
    solution=f"2 * {LAYERS} * {N_KV_HEADS} * {D_HEAD} * {T} * {BYTES} = {_cache:,} bytes"
    f" ({_cache / 2**30:g} GiB), a quarter of the multi-head cache.",
    correct_message="Grouped-query attention divides the cache by n_heads / n_kv_heads = 4.",
    revisit=_revisit("07_multi_head"),
)

# 9. The online softmax -----------------------------------------------------------------------
M_OLD, M_NEW = 3.0, 5.0

rescale_factor = NumberExercise(
    "recall.rescale_factor",
    np.exp(M_OLD - M_NEW),
    mistakes=[
        (
            np.exp(M_NEW - M_OLD),
            "The factor is upside down: the old sums were taken relative to"
            " the smaller maximum, so they shrink, by exp(m_old - m_new) < 1.",
        ),
        (
            1.0,
            "Without a rescale, the old and the new terms would be relative to different"
            " maxima; once the maximum rises they must be brought to the new one.",
        ),
        (M_OLD - M_NEW, "That is the exponent; the factor is exp(m_old - m_new)."),
    ],
    hint="acc holds sum exp(s - m_old) v. Which factor turns exp(s - m_old) into exp(s - m_new)?",
    solution=f"exp(s - m_new) = exp(s - m_old) exp(m_old - m_new), so multiply by"
    f" exp({M_OLD:g} - {M_NEW:g}) = exp({M_OLD - M_NEW:g}) = {np.exp(M_OLD - M_NEW):.4f}.",
    correct_message="The same factor rescales the normaliser l.",
    revisit=_revisit("10_cost_and_tiling"),
)

# 10. Masks -----------------------------------------------------------------------------------
mask_after_softmax = ChoiceExercise(
    "recall.mask_after_softmax",
    {
        "a": (
            "Nothing: the future weights end up 0 either way.",
            "they are 0, but the rows no longer sum to 1, and the future keys were part of"
            " each row's normaliser.",
        ),
        "b": (
            "The rows no longer sum to 1, and the future keys still change the weights of"
            " the past through each row's normaliser.",
            "mask with -inf before the softmax, so hidden keys are out of the normaliser too.",
        ),
        "c": (
            "Every row turns into NaN.",
            "zeroing finite weights cannot make NaN; the damage is quieter: row sums below 1"
            " and a leak from the future through the normaliser.",
        ),
        "d": (
            "Nothing, as long as the mask is transposed to the upper triangle.",
            "the upper triangle is the future: keeping it would let each query see only"
            " later tokens.",
        ),
    },
    "b",
    hint="What is the denominator of each weight, and which keys does it sum over?",
    solution="(b). Put -inf into the masked scores before the softmax: the allowed keys share"
    " all of the weight and the hidden ones play no part.",
    revisit=_revisit("06_masking"),
)

# 11. The softmax backward pass ---------------------------------------------------------------
P, G = np.array([0.2, 0.3, 0.5]), np.array([1.0, 0.0, 0.0])

backward = ArrayExercise(
    "recall.backward",
    P * (G - (P * G).sum()),
    what="dL/ds",
    mistakes=[
        (
            P * G,
            "The -sum_j p_j g_j term is missing: raising one score lowers every other"
            " weight through the normaliser.",
        ),
        (G - (P * G).sum(), "Multiply by p: dL/ds_i = p_i (g_i - sum_j p_j g_j)."),
        (-P * (G - (P * G).sum()), "The sign is flipped: dL/ds = p * (g - sum(p * g))."),
    ],
    hint="dL/ds = J^T g with J = diag(p) - p p^T, which simplifies to p * (g - sum(p * g)).",
    solution="""
    p, g = np.array([0.2, 0.3, 0.5]), np.array([1.0, 0.0, 0.0])
    p * (g - (p * g).sum())  # sum(p * g) = 0.2""",
    correct_message="The entries sum to 0: adding a constant to every score changes nothing.",
    revisit=_revisit("11_gradients"),
)
