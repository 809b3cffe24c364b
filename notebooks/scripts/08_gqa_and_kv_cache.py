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
# This notebook sizes that cache for real models, generates text with it, and counts what one
# generated token costs, which says when and by how much multi-query and grouped-query
# attention (query heads sharing key and value heads) make generation faster.
#
# **Learning goals.** After this notebook you can
#
# 1. draw which query heads share which key/value heads in multi-query (MQA) and grouped-query
#    (GQA) attention, and build GQA from ordinary multi-head attention;
# 2. compute a KV cache's size for a real model (Llama-2-7B, Mistral-7B, Llama-3-8B);
# 3. generate with a KV cache, reading the prompt in chunks with notebook 06's cache mask and
#    then one token at a time, and get exactly the output of causal attention;
# 4. count the bytes one generated token reads (parameters + batch × cache) and its FLOPs, say
#    why decoding is memory-bound and reading the prompt compute-bound, and when sharing K/V
#    heads speeds decoding up.
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
# Keep all $n_{heads}$ query heads, but let several share a key head and a value head. With
# $n_{kv\_heads}$ K/V heads ($n_{kv\_heads}$ divides $n_{heads}$), query head $i$ reads K/V head
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
attn_gqa = softmax(Q @ K_rep.transpose(0, 2, 1) / np.sqrt(d_head), axis=-1)  # attention weights
output_gqa = merge_heads(attn_gqa @ V_rep) @ W_O
print("K", K_gqa.shape, "-> repeated", K_rep.shape)

ref_gqa, _ = multi_head_attention(X, W_Q, W_K_gqa, W_V_gqa, W_O, n_heads, n_kv_heads)
print("multi_head_attention(..., n_kv_heads=2) agrees:", np.allclose(ref_gqa, output_gqa))

# %% [markdown]
# GQA is MHA with **tied** parameters: repeat each K/V head's block of columns of $W_K$ and
# $W_V$ for every query head of its group, and ordinary MHA gives the GQA result (the optional
# section checks it, with MHA and MQA as the two ends). Fewer K/V heads save a few parameters,
# but that is not why models use them. The reason is the KV cache.


# %% [markdown]
# ## The KV cache
#
# At step $t$ the newest token's query is compared with the keys of tokens $0, \dots, t$ and
# averages their values. The earlier keys and values do not change (with a causal mask, a
# token never sees what comes after it), so the model keeps them: the KV cache. Per layer it
# holds
#
# $$K_{cache},\ V_{cache} \in \mathbb{R}^{B \times n_{kv\_heads} \times T \times d_{head}},$$
#
# and its size for the whole model is
#
# $$\text{bytes} = 2 \times n_{layers} \times n_{kv\_heads} \times d_{head}
# \times \text{bytes per number} \times T \times B,$$
#
# the 2 counting K and V. The number of *query* heads does not appear: that is the point of
# MQA and GQA. Real sizes: **Llama-2-7B** has 32 layers of 32 heads of $d_{head} = 128$
# ($d_{model} = 4096$), each with its own K/V head. **Mistral-7B** and **Llama-3-8B** keep that
# attention shape but share 8 K/V heads among the 32 query heads. Their caches in float16
# (2 bytes a number) at a context of 8,192 tokens, batch 1, with one K/V head for comparison:

# %%
n_layers, n_q_heads, d_head_big, bytes_per_number = 32, 32, 128, 2
context, batch = 8192, 1
print(f"{'K/V heads':>9}  {'K cache per layer':<24}{'per token':>12}{'8,192 tokens':>15}   model")
for n_kv, model in [(32, "Llama-2-7B (MHA)"), (8, "Mistral-7B, Llama-3-8B (GQA)"), (1, "(MQA)")]:
    per_token = 2 * n_layers * n_kv * d_head_big * bytes_per_number
    total = per_token * context * batch
    shape = f"({batch}, {n_kv}, {context}, {d_head_big})"
    print(
        f"{n_kv:>9}  {shape:<24}{per_token / 2**10:>8,.0f} KiB{total / 2**30:>11.3f} GiB   {model}"
    )

