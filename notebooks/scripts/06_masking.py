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
# # 06 · Masking: who may attend to whom
#
# Attention lets every token look at every other token. Often that is too much: a language model
# that predicts the next word must not look at the next word, and a batch of sentences padded to
# one length must not look at the padding. A **mask** says, for every (query, key) pair, whether
# the query may attend to that key.
#
# **Learning goals.** After this notebook you can
#
# 1. build a causal mask with `np.tril` and apply it as $-\infty$ *before* the softmax;
# 2. explain, with numbers, why zeroing weights *after* the softmax is wrong (two reasons);
# 3. build a padding mask from sequence lengths;
# 4. say what happens to a query that may attend to nothing, why naive code gives NaN, and why
#    `attnlib` returns zeros instead;
# 5. build the causal mask for a KV cache, where there are more keys than queries, and say
#    which of the two alignments of a non-square causal mask (yours, PyTorch's `is_causal`) it
#    needs.

# %% [markdown]
# ## Our sentence and its scores
#
# A common example for masking is the sentence *"The animal crossed the road because it was
# tired"* with random embeddings and projections. We do the same with **seeded** numbers
# ($d_{\text{model}} = 8$, $d_k = 4$; the projections divided by $\sqrt{d_{\text{model}}}$ so
# that the scaled scores have a standard deviation near 1, notebook 02). The weights are
# random, not trained: do not read meaning into *which* word "it" picks. The masks are the
# point.
#
# $$S = \frac{Q K^\top}{\sqrt{d_k}}, \qquad Q = X W_Q,\; K = X W_K,\; V = X W_V$$

# %%
import matplotlib.pyplot as plt
import numpy as np

from attnlib import softmax

np.set_printoptions(precision=4, suppress=True, linewidth=88)

SEED = 6
rng = np.random.default_rng(SEED)

tokens = ["The", "animal", "crossed", "the", "road", "because", "it", "was", "tired"]
T, d_model, d_k = len(tokens), 8, 4

X = rng.normal(size=(T, d_model))
W_Q = rng.normal(size=(d_model, d_k)) / np.sqrt(d_model)
W_K = rng.normal(size=(d_model, d_k)) / np.sqrt(d_model)
W_V = rng.normal(size=(d_model, d_k)) / np.sqrt(d_model)
Q, K, V = X @ W_Q, X @ W_K, X @ W_V

scores = Q @ K.T / np.sqrt(d_k)
print("tokens:", tokens)
print("scores S, shape", scores.shape, "(row = query, column = key):")
print(scores)
print(f"standard deviation of the scores: {scores.std():.4f}")

# %% [markdown]
# ## Causal masking: no peeking at the future
#
# When a language model reads "The animal crossed", it must predict "the" without having seen
# it. So query $i$ may attend to keys $j \le i$ only. The mask is the lower triangle of a
# $T \times T$ matrix of `True`s, and the forbidden scores are replaced by $-\infty$ **before**
# the softmax:
#
# $$M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}, \qquad
# A = \mathrm{softmax}(S + M), \qquad \text{output} = A V.$$
#
# Since $e^{-\infty} = 0$ exactly, a forbidden key contributes nothing to the numerator *or* the
# denominator: the allowed keys share all of the weight.

# %%
causal = np.tril(np.ones((T, T), dtype=bool))  # True = may attend
print(causal.astype(int))

masked_scores = np.where(causal, scores, -np.inf)
print("\nmasked scores, row 2 ('crossed'):")
print(masked_scores[2])
print("exp of -inf is exactly", np.exp(-np.inf))

# %% [markdown]
# The softmax is `attnlib.softmax`, the max-subtracting reference of notebook 05; $e^{-\infty}$
# gives the masked keys weight exactly 0.

# %%
weights_causal = softmax(masked_scores)
output_causal = weights_causal @ V
print("causal weights A:")
print(weights_causal)
print("row sums:", weights_causal.sum(axis=-1))

# %% [markdown]
# Row 0 ("The") has only itself to look at, so its weight on itself is exactly 1. Every row sums
# to 1, and everything above the diagonal is exactly 0. As a picture, the attention map (the
# plotting code is collapsed; click it to show it):

# %% jupyter={"source_hidden": true}
from attnlib.pictures.heatmap import attention_heatmap

