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
# A customer writes *"My order was late and it was cold."* The word "it" borrows its meaning
# from an earlier word, and attention resolves that borrowing with one weight per (query token,
# key token) pair. Here you trace those numbers by hand on the four tokens
#
# $$\text{Order} \quad \text{was} \quad \text{late} \quad \text{it}$$
#
# with $d_\text{model} = d_k = d_v = 4$ and hand-picked (not learned) projection matrices, as in
# a worked example widely used to teach attention. Every number it prints is computed below.
#
# **Learning goals.** After this notebook you can
#
# 1. compute one row of $\mathrm{softmax}(QK^\top/\sqrt{d_k})\,V$ by hand and say what every
#    number means;
# 2. explain what the $1/\sqrt{d_k}$ scale does to the weights even at $d_k = 4$;
# 3. prove that two tokens with equal keys receive equal weight from every query;
# 4. picture an attention output as a point inside the values it averages.
#
# Boxes marked *optional* and the appendix check the rounding of the published examples; skip
# them on a first reading.

# %%
import matplotlib.pyplot as plt
import numpy as np

from attnlib import examples, softmax
from attnlib.pictures.heatmap import attention_heatmap

np.set_printoptions(precision=4, suppress=True)


def show(v, fmt="{:.4f}"):
    """A vector as '[a, b, c]' with a fixed format: how the source texts print them."""
    return "[" + ", ".join(fmt.format(x) for x in np.ravel(v)) + "]"


# %% [markdown]
# ## 1. Four tokens, three projections
#
# Each token is a row of $X$; every token passes through all three projections (notebook 01):
#
# $$Q = X W_Q, \qquad K = X W_K, \qquad V = X W_V .$$
#
# Row $i$ of $Q$ is what token $i$ is looking for; row $j$ of $K$ is what token $j$ offers to be
# matched on; row $j$ of $V$ is what token $j$ hands over if it is picked. The last line checks
# our products against the three matrices the worked example prints.

# %%
tokens = examples.ORDER_TOKENS
X, W_Q, W_K, W_V = examples.ORDER_X, examples.ORDER_W_Q, examples.ORDER_W_K, examples.ORDER_W_V

Q, K, V = X @ W_Q, X @ W_K, X @ W_V

print("tokens:", tokens)
print("Q = X @ W_Q =\n", Q)
print("K = X @ W_K =\n", K)
print("V = X @ W_V =\n", V)

Q_text = [[2, 0, 1, 1], [0, 1, 1, 1], [1, 1, 0, 1], [1, 0, 2, 1]]  # as the example prints them
K_text = [[1, 1, 2, 0], [1, 1, 0, 2], [1, 1, 1, 1], [1, 1, 1, 1]]
V_text = [[2, 0, 3, 1], [1, 1, 0, 1], [2, 1, 0, 1], [1, 0, 3, 1]]
same = [np.array_equal(a, b) for a, b in ((Q, Q_text), (K, K_text), (V, V_text))]
print("equal to the example's Q, K, V:", same)

# %% [markdown]
# Notice already: the keys of "late" and "it" are the **same vector**, $[1, 1, 1, 1]$. Keep
# that in mind for section 5.
#
# ## 2. The query of "it" against every key, then the scale
#
# The raw score of query $i$ against key $j$ is a dot product, and the scaled score divides it
# by $\sqrt{d_k} = \sqrt 4 = 2$:
#
# $$s_{ij} = q_i \cdot k_j = \sum_{m=1}^{d_k} q_{im}\, k_{jm}, \qquad
#   \tilde s_{ij} = \frac{s_{ij}}{\sqrt{d_k}} .$$
#
# The cell writes out each dot product for $q_\text{it}$ = `Q[3]` as you would on paper; the
# strings are generated from the arrays, so they cannot disagree with them.


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

d_k = K.shape[-1]
raw_it = K @ q_it  # all four dot products at once: the row Q[3] @ K.T
scaled_it = raw_it / np.sqrt(d_k)
print("\nraw scores:   ", show(raw_it, "{:g}"))
print("scaled scores:", show(scaled_it, "{:g}"))

# %% [markdown]
# ## 3. Softmax, with and without the scale, and the output
#
# Softmax turns a row of scores into weights that are positive and sum to 1; the output is the
# weighted average of the value rows:
#
# $$w_j = \frac{e^{s_j}}{\sum_{l} e^{s_l}}, \qquad o_\text{it} = \sum_j w_j\, v_j = w\,V .$$

