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
# # 13 · Attention in a trained model
#
# Every notebook so far ran attention on numbers we made up: four hand-picked tokens, random
# projections. The question a student asks at the end is fair: *is this really what a trained
# transformer does?* This notebook answers it with a real model, run in plain numpy on the same
# `scaled_dot_product_attention` you have been using, with no deep-learning framework at all.
#
# The model is **all-MiniLM-L6-v2**, a small BERT encoder trained to turn a sentence into a
# vector whose dot products measure meaning (it powers many search and clustering tools). It has
# 6 layers of 12 attention heads each and 22.7 million trained numbers.
#
# **Learning goals.** After this notebook you can
#
# 1. name the shape of every real weight matrix ($W_Q, W_K, W_V, W_O$) and find one head's
#    slice of it, as in notebooks 01 and 07;
# 2. recompute one layer of a trained transformer by hand and match the model to float32
#    precision;
# 3. read attention maps of every layer and head, find heads by computation, and say why a map
#    is not an explanation;
# 4. compare a trained model's score spread and softmax saturation with the theory of notebooks
#    02 and 04;
# 5. show that the padding mask of notebook 06 keeps a sentence's meaning the same in any batch;
# 6. use sentence embeddings to measure how similar two sentences are.

# %% [markdown]
# ## Loading the model
#
# `load_minilm()` reads the published weights (one `model.safetensors` file, float32) and the
# model's tokenizer. The first time it runs on a computer it downloads them (84 MB, once, into
# `~/.cache/attnlib`); afterwards loading takes about a second. If the model cannot be had (no
# network, say), the cell stops with a message that says what is missing and the exact command
# that fetches it: attnlib never quietly substitutes random weights.

# %%
# NBVAL_IGNORE_OUTPUT
import matplotlib.pyplot as plt
import numpy as np

from attnlib.pretrained import load_minilm

np.set_printoptions(precision=4, suppress=True, linewidth=100)

model = load_minilm()  # the first run on a computer downloads the model once

# %%
c = model.config
print(model)
print(f"layers {c.n_layers}, heads {c.n_heads}, d_head {c.d_head}, d_model {c.d_model}")
print(f"feed-forward width {c.d_ff}, vocabulary {c.vocab_size:,} tokens")
n_params = sum(t.size for name, t in model.tensors.items() if name != "embeddings.position_ids")
print(f"trained numbers (parameters): {n_params:,}")

# %% [markdown]
# ## The real $W_Q$, $W_K$, $W_V$, $W_O$
#
# Notebook 01 wrote one head as $Q = XW_Q$ with $W_Q \in \mathbb{R}^{d_{model} \times d_k}$.
# Notebook 07 put $h$ heads side by side: one matrix of shape $(d_{model}, h\,d_{head})$ whose
# column block $i$ is head $i$'s own $W_Q$, and an output projection $W_O$ of shape
# $(h\,d_{head}, d_{model})$ that mixes the concatenated heads. The trained model is built exactly
# that way, with $d_{model} = 384$, $h = 12$, $d_{head} = 32$, so every projection is
# $384 \times 384$. Two details a paper's equations leave out:
#
# * **biases**: a trained layer computes $Q = XW_Q + b_Q$ (and likewise $K$, $V$, the output);
# * **storage**: PyTorch stores a linear layer's matrix as (out, in) and computes $x W^\top$;
#   attnlib hands you the transpose (a view, no copy), so the products read $XW_Q$ as in 01.

# %%
layer0 = model.layers[0]
stored = model.tensors["encoder.layer.0.attention.self.query.weight"]
print("stored in the file as (out, in):", stored.shape, "  W_Q = stored.T:", layer0.W_Q.shape)
print("same numbers:", np.array_equal(layer0.W_Q, stored.T))
print()
print(f"{'matrix':<8}{'shape':<14}{'in symbols':<26}{'bias'}")
for name, W, symbols, b in [
    ("W_Q", layer0.W_Q, "(d_model, h * d_head)", layer0.b_Q),
    ("W_K", layer0.W_K, "(d_model, h * d_head)", layer0.b_K),
    ("W_V", layer0.W_V, "(d_model, h * d_head)", layer0.b_V),
    ("W_O", layer0.W_O, "(h * d_head, d_model)", layer0.b_O),
    ("W_1", layer0.W_1, "(d_model, d_ff)", layer0.b_1),
    ("W_2", layer0.W_2, "(d_ff, d_model)", layer0.b_2),
]:
    print(f"{name:<8}{str(W.shape):<14}{symbols:<26}{b.shape}")

# %% [markdown]
# One head is one block of 32 columns. Head 3's query projection is a $384 \times 32$ matrix,
# the $W_Q$ of notebook 01 with $d_k = 32$:

