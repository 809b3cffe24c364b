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
# # 11 · Gradients: attention is differentiable, and why unscaled training stalls
#
# A common lesson text ends its derivation of attention with this sentence:
#
# > *"Crucially, every operation within this formula—matrix multiplication, scaling, and
# > softmax—is differentiable. This allows gradients from a downstream loss function to flow
# > back through the entire mechanism, enabling the weight matrices $W_Q, W_K, W_V$ to be
# > optimized end-to-end via standard backpropagation."*
#
# and another states the central claim of all these lessons in four words:
# *"Gradients vanish. Training stalls."* (without the $1/\sqrt{d_k}$). Both go back to the
# paper that introduced the scale, Vaswani et al. (2017), *Attention Is All You Need*, §3.2.1:
#
# > *"We suspect that for large values of $d_k$, the dot products grow large in magnitude,
# > pushing the softmax function into regions where it has extremely small gradients. To
# > counteract this effect, we scale the dot products by $\frac{1}{\sqrt{d_k}}$."*
#
# with its footnote 4: the dot product of two vectors with independent mean-0, variance-1
# entries has mean 0 and variance $d_k$ (notebook 02). "We suspect" is a conjecture; the paper
# does not test it. Notebook 04 showed the mechanism on a single softmax. This notebook follows
# the gradient through a whole head, by hand, and then trains heads, over several seeds and
# initialisations, to see when training really stalls.
#
# **Learning goals.** After this notebook you can
#
# 1. write the backward pass of one attention head (three matrix products and the softmax
#    Jacobian, then $W_Q$, $W_K$, $W_V$) in numpy, and check it with finite differences;
# 2. measure how the gradient reaching the scores collapses as the softmax saturates, with and
#    without $1/\sqrt{d_k}$;
# 3. train a head by gradient descent on a small retrieval task and watch the unscaled head
#    stall at $d_k = 256$, at every step size tried and for every seed;
# 4. say exactly when the stall happens (and when it does not): it is governed by the spread of
#    the scores, $c^2\,\mathrm{Var}(q)\mathrm{Var}(k)\,d_k$, and the scale is equivalent to a
#    smaller start and a smaller step.

# %%
import matplotlib.pyplot as plt
import numpy as np

from attnlib import examples, softmax  # softmax: row by row, the max subtracted (notebook 05)

np.set_printoptions(precision=4, suppress=True)
SEED = 9


# %% [markdown]
# ## 1. Forward, keeping what the backward pass needs
#
# The "it" example of notebook 03: four tokens, $d_\text{model} = d_k = d_v = 4$, hand-picked
# weights. The forward pass, one line per step:
#
# $$Q = XW_Q,\quad K = XW_K,\quad V = XW_V,\qquad S = \frac{QK^\top}{\sqrt{d_k}},\qquad
#   P = \mathrm{softmax}(S)\ \text{(row by row)},\qquad O = PV .$$
#
# To differentiate we need a number to differentiate: a **loss**. "It" refers to "Order", so
# let us ask that the output of "it" be the value of "Order":
#
# $$L = \tfrac12\,\lVert o_\text{it} - v_\text{Order}\rVert^2 ,$$
#
# with the target $v_\text{Order}$ held fixed (a copy of today's value, not something the weights
# can move).

# %%
X, W_Q, W_K, W_V = examples.ORDER_X, examples.ORDER_W_Q, examples.ORDER_W_K, examples.ORDER_W_V
tokens = examples.ORDER_TOKENS
IT, ORDER = tokens.index("it"), tokens.index("Order")
c = 1 / np.sqrt(W_Q.shape[1])  # the scale 1/sqrt(d_k) = 1/2


def forward(W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    S = c * Q @ K.T
    P = softmax(S)
    return Q, K, V, S, P, P @ V


target = (X @ W_V)[ORDER].copy()  # v_Order, held fixed


def loss_of(W_Q, W_K, W_V):
    O = forward(W_Q, W_K, W_V)[-1]
    return 0.5 * np.sum((O[IT] - target) ** 2)


Q, K, V, S, P, O = forward(W_Q, W_K, W_V)
print("weights of it:", P[IT])
print("o_it         :", O[IT])
print("v_Order      :", target)
print(f"L = {loss_of(W_Q, W_K, W_V):.6f}")

# %% [markdown]
# The weights and the output are notebook 03's: "it" puts 0.3875 of its weight on "Order",
# and its output $[1.6225, 0.3775, 1.8674, 1]$ is some way from $v_\text{Order} = [2, 0, 3, 1]$.

# %% [markdown]
# ## 2. Backward, one line per forward line
#
# Write $dA$ for $\partial L/\partial A$, a matrix of the shape of $A$. Two rules do all the
# work. For a product $Y = AB$: $\;dA = dY\,B^\top$ and $dB = A^\top dY$ (the shapes leave no
# other choice). For a softmax row $p$ (notebook 04): $\;ds = J^\top dp$ with
# $J = \mathrm{diag}(p) - pp^\top$, that is $ds_j = p_j\,(dp_j - \sum_l dp_l\,p_l)$.
# Walking the forward pass backwards:
#
# $$\begin{aligned}
# dO &= \text{row "it": } o_\text{it} - v_\text{Order},\ \text{other rows } 0\\
# O = PV \;&\Rightarrow\; dV = P^\top dO, \quad dP = dO\,V^\top\\
# P = \mathrm{softmax}(S) \;&\Rightarrow\; dS_{ij} = P_{ij}\big(dP_{ij} - \textstyle\sum_l dP_{il}P_{il}\big)\\
# S = c\,QK^\top \;&\Rightarrow\; dQ = c\,dS\,K, \quad dK = c\,dS^\top Q\\
# Q = XW_Q,\ \dots \;&\Rightarrow\; dW_Q = X^\top dQ, \quad dW_K = X^\top dK, \quad dW_V = X^\top dV
# \end{aligned}$$

# %% [markdown]
# ### Exercise: the softmax line, for any batch of rows
#
# Before reading the code below, turn the softmax line into numpy: `my_softmax_backward(p, g)`
# returns $\partial L/\partial s$ for weights `p` and upstream gradient `g = dL/dp`, both of shape
# `(..., n)`, row by row, without building $J$. Help: `ch11.softmax_backward.hint()`.

# %%
from attnlib.exercises import ch11


def my_softmax_backward(p, g):
    raise NotImplementedError  # replace this line with your code


ch11.softmax_backward.check(my_softmax_backward)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):