# %%
w_raw_it = np.exp(raw_it) / np.exp(raw_it).sum()
w_scaled_it = np.exp(scaled_it) / np.exp(scaled_it).sum()
out_raw_it = w_raw_it @ V
out_scaled_it = w_scaled_it @ V

print("softmax(raw)    =", show(w_raw_it))
print("softmax(scaled) =", show(w_scaled_it))
print("sums:", show([w_raw_it.sum(), w_scaled_it.sum()]))
print(f"weight on Order: raw {w_raw_it[0]:.6f} = {100 * w_raw_it[0]:.1f}%,", end=" ")
print(f"scaled {w_scaled_it[0]:.6f} = {100 * w_scaled_it[0]:.1f}%")
print("output(raw weights)    =", show(out_raw_it))
print("output(scaled weights) =", show(out_scaled_it))
dist_raw = np.linalg.norm(out_raw_it - V[0])
dist_scaled = np.linalg.norm(out_scaled_it - V[0])
print(f"distance to V_Order = {show(V[0], '{:g}')}: raw {dist_raw:.4f}, scaled {dist_scaled:.4f}")
print("agree with attnlib.softmax:", np.allclose(w_scaled_it, softmax(scaled_it)))

# %% [markdown]
# Even at $d_k = 4$ the unscaled weights are more concentrated on the top score ("Order"):
# 53.4 % without the scale, 38.7 % with it, so the unscaled output is pulled harder toward
# $v_\text{Order} = [2, 0, 3, 1]$. At $d_k = 1024$ the same sharpening becomes extreme
# (notebook 04).
#
# <details><summary>Optional: two roundings in the worked example</summary>
#
# * The example says "53.4% of the weight lands on 'Order' without scaling, versus 38.8% with
#   scaling". The scaled weight is 0.387456, which is **38.7 %** to one decimal; 38.8 % comes
#   from rounding twice (first to 0.3875, then 38.75 % up to 38.8 %). Round once, from the
#   full-precision number.
# * It writes the output as $0.5344\cdot[2,0,3,1] + 0.0723\cdot[1,1,0,1] + \dots =
#   [1.7311, 0.2689, 2.1932, 1.0000]$. The result is right (it is the full-precision one), but
#   the sum as written, with 4-decimal weights, gives 1.7309, 2.1930 and 0.9999 instead (and
#   1.1325 for the late query's 1.1326 in section 5; appendix A computes them all). The rounded
#   weights are for reading; arithmetic uses the unrounded ones.
#
# </details>
#
# ## 4. The worked example's own code, run as written
#
# The example promises that this code "must reproduce these exact numbers" and prints
# `weights[3] = [0.3875 0.1425 0.235  0.235 ]` and `output[3]  = [1.6225 0.3775 1.8674 1.    ]`.
# Here it is, unchanged (it defines its own `scaled_dot_product_attention`, so we keep the
# `attnlib` one under another name).

# %%
# ---- the worked example's code block, verbatim ----
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
# Exactly the example's two lines. Its function also agrees with
# `attnlib.scaled_dot_product_attention` on all four rows, and with our hand computation:

# %%
ref_output, ref_weights = attnlib_attention(Q, K, V)
same_rows = np.allclose(weights, ref_weights), np.allclose(output, ref_output)
same_hand = np.allclose(weights[3], w_scaled_it), np.allclose(output[3], out_scaled_it)
print("the example's code == attnlib, all rows:", *same_rows)
print("row 3 == hand computation:", *same_hand)

# %% [markdown]
# ### Exercise: the weights of the query of "late"
#
# Sections 2 and 3 did it for "it"; now you do it for "late", before section 5 shows the
# answer. Take $q_\text{late}$ = `Q[2]`, score it against every key, scale, and apply the
# softmax: $\mathrm{softmax}(K q_\text{late} / \sqrt{d_k})$, four weights, one per key. Stuck?
# `ch03.late_weights.hint()`, or `ch03.late_weights.solution()`.

# %%
from attnlib.exercises import ch03

