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
# # 01 · Queries, keys and values: three projections of one input
#
# **Learning goals.** After this notebook you can
#
# 1. compute $Q = XW_Q$, $K = XW_K$, $V = XW_V$ by hand and in numpy, and say what one row of
#    each means;
# 2. explain why $Q$ and $K$ must share the width $d_k$ while $V$ may have its own width $d_v$;
# 3. state the shape of every tensor in single-head attention, for one sequence and for a batch,
#    down to the output projection $W_O$, and check each shape with an `assert`;
# 4. read the pipeline picture $X \to Q, K, V \to QK^\top \to /\sqrt{d_k} \to \mathrm{softmax}
#    \to \times V$ with the shape on every arrow.

# %% [markdown]
# ## A complaint bot that has to decide what "it" means
#
# A food-delivery platform receives millions of support messages a day. One reads:
#
# > *My order was late and it was cold.*
#
# Before anyone can reply, the ticket has to be routed: a delivery-time complaint, a food-quality
# complaint, or both? "cold" is clear. "it" is not: on its own it means nothing. Its meaning is
# borrowed from an earlier word, and a keyword rule cannot make that link, because "it" contains
# no keyword to match.
#
# To resolve the reference, the token "it" has to look back over the sentence and decide, *with a
# number for each token*, how relevant that token is: strongly relevant to "order", a little to
# "late", not at all to "was". That graded weighting, one number per pair of tokens, is what
# scaled dot-product attention computes. This notebook builds its first ingredients: the
# queries, keys and values.

# %% [markdown]
# ## From a hard lookup to a soft lookup
#
# A database query `WHERE keyword = 'cold'` is a *hard* lookup: a row matches or it does not.
# Attention keeps the shape of that idea (something asks, a set of things are checked against
# it, content comes back) but replaces the equality test with a continuous score, and the
# returned row with a blend of learned content vectors. Each token plays all three parts:
#
# | role | row $i$ of ... | says |
# | --- | --- | --- |
# | query | $Q$ | what token $i$ is looking for |
# | key | $K$ | what token $i$ offers, for the purpose of being matched |
# | value | $V$ | what token $i$ hands over if it is picked |
#
# Stack the $T$ token embeddings as the rows of $X \in \mathbb{R}^{T \times d_{model}}$. One
# attention head learns three matrices and projects the **same** $X$ three times:
#
# $$Q = X W_Q,\qquad K = X W_K,\qquad V = X W_V,$$
#
# $$W_Q, W_K \in \mathbb{R}^{d_{model} \times d_k},\qquad
#   W_V \in \mathbb{R}^{d_{model} \times d_v}.$$
#
# (Some texts write $n$ for the number of tokens; we write $T$, as `attnlib` does.)

# %% [markdown]
# ## The four-token example: "Order was late it"
#
# A tiny, hand-traceable stand-in for the sentence: four tokens, $d_{model} = 4$, and one head
# with $d_k = d_v = 4$. The embeddings and projection matrices are fixed by hand, as in a widely
# used worked example, not learned, so every number can be checked with pencil and paper. `attnlib.examples`
# holds them as data.

# %%
import textwrap

import numpy as np

from attnlib import examples

np.set_printoptions(precision=4, suppress=True)

tokens = examples.ORDER_TOKENS
X = examples.ORDER_X  # (T, d_model) = (4, 4): one row per token
W_Q = examples.ORDER_W_Q  # (d_model, d_k)
W_K = examples.ORDER_W_K  # (d_model, d_k)
W_V = examples.ORDER_W_V  # (d_model, d_v)

for name, x in zip(tokens, X):
    print(f"x_{name:<5} = {x}")
print("\nW_Q =\n", W_Q, "\nW_K =\n", W_K, "\nW_V =\n", W_V)

# %% [markdown]
# The three projections are three matrix products:

# %%
Q = X @ W_Q
K = X @ W_K
V = X @ W_V

for label, M in (("Q", Q), ("K", K), ("V", V)):
    print(f"{label} =")
    for name, row in zip(tokens, M):
        print(f"  {name:<5} {row}")