# %%
h, d_head = 3, c.d_head
W_Q_head3 = layer0.W_Q[:, h * d_head : (h + 1) * d_head]  # columns 96..127
print("head 3's W_Q:", W_Q_head3.shape, "= (d_model, d_k)")
attn_params = sum(W.size for W in (layer0.W_Q, layer0.W_K, layer0.W_V, layer0.W_O)) + 4 * 384
ffn_params = layer0.W_1.size + layer0.W_2.size + layer0.b_1.size + layer0.b_2.size
print(f"per layer: attention {attn_params:,} parameters, feed-forward {ffn_params:,}")

# %% [markdown]
# ## One layer, recomputed by hand
#
# A sentence first becomes tokens. The tokenizer lower-cases it, splits rare words into
# pieces, and adds two special tokens: `[CLS]` at the start and `[SEP]` at the end. `model.run`
# returns every intermediate result: `hidden[l]` is the input of layer $l$, shape $(T, 384)$,
# and `weights[l]` its attention weights, shape $(12, T, T)$.
#
# Here is layer 3 recomputed from its input with nothing but numpy: the three projections, the
# head split of notebook 07 (a reshape and a transpose), the scaled scores, the softmax.

# %%
sentence = "The animal didn't cross the street because it was too tired"
run = model.run([sentence])
tokens = run.tokens[0]
print(len(tokens), "tokens:", " ".join(tokens))

layer, H, T = 3, c.n_heads, len(tokens)
w = model.layers[layer]
X = run.hidden[layer, 0]  # (T, d_model): the input of layer 3
Q = X @ w.W_Q + w.b_Q  # (T, H * d_head): all 12 heads at once
K = X @ w.W_K + w.b_K
V = X @ w.W_V + w.b_V
Qh = Q.reshape(T, H, d_head).transpose(1, 0, 2)  # (H, T, d_head): split the heads
Kh = K.reshape(T, H, d_head).transpose(1, 0, 2)
Vh = V.reshape(T, H, d_head).transpose(1, 0, 2)
S = Qh @ Kh.transpose(0, 2, 1) / np.sqrt(d_head)  # (H, T, T)
A = np.exp(S - S.max(axis=-1, keepdims=True))
A /= A.sum(axis=-1, keepdims=True)
print("X", X.shape, " Q", Q.shape, " Qh", Qh.shape, " S and A", A.shape)
gap = np.abs(A - run.weights[layer, 0]).max()
print(f"largest difference from the model's weights below 1e-6: {gap < 1e-6}")

# %% [markdown]
# Before layer 0 there is one more step, which the attention of notebooks 01-08 does not have:
# notebook 07 proved that attention alone ignores word order, so the model *adds a learned
# vector for each position* to each token's vector (BERT's embedding layer, then a LayerNorm).
# Notebook [09 · Positions](09_positions.ipynb) looks inside these vectors.

# %%
from attnlib.pretrained.blocks import layer_norm

word_table = model.tensors["embeddings.word_embeddings.weight"]  # (vocabulary, d_model)
position_table = model.tensors["embeddings.position_embeddings.weight"]  # (positions, d_model)
type_table = model.tensors["embeddings.token_type_embeddings.weight"]  # (2, d_model)
print("word", word_table.shape, " position", position_table.shape, " token type", type_table.shape)
ids = model.tokenize([sentence])[1][0]  # (T,)
x0 = word_table[ids] + type_table[0] + position_table[: len(ids)]  # token t + position t
x0 = layer_norm(x0, *model.embedding_norm, c.layer_norm_eps)
print("input of layer 0 = LayerNorm(word + type + position):", np.allclose(x0, run.hidden[0, 0]))

# %% [markdown]
# The rest of the layer is notebook 07's merge and output projection, then the parts of a
# transformer block that are not attention: a residual connection and LayerNorm, a feed-forward
# network with the GELU nonlinearity, another residual and LayerNorm. With those, the by-hand
# layer reproduces the model's next hidden state (`attnlib.pretrained.blocks` holds LayerNorm
# and GELU, each a line of numpy).

# %%
from attnlib.pretrained.blocks import gelu

heads = A @ Vh  # (H, T, d_head)
merged = heads.transpose(1, 0, 2).reshape(T, H * d_head)  # (T, 384): merge the heads
x = layer_norm(X + merged @ w.W_O + w.b_O, *w.attn_norm, c.layer_norm_eps)
out = layer_norm(x + gelu(x @ w.W_1 + w.b_1) @ w.W_2 + w.b_2, *w.ffn_norm, c.layer_norm_eps)
gap = np.abs(out - run.hidden[layer + 1, 0]).max()
print(f"output {out.shape}; differs from the model's next hidden state by < 1e-5: {gap < 1e-5}")

# %% [markdown]
# The differences are float32 rounding (a few times $10^{-7}$): the model *is* these lines. The package's
# own forward pass is this cell in a loop, built on `attnlib.scaled_dot_product_attention`, and
# a test checks it against the original PyTorch implementation (embeddings and every attention
# weight agree to better than $10^{-5}$).

