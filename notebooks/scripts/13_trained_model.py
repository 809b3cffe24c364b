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
# Every notebook so far ran attention on numbers we made up. *Is this really what a trained
# transformer does?* Here is a real one, run in numpy on the `scaled_dot_product_attention` you
# have been using: **all-MiniLM-L6-v2**, a small BERT encoder trained to turn a sentence into a
# vector whose dot products measure meaning (6 layers of 12 heads).
#
# **Learning goals.** After this notebook you can
#
# 1. find the real $W_Q, W_K, W_V, W_O$ and one head's slice of them (notebooks 01 and 07);
# 2. recompute a trained layer's attention by hand and match the model;
# 3. test a claim about a head by computation: chosen on some sentences, tested on others,
#    against chance, and removed to see what changes; and say why a map does not explain;
# 4. say how far the spread and saturation that notebooks 02 and 04 predict hold in a trained
#    model (measured in the optional section);
# 5. show that the padding mask (notebook 06) keeps a sentence's meaning the same in any batch.

# %% [markdown]
# ## Loading the model
#
# `load_minilm()` reads the published parameters (float32) and the tokenizer. The first run on
# a computer downloads them (84 MB, once); if that is impossible, the cell stops with a message
# naming the command that fetches them: attnlib never substitutes random parameters.

# %% tags=["nbval-ignore-output"]
import matplotlib.pyplot as plt
import numpy as np

from attnlib.pretrained import load_minilm

np.set_printoptions(precision=4, suppress=True, linewidth=100)

model = load_minilm()  # the first run on a computer downloads the model once

# %%
c = model.config
print(model)
print(f"feed-forward width {c.d_ff}, vocabulary {c.vocab_size:,} tokens")
n_params = sum(t.size for name, t in model.tensors.items() if name != "embeddings.position_ids")
print(f"trained numbers (parameters): {n_params:,}")

# %% [markdown]
# ## The real $W_Q$, $W_K$, $W_V$, $W_O$
#
# As in notebook 07, the $h$ heads sit side by side: $W_Q$ of shape $(d_{model}, h\,d_{head})$,
# column block $i$ for head $i$, and $W_O$ of shape $(h\,d_{head}, d_{model})$, with
# $d_{model} = 384$, $h = 12$, $d_{head} = 32$. Two details the equations leave out: **biases**
# ($Q = XW_Q + b_Q$), and **storage**: PyTorch stores a matrix as (out, in); attnlib hands you
# the transpose (a view), so the products read $XW_Q$ as in notebook 01.

# %%
layer0 = model.layers[0]
stored = model.tensors["encoder.layer.0.attention.self.query.weight"]
print(
    "file: (out, in)", stored.shape, " W_Q = its transpose:", np.array_equal(layer0.W_Q, stored.T)
)
for name in ("W_Q", "W_K", "W_V", "W_O", "W_1", "W_2"):  # W_1, W_2: the feed-forward block
    print(f"{name}  {getattr(layer0, name).shape}   bias {getattr(layer0, 'b_' + name[2:]).shape}")
h, d_head = 3, c.d_head
print("head 3's W_Q:", layer0.W_Q[:, h * d_head : (h + 1) * d_head].shape, "= (d_model, d_k)")

# %% [markdown]
# ## One layer's attention, recomputed by hand
#
# The tokenizer lower-cases a sentence, splits rare words into pieces and adds `[CLS]` and
# `[SEP]`. `model.run` returns `hidden[l]`, the input of layer $l$ $(T, 384)$, and `weights[l]`,
# its attention weights $(12, T, T)$. Layer 3 from its input: the projections, notebook 07's
# head split, the scaled scores, the softmax.

# %%
from attnlib import examples, softmax

_, tired, wide, _, _ = examples.WINOGRAD_PAIRS[0]  # "... too tired", "... too wide"
pair = model.run([tired, wide])  # both have 15 tokens: no padding
tokens = pair.tokens[0]
print(len(tokens), "tokens:", " ".join(tokens))

layer, H, T = 3, c.n_heads, len(tokens)
w = model.layers[layer]
X = pair.hidden[layer, 0]  # (T, d_model): the input of layer 3, sentence "tired"
Q, K = X @ w.W_Q + w.b_Q, X @ w.W_K + w.b_K  # (T, H * d_head): all 12 heads at once
Qh = Q.reshape(T, H, d_head).transpose(1, 0, 2)  # (H, T, d_head): split the heads
Kh = K.reshape(T, H, d_head).transpose(1, 0, 2)
S = Qh @ Kh.transpose(0, 2, 1) / np.sqrt(d_head)  # (H, T, T)
A = softmax(S)  # row by row (notebook 05)
gap = np.abs(A - pair.weights[layer, 0]).max()
print(f"S and A {A.shape}; largest difference from the model's attention weights:", end=" ")
print("below 1e-6" if gap < 1e-6 else f"{gap:.1e}")