# %% [markdown]
# The query for one new token has shape $(B, n_{heads}, 1, d_{head}) = (1, 32, 1, 128)$ in all
# three. Eight K/V heads keep a quarter of the MHA cache, one a thirty-second; 32 conversations
# at once take 32 times as much. `attnlib.kv_cache.kv_cache_bytes` is the same formula.

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
# ## Generating with a KV cache, by hand
#
# Now the loop a model runs while it writes, with our GQA layer on the 9 tokens. It first
# reads the prompt, the **prefill**, perhaps in chunks; then it **decodes**, one new token per
# step. Every step is the same: project **only the new tokens**, append their keys and values
# to the cache, and let their queries attend to everything in the cache. The new queries are
# the *last* positions of the keys, so the causal mask is notebook 06's bottom-right one,
# `causal_mask(n_new, n_cached)`. Here the prompt "The animal crossed the road" comes in one
# chunk, "because it was" in a second, and "tired" is decoded alone:

# %%
K_cache = np.zeros((n_kv_heads, 0, d_head))  # (n_kv_heads, tokens so far, d_head)
V_cache = np.zeros((n_kv_heads, 0, d_head))
generated = []
for new in [slice(0, 5), slice(5, 8), slice(8, 9)]:  # two prompt chunks, then one decode step
    x_new = X[new]  # (n_new, d_model): the new tokens only
    q_new = split_heads(x_new @ W_Q, n_heads)  # (n_heads, n_new, d_head)
    K_cache = np.concatenate([K_cache, split_heads(x_new @ W_K_gqa, n_kv_heads)], axis=1)
    V_cache = np.concatenate([V_cache, split_heads(x_new @ W_V_gqa, n_kv_heads)], axis=1)
    K_all = np.repeat(K_cache, group, axis=0)  # (n_heads, tokens so far, d_head)
    V_all = np.repeat(V_cache, group, axis=0)
    mask = causal_mask(q_new.shape[1], K_cache.shape[1])  # bottom-right, as in notebook 06
    scores = q_new @ K_all.transpose(0, 2, 1) / np.sqrt(d_head)  # (n_heads, n_new, so far)
    a_new = softmax(np.where(mask, scores, -np.inf), axis=-1)
    generated.append(merge_heads(a_new @ V_all) @ W_O)  # (n_new, d_model)
    print(f"{' '.join(tokens[new])!r}: queries {q_new.shape}, K cache {K_cache.shape}")
    print(mask.astype(int))
generated = np.concatenate(generated)  # (T, d_model)

full_causal, _ = multi_head_attention(
    X, W_Q, W_K_gqa, W_V_gqa, W_O, n_heads, n_kv_heads, mask=causal_mask(T)
)
print("prefill in chunks + decoding == full causal attention:", np.allclose(generated, full_causal))

# %% [markdown]
# The first chunk's mask is the causal triangle; the second is 06's bottom-right block
# ("because" sees the cached prompt and itself, "was" one token more); the decoding step's is a
# row of ones: a lone new query may see the whole cache, which holds no future, so decoding
# needs no mask. The result is exactly causal attention.
#
# What does the cache save? In a stack of layers, layer 2's keys are computed from layer 1's
# outputs, so without a cache every step would rerun **the whole model** (every layer's
# projections, attention and feed-forward block) over the whole text. With it, each step runs
# the model on the new tokens only. In tokens passed through the model, for 1,000 tokens
# generated after a prompt of 8,192:

# %%
prompt, n_new = 8192, 1000
without = sum(prompt + t for t in range(1, n_new + 1))  # each step reruns the whole text
with_cache = prompt + n_new  # the prompt once, then one token per step
print(f"without a cache: {without:,} token passes; with one: {with_cache:,}")
print(f"{without / with_cache:.0f} times the work of the whole model")

