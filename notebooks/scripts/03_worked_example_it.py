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
# # 03 · The worked example: what does "it" attend to?
#
# A customer writes *"My order was late and it was cold."* The word "it" means nothing on its
# own; it borrows its meaning from an earlier word. Attention resolves that borrowing with
# numbers: one weight per (query token, key token) pair. In this notebook you trace those
# numbers by hand on a sentence small enough to check with pencil and paper, the four tokens
#
# $$\text{Order} \quad \text{was} \quad \text{late} \quad \text{it}$$
#
# with $d_\text{model} = d_k = d_v = 4$ and hand-picked (not learned) weight matrices, exactly
# as in the source lesson (seed 000). Then you do the same for the two-token example and two
# exercises of seed 004.
#
# **Learning goals.** After this notebook you can
#
# 1. compute $Q = XW_Q$, $K = XW_K$, $V = XW_V$ and one row of
#    $\mathrm{softmax}(QK^\top/\sqrt{d_k})\,V$ by hand, and say what every number means;
# 2. explain what the $1/\sqrt{d_k}$ scale does to the weights even at $d_k = 4$;
# 3. prove that two tokens with equal keys always receive equal weight, for every query;
# 4. carry full precision through a calculation and round once, at the end, and recognise the
#    errors that come from rounding too early (the source texts contain three of them).

# %%
import matplotlib.pyplot as plt
import numpy as np

from attnlib import examples, softmax
from attnlib.heatmap import attention_heatmap

np.set_printoptions(precision=4, suppress=True)


def show(v, fmt="{:.4f}"):
    """A vector as '[a, b, c]' with a fixed format: how the source texts print them."""
    return "[" + ", ".join(fmt.format(x) for x in np.ravel(v)) + "]"


# %% [markdown]
# ## 1. The data: four tokens, three projections
#
# Each token is a row of $X \in \mathbb{R}^{T \times d_\text{model}}$. Every token passes
# through all three projections:
#
# $$Q = X W_Q \in \mathbb{R}^{T\times d_k}, \qquad K = X W_K \in \mathbb{R}^{T\times d_k},
# \qquad V = X W_V \in \mathbb{R}^{T\times d_v}.$$
#
# Row $i$ of $Q$ is what token $i$ is looking for; row $j$ of $K$ is what token $j$ offers to be
# matched on; row $j$ of $V$ is what token $j$ hands over if it is picked.

# %%
tokens = examples.ORDER_TOKENS
X, W_Q, W_K, W_V = examples.ORDER_X, examples.ORDER_W_Q, examples.ORDER_W_K, examples.ORDER_W_V

Q = X @ W_Q
K = X @ W_K
V = X @ W_V

print("tokens:", tokens)
print("X =\n", X)
print("Q = X @ W_Q =\n", Q)
print("K = X @ W_K =\n", K)
print("V = X @ W_V =\n", V)

# %% [markdown]
# The lesson prints these three matrices. Here they are as the text gives them, compared
# entry by entry with what we just computed:

# %%
Q_text = np.array([[2, 0, 1, 1], [0, 1, 1, 1], [1, 1, 0, 1], [1, 0, 2, 1]])
K_text = np.array([[1, 1, 2, 0], [1, 1, 0, 2], [1, 1, 1, 1], [1, 1, 1, 1]])
V_text = np.array([[2, 0, 3, 1], [1, 1, 0, 1], [2, 1, 0, 1], [1, 0, 3, 1]])

for name, ours, text in (("Q", Q, Q_text), ("K", K, K_text), ("V", V, V_text)):
    print(f"{name} equals the text's {name}: {np.array_equal(ours, text)}")

# %% [markdown]
# Notice already: the keys of "late" and "it" are the **same vector**, $[1, 1, 1, 1]$. Keep
# that in mind for section 6.

# %% [markdown]
# ## 2. The query of "it" against every key, term by term
#
# The raw score of query $i$ against key $j$ is the dot product
#
# $$s_{ij} = q_i \cdot k_j = \sum_{m=1}^{d_k} q_{im}\, k_{jm}.$$
#
# The cell below writes out each dot product for $q_\text{it}$ = `Q[3]` exactly as you would on
# paper; the strings are generated from the arrays, so they cannot disagree with them.