# %% [markdown]
# ## Every layer, every head
#
# A common lesson text introduces attention with a sentence and a question:
#
# > "The animal crossed the road because it was tired." What does *it* refer to? [...] It needs,
# > when building a representation of *it*, to look back and pull in information from "animal".
#
# Here is the trained model on a sharper version of that sentence, and on its twin that differs
# in one word, which moves the referent of *it* from the animal to the street:
#
# * "The animal didn't cross the street because it was too **tired**" (*it* = the animal)
# * "The animal didn't cross the street because it was too **wide**" (*it* = the street)
#
# First the whole picture: the $15 \times 15$ weight matrix of each of the 72 heads, small.

# %%
from attnlib.pictures.head_grid import head_grid

tired = "The animal didn't cross the street because it was too tired"
wide = "The animal didn't cross the street because it was too wide"
pair = model.run([tired, wide])  # both have 15 tokens: no padding
W_tired, W_wide = pair.weights[:, 0], pair.weights[:, 1]  # (layers, heads, T, T) each
print("weights of one sentence:", W_tired.shape)

fig, ax = plt.subplots(figsize=(13, 7.2))
head_grid(W_tired, ax=ax, title=f"{tired!r}: every head (rows = queries, columns = keys)")
fig.colorbar(ax.images[0], ax=ax, fraction=0.02, pad=0.01, label="attention weight")
plt.show()

# %% [markdown]
# Patterns jump out even at this size. Many heads put most of their weight in the first column,
# on `[CLS]`. Some maps are a sharp diagonal stripe: each token attends to its neighbour (layer
# 0, head 2 is one of them; more on it below). Others are diffuse. Heads differ, layers differ.
#
# ## Where does "it" look?
#
# Now the question of the lesson text, answered by computation rather than by picking a pretty
# picture. For every head, take the row of the query *it* and compare the weight it puts on
# *animal* with the weight on *street*, in both sentences. A head that tracks the referent would
# prefer *animal* in the "tired" sentence and *street* in the "wide" one.

# %%
it, animal, street = tokens.index("it"), tokens.index("animal"), tokens.index("street")


def preference(W, it, first, second):
    """Weight of the query `it` on the first noun minus on the second, per (layer, head)."""
    return W[:, :, it, first] - W[:, :, it, second]


prefer_tired = preference(W_tired, it, animal, street)  # > 0: animal wins
prefer_wide = preference(W_wide, it, animal, street)
shift = prefer_tired - prefer_wide  # > 0: moves towards the referent, as a tracker should
share = np.minimum(
    W_tired[:, :, it, [animal, street]].sum(-1), W_wide[:, :, it, [animal, street]].sum(-1)
)
real = share >= 0.05  # both sentences give the two nouns together at least 5% of the weight
CLEAR = 0.02  # and the preferred noun gets at least 2 points more, in each sentence
right_way = real & (prefer_tired > CLEAR) & (prefer_wide < -CLEAR)
wrong_way = real & (prefer_tired < -CLEAR) & (prefer_wide > CLEAR)
print(
    "sign flips only:   right way",
    ((prefer_tired > 0) & (prefer_wide < 0)).sum(),
    "| wrong way (the chance baseline)",
    ((prefer_tired < 0) & (prefer_wide > 0)).sum(),
)
print(f"clear flips:       right way {right_way.sum()} | wrong way {wrong_way.sum()}   (of 72)")


def it_row_table(heads):
    print(
        f"{'head':<8}{'tired: animal':>14}{'street':>8}"
        f"{'wide: animal':>14}{'street':>8}{'shift':>8}"
    )
    for l, h in heads:
        print(
            f"L{l} H{h:<5}{W_tired[l, h, it, animal]:>14.3f}{W_tired[l, h, it, street]:>8.3f}"
            f"{W_wide[l, h, it, animal]:>14.3f}{W_wide[l, h, it, street]:>8.3f}{shift[l, h]:>+8.3f}"
        )


by_shift = [np.unravel_index(k, shift.shape) for k in np.argsort(-shift, axis=None)]
switch_head = next(lh for lh in by_shift if right_way[lh])
strongest = np.unravel_index(np.argmax(prefer_tired), prefer_tired.shape)
print("\nthe three largest shifts towards the referent, then the clear right-way flip:")
it_row_table(by_shift[:3] + [switch_head] * (switch_head not in by_shift[:3]))
print("\nthe head with the strongest 'it -> animal' in the tired sentence:")
it_row_table([strongest])

