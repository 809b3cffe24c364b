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
# > *"Crucially, every operation within this formula [...] is differentiable. This allows
# > gradients from a downstream loss function to flow back through the entire mechanism,
# > enabling the weight matrices $W_Q, W_K, W_V$ to be optimized end-to-end via standard
# > backpropagation."*
#
# and another puts the lessons' central claim in four words: *"Gradients vanish. Training
# stalls."* (without $1/\sqrt{d_k}$). Both go back to a conjecture of Vaswani et al. (2017,
# §3.2.1, quoted in notebook 02): large dot products push the softmax "into regions where it has
# extremely small gradients". The paper does not test it; we do, through a whole head, then by
# training heads over several seeds and initialisations.
#
# **Learning goals.** After this notebook you can
#
# 1. write the backward pass of one attention head in numpy and check it by finite differences;
# 2. train a head and watch the unscaled one stall at $d_k = 256$, at every step size and seed
#    tried;
# 3. say when the stall happens (the softmax's Jacobian on the path, a large spread of the
#    scores) and why the scale equals a smaller start and a smaller step.

# %%
import matplotlib.pyplot as plt
import numpy as np

from attnlib import examples, softmax  # softmax: row by row, the max subtracted (notebook 05)

np.set_printoptions(precision=4, suppress=True)
SEED = 9


# %% [markdown]
# ## 1. Forward, keeping what the backward pass needs
#
# The "it" example of notebook 03 (four tokens, $d_\text{model} = d_k = d_v = 4$):
#
# $$Q = XW_Q,\quad K = XW_K,\quad V = XW_V,\qquad S = \frac{QK^\top}{\sqrt{d_k}},\qquad
#   P = \mathrm{softmax}(S)\ \text{(row by row)},\qquad O = PV .$$
#
# To differentiate we need a **loss**. "It" refers to "Order", so we ask that the output of "it"
# be the value of "Order": $L = \tfrac12\,\lVert o_\text{it} - v_\text{Order}\rVert^2$, with the
# target held fixed (a copy, not something the weights can move).

# %%
X, W_Q, W_K, W_V = examples.ORDER_X, examples.ORDER_W_Q, examples.ORDER_W_K, examples.ORDER_W_V
tokens = examples.ORDER_TOKENS
IT, ORDER = tokens.index("it"), tokens.index("Order")
c = 1 / np.sqrt(W_Q.shape[1])  # the scale 1/sqrt(d_k) = 1/2