fig, (ax_full, ax_causal) = plt.subplots(1, 2, figsize=(10.5, 4.8))
attention_heatmap(
    softmax(scores), tokens, tokens, ax=ax_full, title="no mask: every token sees every token"
)
attention_heatmap(
    weights_causal, tokens, tokens, ax=ax_causal, title="causal mask: only the past and itself"
)
for ax in (ax_full, ax_causal):
    plt.setp(ax.get_xticklabels(), rotation=60, ha="left", rotation_mode="anchor")
fig.tight_layout()
plt.show()

# %% [markdown]
# *Figure:* Two heatmaps of the 9 × 9 attention weights, numbers printed, without a mask (left)
# and causal (right), where every weight above the diagonal is 0.

# %% [markdown]
# ## Why before the softmax, not after
#
# A tempting shortcut: compute the ordinary softmax, then set the future weights to zero. The
# common warning: "if you zeroed the weights afterwards, the rows would no longer sum to 1 and
# the output would be scaled inconsistently across positions." Here are the sums:

# %%
weights_full = softmax(scores)
weights_zeroed_after = np.where(causal, weights_full, 0.0)
print("row sums, zeroed after the softmax:")
print(weights_zeroed_after.sum(axis=-1))
print("row sums, -inf before the softmax:")
print(weights_causal.sum(axis=-1))

# %% [markdown]
# Each row's output $\sum_j a_{ij} v_j$ is then a weighted average shrunk by a different factor
# per position: that is "scaled inconsistently". There is a second, worse problem that the warning
# does not mention: **the future still leaks in**. The zeroed row was divided
# by a denominator $\sum_j e^{s_{ij}}$ that includes the future keys. Change only the last
# token ("tired") and watch the output at position 3 ("the"), which should not depend on it:

# %%
K_changed = K.copy()
K_changed[-1] += 3.0  # a different key for "tired" only
scores_changed = Q @ K_changed.T / np.sqrt(d_k)


def out_before(s):
    return softmax(np.where(causal, s, -np.inf)) @ V


def out_after(s):
    return np.where(causal, softmax(s), 0.0) @ V


i = 3
print(f"output at position {i} ({tokens[i]!r}) when only {tokens[-1]!r} changes:")
print("  -inf before softmax:", out_before(scores)[i])
print("               after: ", out_before(scores_changed)[i])
print("  zeroed after softmax:", out_after(scores)[i])
print("                after: ", out_after(scores_changed)[i])

# %% [markdown]
# Masking before the softmax makes position 3 blind to the future: its output is unchanged.
# Zeroing afterwards lets a future token change the past, through the normaliser. (Zeroing and
# then *renormalising* would repair the weights in exact arithmetic: check yourself, question 2,
# says why masking first is still the way.)

# %% [markdown]
# ### The same with `attnlib`
#
# `attnlib.causal_mask(T)` is the same lower triangle, and
# `scaled_dot_product_attention(Q, K, V, mask=...)` applies it before its softmax. In `attnlib`,
# `True` = **may attend**.
#
# <details><summary>Warning: PyTorch has two opposite conventions for boolean masks</summary>
#
# `torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m)` reads `True` as
# "may attend", like `attnlib`. `torch.nn.MultiheadAttention` (its `attn_mask` and its
# `key_padding_mask`) reads `True` as "**not** allowed, ignore this key". Pass one library's
# mask to the other and you mask exactly the keys you meant to keep; the code runs, and the
# model silently attends to the future or to the padding. Check the documentation of the
# function you call, and convert with `~mask` when you move between them. (Float masks are
# added to the scores in both: `0` = attend, `-inf` = masked.)
#
# </details>

# %%
from attnlib import causal_mask, padding_mask, scaled_dot_product_attention

print("causal_mask(T) equals our np.tril mask:", np.array_equal(causal_mask(T), causal))
ref_output, ref_weights = scaled_dot_product_attention(Q, K, V, mask=causal_mask(T))
print("same weights:", np.allclose(ref_weights, weights_causal))
print("same output: ", np.allclose(ref_output, output_causal))

