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
# # 12 · Active recall: twelve questions across the whole sequence
#
# Reading a worked answer feels like understanding; producing the answer yourself is what makes
# it stay. This notebook asks twelve questions, one or two per idea of notebooks 01 to 11, and
# checks your answers. The first seven are the active-recall questions of the lesson the
# collection started from; the others come from the later chapters.
#
# **How it works.** Each question has a cell with a placeholder `...`. Replace it with your
# answer and run the cell: the check says **Correct!**, or **Not yet.** with what went wrong and
# the notebook to revisit. Stuck? Call `.hint()` on the question (for example
# `recall.projection_shapes.hint()`), or `.solution()`. Below each question sits a hidden
# solution cell (click the collapsed cell to show it); it runs the check on the right answer.
# It does not touch your variables, so *Run All* keeps your work.
#
# **How to use it.** Answer from memory first, with pencil and paper for the arithmetic and numpy
# where you like, before you look anything up. Then come back in a week and do it again: a
# question you still miss tells you which notebook to reread.
#
# The answers come in four kinds: a number, a vector, shapes, and a choice among options, where
# each option carries a reason, so picking one is committing to a reason.

# %%
import numpy as np

from attnlib import examples
from attnlib.exercises import recall

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## Question 1: every shape of one head
#
# One attention head reads $T = 6$ tokens of width $d_{model} = 16$, with $d_k = 8$ and
# $d_v = 2$. Say the three projection equations to yourself, then give the shape of every matrix
# in them: $X$, $W_Q$, $W_K$, $W_V$, $Q$, $K$, $V$. Write shapes with the names below, like
# `(T, d_k)`.

# %%
T, d_model, d_k, d_v = 6, 16, 8, 2
answer_1 = {
    "X": ...,
    "W_Q": ...,
    "W_K": ...,
    "W_V": ...,
    "Q": ...,
    "K": ...,
    "V": ...,
}
recall.projection_shapes.check(answer_1)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
recall.projection_shapes.check(
    {
        "X": (T, d_model),
        "W_Q": (d_model, d_k),
        "W_K": (d_model, d_k),
        "W_V": (d_model, d_v),
        "Q": (T, d_k),  # X @ W_Q
        "K": (T, d_k),  # X @ W_K
        "V": (T, d_v),  # X @ W_V
    }
)

# %% [markdown]
# ## Question 2: why three projections?
#
# A classmate says: *"Query, Key and Value are three different features extracted from the
# sentence, like three different embeddings someone hand-picked."* Which description is right?
#
# - **(a)** Q, K and V are three different features of the sentence, like three embeddings
#   picked by hand, so each needs its own matrix.
# - **(b)** There is one input and three roles: each token's embedding is projected three
#   times, so what it looks for (Q), what it offers to be matched (K) and what it hands over (V)
#   can be learned separately.
# - **(c)** One projection could not give a (T, T) score matrix; three make the shapes fit.
# - **(d)** Three projections let each token attend to three times as many tokens.

# %%
answer_2 = ...  # 'a', 'b', 'c' or 'd'
recall.three_projections.check(answer_2)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
recall.three_projections.check("b")

# %% [markdown]
# ## Question 3: the scale when the entries do not have variance 1
#
# The entries of $q$ and $k \in \mathbb{R}^{d_k}$ are independent with mean 0, but the learned
# projections give them standard deviations $\sigma_q = 0.5$ and $\sigma_k = 3$, and
# $d_k = 64$. By what number must the scores $q \cdot k$ be divided so that they have
# variance 1?

# %%
d_k, sigma_q, sigma_k = 64, 0.5, 3.0
answer_3 = ...  # a number
recall.scale_denominator.check(answer_3)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
var_score = d_k * sigma_q**2 * sigma_k**2  # Var(q . k): d_k terms of variance sigma_q^2 sigma_k^2
print(f"Var(q . k) = {var_score:g}, so divide by its square root, {np.sqrt(var_score):g}")
recall.scale_denominator.check(np.sqrt(var_score))

# %% [markdown]
# ## Question 4: the query of "late"
#
# Take the four tokens "Order was late it" with the hand-picked matrices of notebook 03
# ($d_k = d_v = 4$). Use the query of **late**, $q_{late}$ = `Q[2]`, in place of the query of
# "it". What is its output, the weighted average of the rows of $V$ with the *scaled* weights
# $\mathrm{softmax}(K q_{late} / \sqrt{d_k})$? The matrices are ready below.