def forward(W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    P = softmax(c * Q @ K.T)
    return Q, K, V, P, P @ V


target = (X @ W_V)[ORDER].copy()  # v_Order, held fixed


def loss_of(W_Q, W_K, W_V):
    return 0.5 * np.sum((forward(W_Q, W_K, W_V)[-1][IT] - target) ** 2)


Q, K, V, P, O = forward(W_Q, W_K, W_V)
print("weights of it:", P[IT], " o_it:", O[IT], f" L = {loss_of(W_Q, W_K, W_V):.6f}")

# %% [markdown]
# Notebook 03's numbers: "it" puts 0.3875 of its weight on "Order", and its output is some way
# from $v_\text{Order} = [2, 0, 3, 1]$.
#
# ## 2. Backward, one line per forward line
#
# Write $dA$ for $\partial L/\partial A$, a matrix of the shape of $A$. Two rules do all the
# work. For a product $Y = AB$: $\;dA = dY\,B^\top$ and $dB = A^\top dY$ (the shapes leave no
# other choice). For a softmax row $p$: $\;ds = J^\top dp$ with notebook 04's Jacobian
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
# solution (click to expand)
def softmax_backward_solution(p, g):
    return p * (g - (p * g).sum(axis=-1, keepdims=True))  # ds_j = p_j (g_j - sum_l g_l p_l)


ch11.softmax_backward.check_solution(softmax_backward_solution)

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

# %% [markdown]
# Read the signs. The gradient on the score "it → Order" is negative: raising that score lowers
# the loss, so a step *against* the gradient moves weight onto "Order". Only rows 2 and 3 of
# $dW_Q$ are non-zero: only the query of "it" enters the loss, and $x_\text{it} = [0, 0, 1, 1]$.
#
# <details><summary>Why columns 0 and 1 are zero too</summary>
#
# Every key has a 1 in coordinates 0 and 1, so moving $q_\text{it}$ along them adds the same
# amount to every score of "it", and the softmax ignores a constant added to a row: no weight
# changes, so the loss has no gradient in those directions (the `-0.` are rounding noise of
# order $10^{-16}$). The optional section at the end checks the same fact from the other side
# (each row of $dS$ sums to 0), and that the softmax line is $J^\top dp$.
#
# </details>
#
# ## 3. Check by finite differences
#
# A check that needs no calculus: nudge one weight by $\pm\varepsilon$ and watch the loss,
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


for name, by_hand, W, f in (
    ("W_Q", dW_Q, W_Q, lambda w: loss_of(w, W_K, W_V)),
    ("W_K", dW_K, W_K, lambda w: loss_of(W_Q, w, W_V)),
    ("W_V", dW_V, W_V, lambda w: loss_of(W_Q, W_K, w)),
):
    error = np.abs(by_hand - numerical_gradient(f, W)).max()
    print(f"dL/d{name}: largest entry {np.abs(by_hand).max():.4f}, largest error {error:.1e}")

# %% [markdown]
# Agreement to about $10^{-10}$, the accuracy central differences can reach in float64 (the
# optional section also compares the tested `attnlib.gradients`).
#
# ## 4. One step downhill
#
# That is all training is: $W \leftarrow W - \eta\, dW$ for every weight matrix, repeated. One
# step with $\eta = 0.5$:

# %%
lr = 0.5
new = (W_Q - lr * dW_Q, W_K - lr * dW_K, W_V - lr * dW_V)
P_new = forward(*new)[3]
print(f"loss:                  {loss_of(W_Q, W_K, W_V):.4f} -> {loss_of(*new):.4f}")
print(f"weight of it on Order: {P[IT, ORDER]:.4f} -> {P_new[IT, ORDER]:.4f}")

# %% [markdown]
# The loss falls and "it" looks more at "Order": the error reached $W_Q$ and $W_K$ (*where* to
# look), not only $W_V$ (*what* to fetch). But every path to $W_Q$ and $W_K$ passes the softmax
# line, whose Jacobian notebook 04 found near zero for unscaled scores at large $d_k$ (about
# $10^{-6}$ at $d_k = 1024$; the optional section measures the same collapse in a head).
#
# ## 5. Does training really stall? A retrieval task
#
# A vanishing gradient is a prediction; let us train. In the task of `attnlib.retrieval`, query
# token $i$ of 16 must fetch the value $v_i$ of key token $i$ of 16 (random embeddings,
# $d_\text{model} = 32$, $d_v = 16$), so it must learn to look at key $i$.
# The loss is on the head's *outputs*, as in every attention layer of a transformer:
# $L = \frac{1}{16}\sum_i \tfrac12\lVert o_i - v_i\rVert^2$. We train $W_Q$ and $W_K$ at
# $d_k = 256$ from the standard start (unit-variance $q$ and $k$), **the same start and step
# size for both runs**; only $c = 1/\sqrt{256}$ or $c = 1$ differs. Eight tasks and starts are
# drawn (seeds 9 and 1 to 7); seed 9 first.

# %%
from attnlib.retrieval import retrieval_problem

n_pairs, d_k, SEEDS = 16, 256, (SEED, 1, 2, 3, 4, 5, 6, 7)
task = retrieval_problem(d_k=d_k, n_pairs=n_pairs, seed=SEED)
raw0 = (task.X_q @ task.W_Q) @ (task.X_k @ task.W_K).T  # the scores at the start, unscaled
print(f"std of the scores at the start: unscaled {raw0.std():.1f}, scaled {raw0.std() / 16:.2f}")

# %% [markdown]
# The training loop is section 2's backward pass, without $W_V$, and section 4's step, 150 times:


# %%
def train(task, scale, lr, steps=150):
    X_q, X_k, V, W_Q, W_K = task  # one task, or a stack of tasks along a first axis
    history = {"loss": [], "looks_at": [], "grad": []}
    for _ in range(steps + 1):
        Q, K = X_q @ W_Q, X_k @ W_K
        P = softmax(scale * Q @ K.mT)
        E = P @ V - V  # o_i - v_i
        dP = E @ V.mT / n_pairs  # backward, as in section 2
        dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True))
        history["loss"].append(0.5 * np.sum(E**2, axis=(-2, -1)) / n_pairs)
        history["looks_at"].append(P.argmax(axis=-1))  # the key each query looks at
        history["grad"].append(np.median(np.linalg.norm(dS, axis=-1), axis=-1))  # median query
        W_Q, W_K = W_Q - lr * X_q.mT @ (scale * dS @ K), W_K - lr * X_k.mT @ (scale * dS.mT @ Q)
    history = {key: np.array(value) for key, value in history.items()}
    history["correct"] = (history["looks_at"] == np.arange(n_pairs)).sum(axis=-1)
    history["weights"] = P  # after the last step
    return history