# %% jupyter={"outputs_hidden": true, "source_hidden": true}
def softmax_backward_solution(p, g):
    return p * (g - (p * g).sum(axis=-1, keepdims=True))  # ds_j = p_j (g_j - sum_l g_l p_l)


ch11.softmax_backward.check(softmax_backward_solution)

# %%
dO = np.zeros_like(O)
dO[IT] = O[IT] - target  # only the output of "it" enters the loss

dV = P.T @ dO  # O = P V
dP = dO @ V.T
dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True))  # softmax, row by row
dQ = c * dS @ K  # S = c Q K^T
dK = c * dS.T @ Q
dW_Q, dW_K, dW_V = X.T @ dQ, X.T @ dK, X.T @ dV  # Q = X W_Q, K = X W_K, V = X W_V

print("dL/dS, row of it:", dS[IT], " (keys:", ", ".join(tokens) + ")")
print("dL/dW_Q =\n", dW_Q)
print("dL/dW_K =\n", dW_K)
print("dL/dW_V =\n", dW_V)

# %% [markdown]
# Read the signs. The gradient on the score "it → Order" is negative: raising that score lowers
# the loss, so a step *against* the gradient will move weight onto "Order". Only rows 2 and 3 of
# $dW_Q$ are non-zero: only the query of "it" enters the loss, $x_\text{it} = [0, 0, 1, 1]$, and
# $dW_Q = X^\top dQ$ is then the outer product $x_\text{it}^\top\, dq_\text{it}$. Its columns 0
# and 1 are zero too (the `-0.` are rounding noise of order $10^{-16}$): every key has a 1 in
# coordinates 0 and 1, so moving $q_\text{it}$ along them adds the same amount to every score,
# and that changes no weight.
#
# The softmax line is the Jacobian of notebook 04 in disguise. Build $J$ for the row of "it" and
# compare (the tested `attnlib.softmax_jacobian` gives the same $J$):

# %%
from attnlib import softmax_jacobian

p_it = P[IT]
J = np.diag(p_it) - np.outer(p_it, p_it)  # J[i, j] = p_i (delta_ij - p_j)
print("J^T dp           :", J.T @ dP[IT])
print("p * (dp - dp . p):", dS[IT])
print("J equals attnlib.softmax_jacobian:", np.allclose(J, softmax_jacobian(p_it)))
print(f"the row of dS sums to {dS[IT].sum():.1e}: adding a constant to every score changes nothing")

# %% [markdown]
# ## 3. Check by finite differences
#
# A hand-derived gradient deserves a check that needs no calculus: nudge one weight by
# $\pm\varepsilon$ and watch the loss,
#
# $$\frac{\partial L}{\partial w} \approx \frac{L(w + \varepsilon) - L(w - \varepsilon)}{2\varepsilon},
#   \qquad \varepsilon = 10^{-6},$$
#
# for each of the 48 weights in $W_Q$, $W_K$ and $W_V$ (96 more forward passes).


# %%
def numerical_gradient(f, W, eps=1e-6):
    grad = np.zeros_like(W)
    for index in np.ndindex(W.shape):
        step = np.zeros_like(W)
        step[index] = eps
        grad[index] = (f(W + step) - f(W - step)) / (2 * eps)
    return grad


numeric = {
    "W_Q": numerical_gradient(lambda w: loss_of(w, W_K, W_V), W_Q),
    "W_K": numerical_gradient(lambda w: loss_of(W_Q, w, W_V), W_K),
    "W_V": numerical_gradient(lambda w: loss_of(W_Q, W_K, w), W_V),
}
for name, by_hand in (("W_Q", dW_Q), ("W_K", dW_K), ("W_V", dW_V)):
    error = np.abs(by_hand - numeric[name]).max()
    print(
        f"dL/d{name}: largest entry {np.abs(by_hand).max():.4f},"
        f" largest |by hand - finite differences| = {error:.1e}"
    )