answer_late = ...  # the 4 scaled weights of the query "late", one per key
ch03.late_weights.check(answer_late)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
sol_scores = K @ Q[2] / np.sqrt(Q.shape[-1])  # the query of "late" against every key, scaled
ch03.late_weights.check_solution(np.exp(sol_scores) / np.exp(sol_scores).sum())

# %% [markdown]
# ## 5. Every query at once, and the query of "late"
#
# The matrix form computes every token's weights in one line, row by row, and the picture shows
# them all: queries (who is attending) down the side, keys (who is attended to) across the top
# (the plotting code is collapsed; click it to show it).

# %%
weights_raw = softmax(Q @ K.T)  # no scale
weights_scaled = softmax(Q @ K.T / np.sqrt(d_k))

# %% jupyter={"source_hidden": true}
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
# *Figure:* The 4 × 4 attention weights as two heatmaps, raw (left) and scaled (right), queries as
# rows, keys as columns, each weight printed; the scaled rows are flatter.
#
# The bottom row ("it") is the row we computed: "it" attends most to "Order", and the scaled
# row is flatter. The top two rows are uniform, 0.25 everywhere: every key scores the same
# against $q_\text{Order}$ and against $q_\text{was}$, and equal scores give equal weights
# whatever they are divided by. And in every row the last two **columns** are equal: "late" and
# "it" always receive the same weight.
#
# The example's question 4 asks for the query of "late", `Q[2]`: raw and scaled scores, both
# softmaxes (the scaled one is the exercise's answer), the scaled output, and which weights are
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
print("output(scaled weights) =", show(w_scaled_late @ V))
same = (
    np.allclose(w_scaled_late, ref_weights[late]),
    np.allclose(w_scaled_late @ V, ref_output[late]),
)
print("agrees with attnlib row 2:", *same)

# %% [markdown]
# These are the example's numbers. "Order" and "was" have traded places, and "late" and "it"
# again share a weight.
#
# <details><summary>Optional: "a coincidence", and which dimension is "late"'s</summary>
#
# The example calls it "a coincidence of this particular toy number set" that the late query
# reproduces the values 0.1966 and 0.235, and says the weights on Order and was have
# "essentially traded places". The trade is exact: the late scores $[2, 4, 3, 3]$ are the it
# scores $[5, 3, 4, 4]$ with the first two exchanged, minus 1, and softmax ignores a constant
# added to every score ($e^{s_j - c}/\sum_l e^{s_l - c} = e^{s_j}/\sum_l e^{s_l}$). Appendix B
# checks it. It is still special to these numbers: another query would not give a permutation.
#
# It also says the output's "'late'-weighted dimension (index 2) falls from 1.87 to
# 1.13". The numbers are right, but column 2 of $V$ is $[3, 0, 0, 3]$: it is carried by
# **Order and it**, not by "late" (whose value has a 0 there). It falls because the weight on
# Order falls from 0.3875 to 0.1425.
#
# </details>
#
# ### Equal keys always get equal weight
#
# The part of the answer that *is* guaranteed: since $k_\text{late} = k_\text{it}$,
#
# $$q \cdot k_\text{late} = q \cdot k_\text{it} \;\text{for every } q
# \quad\Rightarrow\quad
# w_\text{late} = \frac{e^{q\cdot k_\text{late}/\sqrt{d_k}}}{\sum_l e^{q\cdot k_l/\sqrt{d_k}}}
# = w_\text{it}.$$
#
# Tested with 10,000 random queries: the two scores are computed from identical numbers by
# identical operations, so the difference is exactly zero, while keys that differ (Order and
# was) give weights that differ.

# %%
rng = np.random.default_rng(2024)
random_queries = rng.normal(scale=2.0, size=(10_000, d_k))
w = softmax(random_queries @ K.T / np.sqrt(d_k))  # shape (10000, 4)

i_order, i_was = tokens.index("Order"), tokens.index("was")
print("K_late == K_it:", np.array_equal(K[late], K[it]))
print("max |w_late - w_it|   over 10,000 queries:", np.abs(w[:, late] - w[:, it]).max())
print(f"max |w_Order - w_was| over 10,000 queries: {np.abs(w[:, i_order] - w[:, i_was]).max():.4f}")