SCALES, STEP_SIZES = {"scaled": 1 / np.sqrt(d_k), "unscaled": 1.0}, (0.001, 0.01, 0.1, 1.0)
runs = {(kind, lr): train(task, SCALES[kind], lr) for lr in STEP_SIZES for kind in SCALES}

# %% [markdown]
# (Plotting code collapsed; the optional section prints the 0.1 runs step by step.)

# %% jupyter={"source_hidden": true}
fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
for (kind, lr), style in (
    (("scaled", 0.1), "-"),
    (("unscaled", 0.1), "-"),
    (("scaled", 0.01), ":"),
    (("unscaled", 0.01), ":"),
):
    color = "tab:blue" if kind == "scaled" else "tab:orange"
    curves = {"loss": runs[kind, lr]["loss"], "accuracy": runs[kind, lr]["correct"] / n_pairs}
    curves["grad"] = runs[kind, lr]["grad"]
    for ax, key in zip(axes, ("loss", "accuracy", "grad")):
        ax.plot(curves[key], style, color=color, label=f"{kind}, step size {lr}")
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
# *Figure:* Loss, accuracy and the median query's gradient (log scale) over 150 steps, scaled and
# unscaled, at step sizes 0.1 and 0.01; only scaled heads find their keys.
#
# At step size 0.1 the scaled head of seed 9 finds every key (at step 37). The unscaled head does
# not learn: its loss rises in the first steps and stays up, and the gradient reaching the
# typical query's scores collapses within a few steps, to below $10^{-20}$. **Another step
# size?** Its scores are 16 times larger, so try a range, from 100 times smaller to 10 times
# larger (unscaled counts vary by machine, so the cell states a margin):

# %%
print("step size | scaled: final correct | unscaled: best of the 150 steps at most 4 of 16")
for lr in STEP_SIZES:
    s_, u_ = runs["scaled", lr]["correct"], runs["unscaled", lr]["correct"]
    print(f"{lr:9g} | {s_[-1]:18d}/16 | {u_.max() <= 4}")

# %% [markdown]
# No step size rescues the unscaled head in 150 steps (four times the 37 the scaled head needs):
# at best a few of 16 queries find their key (2 in the run stored here), chance is 1. (The scaled
# head is still climbing at 0.01 and 0.001, and overshoots at 1.0.)
#
# **One run is one example.** The other seven seeds follow, unscaled at the three larger step
# sizes and scaled at 0.1, all at once (`train` takes a stack of tasks; `.mT` is `.T` for it).
# The cell prints the scaled figures over the seeds (median and range) and states with a margin
# what holds of the unscaled ones; the optional section prints the exact unscaled counts.


