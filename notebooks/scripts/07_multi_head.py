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
# # 07 · Multi-head attention: heads, $W_O$ and what they cost
#
# One attention head gives each token one weighting of the sentence, and so one weighted
# average of the values. A token often needs information from several places at once. A
# transformer layer therefore runs several heads side by side, each on its own slice of the
# model width, and mixes their outputs. This notebook builds multi-head attention from the
# single head of notebooks 01-06, shows on a small task what several heads can do that one
# cannot, and counts what they cost. Notebook 08 follows the heads into text generation.
#
# **Learning goals.** After this notebook you can
#
# 1. split a $(T, d_{model})$ matrix into $n_{heads}$ heads of width $d_{head}$ with a reshape
#    and a transpose, merge them back, and spot the reshape that scrambles the tokens;
# 2. show why one head cannot attend to two places at once and two heads can, and say what
#    trained models' heads are known to do (and not to do);
# 3. say what the output projection $W_O$ does, and count the work: $n_{heads}$ heads of width
#    $d_{head}$ cost what one head of width $d_{model}$ costs, except for the
#    $n_{heads} \cdot T^2$ attention weights;
# 4. show that attention without positions does not see word order (and, in the optional
#    section, tell self-attention from cross-attention).
#
# Notation, as in the earlier notebooks: $T$ tokens, model width $d_{model}$, $n_{heads}$ heads
# of width $d_{head} = d_{model} / n_{heads}$ (within one head, $d_k = d_v = d_{head}$).

# %% [markdown]
# ## Several heads, one layer
#
# A common one-line explanation: *"Multi-head attention runs h independent attentions in
# parallel on slices of the dimensions, then concatenates."* Written out, head $i$ owns
# columns $i \cdot d_{head}$ to $(i+1) \cdot d_{head} - 1$ of the three projections, and the
# concatenated heads go through one more matrix, $W_O$:
#
# $$Q_i = X W_Q^{(i)},\quad K_i = X W_K^{(i)},\quad V_i = X W_V^{(i)},\qquad
# \text{head}_i = \mathrm{softmax}\!\left(\frac{Q_i K_i^\top}{\sqrt{d_{head}}}\right) V_i,$$
#
# $$\mathrm{MultiHead}(X) = \big[\,\text{head}_0,\ \text{head}_1,\ \dots,\
# \text{head}_{n_{heads}-1}\big]\; W_O,
# \qquad W_O \in \mathbb{R}^{n_{heads} d_{head} \times d_{model}}.$$
#
# Nothing inside a head is new: it is notebook 03's computation on a narrower slice. What is
# new is the bookkeeping, and in numpy that bookkeeping is a reshape and a transpose.

# %% [markdown]
# ## Split and merge: a reshape and a transpose
#
# Take $T = 3$ tokens and $n_{heads} = 4$ heads of $d_{head} = 2$, so $d_{model} = 8$: three
# different sizes, so every axis can be told apart. The entries of $Q$ just count up, so you can
# see where each one goes.

# %%
import matplotlib.pyplot as plt
import numpy as np

np.set_printoptions(precision=4, suppress=True, linewidth=100)

T, n_heads, d_head = 3, 4, 2
d_model = n_heads * d_head
Q = np.arange(T * d_model).reshape(T, d_model)  # row t = token t
print(f"Q, shape (T, d_model) = {Q.shape}:")
print(Q)

Q_heads = Q.reshape(T, n_heads, d_head).transpose(1, 0, 2)  # (n_heads, T, d_head)
print(f"\nsplit, shape (n_heads, T, d_head) = {Q_heads.shape}")
print("head 1 = columns 2 and 3 of Q, one row per token:")
print(Q_heads[1])