# %% [markdown]
# Agreement to about $10^{-10}$, the accuracy central differences can reach in float64. The same
# backward pass, tested against finite differences on thousands of random inputs, is
# `attnlib.gradients` (`attention_backward` for $dQ, dK, dV$; `attention_head_backward` for the
# projections):

# %%
from attnlib.gradients import attention_backward, attention_head_backward

ref_Q, ref_K, ref_V = attention_head_backward(X, W_Q, W_K, W_V, dO)
ref_dQ, ref_dK, ref_dV = attention_backward(Q, K, V, dO)
print(
    "dW_Q, dW_K, dW_V equal attnlib's:",
    np.allclose(dW_Q, ref_Q),
    np.allclose(dW_K, ref_K),
    np.allclose(dW_V, ref_V),
)
print(
    "dQ, dK, dV equal attnlib's:",
    np.allclose(dQ, ref_dQ),
    np.allclose(dK, ref_dK),
    np.allclose(dV, ref_dV),
)

# %% [markdown]
# ## 4. One step downhill
#
# That is all training is: $W \leftarrow W - \eta\, dW$ for every weight matrix, repeated. One
# step with $\eta = 0.5$:

# %%
lr = 0.5
new = (W_Q - lr * dW_Q, W_K - lr * dW_K, W_V - lr * dW_V)
P_new = forward(*new)[4]
print(f"loss:                  {loss_of(W_Q, W_K, W_V):.4f} -> {loss_of(*new):.4f}")
print(f"weight of it on Order: {P[IT, ORDER]:.4f} -> {P_new[IT, ORDER]:.4f}")
print("weights of it:        ", P[IT], "->", P_new[IT])

# %% [markdown]
# The loss falls and "it" looks more at "Order". Every link in the chain was differentiable, so
# the error at the output reached $W_Q$ and $W_K$ (*where* to look) as well as $W_V$ (*what* to
# fetch). Which raises the question of this collection: how much of it reaches $W_Q$ and $W_K$
# when the softmax is saturated?

# %% [markdown]
# ## 5. The gradient reaching the scores, as $d_k$ grows
#
# On the way to $W_Q$ and $W_K$ every gradient passes the softmax line
# $dS_{ij} = P_{ij}(dP_{ij} - \sum_l dP_{il}P_{il})$, and each term carries a factor of the
# weights. For a one-hot row that factor kills everything (notebook 04). $dV = P^\top dO$ does not
# pass the softmax: *what* to fetch keeps learning; *where* to look may not.
#
# Measure it: random queries and keys with unit-variance entries (as notebook 02 assumes),
# 8 keys, random values and a random upstream gradient $dO$; for each query $i$ the size of
# $\partial L/\partial s_i$, the gradient reaching its row of scores. 200 draws of 8 queries
# per $d_k$, scaled and unscaled.

# %%
rng = np.random.default_rng(SEED)
T, n_draws, d_ks = 8, 200, 4 ** np.arange(6)  # d_k = 1, 4, 16, 64, 256, 1024
spread = {}  # (kind, d_k) -> the size of dL/ds_i for every query of every draw
for d in d_ks:
    Qr, Kr = rng.standard_normal((2, n_draws, T, d))
    Vr, dOr = rng.standard_normal((2, n_draws, T, 4))
    dPr = dOr @ Vr.transpose(0, 2, 1)
    raw = Qr @ Kr.transpose(0, 2, 1)
    for kind, scale in (("scaled", 1 / np.sqrt(d)), ("unscaled", 1.0)):
        Pr = softmax(scale * raw)
        dSr = Pr * (dPr - (dPr * Pr).sum(axis=-1, keepdims=True))
        spread[kind, d] = np.linalg.norm(dSr, axis=-1).ravel()

print("  d_k | median |dL/ds_i|     | unscaled queries:")
print("      |  scaled   unscaled  | below 1e-3   90th percentile")
for d in d_ks:
    s, u = spread["scaled", d], spread["unscaled", d]
    print(
        f" {d:4d} | {np.median(s):.2e}  {np.median(u):.2e} |"
        f"     {np.mean(u < 1e-3):4.0%}         {np.percentile(u, 90):.2e}"
    )

# %% [markdown]
# Scaled, the gradient reaching the scores is the same at every $d_k$. Unscaled, the typical
# (median) query's gradient falls about a million-fold by $d_k = 1024$; about half the queries
# get less than $10^{-3}$ at $d_k = 256$, most at 1024. The top tenth stays large because a few
# queries have their top two keys nearly tied, and a tied softmax is not saturated (the same
# luck as in notebook 04's lab): at $d_k = 1024$ one query in ten still gets more than a tenth
# of the scaled gradient. The lessons' "gradients vanish" is right for the typical query, which
# is why the plots below follow the median query.

# %% [markdown]
# ## 6. Does training really stall? A retrieval task
#
# A vanishing gradient is a prediction about training; let us train. The task: 16 query tokens
# and 16 key tokens (random embeddings, $d_\text{model} = 32$); key $i$ carries a value $v_i$
# ($d_v = 16$), and query $i$ must fetch $v_i$, so it must learn to look at key $i$ among all 16.
#
# $$O = \mathrm{softmax}\!\big(c\,(X_qW_Q)(X_kW_K)^\top\big)\,V, \qquad
#   L = \frac{1}{16}\sum_i \tfrac12\lVert o_i - v_i\rVert^2,$$
#
# a loss on what the head *outputs*, which is how every attention layer inside a transformer is
# trained: nothing ever tells it what its weights should be. We train $W_Q$ and $W_K$ only (the
# values are given), at $d_k = 256$, from the standard initialisation that gives $q$ and $k$
# unit-variance entries, **the same initialisation and step size for both runs**; the only
# difference is $c = 1/\sqrt{256}$ or $c = 1$. "Accuracy" is the share of queries whose largest
# weight is on their own key.