# %% [markdown]
# Read the counts as a search over 72 heads. Counting only signs, as many heads flip the wrong
# way (from street to animal) as the right way: a flip is what chance gives. With a threshold
# that means something (both nouns get a real share of the weight, and the preferred one clearly
# more) one head flips each way. The *shift* of the preference tells more than the sign: layer
# 3, head 1 moves most towards the referent, without ever preferring *animal*; layer 4, head 0
# is the one clear right-way flip.
#
# The head with the strongest "it → animal" attention in the tired sentence (layer 5, head 11)
# is the picture the lesson text promises, but it does **not** follow the referent: in the
# "wide" sentence it still looks mostly at *animal*. Does what the candidates do repeat on other
# sentence pairs? A referent tracker should shift the same way on every pair, and not on a
# control pair whose adjective changes but whose referent stays (tired / scared: the animal
# both times).

# %%
PAIRS = {  # name: (sentence where it = first noun, where it = second noun, first, second)
    "animal/street": (tired, wide, "animal", "street"),
    "dog/road": (
        tired.replace("animal", "dog").replace("street", "road"),
        wide.replace("animal", "dog").replace("street", "road"),
        "dog",
        "road",
    ),
    "trophy/suitcase": (
        "The trophy didn't fit into the suitcase because it was too big",
        "The trophy didn't fit into the suitcase because it was too small",
        "trophy",
        "suitcase",
    ),
    "control (tired/scared)": (tired, tired.replace("tired", "scared"), "animal", "street"),
}
candidates = [tuple(map(int, lh)) for lh in by_shift[:3]] + [tuple(map(int, switch_head))]
candidates = list(dict.fromkeys(candidates))
print(f"{'pair':<24}" + "".join(f"{f'L{l} H{h}':>9}" for l, h in candidates) + "   (shift)")
for name, (first_sentence, second_sentence, noun1, noun2) in PAIRS.items():
    enc = model.run([first_sentence, second_sentence])
    t_ = enc.tokens[0]
    q, n1, n2 = t_.index("it"), t_.index(noun1), t_.index(noun2)
    d = preference(enc.weights[:, 0], q, n1, n2) - preference(enc.weights[:, 1], q, n1, n2)
    print(f"{name:<24}" + "".join(f"{d[l, h]:>+9.3f}" for l, h in candidates))

# %% [markdown]
# What holds across the pairs: layer 3, head 1 and layer 4, head 0 (and, more weakly, layer 5,
# head 11) shift towards the referent on both "cross the street" pairs and much less on the
# control, so in this sentence frame they respond to the referent, not only to the changed
# adjective. On the trophy/suitcase pair none of them shifts (layer 3, head 1 even moves slightly
# the wrong way). So no head here is *the* referent tracker: a few heads follow the referent in
# one sentence frame. Here are the rows of *it* for
# the clear flip and for the strongest "it → animal" head:

# %%
# the clear right-way flip, and the strongest "it -> animal" head
fig, axes = plt.subplots(1, 2, figsize=(13, 3.6), sharey=True)
x_pos = np.arange(T)
for ax, (l, h) in zip(axes, [switch_head, strongest]):
    ax.bar(x_pos - 0.2, W_tired[l, h, it], width=0.4, label="… too tired")
    ax.bar(x_pos + 0.2, W_wide[l, h, it], width=0.4, label="… too wide")
    labels = [f"{t_}/{u}" if t_ != u else t_ for t_, u in zip(tokens, pair.tokens[1])]
    ax.set_xticks(x_pos, labels, rotation=50, ha="right", rotation_mode="anchor")
    ax.set_title(f"layer {l}, head {h}: where 'it' looks")
    ax.grid(axis="y", alpha=0.3)
axes[0].set_ylabel("attention weight of 'it'")
axes[0].legend()
plt.show()

# %% [markdown]
# ### A caveat: attention maps are not explanations
#
# It is tempting to read a map as "the model thinks *it* means the street". Three computed
# reasons to be careful:
#
# 1. **One head is one of 72.** What the model builds for *it* passes through every head of
#    every layer and through the feed-forward blocks; one head's map shows one path of many.
# 2. **Much attention goes nowhere in particular.** In this model the first token, `[CLS]`,
#    soaks up a large share of the weight from layer 1 on, and `[SEP]` very little (next cell).
#    Clark et al. (2019, *What does BERT look at?*) found the same kind of parking in BERT-base,
#    but mostly on `[SEP]`, and read it as a "no-op": a head with nothing to do parks its weight
#    on a token that is always there. This smaller, distilled model parks on `[CLS]` instead.
# 3. **A weight is not a contribution.** What a key adds to the output is
#    $a_{ij}\, v_j W_O^{(h)}$ (its weight times its value vector, projected by the head's block of
#    $W_O$). Vectors differ in length, so a large weight on a short vector adds little
#    (Kobayashi et al., 2020, *Attention is not only a weight*).