# %% [markdown]
# These are the $Q$, $K$ and $V$ of that worked example (rows in the order Order, was, late, it).
#
# **One row by hand.** Row $i$ of $XW_Q$ is $x_i W_Q$, a combination of the *rows* of $W_Q$
# weighted by the entries of $x_i$. The embedding of "it" is $[0, 0, 1, 1]$, so
# $q_{it}$ is simply row 2 plus row 3 of $W_Q$:

# %%
q_it_by_hand = 0 * W_Q[0] + 0 * W_Q[1] + 1 * W_Q[2] + 1 * W_Q[3]
print("W_Q[2] + W_Q[3] =", q_it_by_hand)
print("Q[3] (q_it)     =", Q[3])
print("equal:", np.array_equal(q_it_by_hand, Q[3]))

# %% [markdown]
# Notice two things:
#
# * Each row of $Q$ depends on **its own token only**: $q_{it}$ used $x_{it}$ and nothing else.
#   The projections do not mix tokens. Mixing happens one step later, when every query is
#   compared with every key.
# * $K_{late}$ and $K_{it}$ came out identical, $[1, 1, 1, 1]$. Two different tokens can offer
#   exactly the same key; notebook 03 shows that such keys always receive equal weight.

# %% [markdown]
# ## Three roles, one input
#
# A common exam question: *a classmate says "Query, Key and Value are three
# different features extracted from the sentence, like three embeddings someone hand-picked".*
# Why is that wrong?
#
# Because there is only one input. Every token's single embedding goes through all three
# projections; the three "different things" are made entirely by the three weight matrices.
# We can check that claim directly: give the key projection the query's weights, and keys become
# queries.

# %%
K_with_query_weights = X @ W_Q
print("K computed with W_Q equals Q:", np.array_equal(K_with_query_weights, Q))
print("K computed with W_K equals Q:", np.array_equal(K, Q))

# %% [markdown]
# **Correct description, in one sentence:** $Q$, $K$ and $V$ are three learned linear
# projections of the same token embeddings $X$; what makes them differ is only the weight
# matrices $W_Q$, $W_K$, $W_V$, which training shapes (every step of attention is
# differentiable, so backpropagation reaches all three).

# %% [markdown]
# ## Why $Q$ and $K$ share $d_k$, and $V$ need not
#
# The scores compare every query with every key by a dot product,
# $S_{ij} = q_i \cdot k_j$, all at once as $S = QK^\top$. A dot product needs two vectors of the
# same length, so the inner dimensions of $Q\,(T \times d_k)$ and $K^\top (d_k \times T)$ must
# agree. Values are never compared with anything: they are only averaged, with the weights as
# coefficients. So $V$ may have any width $d_v$, and the output has width $d_v$.
#
# First, a key projection of the wrong width. numpy refuses the product:

# %%
W_K_too_narrow = W_K[:, :3]  # (d_model, 3): keys of width 3, queries of width 4
K_too_narrow = X @ W_K_too_narrow
print("Q shape", Q.shape, " K shape", K_too_narrow.shape)
try:
    Q @ K_too_narrow.T
except ValueError as err:
    print(textwrap.fill(f"ValueError: {err}", 88, subsequent_indent="  "))

# %% [markdown]
# Now values of width $d_v = 6 \ne d_k = 4$. We draw a $W_V$ of shape $(d_{model}, d_v)$ from a
# seeded generator and run the whole head by hand: scores, scale, softmax, weighted sum.

# %%
SEED = 2017
rng = np.random.default_rng(SEED)

d_k = Q.shape[-1]
d_v = 6
W_V6 = rng.standard_normal((X.shape[-1], d_v))  # (d_model, d_v) = (4, 6)
V6 = X @ W_V6  # (T, d_v)

S = Q @ K.T / np.sqrt(d_k)  # (T, T)
A = np.exp(S - S.max(axis=-1, keepdims=True))
A = A / A.sum(axis=-1, keepdims=True)  # (T, T), rows sum to 1
out6 = A @ V6  # (T, T) @ (T, d_v) = (T, d_v)