# %%
X = examples.ORDER_X
Q, K, V = X @ examples.ORDER_W_Q, X @ examples.ORDER_W_K, X @ examples.ORDER_W_V
print("tokens:", examples.ORDER_TOKENS)
print("Q =\n", Q, "\nK =\n", K, "\nV =\n", V)

# %%
answer_4 = ...  # the output for "late": 4 numbers
recall.late_output.check(answer_4)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
scores_late = K @ Q[2] / np.sqrt(4)  # [2, 4, 3, 3] / 2
weights_late = np.exp(scores_late) / np.exp(scores_late).sum()
print("scaled scores:", scores_late)
print("weights:      ", weights_late)
print("output:       ", weights_late @ V)
recall.late_output.check(weights_late @ V)

# %% [markdown]
# ## Question 5: which weights can never differ?
#
# Still in the "Order was late it" example: for **every** possible query vector $q$, which two
# attention weights are guaranteed to be equal?
#
# - **(a)** The weights of Order and was.
# - **(b)** The weights of late and it.
# - **(c)** None: which weights are equal depends on the query.
# - **(d)** All four, because softmax treats every key the same.

# %%
answer_5 = ...  # 'a', 'b', 'c' or 'd'
recall.equal_keys.check(answer_5)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
print(f"K_late == K_it: {np.array_equal(K[2], K[3])}")
recall.equal_keys.check("b")

# %% [markdown]
# ## Question 6: why does training fail without the scale?
#
# At $d_k = 1024$ unscaled scores have a standard deviation of about 32. Why does a network
# without the $1/\sqrt{d_k}$ fail to *learn*, rather than merely carry large numbers?
#
# - **(a)** exp overflows to inf, and the loss becomes NaN.
# - **(b)** Scores with standard deviation 32 make the softmax nearly one-hot; its Jacobian
#   $p_i(\delta_{ij} - p_j)$ is then almost 0, so almost no gradient reaches the scores and
#   $W_Q$, $W_K$ stop learning where to look.
# - **(c)** Large scores make the loss large, and the optimiser overshoots.
# - **(d)** The outputs grow like $\sqrt{d_k}$ and blow up the next layer.

# %%
answer_6 = ...  # 'a', 'b', 'c' or 'd'
recall.unscaled_training.check(answer_6)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
recall.unscaled_training.check("b")

# %% [markdown]
# ## Question 7: the variance of a product
#
# $X$ and $Y$ are independent, both with mean 0, and $\mathrm{Var}(X) = 4$,
# $\mathrm{Var}(Y) = 9$. What is $\mathrm{Var}(XY)$?

# %%
var_X, var_Y = 4.0, 9.0
answer_7 = ...  # a number
recall.product_variance.check(answer_7)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# Var(XY) = E[X^2] E[Y^2] - (E[X] E[Y])^2, and with zero means E[X^2] = Var(X), E[X] = 0
recall.product_variance.check(var_X * var_Y)

# %% [markdown]
# ## Question 8: heads
#
# A layer has $d_{model} = 512$ and 8 heads, and reads $T = 10$ tokens. Its queries $Q$ have
# shape $(T, d_{model})$. Give the shape of $Q$ split into heads (head axis first), of the
# scores of all heads together, and of the heads' outputs merged again.

# %%
T, d_model, n_heads, d_head = 10, 512, 8, 64
answer_8 = {
    "split": ...,
    "scores": ...,
    "merged": ...,
}
recall.head_shapes.check(answer_8)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
from attnlib import merge_heads, split_heads

Q_demo = np.zeros((T, d_model))
heads = split_heads(Q_demo, n_heads)  # (n_heads, T, d_head)
scores_demo = heads @ heads.transpose(0, 2, 1)  # one (T, T) matrix per head
recall.head_shapes.check(
    {"split": heads.shape, "scores": scores_demo.shape, "merged": merge_heads(heads).shape}
)

# %% [markdown]
# ## Question 9: the size of a grouped-query KV cache
#
# A decoder has 32 layers and 32 query heads of $d_{head} = 128$, but uses grouped-query
# attention with 8 key/value heads. It caches keys and values in float16 (2 bytes each) for a
# context of $T = 4096$ tokens, batch 1. How many **bytes** does the KV cache take?

# %%
n_layers, n_q_heads, n_kv_heads, d_head, T, bytes_per_value = 32, 32, 8, 128, 4096, 2
answer_9 = ...  # a number of bytes
recall.gqa_cache.check(answer_9)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
cache_bytes = 2 * n_layers * n_kv_heads * d_head * T * bytes_per_value  # 2: K and V
print(f"{cache_bytes:,} bytes = {cache_bytes / 2**30:g} GiB")
recall.gqa_cache.check(cache_bytes)