# %% [markdown]
# The reshape cuts each token's row of 8 numbers into 4 pieces of 2, giving shape
# $(T, n_{heads}, d_{head})$; the transpose brings the head axis to the front so that each head
# is an ordinary $(T, d_{head})$ matrix, and `Q_heads @ K_heads.transpose(0, 2, 1)` gives one
# $(T, T)$ score matrix per head.
#
# The transpose is not optional. Reshaping straight to $(n_{heads}, T, d_{head})$ runs without
# an error and gives nonsense: numpy fills the new shape in reading order, so "head 1" gets
# the last two numbers of token 0 and the first four of token 1.

# %%
wrong = Q.reshape(n_heads, T, d_head)  # same shape, no transpose
print("reshape straight to (n_heads, T, d_head), 'head 1':")
print(wrong[1])
print("equal to the real head 1:", np.array_equal(wrong[1], Q_heads[1]))

# %% [markdown]
# The picture of both, each entry coloured by the head that owns its column of $Q$ (the cell
# only draws; its source is collapsed):

# %% jupyter={"source_hidden": true}
from attnlib.pictures.head_split import plot_head_split

fig, ax = plt.subplots(figsize=(9.3, 3.6))
plot_head_split(T, n_heads, d_head, ax=ax)
plt.show()

# %% [markdown]
# *Figure:* Left, the 3 × 8 matrix $Q$ with its entries 0 to 23, columns coloured by head; top
# right, the four $(3, 2)$ heads of the split, each one colour with one row per token; bottom
# right, the reshape without transpose, whose "heads" mix colours and tokens.

# %% [markdown]
# Merging undoes the split: transpose back to $(T, n_{heads}, d_{head})$ and reshape to
# $(T, d_{model})$, which lays the heads side by side, the concatenation in the formula.
# `attnlib.split_heads` and `merge_heads` do the same for any leading batch dimensions.

# %%
from attnlib import merge_heads, split_heads

merged = Q_heads.transpose(1, 0, 2).reshape(T, d_model)
print("merge(split(Q)) == Q:", np.array_equal(merged, Q))
print("split_heads agrees:  ", np.array_equal(split_heads(Q, n_heads), Q_heads))
print("merge_heads agrees:  ", np.array_equal(merge_heads(Q_heads), Q))

# %% [markdown]
# ### Exercise: split heads
#
# Write `my_split_heads(x, n_heads)`: `x` has shape $(T, n_{heads} \cdot d_{head})$, and the
# result has shape $(n_{heads}, T, d_{head})$, with head $i$ holding columns $i \cdot d_{head}$
# to $(i+1) \cdot d_{head} - 1$ of every token. Work out $T$ and $d_{head}$ from `x`. The check
# runs your function on three inputs and says what went wrong, the trap above included.
# Stuck? `ch07.split_heads.hint()`, or `ch07.split_heads.solution()`.

# %%
from attnlib.exercises import ch07


def my_split_heads(x, n_heads):
    raise NotImplementedError  # replace this line with your code


ch07.split_heads.check(my_split_heads)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):


# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
def split_heads_solution(x, n_heads):
    T, width = x.shape
    return x.reshape(T, n_heads, width // n_heads).transpose(1, 0, 2)  # (n_heads, T, d_head)


ch07.split_heads.check_solution(split_heads_solution)

# %% [markdown]
# ## The standard size: $d_{model} = 512$, 8 heads of 64
#
# The usual textbook configuration is $d_{model} = 512$ split into $n_{heads} = 8$ heads. We
# run it on the sentence of notebook 06, *"The animal crossed the road because it was tired"*,
# with seeded random embeddings $X$ and random projections divided by $\sqrt{d_{model}}$ (so
# that queries and keys have entries of variance about 1). The parameters are random, not
# trained: the shapes and the arithmetic are the point, not which word a head picks.

# %%
SEED = 7
rng = np.random.default_rng(SEED)

tokens = ["The", "animal", "crossed", "the", "road", "because", "it", "was", "tired"]
T, d_model, n_heads = len(tokens), 512, 8
d_head = d_model // n_heads
print(f"d_model = {d_model}, n_heads = {n_heads}: d_head = {d_model} / {n_heads} = {d_head}")

X = rng.normal(size=(T, d_model))
W_Q, W_K, W_V, W_O = rng.normal(size=(4, d_model, d_model)) / np.sqrt(d_model)

# %% [markdown]
# The whole layer, as it is usually written: project, split, attend in every head at once,
# merge, project with $W_O$.

# %%
from attnlib import softmax

Q = (X @ W_Q).reshape(T, n_heads, d_head).transpose(1, 0, 2)  # (n_heads, T, d_head)
K = (X @ W_K).reshape(T, n_heads, d_head).transpose(1, 0, 2)
V = (X @ W_V).reshape(T, n_heads, d_head).transpose(1, 0, 2)

scores = Q @ K.transpose(0, 2, 1) / np.sqrt(d_head)  # (n_heads, T, T)
weights = softmax(scores, axis=-1)  # (n_heads, T, T) attention weights: 05's softmax
heads = weights @ V  # (n_heads, T, d_head)
concat = heads.transpose(1, 0, 2).reshape(T, d_model)  # (T, d_model)
output = concat @ W_O  # (T, d_model)

for name, array, symbolic in [
    ("X", X, "(T, d_model)"),
    ("Q, K, V", Q, "(n_heads, T, d_head)"),
    ("scores", scores, "(n_heads, T, T)"),
    ("weights", weights, "(n_heads, T, T)"),
    ("heads", heads, "(n_heads, T, d_head)"),
    ("concat", concat, "(T, n_heads * d_head)"),
    ("output", output, "(T, d_model)"),
]:
    print(f"{name:<9}{symbolic:<24}{array.shape}")

# %% [markdown]
# `attnlib.multi_head_attention` computes the same layer:

# %%
from attnlib import multi_head_attention

ref_output, ref_weights = multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads)
print("same attention weights:", np.allclose(ref_weights, weights))
print("same output: ", np.allclose(ref_output, output))

# %% [markdown]
# ## Each head scales by $\sqrt{d_{head}}$, not $\sqrt{d_{model}}$
#
# Inside a head, $q$ and $k$ have $d_{head} = 64$ entries, so notebook 02's argument applies
# with $d_k = d_{head}$: raw scores spread by about $\sqrt{64} = 8$, and dividing by 8 brings
# them back to about 1. Dividing by $\sqrt{512} \approx 22.6$ would leave a spread of about
# 0.35. Our layer's scores, and the largest attention weight of each row averaged over rows and
# heads (uniform over 9 tokens: $1/9 = 0.111$):

# %%
raw = Q @ K.transpose(0, 2, 1)  # (n_heads, T, T), not yet scaled
print(f"raw scores q . k, d_head = {d_head}: std {raw.std():.2f}")
for label, divisor in [("sqrt(d_head)", np.sqrt(d_head)), ("sqrt(d_model)", np.sqrt(d_model))]:
    top = softmax(raw / divisor, axis=-1).max(axis=-1).mean()
    print(f"divide by {label:<14}: std {(raw / divisor).std():.2f}, mean largest {top:.3f}")

# %% [markdown]
# Scores that spread by about a third give attention weights close to uniform: the other side
# of notebook 04's saturation.

# %% [markdown]
# ## What $W_O$ does
#
# The concatenation puts head $i$'s output in columns $i \cdot d_{head}$ to
# $(i+1) d_{head} - 1$. Multiplying by $W_O$ then splits into one product per head, because a
# block row times a block column is a sum of block products:
#
# $$\big[\,\text{head}_0, \dots, \text{head}_{n_{heads}-1}\big]\, W_O
# = \sum_{i} \text{head}_i\, W_O^{(i)},$$
#
# where $W_O^{(i)}$ is the block of $d_{head}$ rows of $W_O$ that meets head $i$'s columns.
# So "concatenate, then project" is "project every head to the full width, then add": every
# output feature can draw on every head. Without $W_O$, output features 0-63 would be head 0's
# alone.

