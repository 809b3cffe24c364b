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
# # 09 · Positions: how word order enters attention
#
# Notebook 07 proved that attention does not see word order, yet "dog bites man" and "man bites
# dog" mean different things. This notebook shows the four ways models put positions back, each
# a small change to the dot product $q \cdot k$: a learned table added to the embeddings, a
# fixed table of sines and cosines (Vaswani et al. 2017), rotations of $q$ and $k$ (RoPE, Su et
# al. 2021), and a bias added to the scores (ALiBi, Press et al. 2022).
#
# **Learning goals.** After this notebook you can
#
# 1. say why attention needs positions, and where each scheme puts them (embeddings, $q$ and
#    $k$, or the scores);
# 2. read the learned position table of a trained model, and say what it cannot do past its
#    length;
# 3. build the sinusoidal table and show that $PE(i) \cdot PE(j)$ depends on $i - j$ only;
# 4. rotate queries and keys with RoPE, derive that the score depends on the contents and on
#    $i - j$ only, and tell the two pairings in use apart;
# 5. compute ALiBi's slopes and add its bias to the scores as an additive mask (notebook 06);
# 6. say what each scheme does at lengths it never saw in training.


# %%
import matplotlib.pyplot as plt
import numpy as np

from attnlib import softmax  # the reference softmax of notebook 05

np.set_printoptions(precision=4, suppress=True, linewidth=88)

SEED = 9
rng = np.random.default_rng(SEED)


# %% [markdown]
# ## Why positions
#
# Recall notebook 07's proof in one cell: give three words random embeddings and one attention
# head, and compare the output for "dog" in "dog bites man" and in "man bites dog".


# %%
d_model = d_k = 8
embedding = {w: rng.normal(size=d_model) for w in ["dog", "bites", "man"]}
W_Q, W_K, W_V = (rng.normal(size=(d_model, d_k)) / np.sqrt(d_model) for _ in range(3))


def attention_output(words):
    X = np.array([embedding[w] for w in words])
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    return softmax(Q @ K.T / np.sqrt(d_k)) @ V


a = attention_output(["dog", "bites", "man"])
b = attention_output(["man", "bites", "dog"])
print("output for 'dog', dog bites man:", a[0])
print("output for 'dog', man bites dog:", b[2])
print("the same:", np.allclose(a[0], b[2]))


# %% [markdown]
# The score of query $i$ against key $j$ is $q_i \cdot k_j = (x_i W_Q) \cdot (x_j W_K)$: it
# sees the two words, never where they stand. For order to matter, position must reach the
# score. There are three places to put it:
#
# | where | how | scheme |
# | --- | --- | --- |
# | the embeddings $x_i$ | add a vector $p_i$ per position | learned table (BERT, GPT-2), sinusoidal (the original Transformer) |
# | the queries and keys | rotate $q_i$ and $k_j$ by angles proportional to $i$ and $j$ | RoPE (LLaMA, Mistral, Qwen and most models since 2023) |
# | the scores | add a bias that depends on $i - j$ | ALiBi (BLOOM, MPT) |


# %% [markdown]
# ## Learned absolute positions: a trained model's table
#
# The simplest idea: a table $P$ with one trainable row per position, added to the token
# embeddings, $x_i + P_i$. The trained model of notebook 13 (all-MiniLM-L6-v2, a 6-layer BERT
# encoder) does this. Here is its table, read from the real weights:


# %%
from attnlib.pretrained import load_minilm

model = load_minilm()
P = model.position_embeddings.astype(np.float64)
print("position table P, shape", P.shape, "(positions, d_model)")
print(f"inputs are cut at {model.config.max_seq_length} tokens (the table keeps 512 BERT rows)")
print("norm of rows 0, 1, 2, 100, 511:", np.linalg.norm(P[[0, 1, 2, 100, 511]], axis=1).round(2))


# %% [markdown]
# What structure did training give these 512 vectors? Nobody told the model that position 7 is
# next to position 8. The cosine similarity $\cos(P_i, P_j) = P_i \cdot P_j / (|P_i|\,|P_j|)$
# of every pair answers it (the cell that draws the picture below is collapsed):