# %% [markdown]
# The differences are float32 rounding: the model's attention *is* these lines. The rest of the
# layer (notebook 07's merge and $W_O$, then a residual connection, LayerNorm and a feed-forward
# block) and the learned position vectors added before layer 0 (notebook
# [09 · Positions](09_positions.ipynb)) are recomputed the same way in the optional section.
#
# ## Every layer, every head
#
# Attention is often introduced with a sentence and a question:
#
# > "The animal crossed the road because it was tired." What does *it* refer to? [...] It needs,
# > when building a representation of *it*, to look back and pull in information from "animal".
#
# The cell above ran the model on a sharper version of that sentence and on its twin, which
# moves the referent of *it*: "... because it was too **tired**" (the animal) and "... too
# **wide**" (the street).
# First the attention weights of all 72 heads, small (plotting code collapsed):

# %% jupyter={"source_hidden": true}
from attnlib.pictures.head_grid import head_grid

W_tired, W_wide = pair.weights[:, 0], pair.weights[:, 1]  # (layers, heads, T, T) each
fig, ax = plt.subplots(figsize=(13, 7.2))
head_grid(W_tired, ax=ax, title=f"{tired!r}: every head (rows = queries, columns = keys)")
fig.colorbar(ax.images[0], ax=ax, fraction=0.02, pad=0.01, label="attention weight")
plt.show()

# %% [markdown]
# *Figure:* The 72 heads' maps, 6 layer rows by 12 head columns: many put most of their
# attention in the first column, on `[CLS]`; some are sharp diagonal stripes; others are
# diffuse. In a stripe each token attends to its neighbour (layer 0, head 2; more below).
#
# ## Where does "it" look?
#
# Answered by computation, not by picking a pretty picture. A head's **preference** is the
# attention weight of the query *it* on *animal* minus its weight on *street*; its **shift** is
# its preference in "tired" minus in "wide". A head that follows the referent prefers *animal*
# in "tired" and *street* in "wide": its shift is positive.

# %%
it, animal, street = tokens.index("it"), tokens.index("animal"), tokens.index("street")


def preference(W, it, first, second):  # weight of `it` on the first noun minus on the second
    return W[:, :, it, first] - W[:, :, it, second]  # (layers, heads)


shift = preference(W_tired, it, animal, street) - preference(W_wide, it, animal, street)
by_shift = [divmod(int(k), 12) for k in np.argsort(-shift, axis=None)]  # (layer, head)
print(f"shift of the 72 heads: median {np.median(shift):+.3f}, 95th percentile", end=" ")
print(f"{np.percentile(shift, 95):+.3f}; the largest:")
print(", ".join(f"layer {l}, head {h} {shift[l, h]:+.3f}" for l, h in by_shift[:4]))

# %% [markdown]
# Three heads stand far above the rest: layer 3, head 1 moves 0.45 of its attention, layer 4,
# head 0 and layer 5, head 11 about 0.16, where 95% of the heads move 0.10 or less. But they
# were *chosen on this pair*, and of 72 heads some top any list by luck. A head that follows
# the referent must also shift on sentences it was not chosen on.
#
# ### Chosen on some pairs, tested on others
#
# `examples.WINOGRAD_PAIRS` holds this pair and fifteen classic *Winograd schemas* (Levesque,
# Davis and Morgenstern, 2012): pairs in which one word moves the referent and only knowledge
# of the world tells which noun is meant, as in "The trophy didn't fit into the suitcase because
# it was too **big**" (the trophy) or "**small**" (the suitcase). `referent_shifts` computes the
# shift of every head on every pair, `head_ranks` ranks the 72 heads of each pair (1 = the
# largest shift). The rule, fixed before looking: choose the three heads of best mean rank on
# the odd-numbered pairs and test them on the even-numbered ones, then the other way round. A
# head that follows the referent ranks high where it was not chosen; a lucky one does what a
# head picked at random does.

# %%
from attnlib.pretrained.referents import head_ranks, referent_shifts

pairs = examples.WINOGRAD_PAIRS
for half in (pairs[:8], pairs[8:]):
    print(", ".join(f"{name}" for name, *_ in half))
shifts = referent_shifts(model, pairs)  # (16 pairs, 6 layers, 12 heads); pair 1 as above
ranks = head_ranks(shifts)  # 1 = the largest shift among the pair's 72 heads
odd, even = np.arange(0, 16, 2), np.arange(1, 16, 2)  # pairs 1, 3, ..., 15 and 2, 4, ..., 16
chosen = {}  # (layer, head) -> the pairs it is tested on
for choose, test in ((odd, even), (even, odd)):
    mean_rank, on_test = ranks[choose].mean(axis=0), ranks[test].mean(axis=0)  # (6, 12) each
    low, high = np.percentile(on_test, [2.5, 97.5])
    print(f"tested on pairs {test + 1}; a random head's mean rank there: {low:.0f} to {high:.0f}")
    for l, h in [divmod(int(k), 12) for k in np.argsort(mean_rank, axis=None, kind="stable")[:3]]:
        chosen[l, h] = test
        print(f"  layer {l}, head {h:<2} ranks {ranks[test, l, h]}  mean {on_test[l, h]:4.1f}")

