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
# # 08 · Grouped-query attention and the KV cache
#
# A language model writes one token at a time, and every new token attends to all the tokens
# before it. Their keys and values do not change, so the model keeps them: the **KV cache**.
# This notebook sizes that cache, shows that reading it, not computing with it, sets the speed
# of generation, and follows the fix that large decoders use: multi-query and grouped-query
# attention, which keep every query head of notebook 07 but let several of them share one key
# head and one value head.
#
# **Learning goals.** After this notebook you can
#
# 1. draw which query heads share which key/value heads in multi-query (MQA) and grouped-query
#    (GQA) attention, and build GQA from ordinary multi-head attention;
# 2. compute a KV cache's size for a real model;
# 3. explain why generating one token at a time is bound by memory bandwidth: count the bytes
#    read and the arithmetic done per token, and compare their ratio with a GPU's;
# 4. generate token by token with a KV cache and get exactly the output of causal attention.
#
# Prerequisites: notebook 07 (split and merge heads, $W_O$) and notebook 06 (the causal mask,
# and the mask of a KV cache).
#
# We rebuild notebook 07's layer: the sentence *"The animal crossed the road because it was
# tired"*, seeded random embeddings $X$ of width $d_{model} = 512$, and random projections for
# $n_{heads} = 8$ heads of $d_{head} = 64$.

# %%
import matplotlib.pyplot as plt
import numpy as np

from attnlib import causal_mask, merge_heads, multi_head_attention, softmax, split_heads

np.set_printoptions(precision=4, suppress=True, linewidth=100)

SEED = 7
rng = np.random.default_rng(SEED)

tokens = ["The", "animal", "crossed", "the", "road", "because", "it", "was", "tired"]
T, d_model, n_heads = len(tokens), 512, 8
d_head = d_model // n_heads

X = rng.normal(size=(T, d_model))
W_Q, W_K, W_V, W_O = rng.normal(size=(4, d_model, d_model)) / np.sqrt(d_model)  # as in 07
Q = split_heads(X @ W_Q, n_heads)  # (n_heads, T, d_head)
output, _ = multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads)  # ordinary MHA, (T, d_model)
print(f"{T} tokens, d_model = {d_model}, {n_heads} heads of d_head = {d_head}")


# %% [markdown]
# ## Multi-query and grouped-query attention
#
# A lesson's "next steps" promise to *"compare multi-head, multi-query, and grouped-query
# attention using explicit head and cache shapes"*. The idea: keep all $n_{heads}$ query heads,
# but let several share a key head and a value head. With $n_{kv\_heads}$ K/V heads
# ($n_{kv\_heads}$ divides $n_{heads}$), query head $i$ reads K/V head
#
# $$g(i) = \left\lfloor \frac{i}{n_{heads} / n_{kv\_heads}} \right\rfloor,
# \qquad \text{head}_i = \mathrm{softmax}\!\left(\frac{Q_i K_{g(i)}^\top}{\sqrt{d_{head}}}\right)
# V_{g(i)}.$$
#
# $n_{kv\_heads} = n_{heads}$ is ordinary multi-head attention (MHA), $n_{kv\_heads} = 1$ is
# multi-query attention (MQA), anything in between grouped-query attention (GQA). For 8 query
# heads:

# %%
for n_kv_heads in (8, 4, 2, 1):
    g = np.arange(n_heads) // (n_heads // n_kv_heads)
    print(f"n_kv_heads = {n_kv_heads}: query head i reads K/V head {g}")

# %%
from attnlib.pictures.head_sharing import plot_head_sharing

fig, axes = plt.subplots(3, 1, figsize=(7, 4.2))
for ax, (n_kv_heads, name) in zip(axes, [(8, "MHA"), (2, "GQA"), (1, "MQA")]):
    plot_head_sharing(n_heads, n_kv_heads, ax=ax, title=f"{name}: n_kv_heads = {n_kv_heads}")