# %%
def stacked(d_k, seeds):  # the tasks of these seeds, each array stacked along a first axis
    return [np.stack(a) for a in zip(*(retrieval_problem(d_k, n_pairs, seed=s) for s in seeds))]


SWEPT = (("unscaled", 0.01), ("unscaled", 0.1), ("unscaled", 1.0), ("scaled", 0.1))
others = stacked(d_k, SEEDS[1:])  # seeds 1 to 7
correct = {}  # (kind, lr) -> correct of 16 after each step, (steps + 1, 8): seed 9 first
for kind, lr in SWEPT:
    seeds_1_to_7 = train(others, SCALES[kind], lr)["correct"]  # (steps + 1, 7)
    correct[kind, lr] = np.column_stack([runs[kind, lr]["correct"], seeds_1_to_7])
unscaled_final = np.array([correct[key][-1] for key in SWEPT[:3]])  # (step sizes, seeds)
print("unscaled, every seed and step size: at most 7 of 16:", bool(unscaled_final.max() <= 7))
print("unscaled, median at every step size at most 4:", np.median(unscaled_final, 1).max() <= 4)
sc = correct["scaled", 0.1]  # scaled training is not chaotic: the same on every machine
found = [int(np.argmax(c == 16)) for c in sc.T if c.max() == 16]  # the step a seed gets there
print(
    f"scaled at 0.1, final correct: median {np.median(sc[-1]):g} [{sc[-1].min()}, {sc[-1].max()}]"
)
print(f"scaled at 0.1, all 16 found: {len(found)} of 8 seeds, at step {min(found)} to {max(found)}")

# %% [markdown]
# Over eight seeds the unscaled head ends at a few of 16 (0 to 3 in the run stored here) at
# every step size; the scaled head at 15 or 16, finding *all* 16 only in 6 of 8 seeds (after 27
# to 60 steps): "finds every key" is a statement about seed 9, not a law.
#
# ## 6. Inside the stalled head
#
# Seed 9 at step size 0.1 (plotting code collapsed):

# %% jupyter={"source_hidden": true}
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

# %% [markdown]
# *Figure:* Weights of the 16 queries after 150 steps, target keys outlined by squares: scaled
# (left), on the targets; unscaled (right), one-hot rows, each on a wrong key.
# The unscaled head's first, large updates throw queries from one wrong key to another, deeper
# into saturation; after the first few steps no query moves (the optional section checks it).
# Every term $P_{ij}(dP_{ij} - \dots)$ of the softmax line is then 0, or 1 times 0: no gradient
# reaches $W_Q$ and $W_K$. The lessons' central claim, measured.
#
# ## 7. When the stall happens, and what the scale really is
#
# **A loss on the weights themselves does not stall.** Told directly which key to attend to, by
# the cross-entropy $L_i = -\ln P_{ii}$, the head gets the gradient
# $\partial L_i/\partial s_{ij} = P_{ij} - \delta_{ij}$ at its scores: no vanishing factor
# ($+1$ at a wrong winner, $-1$ at the right key). Train the same task with it, at step size 0.03
# (with the tested `train_retrieval`, the loop above; the optional section checks they agree):

# %%
from attnlib.retrieval import train_retrieval

for kind, scale in SCALES.items():
    ce = train_retrieval(task, scale=scale, lr=0.03, steps=150, loss="cross_entropy")
    shown = " ".join(f"{ce['accuracy'][t]:4.0%}" for t in (0, 5, 10, 20, 50, 150))
    print(f"cross-entropy, {kind:>8}: accuracy at steps (0, 5, 10, 20, 50, 150): {shown}")