# %%
per_head = sum(heads[i] @ W_O[i * d_head : (i + 1) * d_head] for i in range(n_heads))
print("concat @ W_O == sum of head_i @ W_O^(i):", np.allclose(per_head, output))

# %% [markdown]
# ## Eight heads, eight weightings of one sentence
#
# Each head has its own slice of $W_Q$ and $W_K$, so each weighs the same sentence its own
# way. The collapsed cell draws the eight $(T, T)$ attention-weight matrices of our layer (rows:
# the query token; columns: the key token), on one colour scale from 0 to the largest weight of
# any head, so that weights of 0.1 or 0.2 still show.

# %% jupyter={"source_hidden": true}
from attnlib.pictures.heatmap import attention_heatmap

print(f"attention weights: median {np.median(weights):.3f}, largest {weights.max():.3f}")
fig, axes = plt.subplots(2, 4, figsize=(9.2, 5.6))
fig.subplots_adjust(left=0.1, right=0.87, top=0.87, bottom=0.01, wspace=0.08, hspace=0.75)
for i, ax in enumerate(axes.flat):
    image, _ = attention_heatmap(
        weights[i], tokens, tokens, ax=ax, annotate=False, title=f"head {i}", vmax=weights.max()
    )
    ax.tick_params(labelsize=7)
    plt.setp(ax.get_xticklabels(), rotation=60, ha="left", rotation_mode="anchor")
    ax.set_xlabel("")
    ax.set_ylabel("")
    if i % 4:
        ax.set_yticklabels([])
fig.colorbar(image, cax=fig.add_axes([0.9, 0.25, 0.015, 0.45]), label="attention weight")
fig.supylabel("query (attending)", fontsize=9)
plt.show()

# %% [markdown]
# *Figure:* Eight small heatmaps, one per head, of the 9 × 9 attention weights on one shared
# colour scale; each head puts its few larger weights on different keys.
#
# With random parameters no head "means" anything; row "it" simply differs from head to head.
# What can eight weightings do that one cannot?

# %% [markdown]
# ## One head cannot look at two places at once
#
# A head's output for a query is **one** weighted average of the values: the softmax gives one
# weight per key, shared by every coordinate of the value. Suppose the last token of a sequence
# needs the contents of tokens 1 and 4 side by side, $[c_1, c_4]$ (say, a verb that needs its
# subject and its object). A small test: 2,000 random sequences of 6 tokens, each token's
# content $c_j$ 4 random numbers. The query picks keys by position (as some trained heads do),
# and the output projection is fitted by least squares, the best any $W_V W_O$ of any width can
# do. How much of the target's variance is left unexplained?

# %%
n_seq, T6, d_c = 2000, 6, 4
C = rng.normal(size=(n_seq, T6, d_c))  # the contents of 2,000 sequences of 6 tokens
target = np.concatenate([C[:, 1], C[:, 4]], axis=-1)  # (n_seq, 8): tokens 1 and 4, side by side
pos = np.arange(T6)


def head_output(scores):
    """One head whose query scores the 6 keys by position: its output for every sequence."""
    return softmax(scores) @ C  # (n_seq, d_c): one weighted average of the contents


def unexplained(out):
    """Share of the target's variance that the best output projection (least squares) misses."""
    W_best, *_ = np.linalg.lstsq(out, target, rcond=None)
    return ((out @ W_best - target) ** 2).sum() / (target**2).sum()


for w in (0.5, 0.7, 0.9):  # one head: weight w on token 1, 1 - w on token 4
    scores = np.log(np.where(pos == 1, w, np.where(pos == 4, 1 - w, 1e-12)))
    print(
        f"one head, weights {softmax(scores)}: unexplained {unexplained(head_output(scores)):.1f}"
    )