# %% [markdown]
# On the pairs they were not chosen on, the six heads do what a head picked at random does: each
# mean rank lies inside the range of 95% of the 72 heads. Layer 5, head 11 comes closest to a
# pattern, in the top six on four of its eight test pairs, but last or nearly last on two. The
# three heads of "tired / wide" fare no better on the fifteen other pairs (the optional section
# prints every rank and percentile): layer 3, head 1 is also first on fish/worm and truck/bus,
# last on five pairs, and first on the control "tired / scared", whose referent does not change
# at all. On trophy/suitcase, the pair that needs reasoning, no head shifts by more than 0.04.
#
# ### Remove a head: what changes in "it"?
#
# A shift is a correlation. The causal test removes a head, its output set to zero before $W_O$
# (`head_mask`; Michel et al., 2019, *Are Sixteen Heads Really Better than One?*), and measures
# what becomes of *it* in the model's output: how much the last vector of *it* **leans** towards
# the referent, its cosine with *animal* minus with *street*, in "tired" minus in "wide"
# (`leanings`, for every pair). Then without layer 3, head 1, and without each head in turn
# (`ablated_leanings`):

# %%
from attnlib.pretrained.referents import ablated_leanings, leanings

lean = leanings(model, pairs)[-1]  # (16,): the last layer's output
print(
    "leaning of 'it', pairs 1-8: ",
    lean[:8].round(2),
    "\n                 pairs 9-16:",
    lean[8:].round(2),
)
mask = np.ones((6, 12))
mask[3, 1] = 0  # remove layer 3, head 1
without = leanings(model, pairs[:1], head_mask=mask)[-1, 0]
print(f"animal/street: {lean[0]:+.3f}, without layer 3, head 1: {without:+.3f}")
change = ablated_leanings(model, pairs[:1])[..., 0] - lean[0]  # (6, 12): without each head
drops = [divmod(int(k), 12) for k in np.argsort(change, axis=None)]  # largest drop first
print("change without the head (rank among the 72 drops); where 'it' looks most, tired / wide:")
for l, h in by_shift[:3] + drops[:3]:
    looks = tokens[W_tired[l, h, it].argmax()], pair.tokens[1][W_wide[l, h, it].argmax()]
    print(
        f"  layer {l}, head {h:<2} {change[l, h]:+.3f} ({drops.index((l, h)) + 1:2d})   {' / '.join(looks)}"
    )

# %% [markdown]
# The vector of *it* leans clearly towards its referent in one pair of sixteen, animal/street
# (+0.16); on the others the leaning is small and goes either way. On animal/street, removing
# layer 3, head 1 lowers it by 0.02; removing layer 4, head 0 or layer 5, head 11 *raises* it.
# The heads whose removal lowers it most sit in layer 2, and there *it* looks at the adjective,
# *tired* or *wide* (the leaning appears in layer 2's output, before layers 3 to 5 act: the
# optional section prints it layer by layer). The vector of *it* moves towards *street* by
# taking in "wide", a word that goes with streets: word association fits these numbers as well
# as reference does.
#
# So, as far as these 16 pairs show: in one sentence frame, the attention of *it* in a few heads
# moves with the adjective; no head follows the referent across pairs better than chance; and
# the heads that move most are not what makes *it* lean towards *street*. The rows of *it* in
# layer 3, head 1 and in layer 2, head 3 (plotting code collapsed):

# %% jupyter={"source_hidden": true}
fig, axes = plt.subplots(1, 2, figsize=(13, 3.6), sharey=True)
x_pos = np.arange(T)
for ax, (l, h) in zip(axes, [by_shift[0], drops[0]]):
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
# *Figure:* Paired bars for "tired" and "wide": the attention weight *it* gives each token in
# layer 3, head 1 (mostly *animal* in "tired"; spread over `[CLS]`, *animal* and *street* in
# "wide") and in layer 2, head 3 (mostly the adjective, *tired* or *wide*).

