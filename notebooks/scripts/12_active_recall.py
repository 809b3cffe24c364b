# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 12 · Active recall: 18 questions across the whole sequence
#
# Reading a worked answer feels like understanding; producing the answer yourself is what makes
# it stay. This notebook asks 18 questions across notebooks 01 to 11 and checks your answers.
# Questions 1 to 7 are six classic active-recall questions on attention (the fourth has two
# parts, here 4 and 5; the third asks you to derive $\mathrm{Var}(q \cdot k) = d_k$, here
# checked step by step). Question 8 is another classic; the others come from the later
# chapters.
#
# **Learning goals.** After this notebook you can
#
# 1. recall the shapes, counts and formulas of notebooks 01 to 11;
# 2. explain the mechanism behind each;
# 3. tell from the questions you miss which notebook to reread.
#
# **How it works.** Each question has a cell with a placeholder `...`. Replace it with your
# answer and run the cell: the check says **Correct!**, or **Not yet.** with what went wrong and
# the notebook to revisit. Every answer is something you produce (a number, a vector, shapes, a
# list of tokens or the steps of a derivation), never a pick among options. Stuck? Call
# `.hint()` on the question (for example `recall.projection_shapes.hint()`), or `.solution()`.
# Below each question sits a collapsed solution cell (click it to expand it); it does not touch
# your variables, so *Run All* keeps your work. `attnlib.exercises.progress()` lists what you
# have answered, hinted or revealed.
#
# **How to use it.** Answer from memory first, with pencil and paper for the arithmetic and numpy
# where you like, before you look anything up. Then come back in a week and do it again: a
# question you still miss tells you which notebook to reread.

# %%
import numpy as np

from attnlib import examples
from attnlib.exercises import recall

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## Classic questions

# %% [markdown]
# ### Question 1: every shape of one head
#
# One attention head reads $T = 6$ tokens of width $d_{model} = 16$, with $d_k = 8$ and
# $d_v = 2$. Say the three projection equations to yourself, then give the shape of every matrix
# in them: $X$, $W_Q$, $W_K$, $W_V$, $Q$, $K$, $V$. Write shapes with the names below, like
# `(T, d_k)`.

# %%
T, d_model, d_k, d_v = 6, 16, 8, 2
answer_1 = {
    "X": ...,
    "W_Q": ...,
    "W_K": ...,
    "W_V": ...,
    "Q": ...,
    "K": ...,
    "V": ...,
}
recall.projection_shapes.check(answer_1)

# %% [markdown]
# **Solution** (collapsed; click the cell below to expand it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
recall.projection_shapes.check_solution(
    {
        "X": (T, d_model),
        "W_Q": (d_model, d_k),
        "W_K": (d_model, d_k),
        "W_V": (d_model, d_v),
        "Q": (T, d_k),  # X @ W_Q
        "K": (T, d_k),  # X @ W_K
        "V": (T, d_v),  # X @ W_V
    }
)

# %% [markdown]
# ### Question 2: one input, three roles
#
# A classmate says: *"Query, Key and Value are three different features extracted from the
# sentence, like three different embeddings someone hand-picked."* First say aloud, in one
# sentence, what is wrong with that and what is right. Then make it concrete: a head reads
# $T = 5$ tokens of width $d_{model} = 12$, with $d_k = 4$ and $d_v = 3$. How many numbers does
# training learn to turn $X$ into $Q$, $K$ and $V$?

# %%
d_model, d_k, d_v, T = 12, 4, 3, 5
answer_2 = ...  # a whole number: the learned numbers of the projections
recall.projection_parameters.check(answer_2)

# %% [markdown]
# **Solution** (collapsed; click the cell below to expand it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
d_model, d_k, d_v = 12, 4, 3
w_q, w_k, w_v = d_model * d_k, d_model * d_k, d_model * d_v  # X is the input, not learned
recall.projection_parameters.check_solution(w_q + w_k + w_v)

# %% [markdown]
# ### Question 3: derive $\mathrm{Var}(q \cdot k) = d_k$
#
# The entries of $q, k \in \mathbb{R}^{d_k}$ are independent, with mean 0 and variance 1,
# and $d_k = 36$. Derive the variance of the score step by step: fill in each step's value
# (pencil and paper are enough), and say which scale the last step justifies.

# %%
answer_3 = {
    "E[q_m k_m]": ...,
    "Var(q_m k_m)": ...,
    "Var(q . k)": ...,
    "std(q . k)": ...,
    "Var(q . k / sqrt(d_k))": ...,
}
recall.score_variance_steps.check(answer_3)