two = np.concatenate([head_output(20.0 * (pos == 1)), head_output(20.0 * (pos == 4))], axis=-1)
print(f"two heads, one on token 1, one on token 4: unexplained {unexplained(two):.1f}")

# %% [markdown]
# One head returns the blend $w\,c_1 + (1 - w)\,c_4$, and no linear map pulls two vectors back
# out of their sum: half of the target is lost, whatever the split $w$ (weights chosen by
# content instead still give one blend of 4 numbers, for a target of 8). Two heads, one on each
# place, hand $W_O$ both averages side by side: nothing is lost. That is what heads buy.
#
# **Do trained heads specialise?** In large trained models, some do. Clark et al. (2019, *What
# Does BERT Look At?*) find BERT heads that attend to the previous or the next token, to the separator token, or broadly over the
# sentence, and a few whose attention picks out the direct object of a verb or a coreferent
# mention with high accuracy; no single head does syntax as a whole well. Voita et al. (2019,
# *Analyzing Multi-Head Self-Attention*) find a few positional, syntactic and rare-word heads
# doing most of the work in a translation model's encoder: removing 38 of its 48 encoder heads
# cost 0.15 BLEU. So: some heads, in some models, with many heads doing nothing one can name.
# The small trained model of notebook 13 shows no single head that tracks what "it" refers to.
# [14 · Induction heads](14_induction_heads.ipynb) watches two heads form during training: a
# previous-token head and an induction head, in a two-layer attention-only model.

# %% [markdown]
# ## What the extra heads cost
#
# A common claim: *"total compute is roughly unchanged. You are not running 8×
# the work — you split 512 dimensions into 8 slices of 64. Multi-head attention buys diversity
# of attention patterns for approximately free."* Let us count. A product of shapes
# $(m, k) \times (k, n)$ costs $m k n$ multiply-adds, once per head for the per-head products.
# Every product of the layer for one head of width 512 and for 8 heads of width 64, at
# $T = 4096$ tokens:


# %%
def layer_cost(T, d_model, h):
    """Multiply-adds of each product, exponentials and attention weights of one layer."""
    d = d_model // h  # d_head
    return {
        "projections X W_Q, X W_K, X W_V": 3 * T * d_model * d_model,
        "scores Q K^T": h * T * d * T,  # (T, d) @ (d, T) per head
        "attention weights @ V": h * T * T * d,  # (T, T) @ (T, d) per head
        "output projection @ W_O": T * d_model * d_model,
        "softmax exponentials": h * T * T,
        "attention weights stored": h * T * T,
    }


T_long = 4096
one, eight = layer_cost(T_long, 512, 1), layer_cost(T_long, 512, 8)
print(
    f"{f'T = {T_long:,}, d_model = 512':<32}{'1 head of 512':>16}{'8 heads of 64':>16}{'ratio':>7}"
)
for name in one:
    print(f"{name:<32}{one[name]:>16,}{eight[name]:>16,}{eight[name] / one[name]:>7.2f}")

# %% [markdown]
# Every matrix product costs exactly the same: $n_{heads}$ products of width $d_{head}$ do the
# work of one of width $n_{heads} d_{head} = d_{model}$. What grows is everything of size
# $T \times T$ **per head**: 8 times as many exponentials and 8 times as many attention weights.
# The exponentials are cheap next to the products; the attention weights are memory:

# %%
for label, cost in [("1 head", one), ("8 heads", eight)]:
    n = cost["attention weights stored"]
    print(
        f"{label:<8} at T = {T_long:,}: {n:>11,} attention weights = {n * 4 / 2**20:5.0f} MiB (fp32)"
    )