# %%
def expand(q, k):
    """'(q1)(k1)+(q2)(k2)+... = p1+p2+... = sum' for two small integer vectors."""
    pairs = "+".join(f"({a:g})({b:g})" for a, b in zip(q, k))
    products = "+".join(f"{a * b:g}" for a, b in zip(q, k))
    return f"{pairs} = {products} = {q @ k:g}"


it = tokens.index("it")
q_it = Q[it]
print(f"q_it = Q[{it}] = {show(q_it, '{:g}')}")
for j, token in enumerate(tokens):
    print(f"q_it · K_{token:<5} = {expand(q_it, K[j])}")

raw_it = K @ q_it  # all four dot products at once: the row Q[3] @ K.T
print("\nraw scores:", show(raw_it, "{:g}"))

# %% [markdown]
# ## 3. Scale by $\sqrt{d_k}$
#
# $$\tilde s_{ij} = \frac{s_{ij}}{\sqrt{d_k}}, \qquad d_k = 4 \;\Rightarrow\; \sqrt{d_k} = 2.$$

# %%
d_k = K.shape[-1]
scaled_it = raw_it / np.sqrt(d_k)
print("d_k =", d_k, "  sqrt(d_k) =", np.sqrt(d_k))
print("scaled scores:", show(scaled_it, "{:g}"))

# %% [markdown]
# ## 4. Softmax, with and without the scale
#
# $$\mathrm{softmax}(s)_j = \frac{e^{s_j}}{\sum_{l} e^{s_l}}$$
#
# Computed in plain numpy first, then compared with `attnlib.softmax` (which also subtracts the
# row maximum first, a shift that changes no weight).

# %%
w_raw_it = np.exp(raw_it) / np.exp(raw_it).sum()
w_scaled_it = np.exp(scaled_it) / np.exp(scaled_it).sum()

print("softmax(raw)    =", show(w_raw_it))
print("softmax(scaled) =", show(w_scaled_it))
print("sums:", show([w_raw_it.sum(), w_scaled_it.sum()]))
print(
    "agree with attnlib.softmax:",
    np.allclose(w_raw_it, softmax(raw_it)),
    np.allclose(w_scaled_it, softmax(scaled_it)),
)

# %% [markdown]
# Even at $d_k = 4$ the unscaled weights are more concentrated on the top score ("Order").
# The lesson puts it as "53.4% of the weight lands on 'Order' without scaling, versus 38.8%
# with scaling". Let us check both percentages at full precision:

# %%
print(
    f"weight on Order, raw:    {w_raw_it[0]:.8f} = {100 * w_raw_it[0]:.4f}%"
    f" -> {100 * w_raw_it[0]:.1f}%"
)
print(
    f"weight on Order, scaled: {w_scaled_it[0]:.8f} = {100 * w_scaled_it[0]:.4f}%"
    f" -> {100 * w_scaled_it[0]:.1f}%"
)
print(
    f"rounding twice: {w_scaled_it[0]:.8f} -> {w_scaled_it[0]:.4f}"
    f" -> {100 * round(w_scaled_it[0], 4):.1f}%"
)

# %% [markdown]
# The 53.4% is right. The scaled weight is 0.387456, which is **38.7%** to one decimal; the
# text's 38.8% comes from rounding twice (first to 0.3875, then 38.75% up to 38.8%). A tenth of
# a percent changes nothing in the argument, but it is a textbook case of *double rounding*:
# round once, from the full-precision number.

# %% [markdown]
# ## 5. The output: a weighted average of the value rows
#
# $$o_\text{it} = \sum_j w_j\, v_j = w\,V$$

# %%
out_raw_it = w_raw_it @ V
out_scaled_it = w_scaled_it @ V
print("output(raw weights)    =", show(out_raw_it))
print("output(scaled weights) =", show(out_scaled_it))
print("V_Order                =", show(V[0], "{:g}"))
print(
    "distance to V_Order: raw",
    f"{np.linalg.norm(out_raw_it - V[0]):.4f},",
    "scaled",
    f"{np.linalg.norm(out_scaled_it - V[0]):.4f}",
)