# %% [markdown]
# ### Exercise: masked attention
#
# Put causal masking together in one function. Write `my_masked_attention(Q, K, V, mask)`,
# which returns `(output, weights)` as `scaled_dot_product_attention` does. `mask` is a boolean
# array, `True` = may attend, of shape $(T_q, T_k)$ or any shape that broadcasts against the
# scores (a $(1, T_k)$ mask hides the same keys from every query); `Q`, `K`, `V` may have leading
# batch axes, as in $(B, T, d_k)$. The check runs it on four cases, large scores and a batch
# among them, and recognises the mistakes shown above (zeroing after the softmax, a mask read
# the wrong way round). Stuck? `ch06.masked_attention.hint()`, or
# `ch06.masked_attention.solution()`.

# %%
from attnlib.exercises import ch06


def my_masked_attention(Q, K, V, mask):
    raise NotImplementedError  # replace this line with your code


ch06.masked_attention.check(my_masked_attention)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):


# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
def masked_attention_solution(Q, K, V, mask):
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])  # swap only the last two axes
    s = np.where(mask, s, -np.inf)  # True = may attend; before the softmax
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights


ch06.masked_attention.check_solution(masked_attention_solution)

# %% [markdown]
# ## Padding masks: hiding the filler
#
# To process sentences of different lengths in one batch, we pad them to a common length $T$
# with filler tokens. Those filler keys must get no weight. The mask comes from the lengths
# alone: key $j$ of sequence $b$ is real when $j < \text{length}_b$.
#
# $$\text{mask}_{b,j} = [\, j < \text{length}_b \,]$$
#
# Three sequences of lengths 9, 6 and 3, padded to $T = 9$ (we make the batch with the same
# projections; the padded rows of $X$ are zeros):

# %%
lengths = np.array([9, 6, 3])
B = len(lengths)

key_is_real = np.arange(T)[None, :] < lengths[:, None]  # (B, T)
print("key is real (1) or padding (0):")
print(key_is_real.astype(int))

X_batch = rng.normal(size=(B, T, d_model)) * key_is_real[:, :, None]  # padding rows = 0
Q_b, K_b, V_b = X_batch @ W_Q, X_batch @ W_K, X_batch @ W_V
scores_b = Q_b @ np.swapaxes(K_b, -1, -2) / np.sqrt(d_k)  # (B, T, T)

pad = key_is_real[:, None, :]  # (B, 1, T): the same key mask for every query
weights_b = softmax(np.where(pad, scores_b, -np.inf))
print("\nsequence 2 (length 3), weights:")
print(weights_b[2])
print("row sums:", weights_b[2].sum(axis=-1))

# %% [markdown]
# The middle axis of length 1 broadcasts over the queries: every query of sequence $b$ ignores
# the same padded keys. The *padded queries* (rows 3 to 8 of sequence 2) still attend to the
# three real keys; their outputs are computed and thrown away. `attnlib.padding_mask(lengths, T)` builds exactly this `(B, 1, T)` mask:

# %%
print("padding_mask(lengths, T).shape:", padding_mask(lengths, T).shape)
print("equals our mask:", np.array_equal(padding_mask(lengths, T), pad))
_, ref_weights_b = scaled_dot_product_attention(Q_b, K_b, V_b, mask=padding_mask(lengths, T))
print("same weights as by hand:", np.allclose(ref_weights_b, weights_b))

# %% jupyter={"source_hidden": true}
fig, axes = plt.subplots(1, B, figsize=(9.2, 3.6))
for b, ax in enumerate(axes):
    attention_heatmap(
        weights_b[b], annotate=False, ax=ax, title=f"sequence {b}: length {lengths[b]}"
    )
    ax.axvline(lengths[b] - 0.5, color="crimson", lw=2)
fig.suptitle("padding mask: keys right of the red line get weight 0", y=0.98)
fig.tight_layout()
plt.show()

# %% [markdown]
# *Figure:* Three heatmaps of attention weights, for sequences of length 9, 6 and 3; a vertical
# line follows each last real key, and keys right of it get weight 0.

# %% [markdown]
# ## A query that may attend to nothing
#
# Some code masks padding on *both* sides: a pair $(i, j)$ is allowed only when the query $i$
# and the key $j$ are both real. Then a padded query has no allowed key at all. Follow the
# naive recipe on such a row:
#
# $$\text{all scores } -\infty \;\Rightarrow\; \max = -\infty \;\Rightarrow\;
# s - \max = -\infty - (-\infty) = \text{NaN}.$$
#
# Even without the max subtraction it fails: $\sum_j e^{-\infty} = 0$, and $0/0$ is NaN.
# (`np.errstate` silences numpy's warning here, so that we can look at the values.)