# %% [markdown]
# **Solution** (collapsed; click the cell below to expand it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
d_k_3 = 36
var_term = 1.0 * 1.0 - 0.0  # E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2
recall.score_variance_steps.check_solution(
    {
        "E[q_m k_m]": 0.0 * 0.0,  # E[q_m] E[k_m], by independence
        "Var(q_m k_m)": var_term,
        "Var(q . k)": d_k_3 * var_term,  # the variances of independent terms add
        "std(q . k)": np.sqrt(d_k_3 * var_term),
        "Var(q . k / sqrt(d_k))": d_k_3 * var_term / d_k_3,  # Var(x / c) = Var(x) / c^2
    }
)

# %% [markdown]
# ### Question 4: the query of "late"
#
# Take the four tokens "Order was late it" with the hand-picked matrices of notebook 03
# ($d_k = d_v = 4$). Use the query of **late**, $q_{late}$ = `Q[2]`, in place of the query of
# "it". What is its output, the weighted average of the rows of $V$ with the *scaled* weights
# $\mathrm{softmax}(K q_{late} / \sqrt{d_k})$? Carry the weights to three decimals (rounded to
# two they sum to 1.01) and give the output to two. The matrices are ready below.

# %%
X = examples.ORDER_X
Q, K, V = X @ examples.ORDER_W_Q, X @ examples.ORDER_W_K, X @ examples.ORDER_W_V
print("tokens:", examples.ORDER_TOKENS)
print("Q =\n", Q, "\nK =\n", K, "\nV =\n", V)

# %%
answer_4 = ...  # the output for "late": 4 numbers
recall.late_output.check(answer_4)

# %% [markdown]
# **Solution** (collapsed; click the cell below to expand it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
scores_late = K @ Q[2] / np.sqrt(Q.shape[-1])
weights_late = np.exp(scores_late) / np.exp(scores_late).sum()
recall.late_output.check_solution(weights_late @ V)

# %% [markdown]
# ### Question 5: the weights that never differ
#
# Still in the "Order was late it" example: which attention weights are guaranteed to be
# equal to each other for **every** possible query vector $q$, and why? Name the tokens (or their
# indices 0 to 3).

# %%
answer_5 = ...  # a list of tokens, like ["Order", "it"]
recall.equal_keys.check(answer_5)

# %% [markdown]
# **Solution** (collapsed; click the cell below to expand it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
equal = [
    t
    for i, t in enumerate(examples.ORDER_TOKENS)
    if any(np.array_equal(K[i], K[j]) for j in range(len(K)) if j != i)
]  # rows of K that repeat
recall.equal_keys.check_solution(equal)

# %% [markdown]
# ### Question 6: why does training fail without the scale?
#
# At $d_k = 1024$ the raw scores have standard deviation about 32, so a gap of 30 between the
# top score and the next is routine. Take a row of two keys with that gap. Explain to yourself,
# mechanism and not magnitude, why the network then fails to learn; then compute the diagonal
# entry $p(1 - p)$ of the softmax's Jacobian for the top key (three significant figures).

# %%
answer_6 = ...  # a number
recall.saturated_gradient.check(answer_6)

# %% [markdown]
# **Solution** (collapsed; click the cell below to expand it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
p_top = 1 / (1 + np.exp(-30.0))  # softmax([30, 0])[0]
recall.saturated_gradient.check_solution(p_top * (1 - p_top))

# %% [markdown]
# ### Question 7: the scale when the entries do not have variance 1
#
# The entries of $q$ and $k \in \mathbb{R}^{d_k}$ are independent with mean 0, but the learned
# projections give them standard deviations $\sigma_q = 0.5$ and $\sigma_k = 3$, and
# $d_k = 64$. By what number must the scores $q \cdot k$ be divided so that they have
# variance 1? Does the textbook $\sqrt{d_k}$ still cancel the growth exactly?

# %%
d_k, sigma_q, sigma_k = 64, 0.5, 3.0
answer_7 = ...  # a number
recall.scale_denominator.check(answer_7)

# %% [markdown]
# **Solution** (collapsed; click the cell below to expand it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
var_score = 64 * 0.5**2 * 3.0**2  # d_k terms of variance sigma_q^2 sigma_k^2
recall.scale_denominator.check_solution(np.sqrt(var_score))

# %% [markdown]
# ## Another classic

# %% [markdown]
# ### Question 8: the variance of a product
#
# $X$ and $Y$ are independent with mean 0, $\mathrm{Var}(X) = 4$ and $\mathrm{Var}(Y) = 9$. What
# is $\mathrm{Var}(XY)$?

# %%
var_X, var_Y = 4.0, 9.0
answer_8 = ...  # a number
recall.product_variance.check(answer_8)

# %% [markdown]
# **Solution** (collapsed; click the cell below to expand it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
# Var(XY) = E[X^2] E[Y^2] - (E[X] E[Y])^2, and with zero means E[X^2] = Var(X)
recall.product_variance.check_solution(4.0 * 9.0 - 0.0)

