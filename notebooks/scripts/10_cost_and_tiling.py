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
# # 10 · The cost of attention, and computing it in tiles
#
# Every query is compared with every key, so attention builds a $T \times T$ matrix of scores.
# This notebook counts what that matrix costs and then takes it apart: the **online softmax**
# computes the same softmax while the keys stream past one block at a time, which lets
# attention run in small tiles (the idea behind FlashAttention) without ever holding the whole
# matrix.
#
# **Learning goals.** After this notebook you can
#
# 1. count the multiply-adds and the memory of the $(T, T)$ scores, and say why doubling $T$
#    quadruples them (and why 2k to 8k tokens is 16 times the work);
# 2. (in the optional section) measure the time of attention for growing $T$ and read the
#    exponent off a log-log plot;
# 3. derive the online softmax: a running maximum $m$, a running normaliser $\ell$, and the
#    rescale factor $e^{m_{old} - m_{new}}$ when the maximum grows;
# 4. follow tiled attention tile by tile (and, in the optional section, explain why its output
#    equals plain attention to about $10^{-16}$ but not bit for bit);
# 5. measure peak memory and show what tiling removes (the $T^2$ memory) and what it keeps (the
#    $T^2$ work), and say why fewer reads and writes of slow memory make FlashAttention fast.
#
# Prerequisites: notebook 05 (subtracting the maximum inside softmax) and notebook 06 (the
# causal mask). Notebook 07 counted the cost of heads; here we count the cost of $T$. Depth
# (the timing, the rounding, the traffic counted, the backward pass, fully masked tiles, the
# whole layer's cost) is in an optional section at the end.


# %% [markdown]
# ## The claims we examine
#
# Three common claims about attention's cost, as tutorials put them. Right after computing
# `scores = Q @ K.T`:
#
# > Note the shape. This matrix is (seq_len, seq_len) — every token against every token. That
# > is where the famous quadratic cost of transformers comes from, and it is why context length
# > is expensive.
#
# and later:
#
# > Doubling context quadruples attention cost and memory. [...] FlashAttention in particular
# > does not change the maths at all; it computes the same result in tiles that fit in fast
# > on-chip memory, which is why it is a pure speed and memory win with identical outputs.
#
# > Going from 2k to 8k tokens is 16× more attention work. FlashAttention computes the same
# > result without materialising the full matrix, which removes the memory wall but not the
# > quadratic compute.
#
# We check each of these with numbers.
#
# One setting first: a single BLAS thread, for the timings of the optional section.
#
# <details>
# <summary>Why one thread, and why before the imports</summary>
#
# numpy hands matrix products to a BLAS library that may start several threads. On a busy
# machine, threads that wait for each other make timings jump around. The setting only works
# before numpy is first imported, so it comes first (after *Kernel → Restart* it takes effect
# again).
#
# </details>


# %%
import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # one BLAS thread: steadier timings
os.environ["OMP_NUM_THREADS"] = "1"

import math
import time
import tracemalloc

import matplotlib.pyplot as plt
import numpy as np

from attnlib import tiled_attention

np.set_printoptions(precision=4, suppress=True)


# %% [markdown]
# ## 1. Counting the work
#
# With $Q$ of shape $(T, d_k)$, $K$ of shape $(T, d_k)$ and $V$ of shape $(T, d_v)$:
#
# $$S = \frac{Q K^\top}{\sqrt{d_k}} \in \mathbb{R}^{T \times T}, \qquad
# A = \mathrm{softmax}(S), \qquad O = A V \in \mathbb{R}^{T \times d_v}.$$
#
# Every entry $S_{ij} = q_i \cdot k_j / \sqrt{d_k}$ is a dot product of length $d_k$:
# $d_k$ multiply-adds, and there are $T^2$ of them. Every output row $o_i = \sum_j A_{ij} v_j$
# takes $T d_v$ multiply-adds. The softmax does a few operations per entry. So
#
# $$\text{multiply-adds} = T^2 d_k + T^2 d_v = T^2 (d_k + d_v), \qquad
# \text{entries of } S \text{ (and of } A\text{)} = T^2 .$$
#
# Both are $T^2$ times something that does not depend on $T$: double $T$ and both grow
# $2^2 = 4$ times. (Hardware is rated in FLOP/s, floating-point operations per second; a
# multiply-add is two of them, a multiplication and an addition, so the FLOPs are
# $2\,T^2 (d_k + d_v)$.) We use $d_k = d_v = 64$ (one head of the standard model with
# $d_{model} = 512$ split into 8 heads, as in notebook 07) and count in float32, 4 bytes a
# number:


# %%
d_k = d_v = 64


def attention_madds(T, d_k, d_v):
    """Multiply-adds of Q K^T and A V for T queries and T keys."""
    return T * T * d_k + T * T * d_v