# %% [markdown]
# As the lesson says, the unscaled output is pulled harder toward $v_\text{Order} = [2,0,3,1]$
# (it is closer to it): the sharper softmax discards more of the partial evidence from the other
# tokens.
#
# **A first lesson in carrying precision.** The text writes the sum as
# $0.5344\cdot[2,0,3,1] + 0.0723\cdot[1,1,0,1] + \dots = [1.7311, 0.2689, 2.1932, 1.0000]$.
# Taken literally, with the weights rounded to four decimals, that sum is slightly different:

# %%
for label, w in (("raw", w_raw_it), ("scaled", w_scaled_it)):
    print(
        f"{label:>6}: 4-decimal weights @ V = {show(np.round(w, 4) @ V)}"
        f"   full-precision weights @ V = {show(w @ V)}"
    )

# %% [markdown]
# The text's printed results are the full-precision ones (correct); the equation it writes
# beside them, with rounded weights, gives 1.7309, 2.1930, 0.9999 and 1.8675. The rounded
# weights are for reading; the arithmetic must use the unrounded ones.

# %% [markdown]
# ## 6. The lesson's own code, run as written
#
# The text promises that this code "must reproduce these exact numbers" and prints
# `weights[3] = [0.3875 0.1425 0.235  0.235 ]` and `output[3]  = [1.6225 0.3775 1.8674 1.    ]`.
# Here it is, unchanged (it defines its own `scaled_dot_product_attention`, so we keep the
# `attnlib` one under another name for the comparison).

# %%
# ---- seed 000's code block, verbatim ----
import numpy as np

from attnlib import scaled_dot_product_attention as attnlib_attention


def scaled_dot_product_attention(Q, K, V):
    d_k = Q.shape[-1]
    scores = Q @ K.T
    scaled_scores = scores / np.sqrt(d_k)
    weights = np.exp(scaled_scores - scaled_scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights


X = np.array(
    [
        [1, 0, 1, 0],  # "Order"
        [0, 1, 0, 1],  # "was"
        [1, 1, 0, 0],  # "late"
        [0, 0, 1, 1],  # "it"
    ],
    dtype=float,
)

W_Q = np.array([[1, 0, 0, 1], [0, 1, 0, 0], [1, 0, 1, 0], [0, 0, 1, 1]], dtype=float)
W_K = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [0, 1, 1, 0], [1, 0, 0, 1]], dtype=float)
W_V = np.array([[2, 0, 0, 1], [0, 1, 0, 0], [0, 0, 3, 0], [1, 0, 0, 1]], dtype=float)

Q, K, V = X @ W_Q, X @ W_K, X @ W_V
output, weights = scaled_dot_product_attention(Q, K, V)

np.set_printoptions(precision=4, suppress=True)
print("weights[3] =", weights[3])  # attention weights for "it"
print("output[3]  =", output[3])  # context vector for "it"

# %% [markdown]
# Exactly the text's two lines. The text's data are the same as `attnlib.examples`, and its
# function agrees with the tested reference `attnlib.scaled_dot_product_attention` on all four
# rows, and with our hand computation of row 3:

# %%
print(
    "same X, W_Q, W_K, W_V as attnlib.examples:",
    all(
        np.array_equal(a, b)
        for a, b in (
            (X, examples.ORDER_X),
            (W_Q, examples.ORDER_W_Q),
            (W_K, examples.ORDER_W_K),
            (W_V, examples.ORDER_W_V),
        )
    ),
)
ref_output, ref_weights = attnlib_attention(Q, K, V)
print(
    "seed code == attnlib (all rows):",
    np.allclose(weights, ref_weights),
    np.allclose(output, ref_output),
)
print(
    "row 3 == hand computation:",
    np.allclose(weights[3], w_scaled_it),
    np.allclose(output[3], out_scaled_it),
)

# %% [markdown]
# ## 7. Every query at once: the full weight matrix
#
# Row 3 is only one of four. The matrix form computes every token's weights in one line,
# $W = \mathrm{softmax}(QK^\top/\sqrt{d_k})$ row by row, and the picture shows them all:
# queries (who is attending) down the side, keys (who is attended to) across the top.