# %%
n_pairs, d_model, d_v, d_k = 16, 32, 16, 256
rng = np.random.default_rng(SEED)  # a fresh generator: the task is drawn as attnlib draws it
X_q = rng.standard_normal((n_pairs, d_model))  # query tokens
X_k = rng.standard_normal((n_pairs, d_model))  # key tokens; key i matches query i
V_r = rng.standard_normal((n_pairs, d_v))  # the value each key carries
W_Q0 = rng.standard_normal((d_model, d_k)) / np.sqrt(d_model)  # q = x W_Q: unit-variance entries
W_K0 = rng.standard_normal((d_model, d_k)) / np.sqrt(d_model)

raw0 = (X_q @ W_Q0) @ (X_k @ W_K0).T
print(f"std of q entries {np.std(X_q @ W_Q0):.2f}, of k entries {np.std(X_k @ W_K0):.2f}")
print(
    f"std of the scores at the start: unscaled {raw0.std():.1f},"
    f" scaled {raw0.std() / np.sqrt(d_k):.2f}"
)
top_weight0 = softmax(raw0).max(axis=1)  # each query's largest weight, unscaled
print(f"largest weight per query at the start, unscaled: median {np.median(top_weight0):.4f}")

# %% [markdown]
# The training loop is section 2's backward pass, without $W_V$, run 150 times:


# %%
def train(scale, lr, W_Q, W_K, steps=150):
    history = {"loss": [], "accuracy": [], "grad": []}  # grad: |dL/ds_i| of the median query
    for _ in range(steps + 1):
        Q, K = X_q @ W_Q, X_k @ W_K
        P = softmax(scale * Q @ K.T)
        E = P @ V_r - V_r  # o_i - v_i
        dP = E @ V_r.T / n_pairs  # backward, as in section 2
        dS = P * (dP - (dP * P).sum(axis=1, keepdims=True))
        history["loss"].append(0.5 * np.sum(E**2) / n_pairs)
        history["accuracy"].append(np.mean(P.argmax(axis=1) == np.arange(n_pairs)))
        history["grad"].append(np.median(np.linalg.norm(dS, axis=1)))
        W_Q, W_K = W_Q - lr * X_q.T @ (scale * dS @ K), W_K - lr * X_k.T @ (scale * dS.T @ Q)
    history["weights"] = P
    return {key: np.array(value) for key, value in history.items()}


SCALES = {"scaled": 1 / np.sqrt(d_k), "unscaled": 1.0}
STEP_SIZES = (0.001, 0.01, 0.1, 1.0)
runs = {
    (kind, lr): train(scale, lr, W_Q0, W_K0) for lr in STEP_SIZES for kind, scale in SCALES.items()
}

s, u = runs["scaled", 0.1], runs["unscaled", 0.1]
print("step size 0.1, the same for both runs:")
print(" step |  loss scaled  unscaled | accuracy scaled  unscaled")
for t in (0, 5, 10, 25, 50, 100, 150):
    print(
        f"  {t:3d} |       {s['loss'][t]:6.3f}    {u['loss'][t]:6.3f} |"
        f"          {s['accuracy'][t]:5.0%}     {u['accuracy'][t]:5.0%}"
    )

# %%
fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
for (kind, lr), style in (
    (("scaled", 0.1), "-"),
    (("unscaled", 0.1), "-"),
    (("scaled", 0.01), ":"),
    (("unscaled", 0.01), ":"),
):
    color = "tab:blue" if kind == "scaled" else "tab:orange"
    for ax, key in zip(axes, ("loss", "accuracy", "grad")):
        ax.plot(runs[kind, lr][key], style, color=color, label=f"{kind}, step size {lr}")
axes[0].set_title("loss")
axes[1].set_title("accuracy (query finds its key)")
axes[2].set_title(r"median query's $\|\partial L/\partial s_i\|$")
axes[1].set_ylim(-0.03, 1.03)
axes[2].set_yscale("log")
for ax in axes:
    ax.set_xlabel("training step")
handles, labels = axes[0].get_legend_handles_labels()
fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=9, frameon=False)
fig.suptitle(f"$d_k = {d_k}$: the same start, the same step sizes; only the scale differs")
fig.tight_layout(rect=(0, 0.07, 1, 1))
plt.show()

# %% [markdown]
# In this run (one task, one start: seed 9) the scaled head finds every key within 50 steps at
# step size 0.1 (more slowly at 0.01). The unscaled head does not learn: at step size 0.1 no
# query finds its key (chance level is 1 in 16), its loss even rises in the first steps and
# stays up, and the gradient reaching the typical query's scores collapses within a few steps,
# to about $10^{-29}$. At 0.01 the collapse is slower and the result the same: 2 of 16.
#
# **Maybe it just needs another step size?** The unscaled head's gradient with respect to the
# weights is larger (its scores are 16 times larger), so a fair test tries a range, from 1000
# times smaller to 10 times larger (the lab in section 10 adds 0.03):