# %%
n = T
on_cls, on_sep = W_tired[..., 0].mean(-1), W_tired[..., n - 1].mean(-1)  # (layers, heads)
print("share of attention, mean over heads and queries:")
print("  layer " + "".join(f"{l:>7}" for l in range(c.n_layers)))
print("  [CLS] " + "".join(f"{on_cls[l].mean():>7.2f}" for l in range(c.n_layers)))
print("  [SEP] " + "".join(f"{on_sep[l].mean():>7.2f}" for l in range(c.n_layers)))
print(
    f"heads with more than half their weight on [CLS]: {(on_cls > 0.5).sum()} of 72,"
    f" on [SEP]: {(on_sep > 0.5).sum()}"
)

l, h = switch_head
w_l = model.layers[l]
X_l = pair.hidden[l, 0]  # input of that layer, tired sentence
V_h = (X_l @ w_l.W_V + w_l.b_V)[:, h * d_head : (h + 1) * d_head]  # (T, d_head)
added = V_h @ w_l.W_O[h * d_head : (h + 1) * d_head]  # (T, d_model): what each key adds
weight = W_tired[l, h, it]
contribution = weight * np.linalg.norm(added, axis=-1)
contribution /= contribution.sum()
print(f"\nlayer {l}, head {h}, query 'it' (tired): top keys by weight and by contribution")
by_weight = np.argsort(weight)[::-1][:4]
by_contribution = np.argsort(contribution)[::-1][:4]
for a, b in zip(by_weight, by_contribution):
    print(f"  {tokens[a]:>8} {weight[a]:.3f}      {tokens[b]:>8} {contribution[b]:.3f}")

# %% [markdown]
# `[CLS]` has the largest weight but, measured by what it adds, drops out of the top: its
# value vector in this head is short. By contribution, *animal* leads. The weights alone would
# have told a different story.
#
# <details><summary>Where the lesson text's picture comes from, and what it leaves out</summary>
#
# The lesson text says the model "needs to look back and pull in information from 'animal'" and
# that attention maps are "directly interpretable". The first half is the right intuition for
# *why* attention exists. The second half goes too far: as computed above, in a real trained
# model the weight of *it* is spread across many heads, largely parked on special tokens, and
# only partly follows the referent. Famous pictures of a head resolving *it* are real, but they
# are chosen from many heads, in models trained for that kind of task (translation), and they
# show weights, not contributions. Whether attention weights explain a prediction is debated in
# the research literature (Jain and Wallace, 2019, *Attention is not Explanation*; Wiegreffe and
# Pinter, 2019, *Attention is not not Explanation*). Use maps to form hypotheses, then test them
# by computation, as this notebook did.
#
# </details>

# %% [markdown]
# ## Theory meets practice: the spread of the scores
#
# Notebook 02 derived that if the entries of $q$ and $k$ are independent with mean 0 and
# variance 1, then $q \cdot k$ has variance $d_k$, standard deviation $\sqrt{d_k}$; dividing by
# $\sqrt{d_k}$ brings the scores back to standard deviation 1. For this model
# $\sqrt{d_{head}} = \sqrt{32} \approx 5.66$. Trained vectors owe nothing to that assumption.
# What do the real raw scores $q \cdot k$ look like, head by head? We measure on a handful of
# sentences (the padding positions of the batch are left out).

# %%
sentences = [
    tired,
    wide,
    "A man is playing a guitar on the stage.",
    "Someone is strumming an instrument in front of an audience.",
    "The stock market fell sharply after the announcement.",
    "Shares dropped quickly once the news was released.",
    "My order was late and it was cold.",
]
corpus = model.run(sentences)
L = c.n_layers
raw_std = np.zeros((L, H))
raw_scores = [[[] for _ in range(H)] for _ in range(L)]  # per layer and head, per sentence
for l in range(L):
    w_l = model.layers[l]
    for b, n_b in enumerate(corpus.lengths):
        X_b = corpus.hidden[l, b, :n_b]  # the real tokens only
        Q_b = (X_b @ w_l.W_Q + w_l.b_Q).reshape(n_b, H, d_head).transpose(1, 0, 2)
        K_b = (X_b @ w_l.W_K + w_l.b_K).reshape(n_b, H, d_head).transpose(1, 0, 2)
        raw = Q_b @ K_b.transpose(0, 2, 1)  # (H, n_b, n_b), not yet scaled
        for h_ in range(H):
            raw_scores[l][h_].append(raw[h_])
    for h_ in range(H):
        # within each row: the softmax ignores a constant added to a query's row of scores
        rows = np.concatenate(
            [(r - r.mean(axis=-1, keepdims=True)).ravel() for r in raw_scores[l][h_]]
        )
        raw_std[l, h_] = np.sqrt(np.mean(rows**2))