# %% [markdown]
# <details>
# <summary>About "approximately free"</summary>
#
# The claim is right about the arithmetic, as the table shows. It is not quite right about
# memory: 8 heads keep 8 attention-weight matrices of $T \times T$, $n_{heads} T^2$ numbers instead of
# $T^2$, and training stores them for the backward pass. That is the term that grows fastest with
# context length, and it is the one that FlashAttention-style tiling avoids storing at all
# (notebook 10).
#
# </details>

# %% [markdown]
# ## Attention does not see word order
#
# Shuffle the tokens of the sentence and run the same layer. Each token's output does not
# change; the outputs are just shuffled the same way. In symbols, for a permutation matrix $P$:
#
# $$\mathrm{MultiHead}(P X) = P\, \mathrm{MultiHead}(X).$$
#
# The reason: every step is either row by row (the projections, $W_O$) or a weighted sum over
# all keys, which does not care in which order the keys come.

# %%
perm = rng.permutation(T)
print("shuffled:", " ".join(tokens[i] for i in perm))
out_shuffled, w_shuffled = multi_head_attention(X[perm], W_Q, W_K, W_V, W_O, n_heads)
print("outputs shuffled the same way:", np.allclose(out_shuffled, output[perm]))
print(
    "attention weights too (rows and columns):",
    np.allclose(w_shuffled, weights[:, perm][:, :, perm]),
)

# %% [markdown]
# So "the animal crossed the road" and "the road crossed the animal" give each word the same
# output. Word order only enters through information added to $X$ (positional encodings),
# or through a mask that depends on positions: with a causal mask, the shuffle changes what
# each token may see, and the equality fails.

# %%
from attnlib import causal_mask

out_c, _ = multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, mask=causal_mask(T))
out_c_shuffled, _ = multi_head_attention(X[perm], W_Q, W_K, W_V, W_O, n_heads, mask=causal_mask(T))
print(
    "with a causal mask, outputs shuffled the same way:", np.allclose(out_c_shuffled, out_c[perm])
)

# %% [markdown]
# ## Check yourself
#
# 1. With $d_{model} = 512$ and 8 heads, a colleague divides every head's scores by
#    $\sqrt{512}$ "because that is the model width". What happens to the attention weights, and why?
# 2. The same layer is run with 16 heads of width 32 instead of 8 of width 64, at $T = 4096$.
#    What happens to the multiply-adds of the four projections, of $Q K^\top$ and of the
#    weights times $V$, and to the number of attention weights the layer stores?
# 3. Without positional information, you swap the words "animal" and "road" in the sentence.
#    Which outputs change? And with a causal mask?
#
# <details>
# <summary>Answers</summary>
#
# 1. Inside a head the scores are dot products of $d_{head} = 64$ numbers, with standard
#    deviation about $\sqrt{64} = 8$. Dividing by $\sqrt{512} \approx 22.6$ leaves a spread of
#    about 0.35, so the softmax is nearly uniform: in the cell above, the mean largest weight
#    falls about two thirds of the way towards the uniform $1/9$, and every head averages
#    almost blindly. The scale belongs to the width of the vectors actually compared,
#    $d_{head}$.
# 2. Every product keeps its multiply-adds: 16 heads of 32 do $16 \cdot T^2 \cdot 32 = 8 \cdot
#    T^2 \cdot 64$, and the projections do not depend on the head count at all. The stored
#    attention weights double, from $8 T^2$ to $16 T^2$ (from 512 MiB to 1 GiB in float32 at
#    $T = 4096$), as do the exponentials.
# 3. Each word keeps its own output; what changes is where it sits. After the swap, position 1
#    holds "road" with the output "road" had at position 4, and position 4 holds "animal" with
#    the output "animal" had: the two *positions* swap outputs, and every other position keeps
#    its output. That is permutation equivariance, $\mathrm{MultiHead}(PX) = P\,
#    \mathrm{MultiHead}(X)$. With a causal mask, positions matter. "The" and the words after
#    "road" see the same set of words as before and keep their outputs, but positions 1 to 4
#    change: "road", now second, sees only "The" and itself; "crossed the" see "road" instead
#    of "animal"; and "animal", now fifth, sees five words instead of two.
#
# </details>