# %% [markdown]
# Both learn, the unscaled head even faster. So the stall has a condition: the loss reaches the
# scores **through the softmax's Jacobian**, as in a transformer, where it only sees $PV$.
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
# **The scale equals a smaller start and a smaller step.** Dropping $c$ multiplies the scores by
# $\sqrt{d_k}$. Divide the starting $W_Q$ and $W_K$ by $d_k^{1/4}$ each and the scores at step 0
# are the scaled ones; the chain rule then shows that gradient descent needs its step divided by
# $\sqrt{d_k}$ to take the same path. At $d_k = 256$ ($d_k^{1/4} = 4$, $\sqrt{d_k} = 16$):

# %%
shrunk = task._replace(W_Q=task.W_Q / 4, W_K=task.W_K / 4)
twin = train_retrieval(shrunk, scale=1.0, lr=0.1 / 16, steps=150)
difference = np.abs(twin["loss"] - runs["scaled", 0.1]["loss"]).max()
print(
    "unscaled, weights / 4 and step / 16, vs scaled: losses differ by < 1e-12:", difference < 1e-12
)

# %% [markdown]
# The same run, to rounding: an unscaled head learns if its start and step are retuned for each
# $d_k$; $1/\sqrt{d_k}$ makes one standard setting work at every $d_k$.
#
# ## 8. What governs the stall: the spread of the scores
#
# With query and key entries of variances $\mathrm{Var}(q)$ and $\mathrm{Var}(k)$, the scores
# have variance $\mathrm{Var}(s) = c^2\,\mathrm{Var}(q)\,\mathrm{Var}(k)\,d_k$ (notebook 02), and
# the smaller start above divides $\mathrm{Var}(q)$ and $\mathrm{Var}(k)$ by $\sqrt{d_k}$ each,
# so their product by $d_k$, just as $c^2 = 1/d_k$ does. So an unscaled head should stall only
# when this spread is large (256 for the unit-variance start at $d_k = 256$), whatever made it
# large. PyTorch's default `nn.Linear`
# start draws each weight uniformly from $\pm 1/\sqrt{d_\text{model}}$, so
# $\mathrm{Var}(q) = \mathrm{Var}(k) = 1/3$, and at $d_k = 64$ $\mathrm{Var}(s) = 64/9 \approx 7$
# unscaled, $1/9$ scaled (the optional section measures both). Train that start, over the same
# eight seeds:

# %%
bound = 1 / np.sqrt(32)  # nn.Linear's default: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
W8 = np.stack([np.random.default_rng(seed).uniform(-bound, bound, (2, 32, 64)) for seed in SEEDS])
torch_tasks = stacked(64, SEEDS)[:3] + [W8[:, 0], W8[:, 1]]  # eight tasks, PyTorch's start
torch_correct = {  # (kind, lr) -> correct of 16 at the end, one per seed
    (kind, lr): train(torch_tasks, scale, lr)["correct"][-1]
    for kind, scale in {"scaled": 1 / np.sqrt(64), "unscaled": 1.0}.items()
    for lr in (0.01, 0.1)
}
m = {key: np.median(value) for key, value in torch_correct.items()}  # over the seeds
gap = {lr: m["scaled", lr] - m["unscaled", lr] for lr in (0.01, 0.1)}
print("step size 0.01: unscaled median within 3 of 16 of scaled:", abs(gap[0.01]) <= 3)
print("step size 0.1:  unscaled median at least 6 of 16 lower:", gap[0.1] >= 6)

# %% [markdown]
# From PyTorch's start at $d_k = 64$ (a spread of about 7, not 256) the unscaled head is *not*
# stuck: at step size 0.01 it learns about as well as the scaled head (medians of about 13 of 16
# for both); at 0.1 it falls behind (about 6 against 16), its larger scores throwing the queries
# into saturation. "Training stalls" is about a large spread of the scores, not the missing
# $1/\sqrt{d_k}$ as such; the scale keeps the spread at $\mathrm{Var}(q)\mathrm{Var}(k)$ at every
# width, so one start and step size work at all widths.
#
# ## 9. The lab: scrub through training
#
# The lab trains the retrieval head at $d_k$ = 4, 16, 64 and 256, scaled and unscaled, at step
# size 0.03, when it is built. Left: the loss; middle: the gradient reaching the scores (log
# scale); right: the weights of the 16 queries at the chosen step, target keys outlined in red.
#
# *Try:* at $d_k = 256$, drag the step slider with the scale off, then tick it. Then lower
# $d_k$: at 4 the scale hardly matters, at 16 the unscaled head learns slowly, from 64 on it is
# stuck. (Without a running kernel you see a picture of the lab's starting state.)