# %% [markdown]
# ## What one generated token costs
#
# Every decoding step reads the model's $N$ **parameters** once, shared by all $B$ sequences of
# a batch, and every sequence's **whole cache**, each its own. Per sequence it does two FLOPs (a
# multiplication and an addition) per parameter, plus the attention over the cache, $2\,
# n_{heads} T d_{head}$ multiply-adds per layer. With $b$ bytes per number:
#
# $$\text{bytes per step} = N b + B \cdot 2\, n_{layers}\, n_{kv\_heads}\, d_{head}\, T\, b,
# \qquad
# \text{FLOPs per step} = B\,(2N + 4\, n_{layers}\, n_{heads}\, T\, d_{head}).$$
#
# NVIDIA's data sheet gives an A100 (80 GB, SXM) 312 TFLOP/s for float16 matrix products and a
# memory bandwidth of 2,039 GB/s, $2.039 \times 10^{12}$ bytes a second. Bytes over bandwidth
# and FLOPs over the peak are two lower bounds on a step's time; the larger one sets it. The
# three models, with their published parameter counts (the optional section derives them from
# the shapes), in float16 at 8,192 tokens, batch 1:

# %%
from attnlib.kv_cache import decode_step_bytes, kv_cache_bytes

parameters = {"Llama-2-7B": 6_738_415_616, "Mistral-7B": 7_241_732_096, "Llama-3-8B": 8_030_261_248}
kv_heads = {"Llama-2-7B": 32, "Mistral-7B": 8, "Llama-3-8B": 8}
peak_flops, bandwidth = 312e12, 2.039e12  # A100 80 GB SXM data sheet: float16, bytes/s
print(f"{'':<11}{'parameters':>12}{'cache':>10}{'ms: parameters':>16}{'cache':>6}{'total':>7}")
for name, N in parameters.items():
    cache_1 = kv_cache_bytes(context, n_layers, kv_heads[name], d_head_big, np.float16)
    total = decode_step_bytes(N, context, n_layers, kv_heads[name], d_head_big)  # N b + cache
    ms = [x / bandwidth * 1e3 for x in (2 * N, cache_1, total)]
    print(
        f"{name:<11}{2 * N / 2**30:>8.2f} GiB{cache_1 / 2**30:>6.2f} GiB{ms[0]:>13.2f}{ms[1]:>9.2f}{ms[2]:>7.2f}"
    )
print(f"the A100's ratio: {peak_flops / bandwidth:.0f} FLOPs for each byte it reads")

# %% [markdown]
# At batch 1 the parameters dominate what a step reads: for Llama-2-7B, 6.61 ms to read them
# and 2.11 ms to read the cache. Sharing K/V heads shrinks only the second term. To see it
# alone, keep Llama-2-7B's parameters and grow the batch, with 32 K/V heads and with 8:

# %%
N_7b = parameters["Llama-2-7B"]


def step_ms(n_kv, B, T=context):
    """Lower bound on one decoding step (ms), memory or arithmetic; and the bytes and FLOPs."""
    read = decode_step_bytes(N_7b, T, n_layers, n_kv, d_head_big, batch_size=B)
    flops = B * (2 * N_7b + 4 * n_layers * n_q_heads * T * d_head_big)
    return 1e3 * max(read / bandwidth, flops / peak_flops), read, flops


print(
    f"{'batch':>5}{'32 K/V heads: read':>21}{'ms':>7}{'8 K/V heads: read':>20}{'ms':>7}{'ratio':>7}"
)
for B in (1, 2, 4, 8, 16, 32, 64):
    (ms_32, read_32, _), (ms_8, read_8, _) = step_ms(32, B), step_ms(8, B)
    print(
        f"{B:>5}{read_32 / 2**30:>17.1f} GiB{ms_32:>7.1f}{read_8 / 2**30:>16.1f} GiB{ms_8:>7.1f}{ms_32 / ms_8:>7.2f}"
    )