# %%
weights_raw = softmax(Q @ K.T)  # no scale
weights_scaled = softmax(Q @ K.T / np.sqrt(d_k))  # scaled
print("raw scores Q K^T =\n", Q @ K.T)
print("softmax(Q K^T) =\n", weights_raw)
print("softmax(Q K^T / sqrt(d_k)) =\n", weights_scaled)

fig, axes = plt.subplots(1, 2, figsize=(9.5, 4.2), layout="constrained")
attention_heatmap(
    weights_raw, tokens, tokens, ax=axes[0], fmt="{:.3f}", title=r"raw: softmax$(QK^\top)$"
)
image, _ = attention_heatmap(
    weights_scaled,
    tokens,
    tokens,
    ax=axes[1],
    fmt="{:.3f}",
    title=r"scaled: softmax$(QK^\top/\sqrt{d_k})$",
)
fig.colorbar(image, ax=axes, shrink=0.8, label="attention weight")
plt.show()

# %% [markdown]
# Read the bottom row ("it"): with or without the scale, "it" attends most to "Order". The
# scaled row is visibly flatter. Note also the last two **columns** of every row are equal:
# "late" and "it" always receive the same weight as each other. Why is the next section.
#
# The top two rows are uniform, $0.25$ everywhere, with or without the scale. The lesson does
# not mention them; the scores explain them: every key scores the same against $q_\text{Order}$
# and against $q_\text{was}$, and equal scores give equal weights whatever they are divided by.

# %% [markdown]
# ## 8. Question 4 of the lesson: the query of "late"
#
# Same data, query $q_\text{late}$ = `Q[2]` instead of $q_\text{it}$. The lesson asks for the
# raw and scaled scores, both softmaxes and the scaled output, and which weights are
# guaranteed to stay equal.

# %%
late = tokens.index("late")
q_late = Q[late]
print(f"q_late = Q[{late}] = {show(q_late, '{:g}')}")
for j, token in enumerate(tokens):
    print(f"q_late · K_{token:<5} = {expand(q_late, K[j])}")

raw_late = K @ q_late
scaled_late = raw_late / np.sqrt(d_k)
w_raw_late = np.exp(raw_late) / np.exp(raw_late).sum()
w_scaled_late = np.exp(scaled_late) / np.exp(scaled_late).sum()

print("\nraw scores:     ", show(raw_late, "{:g}"))
print("scaled scores:  ", show(scaled_late, "{:g}"))
print("softmax(raw)   =", show(w_raw_late))
print("softmax(scaled)=", show(w_scaled_late))
print("output(raw weights)    =", show(w_raw_late @ V))
print("output(scaled weights) =", show(w_scaled_late @ V))
print("  (4-decimal weights @ V =", show(np.round(w_scaled_late, 4) @ V) + ")")
print(
    "agrees with attnlib row 2:",
    np.allclose(w_scaled_late, ref_weights[late]),
    np.allclose(w_scaled_late @ V, ref_output[late]),
)

# %% [markdown]
# These are the lesson's numbers: raw $[2, 4, 3, 3]$, scaled $[1, 2, 1.5, 1.5]$, weights
# $[0.0723, 0.5344, 0.1966, 0.1966]$ and $[0.1425, 0.3875, 0.2350, 0.2350]$, output
# $[1.3775, 0.6225, 1.1326, 1.0000]$ (the raw-weight output, which the question does not ask
# for, is printed too). As in section 5, the text's formula with 4-decimal weights would give
# 1.1325 in place of 1.1326.
#
# The lesson says the Order and was weights "have essentially traded places", and calls it "a
# coincidence of this particular toy number set" that the late query reproduces the same
# values 0.1966 and 0.235. It is not quite a coincidence, and the trade is exact. Compare the
# two score vectors:

# %%
print("raw scores of it:  ", show(raw_it, "{:g}"))
print("raw scores of late:", show(raw_late, "{:g}"))
swap = [1, 0, 2, 3]  # exchange the Order and was entries
print("it scores, Order and was swapped, minus 1:", show(raw_it[swap] - 1, "{:g}"))
print(
    "late weights == it weights with Order/was swapped:",
    np.allclose(w_raw_late, w_raw_it[swap]),
    np.allclose(w_scaled_late, w_scaled_it[swap]),
)