print(f"sqrt(d_head) = {np.sqrt(d_head):.2f}: the theory's standard deviation of q.k")
print("std of the raw scores within a query's row, per head:")
print(f"{'':<9}{'smallest':>10}{'median':>10}{'largest':>10}   (over the 72 heads)")
for label, values in [("raw", raw_std), ("scaled", raw_std / np.sqrt(d_head))]:
    print(f"{label:<9}{values.min():>10.2f}{np.median(values):>10.2f}{values.max():>10.2f}")
print(f"heads with raw std above sqrt(d_head): {(raw_std > np.sqrt(d_head)).sum()} of {L * H}")

# %%
fig, ax = plt.subplots(figsize=(8, 3.6))
jitter = (np.arange(H) - (H - 1) / 2) * 0.04
ax.scatter((np.arange(L)[:, None] + jitter).ravel(), raw_std.ravel(), s=18)
ax.axhline(
    np.sqrt(d_head), color="crimson", linestyle="--", label=r"theory: $\sqrt{d_{head}} = 5.66$"
)
ax.set_yscale("log")
ticks = [
    t_ for t_ in (1, 2, 4, 6, 10, 20, 40, 60) if raw_std.min() / 1.5 < t_ < raw_std.max() * 1.5
]
ax.set_yticks(ticks, [f"{t_:g}" for t_ in ticks])
ax.minorticks_off()
ax.set_xlabel("layer (one dot per head)")
ax.set_ylabel("std of q.k within a row")
right = ax.secondary_yaxis(
    "right", functions=(lambda y: y / np.sqrt(d_head), lambda y: y * np.sqrt(d_head))
)
right.set_ylabel(r"after the scale $1/\sqrt{32}$")
ax.legend(loc="upper right")
ax.grid(alpha=0.3)
plt.show()

# %% [markdown]
# The theory gets the order of magnitude right, and the scale does its job: after it, most heads
# sit between about 1 and 3 instead of 5 to 20. But trained heads are not unit-variance random
# vectors. Most spread their raw scores *more* than $\sqrt{32}$: training has learned queries
# and keys that point at each other on purpose, and a larger spread makes sharper choices. One
# head stands far out, at ten times the theory. That is layer 0, head 2, and it brings us to
# saturation.
#
# ## Do trained heads saturate?
#
# Notebook 04 measured saturation by a row's **entropy**,
# $H(a) = -\sum_j a_j \ln a_j$: $\ln T$ for uniform weights, 0 for one-hot weights, where the
# softmax gradient vanishes. We compute it for every real row of every head, with the scale the
# model uses, and, as a thought experiment, with the scale removed (the same trained $q$ and $k$,
# softmax of $q \cdot k$ instead of $q \cdot k/\sqrt{32}$).


# %%
from attnlib import softmax


def row_entropy(a):
    """-sum a ln a along the last axis, with 0 ln 0 = 0."""
    return -(a * np.log(np.where(a > 0, a, 1.0))).sum(axis=-1)


entropy_scaled, entropy_raw, max_scaled, max_raw = [], [], [], []
for l in range(L):
    for h_ in range(H):
        for r in raw_scores[l][h_]:
            a_scaled = softmax(r.astype(np.float64) / np.sqrt(d_head))
            a_raw = softmax(r.astype(np.float64))
            entropy_scaled.append(row_entropy(a_scaled))
            entropy_raw.append(row_entropy(a_raw))
            max_scaled.append(a_scaled.max(axis=-1))
            max_raw.append(a_raw.max(axis=-1))
entropy_scaled, entropy_raw = np.concatenate(entropy_scaled), np.concatenate(entropy_raw)
max_scaled, max_raw = np.concatenate(max_scaled), np.concatenate(max_raw)
uniform = np.mean(np.log(corpus.lengths))
print(f"rows measured: {entropy_scaled.size:,} (every real query of every head)")
print(f"{'':<24}{'mean entropy':>13}{'rows with max weight > 0.9':>28}")
print(f"{'uniform rows (ln T)':<24}{uniform:>13.2f}")
print(
    f"{'with the scale (model)':<24}{entropy_scaled.mean():>13.2f}"
    f"{(max_scaled > 0.9).mean():>28.1%}"
)
print(f"{'scale removed':<24}{entropy_raw.mean():>13.2f}{(max_raw > 0.9).mean():>28.1%}")

# %%
fig, ax = plt.subplots(figsize=(8, 3.4))
bins = np.linspace(0, 1, 41)
ax.hist(
    max_scaled, bins=bins, histtype="step", lw=2, label=r"with the scale $1/\sqrt{32}$ (the model)"
)
ax.hist(max_raw, bins=bins, histtype="step", lw=2, label="scale removed")
ax.set_yscale("log")
ax.set_xlabel("largest weight in a row (1 = one-hot, saturated)")
ax.set_ylabel("rows (log scale)")
ax.legend(loc="upper center")
plt.show()