# %%
# NBVAL_IGNORE_OUTPUT
# Exact figures of this one run. The unscaled losses differ in their last digits from machine to
# machine (a saturated softmax amplifies rounding differences); the next cell prints what holds.
print(f"{'step':>9} | {'final accuracy':^17} | {'final loss':^17} | best accuracy")
print(f"{'size':>9} | {'scaled':>7} {'unscaled':>9} | {'scaled':>7} {'unscaled':>9} | unscaled")
for lr in STEP_SIZES:
    s, u = runs["scaled", lr], runs["unscaled", lr]
    print(
        f"{lr:9g} | {s['accuracy'][-1]:7.0%} {u['accuracy'][-1]:9.0%} |"
        f" {s['loss'][-1]:7.3f} {u['loss'][-1]:9.3f} | {u['accuracy'].max():8.0%}"
    )

# %%
print(f"{'step size':>9} | final: scaled  unscaled | best unscaled | scaled final loss")
for lr in STEP_SIZES:
    s, u = runs["scaled", lr], runs["unscaled", lr]
    print(
        f"{lr:9g} | {s['accuracy'][-1] * n_pairs:9.0f}/16 {u['accuracy'][-1] * n_pairs:6.0f}/16 |"
        f" {u['accuracy'].max() * n_pairs:10.0f}/16 | {s['loss'][-1]:10.3f}"
    )
start = runs["unscaled", 0.1]["loss"][0]
lowest = min(runs["unscaled", lr]["loss"].min() for lr in STEP_SIZES)
print(f"unscaled loss, every step size: starts at {start:.1f}, stays above 10: {lowest > 10}")

# %% [markdown]
# In this run no step size rescues the unscaled head in 150 steps (about four times the 37 steps
# the scaled head needs to find all 16 keys at 0.1): at best 2 of 16 queries find their key.
# The scaled head finds every key at 0.1; at 0.01 and 0.001 it is still climbing after 150
# steps, and at 1.0 it overshoots (too large a step can push a scaled softmax into saturation
# too).
#
# **One run is one example.** Draw seven more tasks and starts (seeds 1 to 7) and train them all
# at the three larger step sizes (42 more runs, a few seconds). The exact counts of the unscaled
# runs differ in their last digits from machine to machine (chaos again), so the table of
# medians and ranges is printed exactly, and the cell after it states what holds with a margin.
# The runs use the tested `attnlib.retrieval.train_retrieval`, which is the loop above (checked
# below, on the same task drawn from the same seed).

# %%
from attnlib.retrieval import retrieval_problem, train_retrieval

SEEDS = (SEED, 1, 2, 3, 4, 5, 6, 7)
correct = {}  # (kind, lr) -> queries that find their key after each step, one row per seed
for lr in STEP_SIZES[1:]:
    for kind, scale in SCALES.items():
        rows = [runs[kind, lr]["accuracy"]]  # seed 9: the run above
        for seed in SEEDS[1:]:
            task = retrieval_problem(d_k=d_k, n_pairs=n_pairs, d_model=d_model, d_v=d_v, seed=seed)
            rows.append(train_retrieval(task, scale=scale, lr=lr, steps=150)["accuracy"])
        correct[kind, lr] = np.rint(np.array(rows) * n_pairs)


def all_found_at(counts):
    """The first step at which every query finds its key, for each seed (None: never)."""
    return [int(np.argmax(c == n_pairs)) if c.max() == n_pairs else None for c in counts]


# %%
# NBVAL_IGNORE_OUTPUT
# Exact medians and ranges over the 8 seeds (the unscaled ones vary by machine in the last count).
print(f"final correct of 16, over {len(SEEDS)} seeds: median [smallest, largest]")
print(f"{'step size':>9} | {'scaled':^16} | {'unscaled':^16} | scaled: seeds with 16/16, at step")
for lr in STEP_SIZES[1:]:
    cells = []
    for kind in SCALES:
        final = correct[kind, lr][:, -1]
        cells.append(f"{np.median(final):5.1f} [{final.min():2.0f}, {final.max():2.0f}]")
    found = [t for t in all_found_at(correct["scaled", lr]) if t is not None]
    print(f"{lr:9g} | {cells[0]:^16} | {cells[1]:^16} | {len(found)} of 8, {found}")

# %%
unscaled_final = np.array([correct["unscaled", lr][:, -1] for lr in STEP_SIZES[1:]])
scaled_final = correct["scaled", 0.1][:, -1]
print(
    "unscaled, every seed and step size: at most 7 of 16 at the end:",
    bool(unscaled_final.max() <= 7),
    "| median at most 4 of 16 at every step size:",
    bool(np.median(unscaled_final, axis=1).max() <= 4),
)
print(
    "scaled at step size 0.1: every seed at least 12 of 16 at the end:",
    bool(scaled_final.min() >= 12),
)

# %% [markdown]
# Over eight seeds the picture holds, with honest ranges: the unscaled head ends at a few
# queries out of 16 (0 to 3 in these runs; chance is 1), at every step size; the scaled head
# ends at 15 or 16 of 16 at step size 0.1, but finds *all* 16 keys within 150 steps only in
# some seeds (6 of 8 here, after 27 to 60 steps), so "finds every key" is a statement about
# seed 9, not a law.
#
# The check that `train_retrieval` is the loop of section 6:

# %%
problem = retrieval_problem(d_k=d_k, n_pairs=n_pairs, d_model=d_model, d_v=d_v, seed=SEED)
print(
    "same task as attnlib.retrieval:",
    all(np.array_equal(a, b) for a, b in zip(problem, (X_q, X_k, V_r, W_Q0, W_K0))),
)
ref = train_retrieval(problem, scale=1.0, lr=0.1, steps=150, keep_weights=True)
mine = runs["unscaled", 0.1]
print(
    "unscaled run, same loss, accuracy and gradient curves:",
    np.allclose(ref["loss"], mine["loss"]),
    np.array_equal(ref["accuracy"], mine["accuracy"]),
    np.allclose(np.median(ref["score_grad"], axis=1), mine["grad"]),
)

# %% [markdown]
# ## 7. Inside the stalled head
#
# After 150 steps at step size 0.1, the weights of all 16 queries:

# %%
from attnlib.pictures.heatmap import attention_heatmap

fig, axes = plt.subplots(1, 2, figsize=(9.5, 4.4))
fig.subplots_adjust(left=0.07, right=0.9, bottom=0.04, top=0.8, wspace=0.25)
for ax, kind in zip(axes, SCALES):
    image, _ = attention_heatmap(
        runs[kind, 0.1]["weights"], ax=ax, annotate=False, title=f"{kind}, after 150 steps"
    )
    ax.set_xticks(range(0, n_pairs, 3))
    ax.set_yticks(range(0, n_pairs, 3))
    ax.plot(range(n_pairs), range(n_pairs), "s", ms=7, mfc="none", mec="tab:red", mew=1)
fig.colorbar(image, ax=axes, shrink=0.8, pad=0.02, label="attention weight")
plt.show()

# %%
keys_looked_at = ref["weights"].argmax(axis=2)  # (steps + 1, 16): the key each query looks at
moved = np.flatnonzero((keys_looked_at[1:] != keys_looked_at[:-1]).any(axis=1)) + 1
print("unscaled: steps at which some query switched to another key:", moved)
top_weight = ref["weights"][-1].max(axis=1)
print(f"unscaled: every query's largest weight after 150 steps is at least {top_weight.min():.6f}")
print(
    "median query's gradient at the scores, step 0 -> 150:"
    f" scaled {runs['scaled', 0.1]['grad'][0]:.1e} -> {runs['scaled', 0.1]['grad'][-1]:.1e},"
    f" unscaled {runs['unscaled', 0.1]['grad'][0]:.1e} -> {runs['unscaled', 0.1]['grad'][-1]:.1e}"
)

# %% [markdown]
# The red squares mark the key each query should find. The scaled head has put its weight on
# them. The unscaled head's rows are one-hot, each on some other key. In its first few steps the
# updates (large, since its scores are 16 times larger) throw queries from one wrong key to
# another, each time deeper into saturation; after that no query ever moves again: every term
# $P_{ij}(dP_{ij} - \dots)$ of the softmax line is 0, or 1 times 0, so no gradient reaches
# $W_Q$ and $W_K$. (The scaled head's gradient shrinks too, for the good reason: its loss is
# nearly 0.) This is the source lessons' central claim, measured.

# %% [markdown]
# ## 8. When the stall happens, and what the scale really is
#
# Two honest footnotes make the claim precise.
#
# **A loss on the weights themselves does not stall.** Suppose we told the head directly which
# key to attend to, with the cross-entropy $L_i = -\ln P_{ii}$. Its gradient at the scores is
#
# $$\frac{\partial L_i}{\partial s_{ij}} = P_{ij} - \delta_{ij},$$
#
# with no factor that vanishes: when the softmax is one-hot on the wrong key, this is $+1$ there
# and $-1$ at the right key (the $\ln$ undoes the $\exp$, and the Jacobian cancels out). Train
# the same task with it, at step size 0.03:

# %%
for kind, scale in SCALES.items():
    ce = train_retrieval(problem, scale=scale, lr=0.03, steps=150, loss="cross_entropy")
    steps_shown = (0, 5, 10, 20, 50, 150)
    print(
        f"cross-entropy, {kind:>8}: accuracy at steps {steps_shown}:",
        " ".join(f"{ce['accuracy'][t]:4.0%}" for t in steps_shown),
    )

# %% [markdown]
# Both learn, and the unscaled head is even faster. So the stall needs its condition: it
# happens when the loss reaches the scores **through the softmax's Jacobian**, as it does in
# every attention layer of a transformer, where the loss only sees the outputs $PV$.
#
# <details><summary>A note on the lessons' wording</summary>
#
# The lessons say, in general terms, that omitting the scale "makes a network fail to learn"
# and that "the layer stops learning". Our runs agree for a head trained through its outputs,
# which is the case that matters in a transformer. A loss placed on the attention weights
# themselves, like the cross-entropy above, escapes the vanishing Jacobian, so the statement is
# not true of every training setup. The mechanism the lessons give (the factor
# $p_i(\delta_{ij} - p_j)$) is exactly what decides it.
#
# </details>
#
# **The scale is equivalent to a smaller start and a smaller step.** Dropping $c$ multiplies
# the scores by $\sqrt{d_k}$. Divide the starting $W_Q$ and $W_K$ by $d_k^{1/4}$ each and the
# scores at step 0 are exactly the scaled ones; the chain rule then shows that plain gradient
# descent needs its step divided by $\sqrt{d_k}$ to take the same path. Check, at $d_k = 256$
# ($d_k^{1/4} = 4$, $\sqrt{d_k} = 16$):