# %% [markdown]
# ## 6. An output is a point among the values
#
# The weights of a row are positive and sum to 1, so each output is a **convex combination** of
# the value vectors: a point inside the region they span. With two tokens it lies on the
# segment from $v_0$ to $v_1$, at the fraction $A_{i1}$ of the way:
#
# $$o_i = A_{i0}\,v_0 + A_{i1}\,v_1 = v_0 + A_{i1}\,(v_1 - v_0).$$
#
# A second common worked example has exactly that shape: $T = 2$, $d_k = 4$, $d_v = 2$, given
# directly as $Q$, $K$, $V$.

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
print("exact output:         [" + ", ".join(show(r, "{:.6f}") for r in out2) + "]")
print(f"token 0: {100 * A[0, 0]:.1f}% to itself, {100 * A[0, 1]:.1f}% to token 1", end="; ")
print(f"token 1: {100 * A[1, 0]:.1f}% to token 0, {100 * A[1, 1]:.1f}% to itself")
print(
    "on the segment, o_i = v0 + A[i, 1] (v1 - v0):",
    np.allclose(out2, V2[0] + A[:, 1:] * (V2[1] - V2[0])),
)
ref2, refA = attnlib_attention(Q2, K2, V2)
print("agrees with attnlib:", np.allclose(A, refA), np.allclose(out2, ref2))

# %% [markdown]
# Token 0 attends 88.1 % to itself and 11.9 % to token 1; token 1 the reverse, as the example
# says. Both rows are the softmax of a gap of 2: $1/(1+e^{-2})$ and $1/(1+e^{2})$.
#
# <details><summary>Optional: the example's sixth decimal</summary>
#
# At six decimals the example reports the output as 1.238404 (top left) and 0.238405 (bottom
# right); the exact values, printed above, are 1.238406 and 0.238406. The example writes
# $A_{01} = 1/(1+e^2) = 0.1192029\ldots$ as 0.119202 (the digits cut off; rounded it would be
# 0.119203) and, although it says "full precision used in next step", multiplies with the short
# number. The error in the weight, about $10^{-6}$, is multiplied by values up to 3, so the
# sixth decimal of the output goes wrong (appendix C). The four-decimal result is right either
# way. Keep full precision in every intermediate step, and round only what you print.
#
# </details>
#
# The same source has an exercise with one query over two keys: $q = [1, 2]$, $k_0 = [2, 1]$,
# $k_1 = [0, 2]$, $v_0 = [10, 0]$, $v_1 = [0, 20]$, with the scale taken as $\sqrt{d_k} = 2$.

# %%
q_two, K_two, V_two = examples.TWO_KEY_Q, examples.TWO_KEY_K, examples.TWO_KEY_V
for j in range(2):
    print(f"q · k_{j} = {expand(q_two[0], K_two[j])}")
scores_two = q_two @ K_two.T / np.sqrt(examples.TWO_KEY_D_K)
p = softmax(scores_two)
print("scaled scores:", show(scores_two, "{:g}"), "  p =", show(p, "{:.2f}"))
print("output = p @ V =", show(p @ V_two, "{:.1f}"))

# %% [markdown]
# Equal scores, equal weights: the output is the midpoint of $v_0$ and $v_1$. Both examples on
# their segments (the ticks mark the weight on $v_1$ in steps of 0.1):

# %% jupyter={"source_hidden": true}
fig, axes = plt.subplots(
    1, 2, figsize=(9, 4.3), layout="constrained", gridspec_kw={"width_ratios": [1.5, 1]}
)
cases = (
    (axes[0], V2, out2, ["$o_0$", "$o_1$"], "T = 2 example: two outputs"),
    (axes[1], V_two, p @ V_two, ["$o$ = [5, 10]"], "two-key exercise: uniform weights"),
)
for ax, values, outputs, labels, title in cases:
    v0, v1 = values
    outputs = np.atleast_2d(outputs)
    ax.plot(*zip(v0, v1), color="0.6", lw=2, zorder=1)
    ticks = v0 + np.linspace(0, 1, 11)[:, None] * (v1 - v0)
    ax.scatter(*ticks.T, s=12, color="0.6", zorder=2, label="weight on $v_1$: 0, 0.1, ..., 1")
    ax.scatter(*values.T, s=80, color="tab:blue", zorder=3, label="values $v_0$, $v_1$")
    ax.scatter(*outputs.T, s=80, marker="D", color="tab:orange", zorder=4, label="outputs")
    for name, v, other in (("$v_0$", v0, v1), ("$v_1$", v1, v0)):
        offset = (-24, -4) if v[0] < other[0] else (10, -4)  # label on the outer side
        ax.annotate(name, v, textcoords="offset points", xytext=offset, color="tab:blue")
    for name, o in zip(labels, outputs):
        ax.annotate(name, o, textcoords="offset points", xytext=(8, 6), color="tab:orange")
    ax.set_title(title, fontsize=11)
    ax.set_xlabel("value dimension 0")
    ax.set_ylabel("value dimension 1")
    ax.set_aspect("equal")
    ax.margins(x=0.45, y=0.3)