print("Q", Q.shape, " K", K.shape, " V", V6.shape, " weights", A.shape, " output", out6.shape)

# %% [markdown]
# Row "it" of $A$ is the answer to the question we started with: how much does "it" draw from
# each token?

# %%
for name, weight in zip(tokens, A[tokens.index("it")]):
    print(f"it -> {name:<5} {weight:.4f}")

# %% [markdown]
# The story at the top asked for "strongly relevant to 'order', a little to 'late', not at all
# to 'was'". These hand-picked toy numbers act it out only roughly: "Order" does get the
# largest weight, but "was" still gets 14 % and "it" gives itself as much as "late". The
# weights were chosen so that every step can be checked by hand, not trained to resolve "it";
# notebook 03 traces this row number by number.
#
# The weights $A$ do not depend on $V$ at all, so they are the same whatever $d_v$ is; only
# the output's width follows $d_v$. `attnlib.scaled_dot_product_attention` (the library version
# of the same four lines) agrees, and its error message names the shapes when $Q$ and $K$ do not
# fit:

# %%
from attnlib import scaled_dot_product_attention

ref_out6, ref_A = scaled_dot_product_attention(Q, K, V6)
print("same weights:", np.allclose(ref_A, A), " same output:", np.allclose(ref_out6, out6))
try:
    scaled_dot_product_attention(Q, K_too_narrow, V6)
except ValueError as err:
    print(textwrap.fill(f"ValueError: {err}", 88, subsequent_indent="  "))

# %% [markdown]
# ## Active-recall question 1: every shape, computed
#
# *Write the three projection equations and state the shape of every matrix for $T$ tokens
# with widths $d_{model}$, $d_k$, $d_v$.* We answer with real arrays and `assert`, so a wrong
# shape would stop the notebook. We use the sizes of a common summary table, $T = 2$,
# $d_{model} = 8$, $d_k = 4$, $d_v = 2$. Random numbers stand in for learned weights; only the
# shapes matter here.


# %%
def shape_flow(T, d_model, d_k, d_v, rng, B=None):
    """One attention head and its output projection on random inputs; (name, formula, shape,
    array) for every tensor. ``B=None``: one sequence; otherwise a batch of ``B``."""
    lead, b = ((), "") if B is None else ((B,), "B, ")
    X = rng.standard_normal((*lead, T, d_model))
    W_q, W_k = rng.standard_normal((d_model, d_k)), rng.standard_normal((d_model, d_k))
    W_v, W_o = rng.standard_normal((d_model, d_v)), rng.standard_normal((d_v, d_model))
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    K_T = np.swapaxes(K, -1, -2)  # swap only the last two axes (K.T is the same without B)
    S_raw = Q @ K_T
    S = S_raw / np.sqrt(d_k)
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A = A / A.sum(axis=-1, keepdims=True)
    O = A @ V
    final = O @ W_o
    assert Q.shape == K.shape == (*lead, T, d_k) and K_T.shape == (*lead, d_k, T)
    assert S_raw.shape == S.shape == A.shape == (*lead, T, T)
    assert V.shape == O.shape == (*lead, T, d_v) and final.shape == (*lead, T, d_model)
    return [
        ("X", "input", f"({b}T, d_model)", X),
        ("W_q", "learned", "(d_model, d_k)", W_q),
        ("Q", "X @ W_q", f"({b}T, d_k)", Q),
        ("W_k", "learned", "(d_model, d_k)", W_k),
        ("K", "X @ W_k", f"({b}T, d_k)", K),
        ("K^T", "swapaxes(K,-1,-2)", f"({b}d_k, T)", K_T),
        ("S_raw", "Q @ K^T", f"({b}T, T)", S_raw),
        ("S", "S_raw / sqrt(d_k)", f"({b}T, T)", S),
        ("A", "softmax(S)", f"({b}T, T)", A),
        ("W_v", "learned", "(d_model, d_v)", W_v),
        ("V", "X @ W_v", f"({b}T, d_v)", V),
        ("O", "A @ V", f"({b}T, d_v)", O),
        ("W_o", "learned", "(d_v, d_model)", W_o),
        ("final", "O @ W_o", f"({b}T, d_model)", final),
    ]