# %%
shrunk = problem._replace(W_Q=W_Q0 / d_k**0.25, W_K=W_K0 / d_k**0.25)
twin = train_retrieval(shrunk, scale=1.0, lr=0.1 / np.sqrt(d_k), steps=150)
difference = np.abs(twin["loss"] - runs["scaled", 0.1]["loss"]).max()
print(
    "unscaled, weights / 4 and step / 16, vs scaled: losses differ by < 1e-12:",
    difference < 1e-12,
)

# %% [markdown]
# The same run, to rounding. So the scale is not magic: an unscaled head can learn if its
# initialisation and step size are retuned for each $d_k$. What $1/\sqrt{d_k}$ buys is that
# nobody has to: the standard unit-variance initialisation and one step size work at every
# $d_k$, because the scores keep a standard deviation of about 1.

# %% [markdown]
# ## 9. What governs the stall: the spread of the scores
#
# The equivalence says what really matters. Scale $c$, query entries of variance
# $\mathrm{Var}(q)$ and key entries of variance $\mathrm{Var}(k)$ give scores of variance
#
# $$\mathrm{Var}(s) = c^2\,\mathrm{Var}(q)\,\mathrm{Var}(k)\,d_k$$
#
# (notebook 02's argument with variances $\sigma^2$). Dividing both starting weights by
# $d_k^{1/4}$ divides $\mathrm{Var}(q)\mathrm{Var}(k)$ by $\sqrt{d_k}$, exactly what $c^2 = 1/d_k$
# does (with the step divided by $\sqrt{d_k}$). So an unscaled head should stall only when its spread is large,
# whatever made it large. The unit-variance start at $d_k = 256$ has $\mathrm{Var}(s) = 256$
# unscaled (a standard deviation of 16). PyTorch's default `nn.Linear` initialisation draws each
# weight uniformly from $\pm 1/\sqrt{d_\text{model}}$, which gives $\mathrm{Var}(q) =
# \mathrm{Var}(k) = 1/3$; at $d_k = 64$ that is $\mathrm{Var}(s) = 64/9 \approx 7$ unscaled (a
# standard deviation of 2.7), and $1/9$ scaled. Train that start, over the same eight seeds:

# %%
torch_dk = 64
spread_of, variance_q = {"scaled": [], "unscaled": []}, []
torch_correct = {}  # (kind, lr) -> final correct count, one per seed
for seed in SEEDS:
    task = retrieval_problem(d_k=torch_dk, n_pairs=n_pairs, d_model=d_model, d_v=d_v, seed=seed)
    bound = 1 / np.sqrt(d_model)  # nn.Linear's default: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    init = np.random.default_rng(seed).uniform(-bound, bound, (2, d_model, torch_dk))
    task = task._replace(W_Q=init[0], W_K=init[1])
    q, k = task.X_q @ task.W_Q, task.X_k @ task.W_K
    variance_q.append(np.var(q))
    raw = q @ k.T
    for kind, scale in (("scaled", 1 / np.sqrt(torch_dk)), ("unscaled", 1.0)):
        spread_of[kind].append(np.var(scale * raw))
        for lr in (0.01, 0.1):
            final = train_retrieval(task, scale=scale, lr=lr, steps=150)["accuracy"][-1]
            torch_correct.setdefault((kind, lr), []).append(round(final * n_pairs))

print(
    f"PyTorch's init, d_k = {torch_dk}, medians over the seeds:"
    f" Var(q) = {np.median(variance_q):.2f};"
)
print(
    "variance of the scores at the start: scaled"
    f" {np.median(spread_of['scaled']):.2f}, unscaled {np.median(spread_of['unscaled']):.1f}"
)

# %%
# NBVAL_IGNORE_OUTPUT
# Exact medians and ranges (the unscaled runs vary by machine in the last count).
for lr in (0.01, 0.1):
    cells = [
        f"{kind} {np.median(torch_correct[kind, lr]):4.1f}"
        f" [{min(torch_correct[kind, lr])}, {max(torch_correct[kind, lr])}]"
        for kind in ("scaled", "unscaled")
    ]
    print(f"step size {lr:4g}: final correct of 16, median [range]:", ",  ".join(cells))

# %%
median_of = {key: np.median(value) for key, value in torch_correct.items()}
print(
    "step size 0.01: unscaled learns about as well as scaled (medians within 3 of 16):",
    bool(abs(median_of["unscaled", 0.01] - median_of["scaled", 0.01]) <= 3),
)
print(
    "step size 0.1:  unscaled falls far behind (median at least 6 of 16 lower):",
    bool(median_of["scaled", 0.1] - median_of["unscaled", 0.1] >= 6),
)