axes[0].legend(loc="lower left", fontsize=8)
plt.show()

# %% [markdown]
# *Figure:* Two panels in the plane of the value dimensions: the segment from $v_0$ to $v_1$,
# ticked every 0.1 of weight, with the outputs as diamonds lying on it.
#
# However the scores change, the outputs can only slide along the segment: attention can choose
# *how much* of each value to take, never something outside what the values offer. Sharper
# weights (the raw softmax) push the outputs toward the ends; flat weights pull them to the
# middle.
#
# <details><summary>Optional: the exercise's d_k</summary>
#
# The exercise says $d_k = 4$, but its vectors have **two** components, so by the formula
# $\sqrt{d_k}$ would be $\sqrt 2$, not 2. Here it does not matter: both scores are 4, and equal
# scores give a uniform softmax whatever they are divided by (appendix D tries three scales).
#
# </details>

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
#    $[1,1,1,0]$, $q_\text{it}\cdot K_\text{late}$ would drop from 4 to $1+0+2+0 = 3$: raw
#    scores $[5, 3, 3, 4]$, scaled $[2.5, 1.5, 1.5, 2]$, weights
#    $[0.4269, 0.1571, 0.1571, 0.2589]$. "late" now ties with "was" instead of "it", and "it"
#    gains the weight "late" lost. Check: `K_new = K.copy(); K_new[2] = [1, 1, 1, 0]` and
#    `softmax(K_new @ q_it / 2)`.
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
# - For "it": raw scores $[5, 3, 4, 4]$, scaled $[2.5, 1.5, 2, 2]$, weights
#   $[0.5344, 0.0723, 0.1966, 0.1966]$ (raw) and $[0.3875, 0.1425, 0.2350, 0.2350]$ (scaled),
#   output $[1.6225, 0.3775, 1.8674, 1.0000]$.
# - The $1/\sqrt{d_k}$ scale flattens the weights even at $d_k = 4$: 53.4 % on "Order" without
#   it, 38.7 % with it.
# - Equal keys receive equal weight from every query, exactly, because the scores are equal.
# - Each output is a convex combination of the value rows: with two tokens, a point on the
#   segment between $v_0$ and $v_1$.
# - Carry full precision and round once, at the end.
#
# Next: **04 · Softmax saturation**, where $d_k$ grows to 1024 and the weights stop flattening.

# %% [markdown]
# ## Appendix (optional): the rounding checks, computed, and a third example's arithmetic
#
# **A.** Section 3: the weight on Order rounded once and twice, and the example's sum with
# 4-decimal weights beside the full-precision one.

# %%
print(f"scaled weight on Order {w_scaled_it[0]:.6f}: once -> {100 * w_scaled_it[0]:.1f}%,", end="")
print(f" twice -> {w_scaled_it[0]:.4f} -> {100 * round(w_scaled_it[0], 4):.1f}%")
for label, w_it in (("raw", w_raw_it), ("scaled", w_scaled_it)):
    print(f"{label:>6}: 4-decimal weights @ V = {show(np.round(w_it, 4) @ V)}")
    print(f"{'':>6}  exact weights @ V     = {show(w_it @ V)}")
print(f"  late: 4-decimal weights @ V = {show(np.round(w_scaled_late, 4) @ V)}")

# %% [markdown]
# **B.** Section 5: the late scores are the it scores with Order and was exchanged, minus 1, so
# the weights are an exact permutation.

# %%
swap = [1, 0, 2, 3]  # exchange the Order and was entries
print("it scores, Order and was swapped, minus 1:", show(raw_it[swap] - 1, "{:g}"))
print("late scores:                              ", show(raw_late, "{:g}"))
print(
    "late weights == it weights swapped:",
    np.allclose(w_raw_late, w_raw_it[swap]),
    np.allclose(w_scaled_late, w_scaled_it[swap]),
)