# %%
# NBVAL_IGNORE_OUTPUT
from attnlib.labs import gradient_lab

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
#    by $\sqrt{64} = 8$ (section 7 checks this at $d_k = 256$). The variance of the scores is
#    $\mathrm{Var}(q)\mathrm{Var}(k)\,d_k = 64/9 \approx 7.1$ without the scale, $1/9$ with it
#    (section 8).
#
# </details>
#
# ## Summary
#
# - Backward through a head is the forward pass read in reverse (checked to $10^{-10}$).
# - Trained through its outputs at $d_k = 256$, the unscaled head stalls near chance at every
#   step size and seed tried; the scaled one ends at 15-16 of 16 at step size 0.1.
# - The stall needs the Jacobian on the path and a large spread
#   $c^2\mathrm{Var}(q)\mathrm{Var}(k)d_k$ (from PyTorch's start at $d_k = 64$, a spread of 7,
#   it learns unscaled at step size 0.01); the scale equals a start divided by $d_k^{1/4}$ and a
#   step divided by $\sqrt{d_k}$.
#
# **Next:** [12 · Active recall](12_active_recall.ipynb), or first the optional section below.

# %% [markdown]
# ## Going further (optional)
#
# The checks behind the main path's shorter sentences, and every number of its runs.
#
# ### The softmax line is notebook 04's Jacobian
#
# Build $J$ for the row of "it" and compare with the softmax line of section 2 (the tested
# `attnlib.softmax_jacobian` gives the same $J$):

# %%
from attnlib import softmax_jacobian

p_it = P[IT]
J = np.diag(p_it) - np.outer(p_it, p_it)  # J[i, j] = p_i (delta_ij - p_j)
print("J^T dp           :", J.T @ dP[IT])
print("p * (dp - dp . p):", dS[IT])
print("J equals attnlib.softmax_jacobian:", np.allclose(J, softmax_jacobian(p_it)))
print(f"the row of dS sums to {dS[IT].sum():.1e}: adding a constant to every score changes nothing")

# %% [markdown]
# ### The same backward pass in attnlib
#
# `attnlib.gradients` is section 2's backward pass, tested against finite differences on
# thousands of random inputs (`attention_backward` for $dQ, dK, dV$; `attention_head_backward`
# for the projections):

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
# ### The gradient reaching a head's scores, as $d_k$ grows
#
# Notebook 04 measured the Jacobian's norm; here is the gradient itself,
# $\partial L/\partial s_i = J^\top dp$, for random queries and keys with unit-variance entries,
# 8 keys, random values and a random upstream gradient $dO$: 200 draws of 8 queries per $d_k$,
# scaled and unscaled.

# %%
rng = np.random.default_rng(SEED)
T, n_draws, d_ks = 8, 200, 4 ** np.arange(6)  # d_k = 1, 4, 16, 64, 256, 1024
reaching = {}  # (kind, d_k) -> the size of dL/ds_i for every query of every draw
for d in d_ks:
    Qr, Kr = rng.standard_normal((2, n_draws, T, d))
    Vr, dOr = rng.standard_normal((2, n_draws, T, 4))
    dPr = dOr @ Vr.transpose(0, 2, 1)
    raw = Qr @ Kr.transpose(0, 2, 1)
    for kind, scale in (("scaled", 1 / np.sqrt(d)), ("unscaled", 1.0)):
        Pr = softmax(scale * raw)
        dSr = Pr * (dPr - (dPr * Pr).sum(axis=-1, keepdims=True))
        reaching[kind, d] = np.linalg.norm(dSr, axis=-1).ravel()