# %% [markdown]
# With PyTorch's start at $d_k = 64$ the unscaled head is *not* stuck: its spread of about 7 is
# large, but not the 256 of section 6, and at step size 0.01 it learns about as well as the
# scaled head. From 0.1 up it fails, because its larger scores make each step throw the queries
# into saturation (section 7). The lessons' "training stalls" is a statement about a large
# spread of the scores, not about the missing $1/\sqrt{d_k}$ as such. What the scale does is
# keep that spread at $\mathrm{Var}(q)\mathrm{Var}(k)$ whatever the width $d_k$: with it, an
# initialisation and a step size that work at one width work at all of them.

# %% [markdown]
# ## 10. The lab: scrub through training
#
# The lab trains the retrieval head at $d_k$ = 4, 16, 64 and 256, scaled and unscaled, at step
# size 0.03 (150 steps each, once, when it is built), and lets you scrub through the runs. Left:
# the loss of both runs. Middle: the gradient reaching the scores (log scale). Right: the
# weights of all 16 queries at the chosen step, with the target keys outlined in red.
#
# *Try:* at $d_k = 256$, drag the step slider with the scale off, then tick it. Then lower
# $d_k$: at 4 the scale hardly matters (it only halves the scores), at 16 the unscaled head
# still learns, slowly, and from 64 on it is stuck. (Without a running kernel you see a
# picture of the lab's starting state.)

# %%
# NBVAL_IGNORE_OUTPUT
from attnlib.widgets.gradients import gradient_lab

gradient_lab()

# %% [markdown]
# ## Check yourself
#
# 1. In section 2, $dW_Q$ is zero in rows 0 and 1, but $dW_K$ is not. Why the difference?
# 2. The cross-entropy gradient at the scores is $P_{ij} - \delta_{ij}$; the squared error's
#    is $P_{ij}(dP_{ij} - \sum_l dP_{il}P_{il})$. For a softmax that is one-hot on the *wrong*
#    key, what is each?
# 3. You remove $1/\sqrt{d_k}$ from a head with $d_k = 64$ trained by plain gradient descent.
#    What two changes make its training exactly what it was? And what is the variance of its
#    scores at the start with PyTorch's initialisation, $\mathrm{Var}(q) = \mathrm{Var}(k) = 1/3$?
#
# <details><summary>Answers</summary>
#
# 1. $dW_Q = X^\top dQ$ and only the query of "it" enters the loss, so $dQ$ is zero except in
#    the row of "it", and $dW_Q = x_\text{it}^\top dq_\text{it}$ with $x_\text{it} = [0, 0, 1, 1]$.
#    But "it" looks at *every* key, so every row of $dK$ can be non-zero, and $dW_K = X^\top dK$
#    collects all four tokens.
# 2. Cross-entropy: $+1$ at the wrong winner, $-1$ at the right key, 0 elsewhere, a full-size
#    gradient. Squared error: every term has a factor $P_{ij}$ that is 0, or the winner's
#    $P_{ij} = 1$ times $(dP_{ij} - dP_{ij}) = 0$, so all of it is (nearly) 0.
# 3. Divide the starting $W_Q$ and $W_K$ by $64^{1/4} = 2\sqrt 2 \approx 2.83$, and the step size
#    by $\sqrt{64} = 8$ (section 8 checks this at $d_k = 256$). The variance of the scores is
#    $\mathrm{Var}(q)\mathrm{Var}(k)\,d_k = 64/9 \approx 7.1$ without the scale, $1/9$ with it
#    (section 9).
#
# </details>

# %% [markdown]
# ## Summary
#
# - Backward through a head is the forward pass read in reverse: $dV = P^\top dO$,
#   $dP = dO\,V^\top$, $dS = P \odot (dP - \text{rowsum}(dP \odot P))$ (the softmax Jacobian),
#   $dQ = c\,dS\,K$, $dK = c\,dS^\top Q$, then $dW = X^\top d(\cdot)$. Finite differences agree
#   to about $10^{-10}$.
# - Every path to $W_Q$ and $W_K$ passes the softmax Jacobian; for unscaled scores at large
#   $d_k$ it is nearly zero for the typical query ($10^{-6}$ at $d_k = 1024$), scaled it is the
#   same at every $d_k$.
# - Trained through its outputs at $d_k = 256$ from a unit-variance start, the unscaled head
#   stalls near chance at every step size from 0.001 to 1, over eight seeds (at most a few of 16
#   queries find their key); the scaled head, from the same starts, ends at 15-16 of 16 at step
#   size 0.1 (all 16 in most seeds).
# - The stall is governed by the spread of the scores, $c^2\mathrm{Var}(q)\mathrm{Var}(k)d_k$:
#   with PyTorch's default initialisation ($\mathrm{Var}(q) = 1/3$) at $d_k = 64$, the unscaled
#   head learns about as well as the scaled one at step size 0.01 and fails from 0.1 up. The
#   scale keeps the spread fixed whatever the width.
# - The stall needs the Jacobian on the path: a cross-entropy on the weights themselves learns
#   unscaled. And the scale is equivalent to dividing the initial $W_Q, W_K$ by $d_k^{1/4}$ and
#   the step by $\sqrt{d_k}$: it makes one standard setting work at every $d_k$.
#
# Next: **12 · Active recall**, questions across the whole sequence.