# %% [markdown]
# ### A caveat: attention maps are not explanations
#
# Three computed reasons not to read a map as "the model thinks *it* means the street":
#
# 1. **One head is one of 72**, and the feed-forward blocks, which hold two thirds of each
#    layer's parameters (the optional section counts them), act on every vector too: one map is
#    one path of many.
# 2. **Much attention goes nowhere in particular.** Over seven sentences (the pair above, two
#    pairs of paraphrases and one more), `[CLS]` soaks up a large share of the attention from
#    layer 1 on, and `[SEP]` very little. Clark et al. (2019, *What does BERT look at?*) found
#    such parking in BERT-base, mostly on `[SEP]`, and read it as a "no-op"; this smaller,
#    distilled model parks on `[CLS]` instead.
# 3. **An attention weight is not a contribution.** What key $j$ adds to the output is
#    $a_{ij}\, v_j W_O^{(h)}$ (weight times value vector, through the head's block of $W_O$).
#    Vectors differ in length, so a large weight on a short vector adds little (Kobayashi et
#    al., 2020, *Attention is not only a weight*).

# %%
sentences = examples.SIMILARITY_SENTENCES  # the animal pair, two paraphrase pairs, one more
corpus = model.run(sentences)  # padded to the longest sentence
real = np.arange(corpus.hidden.shape[2]) < corpus.lengths[:, None]  # (B, T): not padding
W_all = corpus.weights * real[None, :, None, :, None]  # (layers, B, heads, T, T): real queries
on_cls = W_all[..., 0].sum(-1) / corpus.lengths[:, None]  # (layers, B, heads): mean over queries
on_sep = W_all[:, range(len(sentences)), :, :, corpus.lengths - 1]  # [SEP], the last real token
on_sep = on_sep.sum(-1) / corpus.lengths[:, None, None]  # (B, layers, heads)
print("share of attention on [CLS], per layer:", on_cls.mean(axis=(1, 2)).round(2))
print("share of attention on [SEP], per layer:", on_sep.mean(axis=(0, 2)).round(2))
n_cls = (on_cls > 0.5).sum(axis=(0, 2))  # per sentence
print(f"heads with more than half on [CLS]: {n_cls.min()} to {n_cls.max()} of 72 in each", end="")
print(f" sentence; on [SEP]: {(on_sep > 0.5).sum()}")

# %% [markdown]
# For point 3, the optional section weighs the keys of layer 4, head 0 by what they add: `[CLS]`
# has the largest attention weight of *it* (0.27) but its short value vector drops it out of the
# top four; by contribution, *animal* leads.
#
# <details><summary>Where that picture comes from, and what it leaves out</summary>
#
# The common explanation says the model "needs to look back and pull in information from
# 'animal'" and that attention maps are "directly interpretable". The first half is the right
# intuition for *why* attention exists. The second half goes too far: as computed above, in a
# real trained model the attention of *it* is spread across many heads, largely parked on
# special tokens, and follows the referent in no head across sentence pairs. Famous pictures of
# a head resolving *it* are real, but they are chosen from many heads, in models trained for
# that kind of task (translation), and they show attention weights, not contributions. Whether
# attention weights explain a prediction is debated in the research literature (Jain and
# Wallace, 2019, *Attention is not Explanation*; Wiegreffe and Pinter, 2019, *Attention is not
# not Explanation*). Use maps to form hypotheses, then test them by computation, as this
# notebook did.
#
# </details>
#
# ## Theory meets practice, in brief
#
# Notebook 02 predicted that raw scores spread by $\sqrt{d_k}$, here $\sqrt{32} \approx 5.66$,
# and notebook 04 that without the scale rows saturate. The optional section measures both on
# the seven sentences: most heads' raw scores spread *more* than 5.66 (training made queries and
# keys point at each other, for sharper choices); with the scale the typical row is neither
# uniform nor one-hot, and without it most rows would saturate; and a few heads learn to
# saturate with the scale, such as layer 0, head 2, which puts all its attention on the previous
# token.
#
# ## The padding mask at work
#
# A batch is one rectangular array: short sentences are padded with `[PAD]` (id 0), and
# `attnlib.padding_mask` (notebook 06), shaped $(B, 1, 1, T)$ to serve every head and query,
# hides the padded keys. A sentence's embedding is the mean of its last-layer vectors over the
# **real** tokens, scaled to length 1. Is "Hi!" padded to 10 tokens the same as "Hi!" alone?

# %%
from attnlib import padding_mask
from attnlib.pretrained.blocks import l2_normalize, mean_pool

batch = ["Hi!", "The animal didn't cross the street", "A kitten is sleeping."]
_, ids, lengths = model.tokenize(batch)
print("ids (0 = [PAD]):\n", ids)
print("mask of 'Hi!':", padding_mask(lengths, ids.shape[1])[0, 0].astype(int), " lengths:", lengths)
hidden, weights = model.forward(ids, lengths)  # with the padding mask
hidden_no_mask, _ = model.forward(ids)  # every key visible, padding included
E_alone = np.concatenate([model.encode(s) for s in batch])
print("largest weight on a padded key:", weights[:, 0, :, :, lengths[0] :].max())
for hs, label in [(hidden, "masked"), (hidden_no_mask, "no mask")]:
    gaps = np.abs(l2_normalize(mean_pool(hs[-1], lengths)) - E_alone).max(axis=-1)
    print(f"{label:>8} vs alone:", " ".join("< 1e-6" if g < 1e-6 else f"{g:.2f}" for g in gaps))