# %% [markdown]
# ## Question 10: one step of the online softmax
#
# Tiled attention keeps, for each query, a running maximum $m$, a running normaliser $\ell$ and
# an unnormalised running sum $acc = \sum_j e^{s_j - m} v_j$. So far $m = 3$. The next block of
# scores has maximum 5, so $m$ becomes 5. By what factor must $\ell$ and $acc$ be multiplied
# before the new block is added?

# %%
m_old, m_new = 3.0, 5.0
answer_10 = ...  # a number
recall.rescale_factor.check(answer_10)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# e^(s - m_new) = e^(s - m_old) * e^(m_old - m_new)
recall.rescale_factor.check(np.exp(m_old - m_new))

# %% [markdown]
# ## Question 11: masking after the softmax
#
# Someone applies a causal mask by computing the ordinary softmax and then setting the weights
# of future keys to 0. What goes wrong?
#
# - **(a)** Nothing: the future weights end up 0 either way.
# - **(b)** The rows no longer sum to 1, and the future keys still change the weights of the
#   past through each row's normaliser.
# - **(c)** Every row turns into NaN.
# - **(d)** Nothing, as long as the mask is transposed to the upper triangle.

# %%
answer_11 = ...  # 'a', 'b', 'c' or 'd'
recall.mask_after_softmax.check(answer_11)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
recall.mask_after_softmax.check("b")

# %% [markdown]
# ## Question 12: the softmax backward pass
#
# A softmax gave the weights $p = [0.2, 0.3, 0.5]$, and the gradient of the loss with respect
# to them is $g = \partial L / \partial p = [1, 0, 0]$. What is $\partial L / \partial s$, the
# gradient with respect to the three scores?

# %%
p, g = np.array([0.2, 0.3, 0.5]), np.array([1.0, 0.0, 0.0])
answer_12 = ...  # 3 numbers
recall.backward.check(answer_12)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
J = np.diag(p) - np.outer(p, p)  # the softmax Jacobian, symmetric
print("J^T g              =", J.T @ g)
print("p * (g - sum(p g)) =", p * (g - (p * g).sum()))
recall.backward.check(p * (g - (p * g).sum()))

# %% [markdown]
# ## Where to go back to
#
# Every "Not yet." names the notebook to revisit. The whole map:
#
# | question | idea | revisit |
# | --- | --- | --- |
# | 1 | the shapes of $X$, $W_Q$, $W_K$, $W_V$, $Q$, $K$, $V$ | `01_qkv_projections` |
# | 2 | one input, three learned projections | `01_qkv_projections` |
# | 3 | the scale $\sqrt{d_k}\,\sigma_q\sigma_k$ | `02_why_sqrt_dk` |
# | 4 | the query of "late", by hand | `03_worked_example_it` |
# | 5 | equal keys get equal weights | `03_worked_example_it` |
# | 6 | saturation and the vanishing gradient | `04_softmax_saturation` (and `05_overflow_misconception`) |
# | 7 | $\mathrm{Var}(XY)$ for independent zero-mean factors | `02_why_sqrt_dk` |
# | 8 | split and merge heads | `07_multi_head` |
# | 9 | the grouped-query KV cache | `07_multi_head` |
# | 10 | the online softmax's rescale factor | `10_cost_and_tiling` |
# | 11 | mask before the softmax | `06_masking` |
# | 12 | the softmax backward pass | `11_gradients` |
#
# The chapters have exercises of their own, at the point where each idea is taught; they are in
# `attnlib.exercises.ch01` to `ch11`, for example `ch05.stable_softmax`, where you write a
# softmax that survives scores of 1000.

# %% [markdown]
# ## Summary
#
# * Shapes: $Q, K \in \mathbb{R}^{T \times d_k}$, $V \in \mathbb{R}^{T \times d_v}$, scores
#   $(T, T)$; heads split $(T, d_{model})$ into $(n_{heads}, T, d_{head})$.
# * The scale: $\mathrm{Var}(q \cdot k) = d_k\,\sigma_q^2\sigma_k^2$, so divide by its square
#   root; $1/\sqrt{d_k}$ is right for unit-variance entries. Without it the softmax saturates
#   and its gradient vanishes: a training failure, not an overflow.
# * Equal keys get equal weights for every query; masks go in as $-\infty$ before the softmax.
# * The KV cache counts only the K/V heads: $2 \times n_{layers} \times n_{kv\_heads} \times
#   d_{head} \times T \times$ bytes. The online softmax rescales by $e^{m_{old} - m_{new}}$; the
#   softmax backward pass is $p \odot (g - \sum_j p_j g_j)$.