# %% [markdown]
# ## From the later chapters

# %% [markdown]
# ### Question 9: heads
#
# A model of width $d_{model} = 512$ has 8 heads over $T = 10$ tokens. Give the shape of $Q$ split
# into heads, of every head's scores, and of the heads merged back.

# %%
T, d_model, n_heads, d_head = 10, 512, 8, 64
answer_9 = {"split": ..., "scores": ..., "merged": ...}
recall.head_shapes.check(answer_9)

# %% [markdown]
# **Solution** (collapsed; click the cell below to expand it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
from attnlib import merge_heads, split_heads

heads = split_heads(np.zeros((10, 512)), 8)
recall.head_shapes.check_solution(
    {
        "split": heads.shape,
        "scores": (heads @ np.swapaxes(heads, -1, -2)).shape,
        "merged": merge_heads(heads).shape,
    }
)

# %% [markdown]
# ### Question 10: the scale of one head
#
# In the same model, by what number does each head divide its scores $q \cdot k$?

# %%
answer_10 = ...  # a number
recall.head_scale.check(answer_10)

# %% [markdown]
# **Solution** (collapsed; click the cell below to expand it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
recall.head_scale.check_solution(np.sqrt(512 // 8))  # each head's dot products have d_head terms

# %% [markdown]
# ### Question 11: the size of a grouped-query KV cache
#
# A model has 32 layers and 40 query heads that share 8 K/V heads of $d_{head} = 128$; its cache
# is stored in float32. How many bytes does the KV cache take for one sequence of $T = 4096$
# tokens?

# %%
n_layers, n_q_heads, n_kv_heads, d_head, T, bytes_per_value = 32, 40, 8, 128, 4096, 4
answer_11 = ...  # a whole number of bytes
recall.gqa_cache.check(answer_11)

# %% [markdown]
# **Solution** (collapsed; click the cell below to expand it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
recall.gqa_cache.check_solution(2 * 32 * 8 * 128 * 4096 * 4)  # 2: K and V; only the K/V heads

# %% [markdown]
# ### Question 12: decoding with a cache
#
# A model decodes a 6-token text one token at a time with a KV cache. At step 4 (counting from
# 0) the new query attends to what is in the cache. Give that query's row of True/False over
# the keys 0 to 5. Which computation without a cache gives the same output?

# %%
answer_12 = ...  # 6 values, True (or 1) where the query sees the key
recall.decode_keys.check(answer_12)

# %% [markdown]
# **Solution** (collapsed; click the cell below to expand it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
from attnlib import causal_mask

recall.decode_keys.check_solution(causal_mask(6)[4])  # the keys of tokens 0 to 4

# %% [markdown]
# ### Question 13: masking after the softmax
#
# One query has scores $[1, 2, 3]$ and must not see the third key. A classmate zeroes the third
# weight **after** the softmax. What do the two weights left sum to? What should they sum to,
# and what else went wrong?

# %%
answer_13 = ...  # a number
recall.mask_after_softmax.check(answer_13)

# %% [markdown]
# **Solution** (collapsed; click the cell below to expand it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
w = np.exp([1.0, 2.0, 3.0]) / np.exp([1.0, 2.0, 3.0]).sum()
recall.mask_after_softmax.check_solution(w[0] + w[1])

# %% [markdown]
# ### Question 14: word order
#
# Attention without any positional information reads "The cat sat down" and gives the output
# rows `O[0]` to `O[3]`. Now it reads "The down sat cat" (tokens 1 and 3 swapped). Write its
# output rows as rows of `O`: give the four row indices.

# %%
answer_14 = ...  # 4 row indices of O, like [0, 1, 2, 3]
recall.word_order.check(answer_14)

# %% [markdown]
# **Solution** (collapsed; click the cell below to expand it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
recall.word_order.check_solution([0, 3, 2, 1])  # each word keeps its own output row

# %% [markdown]
# ### Question 15: the memory of a tiled pass
#
# Attention over $T = 4096$ tokens is computed in tiles of 128 queries by 128 keys. How many
# scores does the tiled pass hold at once, for one tile?

# %%
answer_15 = ...  # a whole number of scores
recall.tile_scores.check(answer_15)

# %% [markdown]
# **Solution** (collapsed; click the cell below to expand it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
recall.tile_scores.check_solution(128 * 128)  # one tile; never the 4096 x 4096 matrix

# %% [markdown]
# ### Question 16: a loss on the weights, a loss through the weights
#
# A softmax over three keys gives $p = [0.98, 0.01, 0.01]$, but the right key is key 1. Give
# $\partial L / \partial s_0$, the gradient at the wrong winner's score, for two losses: the
# cross-entropy on the weights, $L = -\ln p_1$; and a loss that reaches the scores through the
# softmax's Jacobian, as a loss on the outputs does, with $\partial L / \partial p = g = [0, -1, 0]$.

# %%
answer_16 = {"cross-entropy": ..., "through the Jacobian": ...}
recall.loss_gradients.check(answer_16)

# %% [markdown]
# **Solution** (collapsed; click the cell below to expand it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
p, g = np.array([0.98, 0.01, 0.01]), np.array([0.0, -1.0, 0.0])
recall.loss_gradients.check_solution(
    {
        "cross-entropy": p[0] - 0.0,  # dL/ds_j = p_j - delta_1j
        "through the Jacobian": (p * (g - (p * g).sum()))[0],  # J^T g
    }
)

# %% [markdown]
# ### Question 17: overflow or saturation?
#
# A head with $d_k = 64$ gets raw scores $[996, 1000, 1004]$; in float32 a naive softmax
# returns NaN. Which step of a real head removes the overflow, subtracting the row's maximum or
# dividing by $\sqrt{d_k}$, and which changes the weights? Give the weight of the last key.

# %%
answer_17 = ...  # a number
recall.overflow_and_spread.check(answer_17)

# %% [markdown]
# **Solution** (collapsed; click the cell below to expand it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
scaled_17 = np.array([996.0, 1000.0, 1004.0]) / np.sqrt(64)  # the scale: gaps of 4 become 0.5
shifted_17 = scaled_17 - scaled_17.max()  # the shift: no exp overflows, the weights stay the same
recall.overflow_and_spread.check_solution(np.exp(shifted_17)[-1] / np.exp(shifted_17).sum())

# %% [markdown]
# ### Question 18: positions
#
# With rotary position embeddings (RoPE), a query at position 7 and a key at position 3 give a
# score $s$. The same two vectors are moved so that the query sits at position 12. At which
# position must the key sit for the score to be $s$ again?

# %%
answer_18 = ...  # a position
recall.rope_offset.check(answer_18)

# %% [markdown]
# **Solution** (collapsed; click the cell below to expand it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
recall.rope_offset.check_solution(12 - (7 - 3))  # RoPE scores see only the offset m - n

# %% [markdown]
# ## Where to go back to
#
# | question | idea | notebook |
# | --- | --- | --- |
# | 1 | the shapes of one head | `01_qkv_projections` |
# | 2 | one input, three learned projections | `01_qkv_projections` |
# | 3 | the derivation $\mathrm{Var}(q \cdot k) = d_k$ | `02_why_sqrt_dk` |
# | 4, 5 | the query of "late"; equal keys get equal weights | `03_worked_example_it` |
# | 6 | saturation and the vanishing gradient | `04_softmax_saturation` |
# | 7 | the scale $\sqrt{d_k}\,\sigma_q\sigma_k$ | `02_why_sqrt_dk` |
# | 8 | $\mathrm{Var}(XY)$ for independent zero-mean factors | `02_why_sqrt_dk` |
# | 9, 10 | split and merge heads; the per-head scale | `07_multi_head` |
# | 11, 12 | the grouped-query KV cache; decoding equals causal attention | `08_gqa_and_kv_cache` |
# | 13 | mask before the softmax | `06_masking` |
# | 14 | attention is blind to word order | `09_positions` |
# | 15 | the memory of tiled attention | `10_cost_and_tiling` |
# | 16 | a loss on the weights vs through the Jacobian | `11_gradients` |
# | 17 | the shift prevents overflow, the scale changes the weights | `05_overflow_misconception` |
# | 18 | RoPE scores depend on relative position | `09_positions` |
#
# The chapters have exercises of their own, at the point where each idea is taught; they are in
# `attnlib.exercises.ch01` to `ch11`, for example `ch05.stable_softmax`, where you write a
# softmax that survives scores of 20,000.

# %% [markdown]
# ## Summary
#
# * Shapes: $Q, K \in \mathbb{R}^{T \times d_k}$, $V \in \mathbb{R}^{T \times d_v}$, scores
#   $(T, T)$; heads split $(T, d_{model})$ into $(n_{heads}, T, d_{head})$, and each head scales
#   by $1/\sqrt{d_{head}}$.
# * The scale: $\mathrm{Var}(q \cdot k) = d_k\,\sigma_q^2\sigma_k^2$, so divide by its square
#   root; $1/\sqrt{d_k}$ is right for unit-variance entries. Without it the softmax saturates
#   and its gradient vanishes: a training failure, not an overflow (subtracting the maximum
#   prevents that).
# * Equal keys get equal weights for every query; masks go in as $-\infty$ before the softmax;
#   without positions, attention permutes its outputs with its inputs.
# * The KV cache counts only the K/V heads: $2 \times n_{layers} \times n_{kv\_heads} \times
#   d_{head} \times T \times$ bytes, and decoding with it computes causal attention row by row.
#   Tiling holds one tile of scores at a time.