print("  d_k | median |dL/ds_i|     | unscaled queries:")
print("      |  scaled   unscaled  | below 1e-3   90th percentile")
for d in d_ks:
    s, u = reaching["scaled", d], reaching["unscaled", d]
    print(
        f" {d:4d} | {np.median(s):.2e}  {np.median(u):.2e} |"
        f"     {np.mean(u < 1e-3):4.0%}         {np.percentile(u, 90):.2e}"
    )

# %% [markdown]
# Scaled, the gradient reaching the scores is the same at every $d_k$. Unscaled, the typical
# (median) query's gradient falls about a million-fold by $d_k = 1024$; about half the queries
# get less than $10^{-3}$ at $d_k = 256$, most at 1024. The top tenth stays large because a few
# queries have their top two keys nearly tied, and a tied softmax is not saturated (the same
# luck as in notebook 04's lab). The lessons' "gradients vanish" is right for the typical query,
# which is why the plots of section 5 follow the median query.
#
# ### Section 5's task and runs, in numbers
#
# The start gives $q$ and $k$ unit-variance entries (the assumption of notebook 02), so the
# unscaled scores have a standard deviation near $\sqrt{256} = 16$ and nearly one-hot rows from
# the first step; the unscaled loss never falls below 10 at any step size; and the runs at step
# size 0.1, step by step (the scaled run, then the unscaled one, whose losses differ in their
# last digits from machine to machine, in a cell that is printed but not compared):

# %%
q0, k0 = task.X_q @ task.W_Q, task.X_k @ task.W_K
print(f"std of q entries {np.std(q0):.2f}, of k entries {np.std(k0):.2f}")
top0 = np.median(softmax(raw0).max(axis=1))
print(f"largest weight per query at the start, unscaled: median {top0:.4f}")
s, u = runs["scaled", 0.1], runs["unscaled", 0.1]
lowest = min(runs["unscaled", lr]["loss"].min() for lr in STEP_SIZES)
print(
    f"unscaled loss, every step size: starts at {u['loss'][0]:.1f}, stays above 10: {lowest > 10}"
)
print("unscaled accuracy at step size 0.1, every step: at most 4 of 16:", u["correct"].max() <= 4)
print(" step | scaled: loss  accuracy")
for t in (0, 5, 10, 25, 50, 100, 150):
    print(f"  {t:3d} |       {s['loss'][t]:6.3f}     {s['correct'][t] / 16:5.0%}")

# %%
# NBVAL_IGNORE_OUTPUT
print(" step | unscaled: loss  accuracy")
for t in (0, 5, 10, 25, 50, 100, 150):
    print(f"  {t:3d} |         {u['loss'][t]:6.3f}     {u['correct'][t] / 16:5.0%}")

# %% [markdown]
# Inside the stalled head (section 6): the steps at which some unscaled query switched key, its
# smallest top weight at the end, and the gradient at the start and the end; what holds first,
# then the exact figures of this run (they differ from machine to machine):

# %%
looks_at = u["looks_at"]  # (steps + 1, 16): the key each query looks at
moved = np.flatnonzero((looks_at[1:] != looks_at[:-1]).any(axis=1)) + 1
print("unscaled: no query switches to another key after step 10:", moved.max() <= 10)
top_weight = u["weights"].max(axis=1)
print(
    "unscaled: every query's largest weight after 150 steps is above 0.999:",
    top_weight.min() > 0.999,
)
print(
    "median query's gradient at the scores, step 0 -> 150:"
    f" scaled {s['grad'][0]:.1e} -> {s['grad'][-1]:.1e},"
    f" unscaled {u['grad'][0]:.1e} -> below 1e-20: {u['grad'][-1] < 1e-20}"
)

# %%
# NBVAL_IGNORE_OUTPUT
print("unscaled: steps at which some query switched to another key:", moved)
print(f"unscaled: smallest largest weight after 150 steps {top_weight.min():.9f},", end=" ")
print(f"median query's gradient at step 150 {u['grad'][-1]:.1e}")