# %% [markdown]
# The late scores are the it scores with two entries exchanged, shifted down by 1. Softmax
# ignores a shift added to every score ($e^{s_j - c}/\sum_l e^{s_l - c} = e^{s_j}/\sum_l e^{s_l}$),
# so the weights are an exact permutation of each other. It is still special to these numbers:
# a different query would not give a permutation.
#
# One more remark on the text's answer, offered politely: it says the output's "'late'-weighted
# dimension (index 2) falls from 1.87 to 1.13". The numbers are right, but column 2 of $V$ is
# $[3, 0, 0, 3]$: it is carried by **Order and it**, not by "late" (whose value has a 0 there).
# It falls because the weight on Order falls from 0.3875 to 0.1425. Column 1, $[0, 1, 1, 0]$,
# is carried by was and late, and it rises because the weight on was rises.

# %% [markdown]
# ### Equal keys always get equal weight
#
# The part of the answer that *is* guaranteed: since $k_\text{late} = k_\text{it}$,
#
# $$q \cdot k_\text{late} = q \cdot k_\text{it} \;\text{for every } q
# \quad\Rightarrow\quad
# w_\text{late} = \frac{e^{q\cdot k_\text{late}/\sqrt{d_k}}}{\sum_l e^{q\cdot k_l/\sqrt{d_k}}}
# = w_\text{it}.$$
#
# Let us test it with 10,000 random queries. Not approximately: the two scores are computed from
# identical numbers by identical operations, so even in floating point they come out
# bit-for-bit equal and the difference is exactly zero. (Mathematics guarantees equality; a
# matrix-multiply library that summed the two columns in different orders could in principle
# differ in the last bit, which is why "exactly" is worth checking.) Keys that differ (Order
# and was) give weights that differ.

# %%
rng = np.random.default_rng(2024)
random_queries = rng.normal(scale=2.0, size=(10_000, d_k))
w = softmax(random_queries @ K.T / np.sqrt(d_k))  # shape (10000, 4)

i_order, i_was, i_it = tokens.index("Order"), tokens.index("was"), tokens.index("it")
print("K_late == K_it:", np.array_equal(K[late], K[i_it]))
print("max |w_late - w_it|    over 10,000 queries:", np.abs(w[:, late] - w[:, i_it]).max())
print(
    "max |w_Order - w_was|  over 10,000 queries:",
    f"{np.abs(w[:, i_order] - w[:, i_was]).max():.4f}",
)

# %% [markdown]
# ## 9. Seed 004: the two-token example ($T = 2$, $d_k = 4$, $d_v = 2$)
#
# A second, even smaller example, given directly as $Q$, $K$, $V$.

# %%
Q2, K2, V2 = examples.T2_Q, examples.T2_K, examples.T2_V
S_raw = Q2 @ K2.T
S = S_raw / np.sqrt(Q2.shape[-1])
A = np.exp(S) / np.exp(S).sum(axis=-1, keepdims=True)
out2 = A @ V2

print("S_raw = Q @ K^T =\n", S_raw)
print("S = S_raw / sqrt(4) =\n", S)
print("A = softmax(S) =", "[" + ", ".join(show(row) for row in A) + "]")
print("Output = A @ V =", "[" + ", ".join(show(row) for row in out2) + "]")
print(
    f"token 0 attends {100 * A[0, 0]:.1f}% to itself and {100 * A[0, 1]:.1f}% to token 1;"
    f" token 1 attends {100 * A[1, 1]:.1f}% to itself"
)
ref2, refA = attnlib_attention(Q2, K2, V2)
print("agrees with attnlib:", np.allclose(A, refA), np.allclose(out2, ref2))

# %% [markdown]
# Token 0 attends 88.1% to itself and 11.9% to token 1; token 1 the reverse, as the text says.
# Both rows are the softmax of a gap of 2: $1/(1+e^{-2})$ and $1/(1+e^{2})$.
#
# ### A small lesson in carrying precision
#
# At six decimals the text reports the output as $1.238404$ (top left) and $0.238405$ (bottom
# right). The exact values are different in the sixth decimal:

# %%
print("exact weights:       ", show(A[0], "{:.10f}"))
print("exact output:        ", "[" + ", ".join(show(r, "{:.6f}") for r in out2) + "]")

A_text = np.array(
    [[0.880797, 0.119202], [0.119202, 0.880797]]
)  # the six-decimal weights the text multiplies by
print("text's weights @ V:  ", "[" + ", ".join(show(r, "{:.6f}") for r in A_text @ V2) + "]")

A_rounded = np.round(A, 6)  # rounded properly to six decimals
print("rounded weights:     ", show(A_rounded[0], "{:.6f}"))
print("rounded weights @ V: ", "[" + ", ".join(show(r, "{:.6f}") for r in A_rounded @ V2) + "]")
print(
    f"the text's products: 3 x 0.119202 = {3 * 0.119202:.6f},"
    f" 2 x 0.119202 = {2 * 0.119202:.6f}, 3 x 0.880797 = {3 * 0.880797:.6f}"
)

# %% [markdown]
# What happened: $A_{01} = 1/(1+e^2) = 0.1192029\ldots$. The text wrote it as $0.119202$, which is
# the digits *cut off* (0.119203 would be the rounded value), and then, although it says "full
# precision used in next step", multiplied with that short number. The error in the weight, about
# $10^{-6}$, is multiplied by the values (up to 3), so the sixth decimal of the output is wrong:
# with the text's weights the output is $1.238403$ and $0.238404$ instead of $1.238406$ and
# $0.238406$. (The text's own intermediate products $0.357607$, $0.238405$ and $2.642392$ each
# differ by one in the sixth decimal from the products of its own six-decimal weights, printed in
# the last line above, so its $1.238404$ and $0.238405$ sit between the exact and the cut-off
# computations; either way, the digits were lost by shortening the weights before multiplying.)
# The four-decimal result $[[1.2384, 1.7616], [2.7616, 0.2384]]$ is right either way.
#
# **The rule:** keep full precision in every intermediate step (numpy does this for you), and
# round only what you print.

# %% [markdown]
# ## 10. Seed 004, exercise 1: what the scale does to $e^{s}$
#
# Two vectors with $d_k = 64$ have $q \cdot k = 16$. Scale it and compare the exponentials.

# %%
d_k_ex1, dot = 64, 16.0
scaled_ex1 = dot / np.sqrt(d_k_ex1)
print(
    f"sqrt(d_k) = {np.sqrt(d_k_ex1):g};  scaled score = {dot:g} / {np.sqrt(d_k_ex1):g}"
    f" = {scaled_ex1:g}"
)
print(f"exp({dot:g}) = {np.exp(dot):,.2f}")
print(f"exp({scaled_ex1:g})  = {np.exp(scaled_ex1):.3f}")
print(
    f"the scale shrinks the score by a factor {dot / scaled_ex1:g},"
    f" but exp(score) by a factor {np.exp(dot) / np.exp(scaled_ex1):,.0f}"
    f" = e^{dot - scaled_ex1:g}"
)

# %% [markdown]
# The text's $\exp(16) \approx 8{,}886{,}110$ and $\exp(2) \approx 7.389$ check out. One
# sentence deserves care: "the scaling factor compresses the dynamic range by a factor of
# $\sqrt{d_k}$". That is true of the *scores* (16 becomes 2, a factor 8). What softmax sees is
# $e^{s}$, and there the compression is a factor $e^{16-2} = e^{14} \approx 1.2$ million:
# dividing before exponentiating is a much stronger effect than the factor 8 suggests.

# %% [markdown]
# ## 11. Seed 004, exercise 2: one query over two keys
#
# $q = [1, 2]$, $k_0 = [2, 1]$, $k_1 = [0, 2]$, $v_0 = [10, 0]$, $v_1 = [0, 20]$, with the scale
# taken as $\sqrt{d_k} = \sqrt 4 = 2$ as the exercise states.