fig.tight_layout()
plt.show()

# %% [markdown]
# *Figure:* Three rows link eight query heads (circles) to K/V heads (squares): MHA gives each its
# own, GQA shares two among groups of four, MQA shares one among all.
#
# In numpy, GQA needs two changes to our layer: $W_K$ and $W_V$ have only
# $n_{kv\_heads} \cdot d_{head}$ columns, and before the scores each K/V head is repeated for
# the query heads of its group (`np.repeat` along the head axis is exactly $g(i)$):

# %%
n_kv_heads = 2
group = n_heads // n_kv_heads
W_K_gqa = rng.normal(size=(d_model, n_kv_heads * d_head)) / np.sqrt(d_model)  # (512, 128)
W_V_gqa = rng.normal(size=(d_model, n_kv_heads * d_head)) / np.sqrt(d_model)

K_gqa = split_heads(X @ W_K_gqa, n_kv_heads)  # (n_kv_heads, T, d_head)
V_gqa = split_heads(X @ W_V_gqa, n_kv_heads)
K_rep = np.repeat(K_gqa, group, axis=0)  # (n_heads, T, d_head): K/V head g(i) for head i
V_rep = np.repeat(V_gqa, group, axis=0)
weights_gqa = softmax(Q @ K_rep.transpose(0, 2, 1) / np.sqrt(d_head), axis=-1)
output_gqa = merge_heads(weights_gqa @ V_rep) @ W_O
print("K", K_gqa.shape, "-> repeated", K_rep.shape)

ref_gqa, _ = multi_head_attention(X, W_Q, W_K_gqa, W_V_gqa, W_O, n_heads, n_kv_heads)
print("multi_head_attention(..., n_kv_heads=2) agrees:", np.allclose(ref_gqa, output_gqa))

# %% [markdown]
# Three checks that the names mean what they say:
#
# 1. $n_{kv\_heads} = n_{heads}$ is MHA: the result is the ordinary multi-head layer.
# 2. $n_{kv\_heads} = 1$ is MQA: all 8 query heads use one and the same key matrix.
# 3. GQA is MHA with **tied** weights: repeat each K/V head's block of columns in $W_K$ and
#    $W_V$ for every query head of its group, and ordinary MHA gives the GQA result.

# %%
mha_as_gqa, _ = multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads=n_heads)
print("1. n_kv_heads = n_heads equals MHA:", np.allclose(mha_as_gqa, output))

K_mqa = np.repeat(split_heads(X @ W_K_gqa[:, :d_head], 1), n_heads, axis=0)
print(
    "2. MQA: every query head sees the same keys:",
    all(np.array_equal(K_mqa[i], K_mqa[0]) for i in range(n_heads)),
)


def tie(W):
    """Repeat each K/V head's block of d_head columns for the `group` query heads it serves."""
    blocks = W.reshape(d_model, n_kv_heads, d_head)
    return np.repeat(blocks, group, axis=1).reshape(d_model, n_heads * d_head)


tied, _ = multi_head_attention(X, W_Q, tie(W_K_gqa), tie(W_V_gqa), W_O, n_heads)
print("3. MHA with tied W_K, W_V equals GQA:", np.allclose(tied, output_gqa))
print(f"   W_K entries: MHA {W_K.size:,}, GQA {W_K_gqa.size:,}, MQA {W_K_gqa[:, :d_head].size:,}")

# %% [markdown]
# Fewer K/V heads save a little on the projections, but models use them for the
# **KV cache**.