# %% [markdown]
# With the mask, every difference is float32 rounding (the longest sentence, unpadded, is
# unchanged either way). Without it, the padded sentences move by several hundredths: the model
# would give "Hi!" a different meaning depending on what it was batched with.
#
# ## The payoff: sentence similarity
#
# The model was trained to point the embeddings of similar sentences the same way; of length 1,
# their dot product is the cosine of their angle. The seven sentences above (plotting code
# collapsed), then each one's nearest neighbour:

# %% jupyter={"source_hidden": true}
from attnlib.pictures.heatmap import attention_heatmap

short = ["tired", "wide", "guitar", "strum", "stocks", "shares", "order"]
similarity = corpus.embeddings @ corpus.embeddings.T  # (7, 7) cosine similarities
fig, ax = plt.subplots(figsize=(7.5, 6))
attention_heatmap(similarity, short, short, ax=ax, vmin=0.0, vmax=1.0, cmap="Greens")
ax.set_xlabel("")
ax.set_ylabel("")
ax.set_title("cosine similarity of the sentence embeddings (below 0 drawn white)", pad=28)
plt.show()

# %% [markdown]
# *Figure:* A 7 × 7 heatmap of cosine similarities between the sentence embeddings, values
# printed; the pairs tired–wide (0.83), stocks–shares (0.62) and guitar–strum (0.49) stand out.

# %%
similarity = corpus.embeddings @ corpus.embeddings.T  # (7, 7): embeddings of length 1
for i, s in enumerate(sentences):
    j = np.argsort(similarity[i])[-2]  # the largest is the sentence itself
    print(f"{s[:44]:<46} nearest: {short[j]} ({similarity[i, j]:.2f})")

# %% [markdown]
# The paraphrases find each other ("a man is playing a guitar" and "someone is strumming an
# instrument" share almost no words), the two animal sentences are near twins, unrelated pairs
# score low. The attention of notebooks 00 to 12, with trained parameters, together with the
# feed-forward blocks (two thirds of the parameters), stacked 6 layers deep, builds these
# vectors.
#
# ## Live lab: any sentence, any head
#
# Type a sentence (up to 20 tokens) or pick a suggestion and press Enter; the layer, head and
# token sliders then only redraw. It starts on the head of largest shift found above, query
# *it*. Try:
#
# * the two "trophy" suggestions (*it* = the trophy if it was too big, the suitcase if too
#   small): does the same head switch there?
#
#   <details><summary>Answer</summary>
#
#   No. The ranks above measured it (the optional section prints them): on trophy/suitcase
#   layer 3, head 1 shifts the wrong way, last of the 72 heads, and layer 4, head 0 hardly
#   moves. The heads that shift on "cross the street" do not carry over to this frame.
#
#   </details>
#
# * layer 0, head 2, and any sentence: the previous-token head;
# * a sentence with a rare word: which pieces does it split into, and do they attend to each
#   other?

# %% tags=["nbval-ignore-output"]
from attnlib.labs import trained_attention_lab

trained_attention_lab(model, tired, layer=by_shift[0][0], head=by_shift[0][1])

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
#    over 15 keys, random rows with that spread give the top key a median weight of 0.46 (the
#    optional section computes it under its entropy table), a plurality, not a majority.
#    Without the scale, spread 12 would saturate most rows.
# 3. Pooling only averages the last layer's vectors over the real tokens. But in every layer
#    the real tokens *attend* to the padded keys when there is no mask, so the vectors being
#    averaged are already contaminated: the embedding of a short sentence changes with the
#    length of the longest sentence in its batch (the "no mask vs alone" line above).
#
# </details>
#
# ## Summary
#
# * A trained transformer is the attention of notebooks 01-07 with learned parameters: $W_Q,
#   W_K, W_V, W_O$ of $384 \times 384$ (12 heads of 32 side by side) and biases; its attention
#   is a dozen lines of numpy, matching to float32 precision.
# * Maps show structure (heads parked on `[CLS]`, a previous-token head), but they are not
#   explanations. A head chosen on one sentence pair must be tested on others and against
#   chance, and removed to see what it does: on 16 Winograd pairs no head follows the referent
#   better than chance, and the heads that shift most on one pair are not what moves the vector
#   of *it*.
# * Trained raw scores spread more than $\sqrt{d_k}$; the scale brings most rows into the soft
#   range; a few heads learn to saturate.
# * The padding mask keeps a sentence's embedding independent of its batch.