# %% [markdown]
# ### The training loop is attnlib's `train_retrieval`
#
# Sections 7 and 8 train with the tested `attnlib.retrieval.train_retrieval`; on the same task
# it gives the curves of the loop of section 5:

# %%
ref = train_retrieval(task, scale=1.0, lr=0.1, steps=150)
print(
    "unscaled run, same loss, accuracy and gradient curves:",
    np.allclose(ref["loss"], u["loss"]),
    np.array_equal(ref["accuracy"] * n_pairs, u["correct"]),
    np.allclose(np.median(ref["score_grad"], axis=1), u["grad"]),
)

# %% [markdown]
# ### The exact numbers of the runs
#
# Seed 9, every step size. The scaled runs are the same on every machine. The unscaled counts and
# losses differ in their last digits from machine to machine (a saturated softmax amplifies
# rounding differences), so their cells are printed but not compared; the main path states what
# holds with a margin.

# %%
print(f"{'step size':>9} | scaled: final correct  final loss")
for lr in STEP_SIZES:
    s = runs["scaled", lr]
    print(f"{lr:9g} | {s['correct'][-1]:20d}  {s['loss'][-1]:10.3f}")

# %%
# NBVAL_IGNORE_OUTPUT
print(f"{'step size':>9} | unscaled: final correct  final loss  best correct")
for lr in STEP_SIZES:
    u = runs["unscaled", lr]
    print(f"{lr:9g} | {u['correct'][-1]:22d}  {u['loss'][-1]:10.3f}  {u['correct'].max():12d}")

# %% [markdown]
# Over the eight seeds of section 5 (final correct of 16 per seed, seed 9 first, and for each
# seed that finds all 16 keys the step at which it first does):


# %%
def seed_row(kind, lr):
    counts = correct[kind, lr]
    found = [int(np.argmax(c == 16)) for c in counts.T if c.max() == 16]
    counts = counts[-1]
    print(
        f"{kind:>8}, step {lr:4g} | {np.median(counts):5.1f} [{counts.min():2d}, {counts.max():2d}]"
        f"  {' '.join(f'{n:2d}' for n in counts)} | {len(found)} of 8: {found}"
    )


print(f"{'':>19} | {'median [range]':<14}  {'per seed, seed 9 first':<23} | all 16 found at step")
seed_row("scaled", 0.1)  # not chaotic: the same on every machine

# %%
# NBVAL_IGNORE_OUTPUT
for kind, lr in SWEPT[:3]:  # unscaled: chaotic, the counts differ from machine to machine
    seed_row(kind, lr)

# %% [markdown]
# PyTorch's start at $d_k = 64$ (section 8), over the same eight seeds: the variances at the
# start (medians), then the final counts. The unscaled head at step size 0.1 is thrown into
# saturation, and its counts differ from machine to machine, so they are printed last, not
# compared.

# %%
q8, k8 = torch_tasks[0] @ torch_tasks[3], torch_tasks[1] @ torch_tasks[4]  # (8, 16, 64)
variance_q, spread = np.var(q8, axis=(1, 2)), np.var(q8 @ k8.mT, axis=(1, 2))  # spread unscaled
v = np.median(spread)
print(f"Var(q) {np.median(variance_q):.2f}; Var(s): unscaled {v:.1f}, scaled {v / 64:.2f}")


def torch_summary(kind, lr):
    counts = torch_correct[kind, lr]
    print(
        f"{kind:>8}, step size {lr:4g}: final correct of 16, median"
        f" {np.median(counts):4.1f} [{counts.min()}, {counts.max()}]"
    )


for kind, lr in (("scaled", 0.01), ("unscaled", 0.01), ("scaled", 0.1)):
    torch_summary(kind, lr)

# %%
# NBVAL_IGNORE_OUTPUT
torch_summary("unscaled", 0.1)  # saturated and chaotic: differs from machine to machine