# %% [markdown]
# ## The KV cache
#
# A language model generates one token at a time. At step $t$ the newest token's query must be
# compared with the keys of tokens $0, \dots, t$ and must average their values. The keys and
# values of the earlier tokens do not change (with a causal mask, a token never sees what comes
# after it), so the model computes them once and keeps them: the KV cache. Per layer it holds
#
# $$K_{cache},\ V_{cache} \in \mathbb{R}^{B \times n_{kv\_heads} \times T \times d_{head}},$$
#
# and its size for the whole model is
#
# $$\text{bytes} = 2 \times n_{layers} \times n_{kv\_heads} \times d_{head}
# \times \text{bytes per number} \times T \times B,$$
#
# the 2 counting K and V. The number of *query* heads does not appear: that is the point of
# MQA and GQA. Here is a realistic size, a decoder with 32 layers, 32 query heads of
# $d_{head} = 128$ ($d_{model} = 4096$), stored in float16 (2 bytes), at a context of 8,192
# tokens, batch 1:

# %%
n_layers, n_q_heads, d_head_big, bytes_per_number = 32, 32, 128, 2
context, batch = 8192, 1
print(
    f"{n_layers} layers, {n_q_heads} query heads, d_head = {d_head_big}, float16,"
    f" {context:,} tokens, batch {batch}\n"
)
print(f"{'':<5}{'K/V heads':>10}  {'K cache per layer':<24}{'per token':>12}{'8,192 tokens':>15}")
for name, n_kv in [("MHA", 32), ("GQA", 8), ("MQA", 1)]:
    per_token = 2 * n_layers * n_kv * d_head_big * bytes_per_number
    total = per_token * context * batch
    shape = f"({batch}, {n_kv}, {context}, {d_head_big})"
    print(
        f"{name:<5}{n_kv:>10}  {shape:<24}{per_token / 2**10:>8,.0f} KiB{total / 2**30:>11.3f} GiB"
    )

# %% [markdown]
# The query for one new token has shape $(B, n_{heads}, 1, d_{head}) = (1, 32, 1, 128)$ in all
# three. GQA with 8 K/V heads keeps a quarter of MHA's cache, MQA a thirty-second. The cache
# grows with the batch too: serving 32 conversations at once multiplies every number by 32,
# which is where an MHA cache outgrows a GPU. `attnlib.kv_cache.kv_cache_bytes` is the tested
# formula:

# %%
from attnlib.kv_cache import kv_cache_bytes

for name, n_kv in [("MHA", 32), ("GQA", 8), ("MQA", 1)]:
    one_seq = kv_cache_bytes(context, n_layers, n_kv, d_head_big, np.float16)
    many = kv_cache_bytes(context, n_layers, n_kv, d_head_big, np.float16, batch_size=32)
    print(f"{name}: {one_seq / 2**30:6.3f} GiB for 1 sequence, {many / 2**30:6.1f} GiB for 32")

# %% [markdown]
# ### Exercise: size a cache
#
# A smaller model: 28 layers, 24 query heads that share 8 K/V heads of $d_{head} = 64$, its
# cache stored in float32 (4 bytes per number). How many bytes does the KV cache take for one
# sequence of $T = 2048$ tokens? Answer in bytes, not KiB or MiB. Stuck?
# `ch08.kv_cache_bytes.hint()`, or `ch08.kv_cache_bytes.solution()`.

# %%
layers, n_q, n_kv, d_h, T_ctx, n_bytes = 28, 24, 8, 64, 2048, 4
cache_bytes = ...  # your answer, in bytes
from attnlib.exercises import ch08

ch08.kv_cache_bytes.check(cache_bytes)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
ch08.kv_cache_bytes.check_solution(2 * layers * n_kv * d_h * T_ctx * n_bytes)  # 2: K and V