# %% [markdown]
# With the scale, the typical row is neither uniform nor one-hot: its entropy is about half of
# $\ln T$, and only a minority of rows put more than 0.9 on one key. Remove the scale and the
# same trained scores would saturate most rows, the failure notebook 04 predicted. (This is a
# thought experiment: a model trained without the scale would have learned smaller $q$ and $k$,
# but it would have had to fight the saturated gradients on the way.)
#
# And yet some rows are saturated *with* the scale. Which head has the sharpest rows?

# %%
mean_max = pair.weights[:, 0].max(axis=-1).mean(axis=-1)  # (layers, heads), tired sentence
l_sat, h_sat = np.unravel_index(np.argmax(mean_max), mean_max.shape)
A_sat = W_tired[l_sat, h_sat]
print(
    f"sharpest head: layer {l_sat}, head {h_sat}; mean largest weight {mean_max[l_sat, h_sat]:.4f}"
)
print(f"{'query':>8} -> {'most attended key':<18}{'weight':>8}")
for i in range(T):
    j = int(A_sat[i].argmax())
    print(f"{tokens[i]:>8} -> {tokens[j]:<18}{A_sat[i, j]:>8.4f}")

# %% [markdown]
# Layer 0, head 2 is a **previous-token head**: every token after `[CLS]` puts (almost) all of its
# weight on the token just before it (and `[CLS]`, with nothing before it, on itself). It is
# saturated by design: a hard, positional rule, which only the position embeddings added before
# layer 0 make possible (attention alone cannot tell "before" from "after"). So the honest answer is: most
# trained heads stay in the soft, trainable range that $1/\sqrt{d_k}$ was meant to keep them in,
# and a few learn to saturate, because for them a one-hot choice is the right answer.

# %% [markdown]
# ## The padding mask at work
#
# Sentences have different lengths, but a batch is one rectangular array. Notebook 06 built the
# answer: pad the short sentences with a `[PAD]` token (id 0) and mask the padded keys before
# the softmax. The model uses `attnlib.padding_mask`, shaped $(B, 1, 1, T)$ so that one mask row
# serves every head and every query.

# %%
from attnlib import padding_mask
from attnlib.pretrained.blocks import l2_normalize, mean_pool

batch = ["Hi!", "The animal didn't cross the street", "A kitten is sleeping."]
batch_tokens, ids, lengths = model.tokenize(batch)
B, T_batch = ids.shape
print("ids (0 = [PAD]):")
print(ids)
print("lengths:", lengths)
mask = padding_mask(lengths, T_batch).reshape(B, 1, 1, T_batch)  # (B, 1, 1, T)
print("mask of 'Hi!', shape", mask.shape, ":", mask[0, 0, 0].astype(int))

# %% [markdown]
# A sentence embedding is the mean of the last layer's token vectors over the **real** tokens,
# scaled to length 1. With the mask, the embedding of "Hi!" padded to 10 tokens is the same as
# that of "Hi!" alone. Without it, the real tokens attend to the padding and the result changes:

# %%
hidden, weights = model.forward(ids, lengths)  # with the padding mask
hidden_no_mask, _ = model.forward(ids)  # every key visible, padding included
E_masked = l2_normalize(mean_pool(hidden[-1], lengths))
E_no_mask = l2_normalize(mean_pool(hidden_no_mask[-1], lengths))
E_alone = np.concatenate([model.encode(s) for s in batch])
print("largest weight on a padded key:", weights[:, 0, :, :, lengths[0] :].max())
print(f"{'sentence':<24}{'masked vs alone':>18}{'no mask vs alone':>18}")
for s, e_m, e_n, e_a in zip(batch, E_masked, E_no_mask, E_alone):
    gap_masked, gap_no_mask = np.abs(e_m - e_a).max(), np.abs(e_n - e_a).max()
    masked = "< 1e-6" if gap_masked < 1e-6 else f"{gap_masked:.1e}"
    no_mask = "< 1e-6" if gap_no_mask < 1e-6 else f"{gap_no_mask:.2f}"
    print(f"{s[:22]:<24}{masked:>18}{no_mask:>18}")

# %% [markdown]
# With the mask, every difference is float32 rounding, below $10^{-6}$ (the longest sentence,
# which has no padding, is unchanged either way). Without it, the padded sentences' embeddings
# move by several hundredths, tens of thousands of times more: the model would give a different
# meaning to "Hi!" depending on what it was batched with.
#
# ## The payoff: sentence similarity
#
# This model was trained so that sentences with similar meaning get embeddings pointing the
# same way. The embeddings have length 1, so their dot product is the cosine of the angle between
# them: 1 for the same direction, near 0 for unrelated sentences.

# %%
E = model.encode(sentences)  # (7, 384), each row of length 1
similarity = E @ E.T  # (7, 7) cosine similarities
short = ["tired", "wide", "guitar", "strum", "stocks", "shares", "order"]
print(f"{'':>8}" + "".join(f"{s:>8}" for s in short))
for s, row in zip(short, similarity):
    print(f"{s:>8}" + "".join(f"{v:>8.2f}" for v in row))