# %% [markdown]
# ## Going further (optional)
#
# ### The rest of the layer, and the input of layer 0
#
# Notebook 07's merge and output projection, then the parts of a transformer block that are not
# attention: a residual connection and LayerNorm, a feed-forward network with the GELU
# nonlinearity, another residual and LayerNorm (`attnlib.pretrained.blocks` holds LayerNorm and
# GELU, each a line of numpy). The package's own forward pass is this cell in a loop, and a test
# checks it against the original PyTorch implementation (every attention weight agrees to
# better than $10^{-5}$).

# %%
from attnlib.pretrained.blocks import gelu, layer_norm

V = X @ w.W_V + w.b_V
heads = A @ V.reshape(T, H, d_head).transpose(1, 0, 2)  # (H, T, d_head)
merged = heads.transpose(1, 0, 2).reshape(T, H * d_head)  # (T, 384): merge the heads
x = layer_norm(X + merged @ w.W_O + w.b_O, *w.attn_norm, c.layer_norm_eps)
out = layer_norm(x + gelu(x @ w.W_1 + w.b_1) @ w.W_2 + w.b_2, *w.ffn_norm, c.layer_norm_eps)
gap = np.abs(out - pair.hidden[layer + 1, 0]).max()
print(f"output {out.shape}; largest difference from the model's next hidden state:", end=" ")
print("below 1e-5" if gap < 1e-5 else f"{gap:.1e}")

# %% [markdown]
# Before layer 0, notebook 07 proved that attention alone ignores word order, so the model adds
# a learned vector for each position to each token's vector (BERT's embedding layer, then a
# LayerNorm); notebook 09 looks inside these vectors.

# %%
word_table = model.tensors["embeddings.word_embeddings.weight"]  # (vocabulary, d_model)
position_table = model.tensors["embeddings.position_embeddings.weight"]  # (positions, d_model)
type_table = model.tensors["embeddings.token_type_embeddings.weight"]  # (2, d_model)
print("word", word_table.shape, " position", position_table.shape, " token type", type_table.shape)
ids0 = model.tokenize([tired])[1][0]  # (T,)
x0 = word_table[ids0] + type_table[0] + position_table[: len(ids0)]  # token t + position t
x0 = layer_norm(x0, *model.embedding_norm, c.layer_norm_eps)
print("input of layer 0 = LayerNorm(word + type + position):", np.allclose(x0, pair.hidden[0, 0]))

# %% [markdown]
# ### Parameters per layer
#
# Attention holds a third of a layer's parameters, the feed-forward block two thirds (and the
# two LayerNorms 2 x 768):

# %%
attn_params = sum(W.size for W in (layer0.W_Q, layer0.W_K, layer0.W_V, layer0.W_O)) + 4 * 384
ffn_params = layer0.W_1.size + layer0.W_2.size + layer0.b_1.size + layer0.b_2.size
print(f"per layer: attention {attn_params:,} parameters, feed-forward {ffn_params:,}")
print(f"the feed-forward block's share: {ffn_params / (attn_params + ffn_params):.3f}")

# %% [markdown]
# ### Theory meets practice: the spread of the scores
#
# Notebook 02: for unit-variance entries, $q \cdot k$ has standard deviation $\sqrt{d_k}$, here
# $\sqrt{32} \approx 5.66$, and the scale brings it to 1. Trained vectors owe nothing to that
# assumption. The raw scores of every head on seven sentences, within each query's row (the
# softmax ignores a constant added to a row), real tokens only:

# %%
from attnlib import split_heads

keys = real[None, :, None, None, :]  # (1, B, 1, 1, T): real keys, for every layer and head
both = real[None, :, None, :, None] & keys  # a real query and a real key
raw = []  # per layer: (B, H, T, T), q . k of every head, not yet scaled
for X_l, w_l in zip(corpus.hidden, model.layers):
    raw.append(split_heads(X_l @ w_l.W_Q + w_l.b_Q, H) @ split_heads(X_l @ w_l.W_K + w_l.b_K, H).mT)
raw = np.array(raw, dtype=np.float64)  # (layers, B, H, T, T)
centred = raw - np.sum(raw * keys, axis=-1, keepdims=True) / keys.sum(axis=-1, keepdims=True)
raw_std = np.sqrt(np.sum(centred**2 * both, axis=(1, 3, 4)) / both.sum())  # (layers, heads)
print(f"std of the raw scores within a query's row, over the 72 heads (theory {np.sqrt(32):.2f}):")
for label, v in [("raw", raw_std), ("scaled", raw_std / np.sqrt(d_head))]:
    low, mid, high = v.min(), np.median(v), v.max()
    print(f"  {label:<7} smallest {low:5.2f}   median {mid:5.2f}   largest {high:5.2f}")