# %% [markdown]
# ## Reading the cache: why decoding waits for memory
#
# Size is only half of the cache's cost. At every step the newest query is compared with
# **every** cached key and averages **every** cached value, so each generated token reads the
# whole cache from memory once. How much arithmetic does it do with those bytes? Per layer, at
# context $T$, the scores take $n_{heads} \cdot T \cdot d_{head}$ multiply-adds and the weighted
# sum of the values as many again. Hardware is rated in FLOP/s, floating-point operations per
# second; a multiply-add is two (a multiplication and an addition), so
#
# $$\text{FLOPs per token} = 4\, n_{layers}\, n_{heads}\, T\, d_{head}, \qquad
# \text{bytes read per token} = 2\, n_{layers}\, n_{kv\_heads}\, T\, d_{head} \times
# \text{bytes per number}.$$
#
# Their ratio, the **arithmetic intensity**, is $2\,(n_{heads}/n_{kv\_heads})$ / bytes per
# number: $T$ and $d_{head}$ cancel. A processor can keep its arithmetic busy only if the
# intensity exceeds its own ratio of peak arithmetic to memory bandwidth. For example,
# NVIDIA's data sheet gives an A100 (80 GB, SXM) 312 TFLOP/s for float16
# matrix products and 2,039 GB/s of memory bandwidth, about 150 FLOPs per byte. The model of
# the table above at 8,192 tokens:

# %%
peak_flops, bandwidth = 312e12, 2.039e12  # example: A100 data sheet (float16 products, HBM)
print(f"example GPU: {peak_flops / bandwidth:.0f} FLOPs per byte it can read\n")
print(f"{'':<5}{'bytes read':>12}{'FLOPs':>12}{'FLOP/byte':>11}{'reading':>10}{'arithmetic':>12}")
for name, n_kv in [("MHA", 32), ("GQA", 8), ("MQA", 1)]:
    bytes_read = kv_cache_bytes(context, n_layers, n_kv, d_head_big, np.float16)  # all of it
    flops = 2 * 2 * n_layers * n_q_heads * context * d_head_big  # 2 products, 2 FLOPs per madd
    print(
        f"{name:<5}{bytes_read / 2**30:>8.3f} GiB{flops / 1e9:>8.1f} GFLOP{flops / bytes_read:>11.0f}"
        f"{bytes_read / bandwidth * 1e3:>7.2f} ms{flops / peak_flops * 1e3:>9.3f} ms"
    )

# %% [markdown]
# The last two columns are lower bounds on the time per generated token: the time to read the
# cache at full bandwidth, and the time for its arithmetic at full speed. With MHA the
# processor does one FLOP per byte it reads, so it spends about 150 times longer waiting for
# the cache than computing with it: decoding is **memory-bound**. Sharing K/V heads reads
# $n_{heads}/n_{kv\_heads}$ times fewer bytes for the same arithmetic, and the time to read
# the cache falls by the same factor. This, more than capacity, is the argument of the paper
# introducing multi-query attention (Shazeer, 2019, *Fast Transformer Decoding: One
# Write-Head is All You Need*): incremental inference "is often slow, due to the
# memory-bandwidth cost of repeatedly loading the large 'keys' and 'values' tensors". Grouped-query
# attention (Ainslie et al., 2023) is the compromise between MHA's quality and MQA's speed.
#
# <details>
# <summary>And the model's weights? Batching (optional)</summary>
#
# Each step also reads every weight of the model once: a model of this shape has roughly 7
# billion weights, about 13 GB in float16, more than its MHA cache of one sequence of 8,192
# tokens (4 GiB). But a batch of
# $B$ sequences reads the weights once and uses them $B$ times, while every sequence reads its
# own cache. With 8 conversations of 8,192 tokens, the MHA caches are 32 GiB per step against
# the same 13 GiB of weights; the cache's intensity is still 1 FLOP per byte, whatever $B$.
# That is why serving many long conversations at once is where K/V sharing pays most.
#
# </details>

# %% [markdown]
# ## Decoding with a KV cache, by hand
#
# Now the loop a model runs while it writes. We use our layer with GQA ($n_{heads} = 8$,
# $n_{kv\_heads} = 2$) on the 9 tokens of the sentence, as if the model produced them one by
# one. At each step we project **only the newest token**, append its key and value to the
# cache, and let its query attend to everything in the cache. No mask is needed: the cache
# holds no future token.