# %%
real = key_is_real[2]  # sequence 2: length 3
both_real = real[:, None] & real[None, :]  # (T, T): query AND key must be real
print("row 5 of the mask (a padded query):", both_real[5].astype(int))

masked_row = np.where(both_real, scores_b[2], -np.inf)
with np.errstate(invalid="ignore"):
    e = np.exp(masked_row - masked_row.max(axis=-1, keepdims=True))  # -inf - (-inf) = nan
    naive = e / e.sum(axis=-1, keepdims=True)
    e = np.exp(masked_row)  # no max subtraction: a row of zeros
    no_shift = e / e.sum(axis=-1, keepdims=True)  # 0 / 0
print("naive softmax, row 5:          ", naive[5])
print("without the max shift, row 5:  ", no_shift[5])

# %% [markdown]
# A NaN does not stay in its row. The next layer mixes rows together, and a loss that "ignores"
# the padded positions by multiplying them by 0 still ends up NaN, because $0 \times
# \text{NaN} = \text{NaN}$:

# %%
print("0 * nan =", 0.0 * np.nan)
print("a masked-out loss over rows [1.0, nan]:", np.sum(np.array([1.0, 0.0]) * [1.0, np.nan]))

# %% [markdown]
# `attnlib` returns **zeros** for a row with nothing allowed: zero weights and so a zero
# output. Zero is a safe value rather than a meaningful one: a padded query's output is
# discarded anyway, and zero does not poison the numbers around it. The real rows are
# untouched:
#
# <details><summary>FlashAttention does the same</summary>
#
# Its kernel divides each row by its sum unless the sum is 0, in which case it leaves the
# (all-zero) row alone.
#
# </details>

# %%
out_both, w_both = scaled_dot_product_attention(Q_b[2], K_b[2], V_b[2], mask=both_real)
print("attnlib weights, row 5:", w_both[5])
print("attnlib output,  row 5:", out_both[5])
print("row sums:", w_both.sum(axis=-1))
print("real rows 0-2 equal the key-padding result:", np.allclose(w_both[:3], weights_b[2, :3]))

# %% [markdown]
# ## Causal masks with a KV cache: more keys than queries
#
# When a model generates text, it has already computed the keys and values of the earlier
# tokens and keeps them (the **KV cache**, notebook 08). For the newest tokens it computes only
# their queries: $T_q$ new queries against $T_k \ge T_q$ keys.
#
# <details><summary>The shapes, per layer, with batch B and H heads</summary>
#
# | array | shape | here ($B = H = 1$, dropped) |
# | --- | --- | --- |
# | cached keys $K$ | $(B, H, T_k, d_k)$ | $(9, 4)$ |
# | cached values $V$ | $(B, H, T_k, d_v)$ | $(9, 4)$ |
# | new queries $Q_{\text{new}}$ | $(B, H, T_q, d_k)$ | $(2, 4)$ |
# | scores, weights, mask | $(B, H, T_q, T_k)$; the mask $(T_q, T_k)$ broadcasts | $(2, 9)$ |
# | output | $(B, H, T_q, d_v)$ | $(2, 4)$ |
#
# </details>
#
# Each generated token appends one row to $K$ and $V$ ($T_k$ grows by 1) and brings one new query
# ($T_q = 1$); $T_q > 1$ when a prompt is read in chunks, as here. A causal mask of
# $T_q \times T_k$ entries is no longer square, and there are **two ways to place its
# triangle**:
#
# * **top-left** (upper-left) alignment: query $i$ may see keys $j \le i$. This is `np.tril` of
#   a $T_q \times T_k$ block, and it is what PyTorch's
#   `scaled_dot_product_attention(..., is_causal=True)` builds (`causal_upper_left` in
#   `torch.nn.attention.bias`). It is right when query $i$ *is* position $i$ of the keys: the
#   queries are the first $T_q$ positions.
# * **bottom-right** (lower-right) alignment: query $i$ may see keys $j \le i + (T_k - T_q)$.
#   This is `attnlib.causal_mask(T_q, T_k)`, PyTorch's `causal_lower_right`, and `np.tril` with
#   `k = T_k - T_q`. It is right when the queries are the *last* $T_q$ positions, the newest
#   tokens after the cache.
#
# When $T_q = T_k$ the two are the same matrix. With a KV cache the new queries are the last
# positions, so the cache **needs bottom-right**: the bottom $T_q$ rows of the full causal mask.
# Top-left there hides keys that are in the past, and the code runs without a complaint.