print(f"heads with raw std above sqrt(d_head): {(raw_std > np.sqrt(d_head)).sum()} of 72")

# %% [markdown]
# (Plotting code collapsed.)

# %% jupyter={"source_hidden": true}
L = c.n_layers
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
right_axis = ax.secondary_yaxis(
    "right", functions=(lambda y: y / np.sqrt(d_head), lambda y: y * np.sqrt(d_head))
)
right_axis.set_ylabel(r"after the scale $1/\sqrt{32}$")
ax.legend(loc="upper right")
ax.grid(alpha=0.3)
plt.show()

# %% [markdown]
# *Figure:* One dot per head, by layer: the standard deviation of $q \cdot k$ in a row (log scale)
# against the theory's dashed line at 5.66; most dots lie above it.
#
# The theory gets the order of magnitude right, and after the scale most heads sit between
# about 1 and 3. But most trained heads spread *more* than $\sqrt{32}$: training made queries
# and keys point at each other, for sharper choices. One head stands out at ten times the
# theory: layer 0, head 2.
#
# ### Do trained heads saturate?
#
# Notebook 04's measure, a row's **entropy** $H(a) = -\sum_j a_j \ln a_j$ ($\ln T$ uniform, 0
# one-hot), for every real row of every head, with the model's scale and, as a thought
# experiment, without it (the same trained $q$ and $k$):

# %%
queries, top = np.broadcast_to(real[:, None, :], raw.shape[:-1]), {}  # real query rows
for label, scale in [("with the scale (model)", 1 / np.sqrt(d_head)), ("scale removed", 1.0)]:
    a = softmax(scale * raw, mask=keys)[queries]  # (rows, T): every real row of every head
    entropy = -(a * np.log(np.where(a > 0, a, 1.0))).sum(axis=-1)  # with 0 ln 0 = 0
    top[label] = a.max(axis=-1)
    sharp = (top[label] > 0.9).mean()
    print(f"{label:<23} mean entropy {entropy.mean():.2f}, max weight > 0.9: {sharp:.1%}")
uniform = np.mean(np.log(corpus.lengths))  # ln T, averaged over the sentences
print(f"rows: {len(a):,}; uniform rows would have a mean entropy of {uniform:.2f}")
spread = 12 / np.sqrt(d_head)  # question 2 below: raw std 12, scaled
rows_ = softmax(np.random.default_rng(0).normal(scale=spread, size=(100_000, 15)))
print(f"random rows of 15 scores of spread {spread:.1f}: median largest weight", end=" ")
print(f"{np.median(rows_.max(axis=-1)):.2f}")

# %% [markdown]
# (Plotting code collapsed.)

# %% jupyter={"source_hidden": true}
fig, ax = plt.subplots(figsize=(8, 3.4))
bins = np.linspace(0, 1, 41)
for label, largest in top.items():
    ax.hist(largest, bins=bins, histtype="step", lw=2, label=label)
ax.set_yscale("log")
ax.set_xlabel("largest weight in a row (1 = one-hot, saturated)")
ax.set_ylabel("rows (log scale)")
ax.legend(loc="upper center")
plt.show()

# %% [markdown]
# *Figure:* Histograms of each row's largest weight, with the model's scale and with it removed
# (counts on a log scale); without the scale most rows pile up at 1, one-hot.
#
# With the scale, the typical row is neither uniform nor one-hot (entropy about half of
# $\ln T$), and only a minority put more than 0.9 on one key. Without it the same trained scores
# would saturate most rows, as notebook 04 predicts (a model trained without the scale would have
# learned smaller $q$ and $k$, fighting saturated gradients on the way). Yet some rows are
# saturated *with* the scale. The sharpest head:

# %%
mean_max = W_tired.max(axis=-1).mean(axis=-1)  # (layers, heads): mean largest weight of a row
l_sat, h_sat = np.unravel_index(np.argmax(mean_max), mean_max.shape)
print(
    f"sharpest head: layer {l_sat}, head {h_sat}; mean largest weight {mean_max[l_sat, h_sat]:.4f}"
)
for i, j in enumerate(W_tired[l_sat, h_sat].argmax(axis=-1)):
    print(f"{tokens[i]:>8} -> {tokens[j]:<10}{W_tired[l_sat, h_sat, i, j]:.4f}")
previous = np.concatenate(  # each token's weight on the token before it, all seven sentences
    [
        corpus.weights[l_sat, b, h_sat, range(1, n), range(n - 1)]
        for b, n in enumerate(corpus.lengths)
    ]
)
print(
    f"seven sentences: {len(previous)} tokens after [CLS] put at least {previous.min():.3f}", end=""
)
print(" of their attention on the previous token")