# %%
K_cache = np.zeros((n_kv_heads, 0, d_head))  # (n_kv_heads, tokens so far, d_head)
V_cache = np.zeros((n_kv_heads, 0, d_head))
decoded = []
for t in range(T):
    x_t = X[t : t + 1]  # (1, d_model): the newest token only
    q_t = split_heads(x_t @ W_Q, n_heads)  # (n_heads, 1, d_head)
    K_cache = np.concatenate([K_cache, split_heads(x_t @ W_K_gqa, n_kv_heads)], axis=1)
    V_cache = np.concatenate([V_cache, split_heads(x_t @ W_V_gqa, n_kv_heads)], axis=1)
    K_all = np.repeat(K_cache, group, axis=0)  # (n_heads, t + 1, d_head)
    V_all = np.repeat(V_cache, group, axis=0)
    a_t = softmax(q_t @ K_all.transpose(0, 2, 1) / np.sqrt(d_head), axis=-1)  # (n_heads, 1, t + 1)
    decoded.append(merge_heads(a_t @ V_all) @ W_O)  # (1, d_model)
    if t in (0, 1, T - 1):
        print(f"step {t} ({tokens[t]!r}): K cache {K_cache.shape}, weights {a_t.shape}")
decoded = np.concatenate(decoded)  # (T, d_model)

full_causal, _ = multi_head_attention(
    X, W_Q, W_K_gqa, W_V_gqa, W_O, n_heads, n_kv_heads, mask=causal_mask(T)
)
print("token by token == full causal attention:", np.allclose(decoded, full_causal))

# %% [markdown]
# The same output, computed one row at a time. The saving is in the projections: without a
# cache, step $t$ would recompute the keys and values of all $t + 1$ tokens,
# $1 + 2 + \dots + T = T(T+1)/2$ projections in total instead of $T$:

# %%
for n in (T, context):
    print(f"T = {n:>5,}: {n * (n + 1) // 2:>12,} projections without a cache, {n:>5,} with one")

# %% [markdown]
# `np.concatenate` copies the whole cache at every step; real implementations allocate the
# cache once for the maximum length and write each new token into the next slot.
# `attnlib.kv_cache.KVCache` does that, and `decode_with_kv_cache` runs the loop above with it
# (on the per-head $Q$, $K$, $V$, with query heads grouped by their K/V head instead of
# repeating the cache):

# %%
from attnlib.kv_cache import decode_with_kv_cache

heads_ref, cache = decode_with_kv_cache(
    split_heads(X @ W_Q, n_heads),
    split_heads(X @ W_K_gqa, n_kv_heads),
    split_heads(X @ W_V_gqa, n_kv_heads),
)
print("decode_with_kv_cache agrees:", np.allclose(merge_heads(heads_ref) @ W_O, decoded))
print("cache keys", cache.keys.shape, "values", cache.values.shape)
print(
    f"cache bytes: {cache.nbytes:,} = kv_cache_bytes for 1 layer in float64:"
    f" {kv_cache_bytes(T, 1, n_kv_heads, d_head, np.float64):,}"
)

# %% [markdown]
# ## The grouped-query lab
#
# Drag the number of **query heads** and of **K/V heads** (the slider offers only the divisors
# of the number of query heads, and follows it when it changes) and the **context length**.
# Two lines above the picture name the kind of attention and spell out the cache's arithmetic.
# In the picture, top: which query heads share which K/V head, one colour per group; bottom:
# the KV cache of the whole model (32 layers, $d_{head} = 128$, float16, batch 1) for your
# choice, and for the MHA and MQA versions with the same query heads, on a log scale; the
# dashed line marks 80 GB, the memory of one large accelerator.
#
# Things to try: set 64 query heads and 131,072 tokens: where is MHA's cache compared with the
# dashed line, and what do 32, 8 and 1 K/V heads give? With 12 query heads, which K/V head
# counts does the slider offer, and why not 5? Move only the query heads with the K/V heads
# fixed: which bars move?
#
# (Without a running kernel, for example on GitHub, you see a picture of the lab's first state.)