# %% [markdown]
# ### Exercise: a cache mask, before reading on
#
# A smaller case than ours: 2 new queries against 5 keys in the cache ($T_q = 2$, $T_k = 5$).
# Write the $(2, 5)$ mask as two lists of five `True`/`False`, one row per new query, one entry
# per key, `True` = may attend. Stuck? `ch06.kv_cache_mask.hint()`, or
# `ch06.kv_cache_mask.solution()`.

# %%
answer_mask = ...  # 2 rows (new queries) of 5 True/False (keys)
ch06.kv_cache_mask.check(answer_mask)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
ch06.kv_cache_mask.check_solution(np.tril(np.ones((2, 5), dtype=bool), k=5 - 2))  # k = T_k - T_q

# %% [markdown]
# Now our sentence: its last two tokens as the new queries, against all nine keys.

# %%
T_q, T_k = 2, T  # the last two tokens, "was" and "tired", against all nine keys

top_left = np.tril(np.ones((T_q, T_k), dtype=bool))  # PyTorch's is_causal=True
bottom_right = np.tril(np.ones((T_q, T_k), dtype=bool), k=T_k - T_q)  # causal_lower_right
print("top-left, np.tril of the block (wrong for a cache):\n", top_left.astype(int))
print("bottom-right, np.tril with k = T_k - T_q (right for a cache):\n", bottom_right.astype(int))
print(
    "bottom-right = the last T_q rows of the full mask:",
    np.array_equal(bottom_right, causal[-T_q:]),
)
print("causal_mask(T_q, T_k) is bottom-right:", np.array_equal(causal_mask(T_q, T_k), bottom_right))
square = np.tril(np.ones((T, T), dtype=bool), k=0)
print("T_q = T_k: the two alignments agree:", np.array_equal(square, causal_mask(T, T)))

# %% jupyter={"source_hidden": true}
blue = {
    "annotate": False,
    "cmap": "Blues",
    "vmin": 0,
    "vmax": 1.5,
}  # allowed = blue, masked = white
fig, (ax_a, ax_b, ax_c) = plt.subplots(1, 3, figsize=(11, 3.6), width_ratios=[1, 1, 1])
attention_heatmap(
    causal.astype(float), tokens, tokens, ax=ax_a, title="full causal mask, T x T", **blue
)
ax_a.add_patch(plt.Rectangle((-0.5, T - T_q - 0.5), T, T_q, fill=False, ec="crimson", lw=3))
attention_heatmap(
    top_left.astype(float),
    tokens[-T_q:],
    tokens,
    ax=ax_b,
    title="top-left (is_causal=True): wrong",
    **blue,
)
attention_heatmap(
    causal_mask(T_q, T_k).astype(float),
    tokens[-T_q:],
    tokens,
    ax=ax_c,
    title="bottom-right (causal_mask): right",
    **blue,
)
for ax in (ax_a, ax_b, ax_c):
    ax.set_aspect("equal")
    plt.setp(ax.get_xticklabels(), rotation=60, ha="left", rotation_mode="anchor")
fig.tight_layout()
plt.show()

# %% [markdown]
# *Figure:* Masks with the allowed pairs filled: the 9 × 9 causal mask with its last two rows
# boxed, the top-left 2 × 9 mask, and the bottom-right one, equal to the boxed rows.
#
# And the point of the cache: the two new queries, with the cached keys and values and the
# bottom-right mask, give exactly the last two rows of full causal attention over all nine
# tokens. The top-left mask hides "was" and "tired" from their own past and does not.

# %%
Q_new, K_cache, V_cache = Q[-T_q:], K, V  # 2 new queries; the cache holds all 9 keys and values
print("Q_new", Q_new.shape, " K_cache", K_cache.shape, " V_cache", V_cache.shape)
out_cache, w_cache = scaled_dot_product_attention(
    Q_new, K_cache, V_cache, mask=causal_mask(T_q, T_k)
)
print("weights", w_cache.shape, " output", out_cache.shape)
print("cached-step output:\n", out_cache)
print(
    "equals the last rows of full causal attention:", np.allclose(out_cache, output_causal[-T_q:])
)
out_top_left, _ = scaled_dot_product_attention(Q_new, K_cache, V_cache, mask=top_left)
print(
    "with the top-left mask instead:              ", np.allclose(out_top_left, output_causal[-T_q:])
)