# %% [markdown]
# **C.** Section 6: the example's six-decimal weights, cut off rather than rounded, times $V$.

# %%
print("exact weights:       ", show(A[0], "{:.10f}"))
A_text = np.array([[0.880797, 0.119202], [0.119202, 0.880797]])  # the weights it multiplies
print("text's weights @ V:  ", "[" + ", ".join(show(r, "{:.6f}") for r in A_text @ V2) + "]")
A_rounded = np.round(A, 6)  # rounded properly to six decimals
print("rounded weights @ V: ", "[" + ", ".join(show(r, "{:.6f}") for r in A_rounded @ V2) + "]")
print(f"its products: 3 x 0.119202 = {3 * 0.119202:.6f}, 2 x 0.119202 = {2 * 0.119202:.6f},")
print(f"              3 x 0.880797 = {3 * 0.880797:.6f}")

# %% [markdown]
# The example's own intermediate products, 0.357607, 0.238405 and 2.642392, each differ by one
# in the sixth decimal from the products of its six-decimal weights printed above, so its
# 1.238404 and 0.238405 sit between the exact and the cut-off computations; either way, the
# digits were lost by shortening the weights before multiplying.
#
# **D.** Section 6: the two-key exercise with three different scales.

# %%
for label, divisor in (
    ("sqrt(4) = 2 (as stated)", 2.0),
    ("sqrt(2) (d_k = len(q))", np.sqrt(q_two.shape[-1])),
    ("1, no scale", 1.0),
):
    out_two, p_two = attnlib_attention(q_two, K_two, V_two, scale=1 / divisor)
    print(f"{label:<24} p = {show(p_two, '{:.2f}')}  output = {show(out_two, '{:.1f}')}")

# %% [markdown]
# **E.** A third example's arithmetic. A tutorial on "The animal crossed the road because it was
# tired" works the same steps on numbers taken from a figure it does not include:
# "q_1 · k_1 = 1.0(1.1) + 0.5(0.4) = 1.30", weight row 1 "31% from itself, 26% from token 2,
# and so on", and "Output row 1: 0.31(2.0) + 0.26(0.5) + 0.25(1.5) + 0.18(0.0) = 1.13". `attnlib.examples` holds those numbers as data;
# the arithmetic is ours:

# %%
from decimal import ROUND_HALF_UP, Decimal

q1, k1 = examples.ANIMAL_Q1, examples.ANIMAL_K1
w1, v_col = examples.ANIMAL_WEIGHTS_ROW1, examples.ANIMAL_V_COLUMN
print(f"q1·k1 = {q1[0]:.1f}({k1[0]:.1f}) + {q1[1]:.1f}({k1[1]:.1f}) = {q1 @ k1:.2f}")
print("weight row 1:", "  ".join(f"{x:.2f}" for x in w1), f"  sum {w1.sum():.2f}")
out1 = w1 @ v_col
print("output row 1 =", " + ".join(f"{x:.2f}({v:.1f})" for x, v in zip(w1, v_col)))
half_up = Decimal(float(out1)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
print(f"             = {out1:.3f}, which rounds (half up) to {half_up}")
print(f"weights known to ±0.005 each, so output row 1 is known to ±{0.005 * v_col.sum():.2f}")

# %% [markdown]
# Every number checks: 1.30, a weight row that sums to 1.00, and an output of exactly 1.125,
# which the tutorial prints as 1.13.
#
# <details><summary>Optional: what these numbers can and cannot tell you</summary>
#
# * 1.125 lies exactly halfway: rounding half up gives 1.13, as the tutorial prints; Python's
#   `f"{1.125:.2f}"` gives 1.12, because it rounds a tie to the even digit. Both are fair; the
#   exact value is 1.125.
# * The weights are printed to two decimals, so each may be off by up to 0.005; the output row
#   they produce is known only to about $\pm 0.02$.
# * The tutorial's code draws unseeded random matrices with $d_k = 4$, while the dot product it
#   quotes has two terms: the figure seems to show only part of each vector. Its numbers cannot
#   be regenerated from its code, so we check the arithmetic it shows, not the matrices.
#
# </details>