# %%
unit = P / np.linalg.norm(P, axis=1, keepdims=True)
cos = unit @ unit.T  # (512, 512)
for distance in [1, 4, 16, 64, 256]:
    print(f"mean cosine of positions {distance:3d} apart: {np.diagonal(cos, distance).mean():.2f}")


# %% jupyter={"source_hidden": true}
fig, (ax_map, ax_line) = plt.subplots(1, 2, figsize=(12, 4.8), width_ratios=[1, 1.3])
image = ax_map.imshow(cos, cmap="RdBu_r", vmin=-1, vmax=1)
fig.colorbar(image, ax=ax_map, fraction=0.046, label="cosine similarity")
ax_map.set_title("cos(P_i, P_j) of the learned table")
ax_map.set_xlabel("position j")
ax_map.set_ylabel("position i")
distances = np.arange(1, 512)
ax_line.plot(distances, [np.diagonal(cos, r).mean() for r in distances])
ax_line.axhline(0, color="grey", lw=0.8)
ax_line.set_xscale("log")
ax_line.set_xticks([1, 4, 16, 64, 256], ["1", "4", "16", "64", "256"])
ax_line.xaxis.set_minor_locator(plt.NullLocator())
ax_line.set_xlabel("distance |i - j| (log scale)")
ax_line.set_ylabel("mean cosine similarity")
ax_line.set_title("neighbours are alike; far positions are not")
fig.subplots_adjust(wspace=0.45)
plt.show()


# %% [markdown]
# *Figure:* Left, a heatmap of the cosine similarity between all 512 learned position rows, high
# along the diagonal; right, its mean against distance (log scale), falling towards 0.
#
# Training found the order by itself: each position resembles its neighbours, and the
# resemblance fades with distance (row 0, the position of the `[CLS]` token that starts every
# input, stands apart, with a norm five times the others). But a learned table has exactly one
# row per position it was built with, and nothing beyond: this model cannot read a 513th token.


# %%
try:
    model.embed(np.zeros((1, 513), dtype=int))
except ValueError as err:
    print("ValueError:", err)


# %% [markdown]
# ## Sinusoidal positions (Vaswani et al. 2017, §3.5)
#
# The original Transformer adds a fixed table instead, with no parameters, built from pairs of
# sines and cosines at geometrically spaced frequencies $\theta_m = 10000^{-2m/d}$:
#
# $$PE(p)_{2m} = \sin(p\,\theta_m), \qquad PE(p)_{2m+1} = \cos(p\,\theta_m), \qquad
# m = 0, \dots, d/2 - 1.$$
#
# Pair 0 turns by one radian per position (a wavelength of $2\pi$). The last pair,
# $m = d/2 - 1$, turns by $\theta = 10000^{-(d-2)/d}$: for the $d = 16$ table below
# $10000^{-7/8} \approx 3.2 \times 10^{-4}$ radians, a wavelength of $2\pi \cdot 3162$
# positions. ($2\pi \cdot 10000$ is only the limit as $d$ grows.)


# %%
from attnlib.positions import sinusoidal

T, d = 64, 16
theta = 10000.0 ** (-np.arange(0, d, 2) / d)  # one frequency per pair, (d/2,)
angles = np.arange(T)[:, None] * theta[None, :]  # (T, d/2)
PE = np.empty((T, d))
PE[:, 0::2], PE[:, 1::2] = np.sin(angles), np.cos(angles)
print("theta:", theta)
print(f"last pair: a wavelength of 2 pi x {1 / theta[-1]:,.0f} positions")
print("equals attnlib.positions.sinusoidal:", np.allclose(PE, sinusoidal(T, d)))


# %% [markdown]
# The paper chose it because "for any fixed offset $k$, $PE_{pos+k}$ can be represented as a
# linear function of $PE_{pos}$". With the sum formulas for sine and cosine, each pair moves by a
# rotation that depends on $k$ only:
#
# $$\begin{pmatrix} \sin((p+k)\theta_m) \\ \cos((p+k)\theta_m) \end{pmatrix} =
# \begin{pmatrix} \cos k\theta_m & \sin k\theta_m \\ -\sin k\theta_m & \cos k\theta_m
# \end{pmatrix} \begin{pmatrix} \sin p\theta_m \\ \cos p\theta_m \end{pmatrix},$$
#
# and so the dot product of two positions depends on their offset only:
# $PE(i) \cdot PE(j) = \sum_m \cos((i - j)\,\theta_m)$. (The pictures of the table and of that
# dot product are drawn by a collapsed cell.)