# %% [markdown]
# ## Summary
#
# - Multi-head attention splits $d_{model}$ into $n_{heads}$ slices of $d_{head} =
#   d_{model}/n_{heads}$ (`reshape(T, n_heads, d_head).transpose(1, 0, 2)`), attends in each
#   slice, concatenates the heads and multiplies by $W_O$, which lets every output feature draw
#   on every head. Reshaping without the transpose mixes tokens.
# - Each head scales by $\sqrt{d_{head}}$, the width of the vectors it compares.
# - One head returns one weighted average, so it cannot bring two places' contents side by
#   side; two heads can (half the target lost against none). In large trained models some heads
#   specialise (previous token, separators, some syntactic relations), many do nothing
#   nameable; notebook 14 watches heads form in training.
# - $n_{heads}$ heads cost the same multiply-adds as one head of width $d_{model}$, but keep
#   $n_{heads}$ attention-weight matrices of $T \times T$.
# - Without positions or masks, attention is permutation-equivariant: each word keeps its
#   output wherever it stands.
#
# **Next:** [08 · Grouped-query attention and the KV cache](08_gqa_and_kv_cache.ipynb), where
# the heads generate text one token at a time, or first the optional section below:
# cross-attention, where queries come from one sequence and keys and values from another.


# %% [markdown]
# ## Optional: cross-attention
#
# In this notebook $Q$, $K$ and $V$ all came from the same $X$: **self-attention**, with a square
# $(T, T)$ matrix of attention weights. In an encoder-decoder model (translation, say), the decoder also
# runs **cross-attention**: its queries come from the decoder's own tokens, and the keys and
# values from the encoder's output. The two sequences can have different lengths, $T_q \neq
# T_k$, and the attention weights are $(T_q, T_k)$:
#
# $$Q = X_{dec} W_Q \in \mathbb{R}^{T_q \times d_{head}},\quad
# K = X_{enc} W_K,\ V = X_{enc} W_V \in \mathbb{R}^{T_k \times d_{head}},\quad
# A = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_{head}}}\right) \in
# \mathbb{R}^{T_q \times T_k}.$$
#
# A decoder that has written 3 German words attends to the 5 English words the encoder read
# (small random states again, $d_{model} = 8$ and 2 heads of 4):

# %%
from attnlib import scaled_dot_product_attention

enc_tokens = ["The", "animal", "was", "tired", "."]
dec_tokens = ["Das", "Tier", "war"]
d_small, h_small = 8, 2
X_enc = rng.normal(size=(len(enc_tokens), d_small))
X_dec = rng.normal(size=(len(dec_tokens), d_small))
Wq, Wk, Wv = rng.normal(size=(3, d_small, d_small)) / np.sqrt(d_small)

Q_x = split_heads(X_dec @ Wq, h_small)  # (h, T_q, d_head) = (2, 3, 4)
K_x = split_heads(X_enc @ Wk, h_small)  # (h, T_k, d_head) = (2, 5, 4)
V_x = split_heads(X_enc @ Wv, h_small)
A_x = softmax(Q_x @ K_x.transpose(0, 2, 1) / np.sqrt(d_small // h_small), axis=-1)
print("Q", Q_x.shape, " K", K_x.shape, " V", V_x.shape, " attention weights", A_x.shape)
print("head 0 (rows: German queries, columns: English keys):")
print(A_x[0])
_, ref_A_x = scaled_dot_product_attention(Q_x, K_x, V_x)
print("scaled_dot_product_attention agrees:", np.allclose(ref_A_x, A_x))

# %% [markdown]
# Every row still sums to 1 (a softmax): each decoder token takes a weighted average of the
# encoder's values. Nothing else changes, and the formula never required $T_q = T_k$.