def shape_table(rows):
    """Print (tensor, formula, symbolic shape, array) rows with the array's actual shape."""
    print(f"{'tensor':<8}{'formula':<20}{'should be':<22}{'shape'}")
    for tensor, formula, symbolic, array in rows:
        print(f"{tensor:<8}{formula:<20}{symbolic:<22}{list(array.shape)}")


shape_table(shape_flow(T=2, d_model=8, d_k=4, d_v=2, rng=rng))

# %% [markdown]
# This is that summary table of shapes, row for row. The output projection
# $W_O \in \mathbb{R}^{d_v \times d_{model}}$ takes the head's output back to the model width, so
# the next layer receives the shape it started from.
#
# **Spot the rule.** Every product $(a \times b)(b \times c)$ has shape $a \times c$: the inner
# sizes must match and disappear. Read down the table and check each product that way.

# %% [markdown]
# ## With a batch
#
# Real inputs come in batches, $X$ of shape $(B, T, d_{model})$. The same weights serve every
# sequence of the batch: `X @ W_q` multiplies the last axis and leaves the leading ones alone.
# The one change is the transpose: $K^\top$ must swap only the **last two** axes, so the
# function above writes `np.swapaxes(K, -1, -2)` (`K.T` would reverse all three axes and
# scramble the batch). Given `B`, it runs the same head on a batch.
#
# A common exercise asks for every shape with $B = 1$, $T = 4$, $d_{model} = 8$,
# $d_k = d_v = 4$.


# %%
shape_table(shape_flow(B=1, T=4, d_model=8, d_k=4, d_v=4, rng=rng))

# %% [markdown]
# These are exactly the shapes of the exercise's published answer. With $d_k = d_v = T = 4$,
# though, many rows read `[1, 4, 4]` and you cannot tell from the table which 4 is which: a
# mistake that swapped $T$ and $d_k$ would print the same table. Run the same function with sizes
# that are all different, and every dimension identifies itself:

# %%
shape_table(shape_flow(B=3, T=5, d_model=8, d_k=4, d_v=2, rng=rng))

# %% [markdown]
# ### Exercise: every shape, with a batch
#
# Now without the table. $B = 2$ sequences of $T = 5$ tokens, $d_{model} = 12$, one head with
# $d_k = 4$ and $d_v = 3$: all different, so every shape tells which size is which. Replace each
# `...` with a shape written in the size names, like `(B, T, d_k)`. `K_T` is $K^\top$ as
# $QK^\top$ needs it, `output` is the head's output before $W_O$, and `final` is after it.
# Stuck? `ch01.projection_shapes.hint()`, or `ch01.projection_shapes.solution()`.

# %%
from attnlib.exercises import ch01

B, T, d_model, d_k, d_v = 2, 5, 12, 4, 3
shapes = {
    "W_Q": ...,
    "Q": ...,
    "K_T": ...,
    "scores": ...,
    "V": ...,
    "output": ...,
    "W_o": ...,
    "final": ...,
}
ch01.projection_shapes.check(shapes)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
ch01.projection_shapes.check_solution(
    {
        "W_Q": (d_model, d_k),
        "Q": (B, T, d_k),  # X @ W_Q
        "K_T": (B, d_k, T),  # np.swapaxes(K, -1, -2)
        "scores": (B, T, T),  # Q @ K_T
        "V": (B, T, d_v),  # X @ W_V
        "output": (B, T, d_v),  # weights @ V
        "W_o": (d_v, d_model),
        "final": (B, T, d_model),  # output @ W_o
    }
)