# %% [markdown]
# Layer 0, head 2 is a **previous-token head**: in each of the seven sentences, every token
# after `[CLS]` puts (almost) all its attention on the token before it. Training made it
# saturated: a hard positional rule, learned, that only the position vectors added before layer
# 0 make possible. So: most trained heads stay in the
# soft, trainable range $1/\sqrt{d_k}$ was meant to keep them in, and a few learn to saturate,
# because for them a one-hot choice is the right answer.

# %% [markdown]
# ### Every candidate head's rank and percentile, pair by pair
#
# The numbers behind "Chosen on some pairs, tested on others", for the three heads of
# "tired / wide" and the six chosen by the rule: each head's rank among the 72 heads of a pair,
# then its percentile, the share of the other 71 heads whose shift it exceeds (heads within
# 0.001 of each other count as tied, so that float32 rounding cannot reorder them). A star
# marks a pair the head was chosen on. The last row is the control, "tired / scared", whose
# referent does not change; the last columns give each pair's largest shift and its 95th
# percentile.

# %%
from attnlib.pretrained.referents import head_percentiles

candidates = list(dict.fromkeys(by_shift[:3] + list(chosen)))  # layer 4, head 0 is in both
chosen_on = {lh: set(range(16)) - set(test) for lh, test in chosen.items()}
for lh in by_shift[:3]:
    chosen_on.setdefault(lh, set()).add(0)
control = referent_shifts(model, [examples.REFERENT_CONTROL])
rows = np.concatenate([shifts, control])  # (17, 6, 12): the 16 pairs, then the control
names = [name for name, *_ in pairs] + ["control"]
heads = "".join(f"{f'L{l}H{h}':>7}" for l, h in candidates)
for title, table, cell in (
    ("rank among 72", head_ranks(rows), "{:6d}"),
    ("percentile", head_percentiles(rows), "{:6.0%}"),
):
    print(f"{title:<18}{heads}{'largest':>9}{'95th':>8}")
    for k, name in enumerate(names):
        marks = ["*" if k in chosen_on[lh] else " " for lh in candidates]
        cells = "".join(cell.format(table[k][lh]) + m for lh, m in zip(candidates, marks))
        print(f"{name:<18}{cells}{rows[k].max():>+9.3f}{np.percentile(rows[k], 95):>+8.3f}")
percentiles = head_percentiles(shifts)  # (16, 6, 12)
where_not = {lh: sorted(set(range(16)) - chosen_on[lh]) for lh in candidates}
print("mean percentile where not chosen:", end=" ")
print(", ".join(f"L{l}H{h} {percentiles[where_not[l, h], l, h].mean():.0%}" for l, h in candidates))
print(
    f"a head picked at random: {np.median(percentiles.mean(axis=0)):.0%} (median of the 72 heads)"
)
lean_by_layer = leanings(model, pairs[:1])[:, 0]  # (7,): input of layer 0 ... output of layer 5
print(
    "leaning of 'it' on animal/street, input of layer 0 ... output of layer 5:",
    lean_by_layer.round(2),
)

# %% [markdown]
# The chosen heads' percentiles where they were not chosen are those of a typical head; and the
# vector of *it* starts to lean towards *street* in the output of layer 2.
#
# ### The rows of "it" for the three heads of "tired / wide"
#
# The attention weights behind their shifts:

# %%
print(f"{'head':<8}{'tired: animal':>14}{'street':>8}{'wide: animal':>14}{'street':>8}{'shift':>8}")
for l, h in by_shift[:3]:
    print(
        f"L{l} H{h:<5}{W_tired[l, h, it, animal]:>14.3f}{W_tired[l, h, it, street]:>8.3f}"
        f"{W_wide[l, h, it, animal]:>14.3f}{W_wide[l, h, it, street]:>8.3f}{shift[l, h]:>+8.3f}"
    )

# %% [markdown]
# ### An attention weight is not a contribution
#
# What key $j$ adds to the output of head $h$ is $a_{ij}\, v_j W_O^{(h)}$. For the query *it* in
# layer 4, head 0, the keys ranked by attention weight and by the length of what they add (as a
# share of the total):

# %%
l, h = by_shift[1]  # layer 4, head 0
w_l = model.layers[l]
V_h = split_heads(pair.hidden[l, 0] @ w_l.W_V + w_l.b_V, H)[h]  # (T, d_head): this head's values
added = V_h @ w_l.W_O[h * d_head : (h + 1) * d_head]  # (T, d_model): what each key adds
weight = W_tired[l, h, it]
contribution = weight * np.linalg.norm(added, axis=-1)
contribution /= contribution.sum()
print(f"layer {l}, head {h}, query 'it' (tired): top keys by weight and by contribution")
for a, b in zip(np.argsort(weight)[::-1][:4], np.argsort(contribution)[::-1][:4]):
    print(f"  {tokens[a]:>8} {weight[a]:.3f}      {tokens[b]:>8} {contribution[b]:.3f}")