# %% tags=["nbval-ignore-output"]
from attnlib.labs import gqa_lab

gqa_lab()

# %% [markdown]
# ## Check yourself
#
# 1. A 32-layer model with 32 query heads of $d_{head} = 128$ in float16 moves from 8 K/V heads
#    to 4. What happens to the KV cache, to the shape of $W_Q$, and to the shape of $W_K$?
# 2. Generating one token with that model (8 K/V heads) at a context of 8,192 tokens: how many
#    FLOPs of attention does it do per byte of cache it reads? Would a GPU twice as fast at
#    arithmetic, with the same memory, generate faster?
# 3. Why does decoding with a KV cache need no mask, and why is its output exactly that of full
#    causal attention?
#
# <details>
# <summary>Answers</summary>
#
# 1. The cache halves, from 128 KiB to 64 KiB per token (1 GiB to 512 MiB at 8,192 tokens):
#    its size is proportional to $n_{kv\_heads}$. $W_Q$ keeps its shape,
#    $(4096, 32 \cdot 128) = (4096, 4096)$, because the query heads do not change; $W_K$ and
#    $W_V$ go from $(4096, 8 \cdot 128) = (4096, 1024)$ to $(4096, 512)$.
# 2. $2\,(n_{heads}/n_{kv\_heads})$ / bytes per number $= 2 \cdot 4 / 2 = 4$ FLOPs per byte,
#    whatever the context (the table's GQA row). The example GPU could do about 150: its
#    arithmetic waits for memory, so doubling the arithmetic speed changes almost nothing;
#    more memory bandwidth, or fewer bytes (fewer K/V heads, a smaller number format), would.
# 3. The cache holds only the tokens generated so far, so there is no future to hide. Step
#    $t$ computes row $t$ of causal attention: the same query, the same keys and values of
#    tokens $0, \dots, t$ (they never change, because no token sees what comes after it), the
#    same softmax. The cell above checks it: `np.allclose` is True.
#
# *The lab's questions.* At 64 query heads and 131,072 tokens, MHA's cache is 128 GiB, above
# the 80 GB line; 32 K/V heads halve it to 64 GiB, just below; 8 give 16 GiB and 1 (MQA) 2 GiB.
# With 12 query heads the slider offers 1, 2, 3, 4, 6 and 12: 5 does not divide 12, so the
# query heads could not be shared out equally. With the K/V heads fixed, moving the query
# heads changes only the MHA bar: the cache depends on the K/V heads alone.
#
# </details>

# %% [markdown]
# ## Summary
#
# - MQA and GQA keep every query head but share K/V heads: query head $i$ reads K/V head
#   $\lfloor i / (n_{heads}/n_{kv\_heads}) \rfloor$. $n_{kv\_heads} = n_{heads}$ is MHA, 1 is
#   MQA; GQA is MHA with tied $W_K, W_V$.
# - The KV cache keeps the keys and values of past tokens: $2\, n_{layers}\, n_{kv\_heads}\,
#   d_{head}$ numbers per token. MQA and GQA shrink it by $n_{heads}/n_{kv\_heads}$.
# - Every generated token reads the whole cache and does only $2\,(n_{heads}/n_{kv\_heads})$
#   FLOPs per byte (one multiply-add is two FLOPs), far below a GPU's ratio of arithmetic to
#   bandwidth: decoding is memory-bound, and fewer K/V heads make it faster, not only smaller.
# - Decoding with the cache gives exactly full causal attention, with $T$ projections instead
#   of $T(T+1)/2$.
#
# **Next:** [09 · Positions](09_positions.ipynb), which gives attention the word order that
# notebook 07 showed it cannot see.