# %% [markdown]
# ## The pipeline in one picture
#
# Tutorials often promise "the full sequence of operations in one picture". Here it is, drawn by `attnlib.pictures.pipeline_diagram.draw_attention_pipeline`
# from the sizes you give it. Each arrow carries a tensor and is labelled with its shape, in
# symbols and in numbers; the projection boxes show their weight shapes. The same $X$ feeds all
# three projections, the key arrow carries $K^\top$, and the output projection $W_O$ brings the
# head's output back to the model width.
#
# We draw it with $T = 5$, $d_{model} = 6$, $d_k = 3$, $d_v = 4$: four different numbers, so
# every $(5, 5)$ on the picture can only be $T \times T$ and every 3 only $d_k$. With
# $T = d_k = 4$ the score arrows and the query arrows would both read $(4, 4)$, the very
# confusion of the batch table above.

# %%
import matplotlib.pyplot as plt

from attnlib.pictures.pipeline_diagram import draw_attention_pipeline

fig, ax = plt.subplots(figsize=(16, 4.6))
draw_attention_pipeline(T=5, d_model=6, d_k=3, d_v=4, ax=ax)
plt.show()

# %% [markdown]
# *Figure:* Boxes from the embeddings $X$ through the $Q$, $K$, $V$ projections, scores, scale,
# row softmax, weighted sum and output projection; each arrow is labelled with its shape.
#
# Read it as the formula
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V,$$
#
# in four steps: scores $QK^\top$; scale by $1/\sqrt{d_k}$; softmax along each row,
# so that row $i$ holds the weights query $i$ gives to every key; weighted sum of the values.
# Why the scale is $\sqrt{d_k}$, and not some other number, is notebook 02.

# %% [markdown]
# ## Check yourself
#
# 1. A head has $d_{model} = 512$, $d_k = 64$, $d_v = 32$ and reads a sequence of $T = 10$
#    tokens. What are the shapes of $W_V$, $QK^\top$ and the head's output before $W_O$?
# 2. Someone sets $W_K = W_Q$. Is the score matrix $S = QK^\top$ then symmetric? What does that
#    mean for "does token $i$ attend to $j$ as much as $j$ to $i$"?
# 3. In a batch $K$ has shape $(B, T, d_k)$. What shape does `K.T` have, and why is
#    `np.swapaxes(K, -1, -2)` the right transpose?
#
# <details><summary>Answers</summary>
#
# 1. $W_V$: $512 \times 32$. $QK^\top$: $10 \times 10$ (it never depends on $d_k$ or $d_v$).
#    Output: $10 \times 32$, i.e. $T \times d_v$; $W_O$ ($32 \times 512$) then brings it back to
#    $10 \times 512$. Check it: `draw_attention_pipeline(10, 512, 64, 32)`.
# 2. Yes: $S = XW_Q (XW_Q)^\top$ is symmetric, so the *scores* are symmetric. The *weights* need
#    not be, because each row is normalised by its own softmax sum. Separate $W_Q$ and $W_K$ let a
#    model score "it looks for order" differently from "order looks for it".
# 3. `K.T` reverses all axes: $(d_k, T, B)$, which mixes the batch into the product.
#    `np.swapaxes(K, -1, -2)` has shape $(B, d_k, T)$, one $K^\top$ per sequence, and `@` then
#    multiplies matching batch entries.
#
# </details>

# %% [markdown]
# ## Summary
#
# * One input, three projections: $Q = XW_Q$, $K = XW_K$, $V = XW_V$. The rows of $Q$, $K$, $V$
#   are what each token looks for, offers, and hands over. Projections act on each token alone.
# * $Q$ and $K$ share $d_k$ because they meet in a dot product; $V$ has its own $d_v$, which sets
#   the output width; $W_O$ ($d_v \times d_{model}$) maps back to the model width.
# * Shapes: $X\,(T, d_{model}) \to Q, K\,(T, d_k),\ V\,(T, d_v) \to S, A\,(T, T) \to
#   O\,(T, d_v) \to OW_O\,(T, d_{model})$; with a batch, put $B$ in front of each and transpose
#   only the last two axes.
#
# Next: **02 — why divide by $\sqrt{d_k}$**.