# %%
from attnlib.pictures.heatmap import attention_heatmap

fig, ax = plt.subplots(figsize=(7.5, 6))
attention_heatmap(similarity, short, short, ax=ax, vmin=0.0, vmax=1.0, cmap="Greens")
ax.set_xlabel("")
ax.set_ylabel("")
ax.set_title("cosine similarity of the sentence embeddings (below 0 drawn white)", pad=28)
plt.show()

# %%
for i, s in enumerate(sentences):
    others = np.delete(np.arange(len(sentences)), i)
    j = others[np.argmax(similarity[i, others])]
    print(f"{s[:44]:<46} nearest: {short[j]} ({similarity[i, j]:.2f})")

# %% [markdown]
# The paraphrases find each other ("a man is playing a guitar" and "someone is strumming an
# instrument" share almost no words), the two animal sentences are near twins, and the
# unrelated pairs score low. The attention you learned in notebooks 00 to 12, stacked 6 layers
# deep with trained weights, is what builds these vectors.

# %% [markdown]
# ## Live lab: any sentence, any head
#
# Type a sentence in the box (or pick a suggestion) and press Enter: the model encodes it once,
# then the layer, head and token sliders only redraw. The lab draws up to 20 tokens, `[CLS]` and
# `[SEP]` included, so that every label stays readable; a longer sentence asks to be shortened.
# It starts on the switching head found above, with the query *it*. Things to try:
#
# * the two "trophy" suggestions (*it* = the trophy if it was too big, the suitcase if too
#   small): does the same head switch there?
#
#   <details><summary>Answer</summary>
#
#   No. The table of sentence pairs above measured it: on trophy/suitcase the preference of
#   layer 4, head 0 moves by less than 0.01, and layer 3, head 1 moves slightly the wrong way.
#   The heads that shift on "cross the street" do not carry over to this frame.
#
#   </details>
#
# * layer 0, head 2, and any sentence: the previous-token head;
# * a sentence with a rare word: which pieces does it split into, and do they attend to each
#   other?

# %%
# NBVAL_IGNORE_OUTPUT
from attnlib.widgets.trained_model import trained_attention_lab

trained_attention_lab(model, tired, layer=int(switch_head[0]), head=int(switch_head[1]))

# %% [markdown]
# ## Check yourself
#
# 1. What is the shape of layer 2's $W_K$ in this model, and which of its columns belong to head
#    5? What shape does that slice have, in the symbols of notebook 01?
# 2. A trained head's raw scores have standard deviation 12 and $d_{head} = 32$. Roughly what
#    standard deviation does the softmax see? Would you expect its rows to be saturated?
# 3. A colleague removes the padding mask "because mean pooling ignores the padding anyway".
#    What goes wrong, and where?
#
# <details><summary>Answers</summary>
#
# 1. $384 \times 384$ (in attnlib's $x W$ orientation; the file stores the transpose). Head 5
#    owns columns $5 \cdot 32 = 160$ to $191$: `W_K[:, 160:192]`, a $384 \times 32$ matrix,
#    $(d_{model}, d_k)$.
# 2. $12 / \sqrt{32} \approx 2.1$. That is sharper than the theory's 1 but far from saturated:
#    softmax rows with score spread 2 typically give the top key a clear but not total majority
#    (compare the "with the scale" row of the entropy table). Without the scale, spread 12 would
#    saturate most rows.
# 3. Pooling only averages the last layer's vectors over the real tokens. But in every layer
#    the real tokens *attend* to the padded keys when there is no mask, so the vectors being
#    averaged are already contaminated: the embedding of a short sentence changes with the
#    length of the longest sentence in its batch (the "no mask vs alone" column above).
#
# </details>

# %% [markdown]
# ## Summary
#
# * A trained transformer is the attention of notebooks 01-07 with learned weights: each layer
#   has $W_Q, W_K, W_V, W_O$ of shape $384 \times 384$ (12 heads of 32 side by side), biases, and
#   a feed-forward block; one layer fits in a dozen lines of numpy and matches the original to
#   float32 precision.
# * Attention maps show structure (heads parked on `[CLS]`, a previous-token head, a few heads
#   whose preference shifts with the referent in one sentence frame but not in another; counted
#   both ways, sign flips are as common the wrong way as the right way), but they are not
#   explanations: find heads by computation, look at
#   contributions as well as weights, and remember each head is one of many.
# * Real raw scores spread more than the unit-variance theory's $\sqrt{d_k}$; the scale brings
#   them to the soft range, where most rows stay; a few heads saturate on purpose.
# * The padding mask keeps a sentence's embedding independent of its batch; the embeddings'
#   dot products measure meaning.