# %% [markdown]
# ## The masking lab
#
# The same sentence and scores, live. Pick a **query token** and a **mask**: left, the weight
# matrix (grey = masked); right, the outlined row as bars (× = masked key). The **sentence
# length** slider sets where the `<pad>` positions start (padding masks only).
#
# Things to try: with "causal", slide the query from "The" to "tired". Choose **zero after
# softmax (wrong)**: the hatched bars are the weight the future took in the denominator. Which
# query loses the most? With "causal + padding", which rows are the same as with "causal"
# alone, and why?
#
# (Without a running kernel, for example on GitHub, you see a picture of the lab's first state.)

# %% tags=["nbval-ignore-output"]
from attnlib.labs import masking_lab

masking_lab(scores, tokens)

# %% [markdown]
# ## Check yourself
#
# 1. In the causal weights above, why is the first row exactly `[1, 0, ..., 0]` whatever the
#    scores are?
# 2. A colleague zeroes the future weights after the softmax and then divides each row by its
#    new sum. Are the weights now right? Is anything still wrong with the method?
# 3. In a batch with lengths `[9, 6, 3]` and a key padding mask, do any rows sum to 0? What if
#    the mask also hides padded queries?
#
# <details>
# <summary>Answers</summary>
#
# 1. Query 0 may attend to key 0 only. Its softmax has one finite term, $e^{s_{00}}/e^{s_{00}}
#    = 1$, and every other term is $e^{-\infty} = 0$.
# 2. In exact arithmetic, yes: renormalising the allowed entries of $\mathrm{softmax}(S)$ gives
#    $e^{s_{ij}} / \sum_{j' \le i} e^{s_{ij'}}$, the masked softmax. But the full softmax was
#    computed first, with the future scores in its maximum and sum: a large future score can
#    underflow every allowed weight to 0 and the renormalisation becomes $0/0$. Masking before
#    the softmax never looks at the future scores.
# 3. With a key padding mask, no: every query still has at least one real key (each length is
#    at least 1), so every row sums to 1, padded queries included. Masking padded queries too
#    leaves them with no allowed key: naive code gives NaN rows, `attnlib` gives zero rows.
#
# *The lab's questions.* In the wrong mode each query loses $1 - $ (its row sum), the weight its
# future keys took: the row sums printed in "Why before the softmax, not after" answer it. The
# last query has no future key and loses nothing; the early queries, with the most future keys,
# tend to lose the most. With "causal + padding", the rows of the real tokens (positions below the
# length) are the same as with "causal" alone: the causal mask already hides every key after
# them, and the padding keys all come after them.
#
# </details>

# %% [markdown]
# ## Summary
#
# - A mask is a boolean matrix, `True` = this query may attend to this key (as in `attnlib` and
#   PyTorch's `scaled_dot_product_attention`; `nn.MultiheadAttention` uses the opposite). Apply it to the
#   **scores**, as $-\infty$, **before** the softmax: forbidden keys then get weight exactly 0
#   and the allowed ones share all of it.
# - Zeroing weights after the softmax breaks the row sums and, worse, lets the future leak into
#   the past through the softmax denominator.
# - Causal mask: `np.tril(np.ones((T, T), bool))`. Padding mask: `arange(T) < lengths`, of
#   shape `(B, 1, T)` to broadcast over queries.
# - A row with no allowed key is $0/0$: NaN in naive code, zeros in `attnlib` and
#   FlashAttention, which keep NaN from spreading.
# - With a KV cache of shape $(B, H, T_k, d)$ and $T_q < T_k$ new queries, the causal mask is the
#   bottom $T_q$ rows of the full one, aligned bottom-right: `np.tril(..., k=T_k - T_q)`,
#   `attnlib.causal_mask(T_q, T_k)`, PyTorch's `causal_lower_right`. PyTorch's `is_causal=True`
#   aligns top-left, right when the queries are the first positions; the two agree when
#   $T_q = T_k$.