# %%
p, k = 5, 3
c, s = np.cos(k * theta), np.sin(k * theta)
moved = np.empty(d)
moved[0::2] = c * PE[p, 0::2] + s * PE[p, 1::2]
moved[1::2] = -s * PE[p, 0::2] + c * PE[p, 1::2]
print(f"PE({p} + {k}) is the rotation of PE({p}):", np.allclose(moved, PE[p + k]))

G = PE @ PE.T
print("PE(10) . PE(7) =", round(G[10, 7], 4), "  PE(40) . PE(37) =", round(G[40, 37], 4))
print("sum of cos(3 theta_m) =", round(np.cos(3 * theta).sum(), 4))


# %% jupyter={"source_hidden": true}
fig, (ax_table, ax_dot) = plt.subplots(1, 2, figsize=(12, 4.6))
image = ax_table.imshow(PE, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
fig.colorbar(image, ax=ax_table, fraction=0.046)
ax_table.set_title("the table PE: sin on even, cos on odd columns")
ax_table.set_xlabel("coordinate (pairs of fast to slow frequency)")
ax_table.set_ylabel("position p")
image = ax_dot.imshow(G, cmap="viridis")
fig.colorbar(image, ax=ax_dot, fraction=0.046)
ax_dot.set_title("PE(i) . PE(j): constant along each diagonal")
ax_dot.set_xlabel("position j")
ax_dot.set_ylabel("position i")
fig.subplots_adjust(wspace=0.3)
plt.show()


# %% [markdown]
# *Figure:* Left, the 64 × 16 sinusoidal table, fast-turning coordinate pairs on the left and slow
# ones on the right; right, the dot products $PE(i) \cdot PE(j)$, constant along every diagonal.
#
# <details>
# <summary>Depth: the added table does not make the score relative</summary>
#
# The table is added to the embeddings, so the score is
# $(x_i + PE_i) W_Q W_K^\top (x_j + PE_j)^\top$: a content term, a pure position term
# $PE_i W_Q W_K^\top PE_j^\top$ and two cross terms that mix the word at $i$ with the absolute
# position $j$. Only $PE_i \cdot PE_j$ itself is a function of $i - j$; the paper's argument is
# that a model *can easily learn* relative attention, not that it gets it for free. RoPE, next,
# makes the score relative by construction.
#
# </details>


# %% [markdown]
# ## Rotary position embedding, RoPE (Su et al. 2021)
#
# RoPE moves the position out of the embeddings and into the queries and keys themselves.
# Split $q$ into $d/2$ pairs and rotate pair $m$ of the vector at position $p$ by the angle
# $p\,\theta_m$ (the same frequencies as above). Written as a complex number
# $z_m = q_{2m} + i\, q_{2m+1}$, the rotation is one multiplication:
#
# $$f(q, p)_m = z_m\, e^{i p \theta_m}, \qquad
# \begin{pmatrix} a \\ b \end{pmatrix} \mapsto
# \begin{pmatrix} a\cos p\theta_m - b \sin p\theta_m \\ a \sin p\theta_m + b\cos p\theta_m
# \end{pmatrix}.$$
#
# The dot product of two real vectors is the real part of $\sum_m z_m \overline{w_m}$. Rotate the
# query by $i$ and the key by $j$:
#
# $$f(q, i) \cdot f(k, j) = \mathrm{Re} \sum_m z_m e^{i i\theta_m}\, \overline{w_m e^{i j
# \theta_m}} = \mathrm{Re} \sum_m z_m \overline{w_m}\, e^{i (i - j)\theta_m}.$$
#
# The two absolute angles meet as one difference: the score depends on the contents $q, k$ and
# on the offset $i - j$ only. In the paper's pairing, coordinates $(2m, 2m+1)$, in plain numpy
# (pair 0 turns by $\theta_0 = 1$ radian per position, so $(1, 0)$ at position $p$ becomes
# $(\cos p, \sin p)$):


# %%
from attnlib.positions import rope


def rope_by_hand(x, positions, base=10000.0):
    """Rotate each pair (2m, 2m+1) of the rows of x (T, d) by positions[t] * theta_m."""
    d = x.shape[-1]
    angle = positions[:, None] * base ** (-np.arange(0, d, 2) / d)  # (T, d/2)
    a, b = x[:, 0::2], x[:, 1::2]
    out = np.empty_like(x)
    out[:, 0::2] = a * np.cos(angle) - b * np.sin(angle)
    out[:, 1::2] = a * np.sin(angle) + b * np.cos(angle)
    return out


x = rng.normal(size=(6, 8))
print("equals attnlib.positions.rope:", np.allclose(rope_by_hand(x, np.arange(6)), rope(x)))


# %% [markdown]
# ### Exercise: rotate one pair
#
# Rotate the pair $(a, b) = (1, 2)$ at position $p = 3$ with the frequency $\theta = 0.5$ radian
# per position. Give the two numbers as a list. Stuck? `ch09.rope_pair.hint()`, or
# `ch09.rope_pair.solution()`.


# %%
from attnlib.exercises import ch09

rotated_pair = ...  # [first, second]
ch09.rope_pair.check(rotated_pair)


# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):


# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
angle_solution = 3 * 0.5
ch09.rope_pair.check_solution(
    [
        1.0 * np.cos(angle_solution) - 2.0 * np.sin(angle_solution),
        1.0 * np.sin(angle_solution) + 2.0 * np.cos(angle_solution),
    ]
)


# %% [markdown]
# Now the law itself, in numbers: one query and one key, placed at the same offset $i - j = 3$
# at three places in a long text.


# %%
q, k = rng.normal(size=8), rng.normal(size=8)
print(f"no rotation: q . k = {q @ k:.6f}")
for i, j in [(5, 2), (105, 102), (1005, 1002), (2, 5)]:
    score = rope(q[None], [i])[0] @ rope(k[None], [j])[0]
    print(f"query at {i:4d}, key at {j:4d}, offset {i - j:+d}: score {score:.6f}")


# %% [markdown]
# ### Exercise: the score depends on $i - j$ only
#
# Write `my_rope_score(q, k, i, j)`: rotate `q` at position `i` and `k` at position `j` (pairs
# $(2m, 2m+1)$, $\theta_m = 10000^{-2m/d}$) in your own numpy, and return their dot product.
# The check runs it on four placements, two of them at the same offset a hundred positions
# apart, and recognises the usual slips (rotating only $q$, turning $k$ the wrong way, the other
# pairing, a missing 2 in the exponent). Stuck? `ch09.rope_score.hint()`, or
# `ch09.rope_score.solution()`.


# %%
def my_rope_score(q, k, i, j):
    raise NotImplementedError  # replace this line with your code


ch09.rope_score.check(my_rope_score)


# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):


# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
def rope_score_solution(q, k, i, j):
    d = q.shape[-1]
    theta_m = 10000.0 ** (-np.arange(0, d, 2) / d)

    def rotate(x, p):
        a, b = x[0::2], x[1::2]
        out = np.empty(d)
        out[0::2] = a * np.cos(p * theta_m) - b * np.sin(p * theta_m)
        out[1::2] = a * np.sin(p * theta_m) + b * np.cos(p * theta_m)
        return out

    return rotate(q, i) @ rotate(k, j)


ch09.rope_score.check_solution(rope_score_solution)


# %% [markdown]
# A rotation keeps every vector's length, so notebook 02's $\sqrt{d_k}$ still applies, and Su et
# al. bound the score by a quantity that decays as $|i - j|$ grows: the optional section checks
# both.


# %% [markdown]
# ### Two pairings, two sets of numbers
#
# The paper pairs neighbouring coordinates $(2m, 2m+1)$. Much code (GPT-NeoX, and LLaMA's
# Hugging Face port) pairs the first half with the second, $(m, m + d/2)$, with a
# `rotate_half` function. Both are RoPE, with the same law, but they are not the same function:
# the same weights give different scores. Weights converted from one layout to the other must
# have their query and key columns permuted, taking column $2m$ to $m$ and $2m+1$ to $m + d/2$.


# %%
X6 = rng.normal(size=(6, d_model))
Q6, K6 = X6 @ W_Q, X6 @ W_K
interleaved = rope(Q6) @ rope(K6).T
halves = rope(Q6, pairs="halves") @ rope(K6, pairs="halves").T
print("same weights, the two pairings give the same scores:", np.allclose(interleaved, halves))
print(f"largest difference: {np.abs(interleaved - halves).max():.2f}")

perm = np.concatenate([np.arange(0, d_k, 2), np.arange(1, d_k, 2)])  # 0 2 4 6 1 3 5 7
print("column order for the halves layout:", perm)
Q6p, K6p = X6 @ W_Q[:, perm], X6 @ W_K[:, perm]  # the permuted weights' queries and keys
halves_permuted = rope(Q6p, pairs="halves") @ rope(K6p, pairs="halves").T
print("after permuting W_Q and W_K, the same:", np.allclose(interleaved, halves_permuted))


# %% [markdown]
# ### Exercise: which pairing is this?
#
# A snippet from a model's code (`theta` holds one frequency per pair, shape $(d/2,)$):
#
# ```python
# def rotate_half(x):
#     x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
#     return np.concatenate([-x2, x1], axis=-1)
#
# freqs = np.concatenate([theta, theta])        # theta: one frequency per pair, (d/2,)
# angles = positions[:, None] * freqs[None, :]  # (T, d)
# q_rot = q * np.cos(angles) + rotate_half(q) * np.sin(angles)
# ```
#
# Which coordinates does it rotate together? **(a)** the interleaved pairs $(2m, 2m+1)$, as in
# the RoFormer paper; **(b)** the halves $(m, m + d/2)$, as in GPT-NeoX-style code; **(c)**
# neither: it is not a rotation. Answer with the letter. Stuck? `ch09.pairing.hint()`.


# %%
which_pairing = ...  # "a", "b" or "c"
ch09.pairing.check(which_pairing)


# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):


# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
ch09.pairing.check_solution("b")


# %% [markdown]
# ## ALiBi: a bias on the scores (Press et al. 2022)
#
# ALiBi leaves $q$ and $k$ alone and adds a penalty that grows with the distance, a different
# slope $m_h$ per head:
#
# $$A_h = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}} + B_h + M\right),
# \qquad (B_h)_{ij} = -m_h\,(i - j) \ \text{ for } j \le i,$$
#
# with $M$ the causal mask of notebook 06 ($0$ or $-\infty$). So ALiBi *is* an additive mask,
# with finite entries: 06's $-\infty$ removes a key, ALiBi's $-m_h (i - j)$ only discounts it.
# For $H$ heads, $H$ a power of two, the slopes are the geometric sequence
# $m_h = 2^{-8h/H}$, $h = 1, \dots, H$. For other $H$ the paper takes the slopes of the largest
# power of two $n$ below $H$, then every other slope of $2n$ heads (the ones not yet taken) until
# it has $H$.


# %% [markdown]
# ### Exercise: ALiBi's slopes for 8 and for 12 heads
#
# Give the 8 slopes of an 8-head model, then the 12 slopes of a 12-head model, each as a list or
# array in head order (the hidden cell under each answer holds its solution). Stuck?
# `ch09.alibi_slopes_8.hint()`, `ch09.alibi_slopes_12.solution()`.


# %%
slopes_8 = ...  # 8 numbers
ch09.alibi_slopes_8.check(slopes_8)


# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
ch09.alibi_slopes_8.check_solution(2.0 ** (-8 * np.arange(1, 9) / 8))


# %%
slopes_12 = ...  # 12 numbers
ch09.alibi_slopes_12.check(slopes_12)


# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
eight_slopes, sixteen_slopes = 2.0 ** -np.arange(1, 9), 2.0 ** (-8 * np.arange(1, 17) / 16)
ch09.alibi_slopes_12.check_solution(np.concatenate([eight_slopes, sixteen_slopes[0::2][:4]]))


# %% [markdown]
# The bias for a 6-token sentence, and its effect on one head's weights (a collapsed cell
# draws three heads' biases):


# %%
from attnlib import causal_mask
from attnlib.positions import alibi_bias, alibi_slopes

slopes = alibi_slopes(8)
print("slopes of 8 heads:", slopes)
bias = alibi_bias(8, 6)  # (heads, T_q, T_k) = -m_h |i - j|
print("head 0 (slope 1/2), the bias:\n", bias[0])

scores6 = Q6 @ K6.T / np.sqrt(d_k)
M = np.where(causal_mask(6), 0.0, -np.inf)  # notebook 06's additive mask
for h in [0, 7]:
    weights = softmax(scores6 + bias[h] + M)
    print(f"head {h} (slope {slopes[h]:.4f}), weights of the last token:", weights[5])


# %% jupyter={"source_hidden": true}
fig, axes = plt.subplots(1, 3, figsize=(11, 3.6))
for ax, h in zip(axes, [0, 3, 7]):
    image = ax.imshow(np.where(causal_mask(6), bias[h], np.nan), cmap="Reds_r", vmin=-2.5, vmax=0)
    ax.set_title(f"head {h}: slope {slopes[h]:.4g}")
    ax.set_xlabel("key j")
    ax.set_ylabel("query i")
fig.colorbar(image, ax=axes, fraction=0.03, label="bias -m (i - j)")
plt.show()


# %% [markdown]
# *Figure:* The ALiBi bias on 6 × 6 causal grids for heads 0, 3 and 7: it falls linearly with
# distance, steeply for head 0, barely for head 7.

# %% [markdown]
# ## Past the training length
#
# A learned table stops at its last row. The other schemes compute any position, but a model has
# only seen the values that occurred in training:
#
# - **Sinusoidal** positions exist for every $p$, and $PE(i) \cdot PE(j)$ still depends on
#   $i - j$ only. But the vectors added to the embeddings are new: the slow pairs reach angles
#   they never had, and $W_Q$, $W_K$ meet inputs unlike any they were trained on (the cell
#   below). Vaswani et al. hoped the sinusoids "may allow the model to extrapolate to sequence
#   lengths longer than the ones encountered during training"; measured, they do not: Press et
#   al. (2022, Figure 1) found the perplexity of sinusoidal models rising steeply past their
#   training length of 512 or 1,024 tokens.
# - **ALiBi** meets nothing new at a long distance: the bias continues the same straight line,
#   and a key far back is simply discounted more. Each head sees a soft window: a bias of
#   $-10$ cuts a key's weight by $e^{10} \approx 22{,}000$ (notebook 04), reached at distance
#   $10 / m_h$. Press et al. trained at 1024 tokens and evaluated at longer inputs with little
#   loss; that is the paper's point ("train short, test long").
# - **RoPE** at a new position gives its slow pairs angles they never had in training, and
#   quality typically collapses. **Position interpolation** (Chen et al. 2023) squeezes the
#   positions back into the trained range; the optional section puts numbers on both.


# %%
PE_long = sinusoidal(1024, d)  # the d = 16 table again, if the model trained on 64 positions
print(f"slowest pair's sine: at most {PE[:, -2].max():.3f} in the 64 trained positions")
for pos in (64, 256, 1023):
    gap = np.linalg.norm(PE - PE_long[pos], axis=1).min()  # to the nearest trained row
    print(f"position {pos:4d}: its sine {PE_long[pos, -2]:.3f}, nearest trained row {gap:.2f} away")
print(f"(neighbouring rows are {np.linalg.norm(PE[1] - PE[0]):.2f} apart)")
print("ALiBi, 8 heads: distance at which the bias reaches -10:", np.round(10 / slopes).astype(int))


# %% [markdown]
# ## The positions lab
#
# One query and one key of a sentence, moved apart: the left panel draws their score against the
# offset $i - j$, the right panel the attention pattern of the whole sentence. Choose the
# **scheme**, drag the **offset**, and for the sinusoidal and RoPE schemes the **base** of the
# frequencies (smaller = faster turning), for ALiBi the **head** (its slope).
#
# Things to try: with "none", the score is a flat line and the two "the"s get identical columns.
# With RoPE, the score wiggles with the offset wherever the pair sits; shrink the base to 10 and
# it turns faster. With ALiBi, which of heads 1 and 8 looks only at its neighbours?
#
# (Without a running kernel, for example on GitHub, you see a picture of the lab's first state.)


# %% tags=["nbval-ignore-output"]
from attnlib.labs import positions_lab

positions_lab()


# %% [markdown]
# ## Check yourself
#
# 1. A model with a learned table of 512 rows gets a 600-token input. What happens, and what
#    would a RoPE model do instead?
# 2. RoPE rotates $q$ at $i$ and $k$ at $j$. Why does the KV cache not have to re-rotate the
#    old keys when a new token arrives?
# 3. A colleague loads RoPE weights trained with the halves pairing into code with the
#    interleaved pairing. Does it crash? What goes wrong, and what is the fix?
#
# <details>
# <summary>Answers</summary>
#
# 1. It has no row 512 and beyond: the model refuses (as MiniLM did above) or, in code without
#    the check, indexes out of range. A RoPE model computes the angles for any position, but
#    the slow pairs get angles never seen in training and quality drops; position
#    interpolation squeezes the positions back into the trained range.
# 2. The score depends on $i - j$ only: a key rotated once at its own position $j$ gives the
#    right score against a query at any later position $i$, because the query carries its own
#    rotation.
# 3. No crash: the shapes are the same. But every score is different (the same weights give other
#    numbers under the other pairing, as shown above), so the model's output is garbage. Permute
#    the columns of $W_Q$ and $W_K$ (column $2m \to m$, $2m+1 \to m + d/2$, or the inverse) when
#    converting.
#
# *The lab's questions.* Head 1 (slope 1/2) looks at its neighbours: a key 6 positions back loses
# $e^{3} \approx 20$ times its weight. Head 8 (slope 1/256) barely discounts anything in a
# sentence this short.
#
# </details>


# %% [markdown]
# ## Summary
#
# - Position must reach the score $q_i \cdot k_j$, or "dog bites man" is "man bites dog".
# - A **learned table** (MiniLM: 512 x 384) adds a trained vector per position; training makes
#   neighbours alike, and there is no row past the last.
# - **Sinusoidal** (Vaswani et al. 2017): $\sin/\cos(p\,\theta_m)$, $\theta_m = 10000^{-2m/d}$;
#   a shift is a rotation per pair, and $PE(i) \cdot PE(j)$ depends on $i - j$ only. Past the
#   training length its slow pairs take new values, and the model degrades.
# - **RoPE** (Su et al. 2021): rotate pair $m$ of $q$ and $k$ by $p\,\theta_m$; the score depends
#   on the contents and $i - j$ only, and the KV cache stores keys rotated at their own
#   position. The interleaved and halves pairings differ unless $W_Q$, $W_K$ are permuted.
# - **ALiBi** (Press et al. 2022): add $-m_h (i - j)$ to the scores, $m_h = 2^{-8h/H}$: an
#   additive mask with finite entries, which runs past the training length unchanged; a
#   learned table stops there, and RoPE needs help such as position interpolation.
#
# **Next:** [10 · The cost of attention, and computing it in tiles](10_cost_and_tiling.ipynb),
# or first the optional section below.


# %% [markdown]
# ## Optional: RoPE in a KV cache, and three checks from the papers
#
# How a KV cache stores RoPE keys; RoPE and notebook 02's variance; the bound behind RoPE's
# long-distance decay; and what RoPE meets past its training length.


# %% [markdown]
# ### RoPE and the KV cache
#
# Notebook 08 keeps the keys of past tokens in a KV cache. With RoPE the cache stores each key
# **already rotated at its own position**: a key never moves again, because the law only needs
# the offset, and the new query brings its own position. A new token at position $t$ rotates
# its query by $t$ and scores it against the cached keys as they are:


# %%
K_cache = rope(K6[:5])  # keys of positions 0..4, rotated once when they were computed
q_new = rope(Q6[5:], positions=[5])  # the new token's query, at its own position 5
print("cached step's scores:", (q_new @ K_cache.T)[0])
print("full computation, row 5:", interleaved[5, :5])
print("the same:", np.allclose(q_new @ K_cache.T, interleaved[5:, :5]))


# %% [markdown]
# ### RoPE keeps notebook 02's variance
#
# A rotation keeps every vector's length, and a rotated standard normal vector is again standard
# normal, so notebook 02's $\mathrm{Var}(q \cdot k) = d_k$ should still hold and $\sqrt{d_k}$
# is still the right divisor. A Monte Carlo check, every pair at its own random positions up to
# 4096:


# %%
N, d_mc = 20_000, 64
q_mc, k_mc = rng.normal(size=(N, d_mc)), rng.normal(size=(N, d_mc))
pos_q, pos_k = rng.integers(0, 4096, size=N), rng.integers(0, 4096, size=N)
q_rot, k_rot = rope(q_mc, pos_q), rope(k_mc, pos_k)
plain, rotated = np.sum(q_mc * k_mc, axis=-1), np.sum(q_rot * k_rot, axis=-1)
print(f"d_k = {d_mc}; {N:,} pairs")
print(f"Var(q . k) without RoPE: {plain.var():.1f}")
print(f"Var(q . k) with RoPE:    {rotated.var():.1f}")
norms_kept = np.allclose(np.linalg.norm(q_rot, axis=1), np.linalg.norm(q_mc, axis=1))
print("every rotated query keeps its norm:", norms_kept)


# %% [markdown]
# Both are $d_k = 64$ up to the Monte Carlo error (about $64 \sqrt{2/N} \approx 0.6$ here).


# %% [markdown]
# ### RoPE's long-distance decay
#
# Su et al. bound the size of the score as the offset $r = i - j$ grows. Summing by parts over
# the pairs, $|\sum_m h_m e^{i r\theta_m}| \le (\max_m |h_{m+1} - h_m|) \sum_{m} |S_m|$ with
# $S_m = \sum_{l < m} e^{i r \theta_l}$, and the "relative upper bound"
# $\frac{1}{d/2}\sum_m |S_m|$ falls as $r$ grows (their Figure 2, $d = 128$). It is a bound, not
# the score: a particular $(q, k)$ can still attend strongly far away.


# %%
r = np.arange(0, 257)
theta_128 = 10000.0 ** (-np.arange(0, 128, 2) / 128)
S = np.cumsum(np.exp(1j * r[:, None] * theta_128[None, :]), axis=1)  # (R, 64)
bound = np.abs(S).mean(axis=1)
print("relative upper bound at r = 0, 10, 50, 250:", bound[[0, 10, 50, 250]].round(1))

fig, ax = plt.subplots(figsize=(7, 3.2))
ax.plot(r, bound)
ax.set_xlabel("relative distance r = i - j")
ax.set_ylabel("relative upper bound")
ax.set_title("RoPE's long-distance decay (d = 128, base 10000)")
plt.show()


# %% [markdown]
# *Figure:* RoPE's relative upper bound against the distance $r$ from 0 to 256: it drops from 32.5
# to 18 by $r = 10$, then wavers slowly down to 6.5 at $r = 250$.

# %% [markdown]
# ### RoPE past its training length, and position interpolation
#
# A model trained on $L$ tokens saw the slowest pair turn by at most $L\,\theta_{\min}$; past $L$
# the score meets new rotations. Position interpolation (Chen et al. 2023) divides the positions
# by $L'/L$, so a text of length $L'$ uses only the angles of the trained range, at fractional
# positions; with a short fine-tuning (about 1000 steps in the paper) the model then reads the
# longer inputs. The price: neighbouring tokens are now $L/L'$ apart, closer than any two tokens
# in training.


# %%
L, L_long, d_head = 2048, 8192, 128
theta_min = 10000.0 ** (-(d_head - 2) / d_head)  # the slowest pair
print(f"slowest pair of RoPE (d = {d_head}): {theta_min:.2e} radians per position")
print(f"largest angle seen in training (L = {L}):          {L * theta_min:.3f}")
print(f"largest angle at L' = {L_long}, positions as they are: {L_long * theta_min:.3f}")
interpolated = np.arange(L_long) * L / L_long
print(f"largest angle at L' = {L_long}, interpolated:         {interpolated.max() * theta_min:.3f}")