for n_kv in (32, 8):
    B_cross = 2 * N_7b / kv_cache_bytes(context, n_layers, n_kv, d_head_big)  # caches = parameters
    B_max = int((80e9 - 2 * N_7b) // kv_cache_bytes(context, n_layers, n_kv, d_head_big))
    print(
        f"{n_kv:>2} K/V heads: caches > parameters from batch {B_cross:.1f} (batch x context"
        f" {B_cross * context:,.0f}); 80 GB hold batch {B_max}: {B_max / step_ms(n_kv, B_max)[0] * 1e3:,.0f} tokens/s"
    )

# %% [markdown]
# At batch 1, 8 K/V heads make a step **1.22 times** faster, not 4: the 12.55 GiB of
# parameters are read either way. The parameters are shared by the batch and the caches are
# not, so past batch 3.1 (or 12.6) the caches outweigh the parameters and the ratio climbs
# towards 4, the ratio of the caches. The crossover is a fixed batch × context (one sequence of
# 32,768 tokens is past the first). Memory sets every row: at batch $B$ a step does $B$ FLOPs
# per byte of parameters and one per byte of an MHA cache, where the A100 could do 153. And
# memory caps the batch: 80 GB (74.5 GiB) hold the parameters and 15 caches of 8,192 tokens,
# or 61 with 8 K/V heads, which then serve 4 times the tokens per second (a collapsed cell
# draws it).

# %% jupyter={"source_hidden": true}
batches = np.arange(1, 65)
fig, ax = plt.subplots(figsize=(7.5, 3.8))
ax.axhline(2 * N_7b / 2**30, color="0.4", lw=1.5, label="parameters (read once per step)")
for n_kv, colour in ((32, "C1"), (8, "C0")):
    per_seq = kv_cache_bytes(context, n_layers, n_kv, d_head_big)
    caches = batches * per_seq / 2**30
    ax.plot(batches, caches, color=colour, ls="--", label=f"caches, {n_kv} K/V heads")
    ax.plot(
        batches, 2 * N_7b / 2**30 + caches, color=colour, lw=2, label=f"total, {n_kv} K/V heads"
    )
    ax.plot(2 * N_7b / per_seq, 2 * N_7b / 2**30, "o", color=colour, ms=7)
ax.axhline(80e9 / 2**30, color="crimson", lw=1, ls=":", label="80 GB accelerator (74.5 GiB)")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xticks([1, 2, 4, 8, 16, 32, 64], ["1", "2", "4", "8", "16", "32", "64"])
ax.set_xlabel("batch (sequences of 8,192 tokens)")
ax.set_ylabel("GiB read per decoding step")
ax.set_title("Llama-2-7B's parameters against its caches; circles: caches = parameters")
ax.legend(fontsize=8, loc="lower right")
plt.show()

# %% [markdown]
# *Figure:* GiB read per decoding step against the batch (log axes): the parameters a flat line,
# the caches growing across it at batch 3.1 (32 K/V heads) and 12.6 (8), marked by circles.
#
# That, more than one user's speed, is the argument of the paper introducing multi-query
# attention (Shazeer, 2019, *Fast Transformer Decoding: One Write-Head is All You Need*):
# incremental inference "is often slow, due to the memory-bandwidth cost of repeatedly loading
# the large 'keys' and 'values' tensors". Grouped-query attention (Ainslie et al., 2023) is
# the compromise between MHA's quality and MQA's speed.
#
# **Reading the prompt is different.** The prefill runs all $P$ prompt tokens through the
# model in one pass, reading the parameters once for $P$ tokens: about $P$ FLOPs per byte, far
# above the A100's 153. Llama-2-7B on an 8,192-token prompt (attention over the causal half of
# the pairs) against one generated token:

# %%
P = context
prefill_flops = 2 * N_7b * P + 4 * n_layers * n_q_heads * d_head_big * (P * (P + 1) // 2)
prefill_read = decode_step_bytes(N_7b, P, n_layers, 32, d_head_big)  # the cache is written
prefill_ms = 1e3 * max(prefill_flops / peak_flops, prefill_read / bandwidth)
decode_ms, decode_read, decode_flops = step_ms(32, 1)
print(
    f"prefill: {prefill_flops / prefill_read:,.0f} FLOPs per byte, {prefill_ms / P:.3f} ms a token"
)
print(f"decode:  {decode_flops / decode_read:.1f} FLOPs per byte, {decode_ms:.2f} ms a token")

# %% [markdown]
# The prefill is **compute-bound** (its arithmetic takes longer than its reading), decoding
# **memory-bound**: a generated token costs about 170 times a prompt token. Faster arithmetic
# speeds the prefill; only more bandwidth, a larger batch, or fewer bytes (fewer K/V heads,
# smaller numbers) speed decoding.

# %% [markdown]
# ## The grouped-query lab
#
# Drag the number of **query heads**, of **K/V heads** (the slider offers only the divisors of
# the number of query heads) and the **context length**. Top: which query heads share which
# K/V head, one colour per group; bottom: the whole model's KV cache (32 layers,
# $d_{head} = 128$, float16, batch 1) for your choice and for the MHA and MQA versions, on a
# log scale; the dashed line marks one 80 GB accelerator (74.5 GiB).
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
# 2. Mistral-7B (8 K/V heads) decodes one sequence at 8,192 tokens on the A100. What share of
#    the bytes it reads per token is cache? Would 1 K/V head instead of 8 make it much faster?
#    And with 60 sequences at once?
# 3. Why does a decoding step with a KV cache need no mask, while a chunk of the prompt read
#    after the cache needs the bottom-right one?
#
# <details>
# <summary>Answers</summary>
#
# 1. The cache halves, from 128 KiB to 64 KiB per token (1 GiB to 512 MiB at 8,192 tokens):
#    its size is proportional to $n_{kv\_heads}$. $W_Q$ keeps its shape,
#    $(4096, 32 \cdot 128) = (4096, 4096)$, because the query heads do not change; $W_K$ and
#    $W_V$ go from $(4096, 8 \cdot 128) = (4096, 1024)$ to $(4096, 512)$.
# 2. From the table: 13.49 GiB of parameters and 1.00 GiB of cache, so the cache is 7 % of
#    the bytes (0.53 of 7.63 ms). One K/V head would save at most those 7 %. With 60 sequences
#    the caches are 60 GiB against 13.49 GiB of parameters, 82 % of the bytes: there MQA's
#    eight times smaller cache (7.5 GiB) would cut the step to under a third of its time.
# 3. A single new query is the last position: it may see every cached key, and the cache holds
#    no future. A chunk of several new queries has a future inside the chunk: its first query
#    must not see the chunk's later keys. They are the last $n_{new}$ positions of the keys, so
#    its mask is the bottom $n_{new}$ rows of the full causal mask, 06's bottom-right one.
#
# *The lab's questions.* At 64 query heads and 131,072 tokens, MHA's cache is 128 GiB, above
# the 80 GB (74.5 GiB) line; 32 K/V heads halve it to 64 GiB, just below; 8 give 16 GiB and
# 1 (MQA) 2 GiB. With 12 query heads the slider offers 1, 2, 3, 4, 6 and 12: 5 does not divide
# 12, so the query heads could not be shared out equally. With the K/V heads fixed, moving the
# query heads changes only the MHA bar: the cache depends on the K/V heads alone.
#
# </details>

# %% [markdown]
# ## Summary
#
# - MQA and GQA keep every query head but share K/V heads: query head $i$ reads K/V head
#   $\lfloor i / (n_{heads}/n_{kv\_heads}) \rfloor$. $n_{kv\_heads} = n_{heads}$ is MHA, 1 is
#   MQA; GQA is MHA with tied $W_K, W_V$.
# - The KV cache holds $2\, n_{layers}\, n_{kv\_heads}\, d_{head}$ numbers per token (512 KiB
#   in float16 for Llama-2-7B, 128 KiB for Mistral-7B and Llama-3-8B) and saves the whole
#   model's pass over the prefix at every step. A prompt chunk needs 06's bottom-right mask; a
#   single decoded token needs none.
# - A decoding step reads parameters + batch × cache at one FLOP per byte: memory-bound. The
#   prefill does about $P$ FLOPs per byte: compute-bound.
# - Fewer K/V heads shrink only the cache term: 1.22× faster for Llama-2-7B's shape at batch 1
#   and 8,192 tokens, towards 4× as batch × context grows, and 4× the batch in 80 GB.
#
# **Next:** [09 · Positions](09_positions.ipynb), which gives attention the word order that
# notebook 07 showed it cannot see.


# %% [markdown]
# ## Optional: three checks that the names mean what they say
#
# 1. $n_{kv\_heads} = n_{heads}$ is MHA: the result is the ordinary multi-head layer.
# 2. $n_{kv\_heads} = 1$ is MQA: all 8 query heads use one and the same key matrix.
# 3. GQA is MHA with **tied** parameters: repeat each K/V head's block of columns in $W_K$ and
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
# ## Optional: a cache allocated once
#
# `np.concatenate` copies the whole cache at every step; real implementations allocate the
# cache once for the maximum length and write each new token into the next slot.
# `attnlib.kv_cache.KVCache` does that, and `decode_with_kv_cache` decodes one token per step
# with it (query heads grouped by their K/V head instead of repeating the cache):

# %%
from attnlib.kv_cache import decode_with_kv_cache

heads_ref, cache = decode_with_kv_cache(Q, K_gqa, V_gqa)
print("decode_with_kv_cache agrees:", np.allclose(merge_heads(heads_ref) @ W_O, generated))
print(f"cache keys {cache.keys.shape}, values {cache.values.shape}: {cache.nbytes:,} bytes")


# %% [markdown]
# ## Optional: the parameter counts, from the shapes
#
# Each layer of these decoders has $W_Q$ and $W_O$ of $d_{model}^2$ parameters, $W_K$ and $W_V$
# of $d_{model} \cdot n_{kv\_heads} d_{head}$, a feed-forward block of three matrices of
# $d_{model} \times d_{ff}$, and two norm vectors of $d_{model}$; the model adds the token
# embeddings and the output layer ($V_{vocab} \times d_{model}$ each) and a final norm. The
# published configurations give the published counts used above, and show where the
# parameters sit: most of each layer's are in its feed-forward block, not in attention.


# %%
def decoder_parameters(n_layers, d_model, n_kv_heads, d_ff, vocab, d_head=128):
    """Parameters of a Llama-style decoder (untied embeddings, 3-matrix feed-forward block)."""
    attention = 2 * d_model * d_model + 2 * d_model * n_kv_heads * d_head
    feed_forward = 3 * d_model * d_ff
    return n_layers * (attention + feed_forward + 2 * d_model) + 2 * vocab * d_model + d_model


shapes = {  # n_layers, d_model, n_kv_heads, d_ff, vocabulary: the published configurations
    "Llama-2-7B": (32, 4096, 32, 11008, 32000),
    "Mistral-7B": (32, 4096, 8, 14336, 32000),
    "Llama-3-8B": (32, 4096, 8, 14336, 128256),
}
for name, (L, d, n_kv, d_ff, vocab) in shapes.items():
    N = decoder_parameters(L, d, n_kv, d_ff, vocab)
    layer = decoder_parameters(1, d, n_kv, d_ff, 0) - d  # one layer, without the final norm
    print(
        f"{name}: {N:,} parameters (= the published count: {parameters[name] == N}),"
        f" feed-forward {3 * d * d_ff / layer:.0%} of a layer"
    )