# %%
q2, K_two, V_two = examples.TWO_KEY_Q, examples.TWO_KEY_K, examples.TWO_KEY_V
for j in range(2):
    print(f"q · k_{j} = {expand(q2[0], K_two[j])}")
scores_two = q2 @ K_two.T / np.sqrt(examples.TWO_KEY_D_K)
p = softmax(scores_two)
print("scaled scores:", show(scores_two, "{:g}"), "  p =", show(p, "{:.2f}"))
print("output = p @ V =", show(p @ V_two, "{:.1f}"))

# %% [markdown]
# A small inconsistency in the exercise, noted politely: it says $d_k = 4$, but its vectors have
# **two** components, so by the formula $\sqrt{d_k}$ would be $\sqrt 2 \approx 1.414$, not 2.
# Here it does not matter. Both scores are equal ($4 = 4$), and equal scores give a uniform
# softmax whatever they are divided by, so the answer $[5, 10]$ holds for every scale:

# %%
for label, divisor in (
    ("sqrt(4) = 2 (as stated)", 2.0),
    ("sqrt(2) (d_k = len(q))", np.sqrt(q2.shape[-1])),
    ("1, no scale", 1.0),
):
    out_two, p_two = attnlib_attention(q2, K_two, V_two, scale=1 / divisor)
    print(f"{label:<24} p = {show(p_two, '{:.2f}')}  output = {show(out_two, '{:.1f}')}")

# %% [markdown]
# ## Check yourself
#
# 1. Without computing anything new: what weight does the query of "was" give to "late"
#    compared with "it"? And what weights would "it" give if $K_\text{late}$ changed to
#    $[1, 1, 1, 0]$?
# 2. Multiply every query by 2 (that is, use $2W_Q$). What happens to the scaled scores of
#    "it", and are the weights more or less concentrated on "Order"?
# 3. Three weights are $[0.33333, 0.33333, 0.33334]$ and the values are $[3000, 0, 0]$. What
#    output do you get with weights rounded to two decimals, and what is the exact output?
#
# <details>
# <summary>Answers</summary>
#
# 1. Equal, as for every query: $K_\text{late} = K_\text{it}$. If $K_\text{late}$ became
#    $[1,1,1,0]$, $q_\text{it}\cdot K_\text{late}$ would drop from 4 to $1+0+2+0 = 3$, so the
#    scores would be $[5, 3, 3, 4]$ and "late" would now tie with "was" instead of "it".
#    Check: `K_new = K.copy(); K_new[2] = [1, 1, 1, 0]; softmax(K_new @ q_it / 2)`.
# 2. The scores double: scaled $[5, 3, 4, 4]$, exactly the raw scores above. So the weights
#    become the raw weights, $[0.5344, 0.0723, 0.1966, 0.1966]$: more concentrated. The scale
#    cancels the growth that comes from $d_k$, not growth in the size of the queries.
# 3. Rounded: $0.33 \times 3000 = 990$; exact: $0.33333 \times 3000 = 999.99$. Rounding a
#    weight by $0.003$ moved the output by $10$: errors in weights are multiplied by the values.
#
# </details>

# %% [markdown]
# ## Summary
#
# - $Q = XW_Q$, $K = XW_K$, $V = XW_V$; for "it": raw scores $[5, 3, 4, 4]$, scaled
#   $[2.5, 1.5, 2, 2]$, weights $[0.5344, 0.0723, 0.1966, 0.1966]$ (raw) and
#   $[0.3875, 0.1425, 0.2350, 0.2350]$ (scaled), output $[1.6225, 0.3775, 1.8674, 1.0000]$.
# - The $1/\sqrt{d_k}$ scale flattens the weights even at $d_k = 4$: 53.4% on "Order" without
#   it, 38.7% with it.
# - Equal keys receive equal weight from every query, exactly, because the scores are equal.
# - Shifting all scores by a constant changes no weight; that is why the "late" weights are an
#   exact permutation of the "it" weights.
# - Carry full precision and round once, at the end: the source texts' 1.238404, 38.8% and
#   the rounded-weight sums are all small errors from rounding too early.
#
# Next: **04 · Softmax saturation**, where $d_k$ grows to 1024 and the weights stop flattening.