print(f"{'T':>7} {'multiply-adds':>16} {'entries of S':>14} {'S in float32':>13} {'vs T/2':>7}")
for T in (1024, 2048, 4096, 8192, 16384):
    madds, entries = attention_madds(T, d_k, d_v), T * T
    growth = madds / attention_madds(T // 2, d_k, d_v)
    print(f"{T:>7,} {madds:>16,} {entries:>14,} {entries * 4 / 2**20:>9,.0f} MiB {growth:>6.0f}x")

flops = 2 * attention_madds(8192, d_k, d_v)  # a multiply-add is 2 FLOPs
print(f"T = 8,192: {flops / 1e9:.1f} GFLOP per head (2 per multiply-add)")
ratio = attention_madds(8192, d_k, d_v) // attention_madds(2048, d_k, d_v)
print(f"2k -> 8k tokens: the work grows {ratio} times")


# %% [markdown]
# Each doubling multiplies the work and the size of $S$ by exactly 4, and 2k to 8k is
# $4^2 = 16$ times, as the claim says. The memory is per head and per sequence: a layer of 8
# heads keeps 8 such matrices, and training keeps every layer's attention weights for the
# backward pass.


# %%
n_heads, T = 8, 8192
print(
    f"attention weights of one layer, {n_heads} heads, T = {T:,}: {n_heads * T * T * 4 / 2**30:.0f} GiB"
)


# %% [markdown]
# ## 2. The online softmax, derived
#
# To compute the output of one query we need its whole row of scores $s_1, \dots, s_T$, because
# softmax divides by a sum over all of them:
#
# $$o = \sum_{j=1}^{T} \frac{e^{s_j - m}}{\ell} \, v_j, \qquad
# m = \max_j s_j, \qquad \ell = \sum_{j=1}^{T} e^{s_j - m} .$$
#
# (Subtracting $m$ changes nothing mathematically and keeps every $e^{s_j - m} \le 1$,
# notebook 05.) Can we compute $o$ while the keys arrive in blocks, keeping only a few numbers
# per query? Keep, over the keys seen so far,
#
# $$m = \max_{j \text{ seen}} s_j, \qquad
# \ell = \sum_{j \text{ seen}} e^{s_j - m}, \qquad
# \mathrm{acc} = \sum_{j \text{ seen}} e^{s_j - m} \, v_j .$$
#
# A new block $B$ of keys arrives. The new maximum is $m_{new} = \max(m, \max_{j \in B} s_j)$.
# The old sums were written relative to the old $m$; since
#
# $$e^{s_j - m_{new}} = e^{s_j - m} \cdot e^{m - m_{new}},$$
#
# multiplying them by $e^{m - m_{new}}$ rewrites them relative to $m_{new}$. Then we add the
# new block's terms:
#
# $$\ell_{new} = e^{m - m_{new}}\,\ell + \sum_{j \in B} e^{s_j - m_{new}}, \qquad
# \mathrm{acc}_{new} = e^{m - m_{new}}\,\mathrm{acc} + \sum_{j \in B} e^{s_j - m_{new}}\, v_j .$$
#
# The three definitions hold again after the block, so by induction they hold after the last
# block, and then $\mathrm{acc} / \ell = o$ exactly. The factor $e^{m - m_{new}}$ is 1 when the
# maximum did not grow and less than 1 when it did. We start from $m = -\infty$, $\ell = 0$,
# $\mathrm{acc} = 0$: at the first block $e^{-\infty} = 0$ wipes the (empty) past.
#
# A small example: $T = 12$ tokens with $d_k = 4$ and $d_v = 2$ (so that an output is a point in
# the plane), the same numbers the lab at the end uses. We follow query 9, in blocks of 4 keys.


# %%
from attnlib.examples import tiling_example

SEED = 8
T, d_k, d_v, block = 12, 4, 2, 4
rng = np.random.default_rng(SEED)
Q = rng.normal(size=(T, d_k))
K = rng.normal(size=(T, d_k))
V = rng.normal(size=(T, d_v))
print("the lab's example is these numbers:", all(map(np.array_equal, (Q, K, V), tiling_example())))

i = 9
s = Q[i] @ K.T / np.sqrt(d_k)  # query 9's scores against all 12 keys
print(f"scores of query {i} against keys 0-11:")
print(s)


# %%
m, l, acc = -np.inf, 0.0, np.zeros(d_v)
print(f"{'keys':>6} {'block max':>10} {'m':>8} {'rescale':>8} {'l':>8}   acc / l")
for start in range(0, T, block):
    s_b, v_b = s[start : start + block], V[start : start + block]
    m_new = max(m, s_b.max())
    rescale = np.exp(m - m_new)  # e^(m_old - m_new): 0 at the first block
    p = np.exp(s_b - m_new)
    l = rescale * l + p.sum()
    acc = rescale * acc + p @ v_b
    m = m_new
    keys = f"{start}-{start + block - 1}"
    print(f"{keys:>6} {s_b.max():>10.4f} {m:>8.4f} {rescale:>8.4f} {l:>8.4f}   {acc / l}")

weights = np.exp(s - s.max()) / np.exp(s - s.max()).sum()  # the ordinary softmax, all at once
print("\nordinary softmax: weights @ V =", weights @ V, f"  (max {s.max():.4f})")


# %% [markdown]
# The second block holds key 7 with score 3.04, far above the first block's 0.70, so the past
# is rescaled by $e^{0.70 - 3.04} \approx 0.096$: the first four keys now weigh about a tenth of
# what they did. The third block's maximum (1.77) is below $m$, so its rescale factor is exactly
# 1. After the last block, $\mathrm{acc}/\ell$ is the ordinary softmax output.


# %% [markdown]
# ### Exercise: one step of the online softmax
#
# Write `online_softmax_step(m, l, acc, s, v)`: given the running state `m`, `l`, `acc` and a
# new block of scores `s` (shape `(n,)`) with their value rows `v` (shape `(n, d_v)`), return the
# new state `(m, l, acc)`. The check feeds your function four blocks in a row, starting from
# `m = -inf`, `l = 0`, `acc = [0, 0]`. Stuck? `ch10.online_softmax_step.hint()`, or
# `ch10.online_softmax_step.solution()`.


# %%
from attnlib.exercises import ch10


def online_softmax_step(m, l, acc, s, v):
    raise NotImplementedError  # replace this line with your code


ch10.online_softmax_step.check(online_softmax_step)


# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):


# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
def online_softmax_step_solution(m, l, acc, s, v):
    m_new = max(m, s.max())
    p = np.exp(s - m_new)  # this block's weights, relative to the new maximum
    rescale = np.exp(m - m_new)  # 0 on the first block, where m = -inf
    return m_new, rescale * l + p.sum(), rescale * acc + p @ v


ch10.online_softmax_step.check_solution(online_softmax_step_solution)


# %% [markdown]
# ## 3. Tiled attention, tile by tile
#
# Tiled attention takes a **block of queries** at once and streams the **blocks of keys** past
# it: each step computes one *tile* of scores, (query block) × (key block), and updates $m$,
# $\ell$, $\mathrm{acc}$ for all rows of the query block together. Only one tile of scores
# exists at a time. `attnlib.tiling.tiled_attention_steps` runs `attnlib.tiled_attention` one
# tile at a time and hands us its state after each tile. Our 12 tokens in blocks of 4
# make $3 \times 3 = 9$ tiles. For each tile we print which rows' maximum grew and how far the
# rows' partial outputs $\mathrm{acc}/\ell$ still are from the exact ones:


# %%
from attnlib import scaled_dot_product_attention
from attnlib.tiling import tiled_attention_steps

exact, _ = scaled_dot_product_attention(Q, K, V)
print(f"{'tile':>4} {'queries':>8} {'keys':>6} {'max grew in':<18} {'max |acc/l - exact|':>20}")
for step in tiled_attention_steps(Q, K, V, block_size=block):
    rows = range(step.rows.start, step.rows.stop)
    grew = [r for r, g in zip(rows, step.rescale[:, 0]) if 0 < g < 1]
    gap = np.abs(step.output - exact[step.rows]).max()
    queries = f"{step.rows.start}-{step.rows.stop - 1}"
    keys = f"{step.cols.start}-{step.cols.stop - 1}"
    print(f"{step.index + 1:>4} {queries:>8} {keys:>6} {str(grew or '-'):<18} {gap:>20.4f}")


# %% [markdown]
# Within each query block the gap shrinks to 0 at its last key block, and at each tile the rows
# whose maximum grew are rescaled (query 9 among them at tile 8, as in our hand computation).
# The order of the tiles, and what a causal mask changes: under a causal mask (notebook 06)
# query $i$ sees keys $j \le i$ only, so a tile entirely above the diagonal has nothing to
# compute and is **skipped**, and the tiles on the diagonal are masked inside. (The cell
# that draws the schedule is collapsed.)


# %% jupyter={"source_hidden": true}
from attnlib import causal_mask
from attnlib.pictures.tiling_diagram import tile_order_diagram

fig, axes = plt.subplots(1, 2, figsize=(10, 4.6))
for ax, causal in zip(axes, (False, True)):
    steps = list(tiled_attention_steps(Q, K, V, block_size=block, causal=causal))
    n_skipped = (T // block) ** 2 - len(steps)
    title = (
        f"causal: {len(steps)} tiles, {n_skipped} skipped"
        if causal
        else f"no mask: {len(steps)} tiles"
    )
    tile_order_diagram(steps, T, T, mask=causal_mask(T) if causal else None, ax=ax, title=title)
fig.suptitle(f"the order of the tiles (block size {block}); grey = masked pairs", fontsize=12)
fig.tight_layout()
plt.show()


# %% [markdown]
# *Figure:* Two 12 × 12 query–key grids cut into 4 × 4 tiles, numbered in computing order: nine
# tiles without a mask; with the causal mask, six, and three skipped.
#
# After its last key block every row's gap is 0 (to the four decimals printed): tiling computes
# the same softmax, only in another order. The claim calls the outputs "identical"; they are
# equal up to rounding, not bit for bit: the optional section measures how close (about
# $10^{-16}$ in float64) and shows why the last bits differ.


# %% [markdown]
# ## 4. Memory: what tiling removes
#
# Python's `tracemalloc` records the largest total of memory numpy allocates while a function
# runs, the **peak**. We measure it for plain attention written out in numpy (notebook 05's
# softmax) and for `attnlib.tiled_attention`, in float32 for $T$ from 256 to 2048
# ($d_k = d_v = 64$, blocks of 128; the inputs exist before and are not counted), keeping the
# smallest of three runs.
#
# <details>
# <summary>Why the smallest of three</summary>
#
# `tracemalloc` counts every thread of the process, and the kernel that runs this notebook has
# threads of its own (they carry outputs to your browser) that allocate a few kilobytes now and
# then. They can only add to a peak, so the smallest of three runs is the function's own.
#
# </details>


# %%
def plain_attention(Q, K, V):
    """softmax(Q K^T / sqrt(d_k)) V, building the whole (T, T) score matrix."""
    S = Q @ K.T / math.sqrt(Q.shape[-1])
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A /= A.sum(axis=-1, keepdims=True)
    return A @ V


rng = np.random.default_rng(SEED)
sizes = np.array([256, 512, 1024, 2048])
inputs = {T: rng.normal(size=(3, T, 64)).astype(np.float32) for T in sizes}  # Q, K, V
methods = {
    "plain": plain_attention,
    "tiled": lambda Q, K, V: tiled_attention(Q, K, V, block_size=128),
}


# %%
def peak_mib(function, *args, runs=3):
    """The peak memory (MiB) allocated while function(*args) runs: the smallest of `runs` runs."""
    peaks = []
    for _ in range(runs):
        tracemalloc.start()
        function(*args)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    return min(peaks) / 2**20


peaks = {name: [peak_mib(method, *inputs[T]) for T in sizes] for name, method in methods.items()}
print(f"{'T':>6} {'one (T, T) matrix':>18} {'plain peak':>11} {'= matrices':>11} {'tiled':>11}")
for i, T in enumerate(sizes):
    matrix = T * T * 4 / 2**20  # float32
    plain, tiled = peaks["plain"][i], peaks["tiled"][i]
    print(f"{T:>6} {matrix:>14.1f} MiB {plain:>7.1f} MiB {plain / matrix:>11.2f} {tiled:>7.1f} MiB")


# %% [markdown]
# Plain attention peaks at exactly three $(T, T)$ matrices: `S`, then `S - max` and its
# exponential, alive at the same moment. Its peak grows 4 times per doubling of $T$. The tiled
# peak is a few tiles of $128 \times 128$ plus the output, $(T, d_v)$: it grows only linearly,
# with the output (the optional section plots both).


# %% [markdown]
# The memory wall is removed. The work is not: tiled attention still computes every tile. We
# count its multiply-adds from the tiles it actually computed, at $T = 1024$ in blocks of 128:


# %%
T_big = 1024
Qb, Kb, Vb = inputs[T_big]  # d_k = d_v = 64
tiled_madds = sum(
    step.scores.size * (Qb.shape[1] + Vb.shape[1])  # per score: d_k for Q K^T, d_v for A V
    for step in tiled_attention_steps(Qb, Kb, Vb, block_size=128)
)
print(f"tiled attention, T = {T_big}: {tiled_madds:,} multiply-adds")
print(f"plain attention, T = {T_big}: {attention_madds(T_big, 64, 64):,} multiply-adds")


# %% [markdown]
# The same number: $(T/128)^2$ tiles of $128^2 (d_k + d_v)$ multiply-adds each is
# $T^2 (d_k + d_v)$ (the optional section measures its time growing like $T^2$). That is the
# third claim, both halves, in numbers: tiling "removes the memory wall but not the quadratic
# compute". At lengths we cannot run here, the counts are exact:


# %%
print(f"{'T':>8} {'S per head (float32)':>21} {'tiles of 128 x 128':>19}")
for T in (8192, 32768, 131072):
    print(f"{T:>8,} {T * T * 4 / 2**30:>17.2f} GiB {(T // 128) ** 2:>19,}")
print(f"one 128 x 128 tile in float32: {128 * 128 * 4 // 1024} KiB, whatever T is")


# %% [markdown]
# ### Memory traffic: what makes FlashAttention fast
#
# Peak memory is one wall; on a GPU the other is **memory traffic** between a large, slow
# memory (HBM) and a small, fast one on the chip (SRAM). Plain attention writes the
# $T \times T$ scores and attention weights to slow memory and reads them back: about $4T^2$
# numbers moved for $4T^2 d$ FLOPs, so about $d$ FLOPs per number, $d/2 = 32$ per byte in
# float16 with $d = 64$, well below the 153 an A100 can do per byte (notebook 08). Its time goes
# into moving numbers. (Decoding in notebook 08, at about 1 FLOP per byte, is another quantity:
# each cached number there serves one query, here a whole row of them.) Tiled attention keeps
# each tile in fast memory and streams only $K$ and $V$ past each block of queries: with
# $d = 64$ and blocks of 128, about a quarter as many numbers. That, not fewer operations, is
# what makes FlashAttention fast. The loop order here, query blocks outside and key blocks
# streaming inside, is FlashAttention-2's (Dao 2023); the first FlashAttention (Dao et al.
# 2022) ran the key blocks outside. The optional section counts the reads and writes of both.


# %% [markdown]
# ## 5. The tiling lab
#
# Step through tiled attention on the 12-token example. The **tiles done** slider moves through
# the schedule; **block size** cuts the score matrix into tiles of 2, 3, 4 or 6; **causal
# mask** skips the tiles above the diagonal. The panels, left to right: the score matrix (tiles
# done in colour, the current one outlined); the running maximum $m$ of each query row of the
# current tile (a bar $|$), with the row's true maximum (a circle) it is heading for; the running
# normaliser $\ell$ (a red edge when this tile rescaled it; grey bars are rows already finished);
# and the outputs in the plane: each row's $\mathrm{acc}/\ell$ after each key block, walking
# towards the exact output (open circle), with the values $v_j$ as grey points.
#
# Things to try: with block size 4, step from tile 7 to tile 8 and watch query 9 (the second
# row of its block, orange) when key 7 arrives. Set block size 2 and step through one query
# block: how many times does each row's maximum grow? Then tick **causal mask**: why does the
# first query block finish after a single tile?
#
# (Without a running kernel, for example on GitHub, you see a picture of the lab's first state.)


# %% tags=["nbval-ignore-output"]
from attnlib.labs import tiling_lab

tiling_lab(Q, K, V)


# %% [markdown]
# ## Check yourself
#
# 1. A model's context grows from 1,000 to 3,000 tokens. How much more work do $QK^\top$ and
#    $AV$ take, and how much more memory does plain attention's score matrix need?
# 2. In the online softmax, the running maximum goes from $m = 2$ to $m_{new} = 5$. By what
#    factor are $\ell$ and $\mathrm{acc}$ multiplied? What would go wrong if you skipped the
#    rescaling?
# 3. Does tiled attention do fewer multiply-adds than plain attention? What does it save, and
#    where does the causal mask let it do less?
#
# <details>
# <summary>Answers</summary>
#
# 1. $3^2 = 9$ times the work and 9 times the memory: both are $T^2$ times a constant.
# 2. $e^{2 - 5} = e^{-3} \approx 0.0498$. Without it, the old terms would stay relative to the
#    old maximum, $e^{s_j - 2}$, while the new ones are relative to 5: the old keys would be
#    weighted $e^{3} \approx 20$ times too much, and $\mathrm{acc}/\ell$ would be wrong.
# 3. No: it computes every tile, the same $T^2 (d_k + d_v)$ multiply-adds plus a few
#    rescalings. It saves memory: only one tile of scores exists at a time, so the peak grows
#    like $T$ instead of $T^2$. With a causal mask it skips the tiles entirely above the
#    diagonal (3 of 9 in our example; close to half when there are many tiles). Plain
#    attention as we wrote it computes the whole matrix and then masks it. On a GPU the
#    bigger saving is traffic: tiled attention reads and writes slow memory about $d/(2B)$
#    times as much as plain attention, because the $T \times T$ matrices never travel.
#
# *The lab's questions.* At block size 2, counted in the optional section's last cell: queries
# 0 to 11 see their maximum grow 0, 0, 1, 1, 1, 1, 0, 2, 2, 2, 2, 0 times after their first
# key block, 12 times in 60 later blocks, never more than twice; a row whose largest score
# comes in its first block never rescales. (For scores in random order, block $k$ holds a new
# maximum with probability $1/k$: 1.45 growths per row on average, so our 12 rows, 1.00, are
# on the low side.) With the causal mask, query block 0 holds the first queries, which see
# only keys up to their own position, all in key block 0; every later key block is in their
# future, so it is skipped.
#
# </details>


# %% [markdown]
# ## Summary
#
# - Attention compares every query with every key: $T^2 (d_k + d_v)$ multiply-adds and $T^2$
#   scores per head. Double $T$ and both grow 4 times; 2k to 8k tokens is exactly 16 times.
# - The online softmax keeps a running maximum $m$, normaliser $\ell$ and weighted sum
#   $\mathrm{acc}$; when a block raises the maximum, the old $\ell$ and $\mathrm{acc}$ are
#   multiplied by $e^{m_{old} - m_{new}}$. After the last block $\mathrm{acc}/\ell$ is exact.
# - Tiled (FlashAttention-style) attention applies it to tiles of queries × keys: the same
#   mathematics, equal to plain attention up to rounding ($10^{-16}$, optional section).
# - Tiling removes the memory wall (peak memory linear in $T$ instead of three $T \times T$
#   matrices) but not the quadratic work (FLOPs = 2 × multiply-adds). On a GPU it also cuts
#   the traffic to slow memory, which is where its speed comes from.
#
# **Next:** [11 · Gradients](11_gradients.ipynb), or first the optional section below.


# %% [markdown]
# ## Going further (optional)
#
# How equal tiled attention is, the memory traffic counted, the clock on this machine, and three
# questions a careful reader asks next, each with its numbers.


# %% [markdown]
# ### Equal to plain attention, but not bit for bit
#
# `tiled_attention` returns the outputs of the last tiles. Is it the same as plain attention,
# for every block size, with and without the causal mask? The differences, measured in units of
# float64's machine epsilon $\varepsilon \approx 2.2 \times 10^{-16}$ (the gap between 1 and the
# next float64), with the same check in float32, on the 12 tokens of sections 2 and 3:


# %%
T = len(Q)  # the 12 tokens of sections 2 and 3
eps = np.finfo(np.float64).eps
cases = [(b, c) for c in (False, True) for b in (1, 2, 3, 4, 5, 12)]
gaps = {}
for b, causal in cases:
    reference, _ = scaled_dot_product_attention(Q, K, V, mask=causal_mask(T) if causal else None)
    tiled = tiled_attention(Q, K, V, block_size=b, causal=causal)
    gaps[b, causal] = (np.abs(tiled - reference).max(), np.array_equal(tiled, reference))

Q32, K32, V32 = (x.astype(np.float32) for x in (Q, K, V))
ref32, _ = scaled_dot_product_attention(Q32, K32, V32)
gap32 = np.abs(tiled_attention(Q32, K32, V32, block_size=4) - ref32).max()


# %% tags=["nbval-ignore-output"]
# these last digits can differ on your computer: they depend on its processor and numpy build
for (b, causal), (gap, same) in gaps.items():
    bits = "  (bit for bit)" if same else ""
    print(
        f"block {b:>2}, causal {causal!s:<5}: largest difference {gap:.1e}"
        f" = {gap / eps:.1f} eps{bits}"
    )
print(f"float32, block 4: largest difference {gap32:.1e}")


# %%
print("every case within 1e-15 of plain attention:", all(g < 1e-15 for g, _ in gaps.values()))
print("cases equal bit for bit:", sum(same for _, same in gaps.values()), "of", len(gaps))
print("float32 within 1e-6:", bool(gap32 < 1e-6))


# %% [markdown]
# Equal to within a few units in the last place, in every case; and not bit for bit, not even
# with one tile (block 12). Floating-point arithmetic rounds after every operation, so the same
# mathematics computed in a different order rounds differently; two lines show it in miniature
# below.
#
# <details>
# <summary>Three places where tiling changes the order</summary>
#
# - sums are added block by block instead of in one pass;
# - $e^{s_j - m}$ for an early block is computed with the old maximum and then multiplied by
#   $e^{m - m_{new}}$, while plain attention computes $e^{s_j - m_{new}}$ directly;
# - the tiled version divides once at the end, $(\sum_j e^{s_j - m} v_j)/\ell$, while plain
#   attention divides each weight first and then sums, $\sum_j (e^{s_j - m}/\ell)\, v_j$
#   (that is the difference at block 12).
#
# </details>


# %%
print("(0.1 + 0.2) + 0.3 =", (0.1 + 0.2) + 0.3, "  0.1 + (0.2 + 0.3) =", 0.1 + (0.2 + 0.3))
print("exp(1) * exp(1) =", math.exp(1) * math.exp(1), "  exp(2) =", math.exp(2))


# %% [markdown]
# <details>
# <summary>About "identical outputs"</summary>
#
# The claim says FlashAttention is "a pure speed and memory win with identical outputs". The
# mathematics is identical, and that is the important part: no approximation, no change to the
# model. The *numbers* are equal to rounding, not identical: about $10^{-16}$ apart in float64
# and $10^{-7}$ in float32 here, as computed above. That is far below anything a model
# notices, but it is why two runs, one with and one without tiling, may not agree to the last
# digit, which matters when you test code by comparing outputs: compare with a tolerance
# (`np.allclose`), not with `==`.
#
# </details>


# %% [markdown]
# ### Memory traffic, counted
#
# Section 4 said that tiled attention moves far fewer numbers between slow and fast memory.
# Dao et al. (2022), *FlashAttention: Fast and Memory-Efficient Exact Attention with
# IO-Awareness*, count those reads and writes; their Theorem 2: standard
# attention needs $\Theta(Nd + N^2)$ accesses to HBM, FlashAttention $\Theta(N^2 d^2 / M)$,
# for $N$ tokens, head width $d$ and $M$ numbers of fast memory.
#
# We count for $N$ tokens and $d = d_k = d_v$. Plain attention reads $Q$ and $K$, writes $S$,
# reads it back for the softmax, writes the attention weights $P$, reads them and $V$, writes
# $O$: $4N^2 + 4Nd$ numbers. Our loop order, FlashAttention-2's (Dao 2023, *FlashAttention-2:
# Faster Attention with Better Parallelism and Work Partitioning*), keeps a block of $B$
# queries in fast memory while the key blocks stream past: it reads $Q$ once and writes $O$
# once, but reads all of $K$ and $V$ once per query block, $2Nd + (N/B) \cdot 2Nd$. The first
# FlashAttention's Algorithm 1 runs the loops the other way round: each block of keys and
# values is read once, and for each one every query block, with its partial output, is read
# and written back, $2Nd + (N/B) \cdot 3Nd$ (leaving out the running $m$ and $\ell$, $2N$
# numbers per pass). Both are $\Theta(N^2 d^2 / M)$; FlashAttention-2's order moves less and
# lets each query block run on its own. The FlashAttention-2 count, taken from the tiles
# `tiled_attention` actually computes, at $T = 1024$ in blocks of 128:


# %%
def moved_plain(N, d):
    """Numbers plain attention reads and writes in slow memory: Q, K in; S out and in; P out
    and in, V in; O out."""
    return 2 * N * d + 4 * N * N + 2 * N * d


def moved_tiled(N, d, B):
    """FlashAttention-2's order: Q in and O out once; K and V in once per query block."""
    return 2 * N * d + (N // B) * 2 * N * d


def moved_fa1(N, d, B):
    """FlashAttention-1's order: K and V in once; Q in, O in and out, once per key block."""
    return 2 * N * d + (N // B) * 3 * N * d


moved = 0
for step in tiled_attention_steps(Qb, Kb, Vb, block_size=128):
    n_rows, n_cols = step.scores.shape
    moved += 2 * n_cols * 64  # this key block's K and V come in
    moved += n_rows * 64 * (step.k_block == 0)  # the query block's Q comes in
    moved += n_rows * 64 * step.last  # and its output goes out
print(f"tiled, counted tile by tile: {moved:,} numbers; formula: {moved_tiled(1024, 64, 128):,}")

print(f"\n{'N':>8} {'plain':>16} {'FA-2 order':>16} {'FA-1 order':>16} {'plain / FA-2':>13}")
for N in (1024, 8192, 131072):
    plain, tiled, fa1 = moved_plain(N, 64), moved_tiled(N, 64, 128), moved_fa1(N, 64, 128)
    print(f"{N:>8,} {plain:>16,} {tiled:>16,} {fa1:>16,} {plain / tiled:>13.2f}")
flops = 4 * 131072**2 * 64  # Q K^T and A V, 2 FLOPs per multiply-add
print(
    f"FLOPs per number moved at N = 131,072: plain {flops / moved_plain(131072, 64):.0f},", end=" "
)
print(f"FA-2 order {flops / moved_tiled(131072, 64, 128):.0f}")


# %% [markdown]
# Both counts still grow like $N^2$, but tiling moves $d/(2B)$ as much, here about a quarter,
# and does about $2B$ FLOPs per number moved instead of $d$:
# the $N^2$ matrices never travel, only $K$ and $V$, once per query block. How large $B$ can be
# is set by the fast memory: a query block, its running output, a key block, a value block and
# one tile must fit, about $4Bd + B^2 \le M$ numbers, so $B$ grows with $M/d$, and
# $N^2 d / B$ is the theorem's $N^2 d^2 / M$. With $d = 64$, $B = 128$ takes 48K numbers (96 KiB
# in float16), which fits in one core's fast memory of a recent GPU. Fewer bytes moved is what
# makes FlashAttention several times faster on a GPU even though it does the same, or in the
# backward pass more, arithmetic (the backward pass, below, shows why more).


# %% [markdown]
# ### Measuring the time, and the memory in a picture
#
# Counting is exact; a clock is the real test. We time section 4's two functions on its
# inputs, float32 for $T$ from 256 to 2048.
#
# <details>
# <summary>Two precautions for a fair measurement on a busy machine</summary>
#
# We read `time.process_time()`, the processor time *our* program used, rather than a wall
# clock, which would also count the moments other programs had the processor. And we keep the
# fastest of five runs per size, with the sizes interleaved.
#
# </details>


# %% tags=["nbval-ignore-output"]
seconds = {name: np.full(len(sizes), np.inf) for name in methods}
for _ in range(5):
    for i, T in enumerate(sizes):
        for name, method in methods.items():
            start = time.process_time()
            method(*inputs[T])
            seconds[name][i] = min(seconds[name][i], time.process_time() - start)

print(f"{'T':>6} {'plain (ms)':>11} {'x previous':>11} {'tiled (ms)':>11} {'x previous':>11}")
for i, T in enumerate(sizes):
    row = f"{T:>6}"
    for name in methods:
        growth = f"{seconds[name][i] / seconds[name][i - 1]:.1f}x" if i else ""
        row += f" {1e3 * seconds[name][i]:>11.1f} {growth:>11}"
    print(row)


# %% [markdown]
# If time is $c\,T^p$, then $\log(\text{time}) = \log c + p \log T$: on log-log axes it is a
# straight line of slope $p$. The dashed grey lines have slope exactly 2.


# %% tags=["nbval-ignore-output"]
fig, ax = plt.subplots(figsize=(6.5, 4))
for name, marker in (("plain", "o"), ("tiled", "s")):
    ax.loglog(sizes, 1e3 * seconds[name], marker=marker, label=f"{name} attention")
for name in methods:  # slope-2 guides through each method's largest size
    ax.loglog(sizes, 1e3 * seconds[name][-1] * (sizes / sizes[-1]) ** 2, "--", color="gray", lw=1)
ax.set_xticks(sizes, [str(T) for T in sizes])
ax.xaxis.set_minor_locator(plt.NullLocator())
ax.set_xlabel("sequence length T (log scale)")
ax.set_ylabel("processor time (ms, log scale)")
ax.set_title("time of attention against T; dashed: slope 2")
ax.legend()
plt.show()


# %% [markdown]
# *Figure:* Processor time of plain and tiled attention against $T$ from 256 to 2048, both axes
# logarithmic; both lines run roughly parallel to the dashed slope-2 guides.
#
# The slope is the exponent $p$; we fit it by least squares on the logarithms. (The step from
# 256 to 512 is often steeper than 4x: a $256 \times 256$ float32 matrix, 256 KiB, fits in the
# processor's cache, a larger one travels to and from main memory, which costs more per entry.)
# A clock is noisy, so the fitted value changes a little from run to run; rounded to a whole
# number it is 2.


# %% tags=["nbval-ignore-output"]
exponents = {name: np.polyfit(np.log(sizes), np.log(secs), 1)[0] for name, secs in seconds.items()}
for name, p in exponents.items():
    print(f"{name}: fitted exponent p = {p:.2f}")


# %%
for name, p in exponents.items():
    print(f"{name} attention: time grows like T^{round(p)} (the fitted p, rounded)")


# %% [markdown]
# Both are quadratic: doubling $T$ multiplies the time by about 4 (the "x previous" columns),
# tiled or not, because tiling does the same multiply-adds in a different order. Which of the
# two is faster depends on the machine. On a CPU the tiled one can even win: a $128 \times 128$
# tile stays in the processor's small, fast cache while a $2048 \times 2048$ matrix must travel
# to and from main memory. That is FlashAttention's idea on a GPU, where the fast memory is the
# chip's own; numpy does not control it, so section 4 measures what we can control: memory.


# %%
fig, ax = plt.subplots(figsize=(6.5, 4))
for name, marker in (("plain", "o"), ("tiled", "s")):
    ax.loglog(sizes, peaks[name], marker=marker, label=f"{name} attention")
ax.loglog(sizes, peaks["plain"][0] * (sizes / sizes[0]) ** 2, "--", color="gray", label="slope 2")
ax.set_xticks(sizes, [str(T) for T in sizes])
ax.xaxis.set_minor_locator(plt.NullLocator())
ax.set_xlabel("sequence length T (log scale)")
ax.set_ylabel("peak memory (MiB, log scale)")
ax.set_title("peak memory of attention against T")
ax.legend()
plt.show()


# %% [markdown]
# *Figure:* Peak memory of plain and tiled attention against $T$, both axes logarithmic: plain
# attention follows the dashed slope-2 line; tiled attention grows slowly, staying below 1 MiB.

# %% [markdown]
# ### The whole layer: a precision note on "16× more attention work"
#
# The 16 is exact for the part of attention that compares tokens: $Q K^\top$, the softmax and
# $A V$. An attention *layer* also projects every token, $Q = X W_Q$, $K = X W_K$,
# $V = X W_V$ and the output through $W_O$: four products of $T \times d_{model}$ by
# $d_{model} \times d_{model}$, which grow only linearly with $T$. With $d_{model} = 512$ the whole
# layer grows a little less than 16 times:


# %%
def layer_madds(T, d_model=512):
    """Multiply-adds of one attention layer: 4 projections plus Q K^T and A V of all heads."""
    return 4 * T * d_model * d_model + attention_madds(T, d_model, d_model)


print(f"whole layer, 2k -> 8k tokens: {layer_madds(8192) / layer_madds(2048):.2f} times the work")
for T in (2048, 8192):
    share = attention_madds(T, 512, 512) / layer_madds(T)
    print(f"  T = {T:,}: Q K^T and A V are {share:.0%} of the layer's multiply-adds")


# %% [markdown]
# The longer the context, the more the $T^2$ part dominates and the closer the ratio gets to 16.
# (The feed-forward block after attention also grows linearly, so a whole transformer grows by
# less again.)


# %% [markdown]
# ### The backward pass keeps one number per row, not the $T \times T$ attention weights
#
# Training needs the gradient, and the gradient of attention needs the attention weights $A$ (notebook 11
# derives it). Storing $A$ would bring the $T^2$ memory back. FlashAttention stores instead,
# for each query row, one number from the forward pass: the **log-sum-exp**
# $L_i = m_i + \log \ell_i = \log \sum_j e^{s_{ij}}$. From it the backward pass recomputes any
# tile of attention weights exactly, $A_{ij} = e^{s_{ij} - L_i}$, from a tile of scores that it
# recomputes too ($Q_i K_j^\top / \sqrt{d_k}$): more arithmetic, $T$ numbers of memory instead
# of $T^2$, and far less traffic. On our 12 tokens:


# %%
steps = list(tiled_attention_steps(Q, K, V, block_size=block))
L = np.concatenate([s.m[:, 0] + np.log(s.l[:, 0]) for s in steps if s.last])  # (T,)
S = Q @ K.T / np.sqrt(Q.shape[-1])  # recomputed from Q and K
_, A = scaled_dot_product_attention(Q, K, V)
print("exp(S - L) equals the softmax weights:", np.allclose(np.exp(S - L[:, None]), A))
print(f"kept from the forward pass: {L.size} numbers instead of {A.size}")


# %% [markdown]
# ### A tile where a row sees nothing: $-\infty - (-\infty)$
#
# A row starts with $m = -\infty$. If its first tile is fully masked (a padded batch whose
# first keys are padding, a sliding window), the tile's maximum is $-\infty$ too, so
# $m_{new} = -\infty$, and both $e^{m - m_{new}}$ and $e^{s_j - m_{new}}$ compute
# $e^{-\infty - (-\infty)} = e^{\text{nan}}$. A NaN in $\ell$ or $\mathrm{acc}$ never leaves:
# every later rescale multiplies it. The usual guard subtracts 0 instead of $m_{new}$ while
# $m_{new} = -\infty$, which gives $e^{-\infty} = 0$: the row's state stays empty until a key
# it may see arrives. A masked block, then a visible one (keys 2 and 3 of query 9):


# %%
from attnlib import softmax


def online_step(m, l, acc, s, v, guard):
    m_new = max(m, s.max())
    shift = 0.0 if guard and m_new == -np.inf else m_new  # the guard
    p, rescale = np.exp(s - shift), np.exp(m - shift)
    return m_new, rescale * l + p.sum(), rescale * acc + p @ v


s9 = Q[9] @ K.T / np.sqrt(Q.shape[-1])
blocks = [(np.full(2, -np.inf), V[:2]), (s9[2:4], V[2:4])]  # keys 0, 1 masked for this row
for guard in (False, True):
    state = (-np.inf, 0.0, np.zeros(V.shape[1]))
    with np.errstate(invalid="ignore"):  # numpy warns about -inf - (-inf); we show the result
        for s_b, v_b in blocks:
            state = online_step(*state, s_b, v_b, guard)
    print(f"guard {guard!s:<5}: output {state[2] / state[1]}")
print("softmax over keys 2, 3:", softmax(s9[2:4]) @ V[2:4])


# %% [markdown]
# `attnlib.tiled_attention` needs no guard: the only mask it applies is the causal one, and key
# 0, in every row's first tile, is visible to every query. A row that sees no key at all ends
# with $\ell = 0$ and $0/0$; implementations define its output as 0.
#
# ### The lab's question, counted
#
# How often does a row's maximum grow at block size 2? A row has 6 key blocks; after the
# first, the maximum grows when a block holds a score above all earlier ones:


# %%
grew = np.zeros(len(Q), dtype=int)
for step in tiled_attention_steps(Q, K, V, block_size=2):
    grew[step.rows] += (step.rescale[:, 0] > 0) & (step.rescale[:, 0] < 1)
print("times each query's maximum grew after its first key block:", grew)
print(f"in all {grew.sum()} of {len(Q) * 5} later blocks, {grew.mean():.2f} per row")
print(f"scores in random order would give 1/2 + ... + 1/6 = {sum(1 / k for k in range(2, 7)):.2f}")
