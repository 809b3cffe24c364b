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
# # 04 · Softmax saturation: why unscaled scores stop a network from learning
#
# Notebook 02 showed that a dot product of two $d_k$-dimensional vectors with unit-variance
# entries has variance $d_k$. This notebook follows that spread of scores into the softmax and
# out through its gradient: it is the mechanism behind the reason Vaswani et al. (2017) gave for
# the scale, that large dot products push "the softmax function into regions where it has
# extremely small gradients" (quoted in full in notebook 02). This is the notebook that tells
# the story of saturation and derives the softmax Jacobian; later notebooks link back here.
#
# **Learning goals.** After this notebook you can
#
# 1. say what "softmax saturates" means, and measure it with the entropy and the largest weight;
# 2. derive the softmax Jacobian $\partial p_i / \partial x_j = p_i(\delta_{ij} - p_j)$ with the
#    quotient rule, compute it in numpy, and check it against finite differences;
# 3. explain, mechanism and numbers, why without $1/\sqrt{d_k}$ the gradient reaching the scores
#    vanishes at $d_k = 1024$, and show it live with a lab.

# %%
import matplotlib.pyplot as plt
import numpy as np

np.set_printoptions(precision=4, suppress=True)
SEED = 4
rng = np.random.default_rng(SEED)

# %% [markdown]
# ## 1. The same ordering, a wider spread
#
# $$\mathrm{softmax}(x)_i = \frac{e^{x_i}}{\sum_j e^{x_j}}$$
#
# Softmax only cares about *differences* between scores (adding a constant to every score
# changes nothing). So multiplying the scores by 8, which keeps their order, multiplies every
# difference by 8. A common illustration compares $[1, 2, 3]$ with $[8, 16, 24]$, "what
# $d_k = 64$ would produce", since $\sqrt{64} = 8$:


# %%
def softmax(x):
    e = np.exp(x - x.max())  # subtracting the max changes no weight (see notebook 05)
    return e / e.sum()


small = np.array([1.0, 2.0, 3.0])
large = 8 * small
p_small, p_large = softmax(small), softmax(large)

print("at 2 decimals:")
print("  softmax([1, 2, 3])   =", np.array2string(p_small, precision=2, floatmode="fixed"))
print("  softmax([8, 16, 24]) =", np.array2string(p_large, precision=2, floatmode="fixed"))
print("at full precision:")
print("  softmax([1, 2, 3])   =", np.array2string(p_small, formatter={"float": "{:.6e}".format}))
print("  softmax([8, 16, 24]) =", np.array2string(p_large, formatter={"float": "{:.6e}".format}))

# %% [markdown]
# Printed that way, the second vector is `[0.00 0.00 1.00]`. Those zeros are a rounding artefact:
# the weights are $e^{-16}/(\dots) \approx 1.1 \times 10^{-7}$ and $e^{-8}/(\dots) \approx
# 3.4 \times 10^{-4}$, small but not zero. That distinction matters below: a weight that is
# tiny but positive still has a gradient, just a tiny one.

# %% [markdown]
# ## 2. How big the exponentials get
#
# A common exercise: with $d_k = 64$, a raw score of 16 becomes $16/\sqrt{64} = 2$. How different
# are $e^{16}$ and $e^2$?

# %%
d_k = 64
raw_score = 16.0
scaled_score = raw_score / np.sqrt(d_k)
print(f"scaled score = {raw_score} / sqrt({d_k}) = {scaled_score}")
print(f"exp({raw_score:.0f}) = {np.exp(raw_score):,.2f}")
print(f"exp({scaled_score:.0f})  = {np.exp(scaled_score):.3f}")
print("against a rival score of 0, the top weight is")
print(f"  unscaled {1 / (1 + np.exp(-raw_score)):.8f}")
print(f"  scaled   {1 / (1 + np.exp(-scaled_score)):.4f}")

# %% [markdown]
# The exercise's answer writes $e^{16} \approx 8{,}886{,}110$ (the digits before the decimal
# point) and $e^2 \approx 7.389$, and says the weight is "$\approx 0.999999$": true when the
# rival score is 0, as printed above.
#
# At $d_k = 1024$ the raw scores have standard deviation $\sqrt{1024} = 32$. What matters for the
# weights is the **gap** between the top score and the runner-up, because
# $p_{\text{top}} / p_{\text{runner-up}} = e^{\text{gap}}$. A common claim is that a gap of 30
# gives the top token "$e^{30} \approx 10^{13}$ times more weight":

# %%
print(f"std of raw scores at d_k = 1024: sqrt(1024) = {np.sqrt(1024):.0f}")
print(f"exp(30) = {np.exp(30):.4e}   (about {np.exp(30):.2e})")
print(f"exp(10) = {np.exp(10):,.0f}")

# %% [markdown]
# How large are the gaps really? **Notebook 02** measured them (its optional section "How far
# apart are the top two?"): with a handful of keys the typical gap at $d_k = 1024$ is smaller
# than the often-quoted "20–40", and it shrinks as more keys crowd the top. It does not need to be
# 30: a gap of 10, which notebook 02 found in most rows, is already a weight ratio
# $e^{10} \approx 22{,}026$, so the runner-up gets less than 1/22,000 of the top key's weight.
# That is **saturation**: the weights are one-hot to four decimals although the scores are
# ordinary numbers. The lab below lets you watch what one draw of scores does.

# %% [markdown]
# ## 3. The gradient of softmax
#
# Write $p = \mathrm{softmax}(x)$ with $S = \sum_k e^{x_k}$, so $p_i = e^{x_i}/S$. Two derivatives
# are all we need: $\partial e^{x_i}/\partial x_j = \delta_{ij}\, e^{x_i}$ (it depends on $x_i$
# only) and $\partial S/\partial x_j = e^{x_j}$. The quotient rule
# $(u/v)' = (u'v - uv')/v^2$ then gives
#
# $$\frac{\partial p_i}{\partial x_j}
#   = \frac{\delta_{ij}\, e^{x_i}\, S - e^{x_i}\, e^{x_j}}{S^2}
#   = \delta_{ij}\,\frac{e^{x_i}}{S} - \frac{e^{x_i}}{S}\,\frac{e^{x_j}}{S}
#   = p_i(\delta_{ij} - p_j), \qquad
#   J = \mathrm{diag}(p) - p\,p^\top .$$
#
# Each entry is a product of weights. If $p$ is one-hot ($p_k = 1$, all others 0), every entry
# is 0: for $i \ne k$ the factor $p_i$ is 0, and for $i = k$ it is $1 \cdot (\delta_{kj} - p_j) = 0$.

# %% [markdown]
# ### Exercise: write the Jacobian yourself
#
# Before you read our version below: write `my_jacobian(p)`, which takes the $n$ weights `p` and
# returns the $(n, n)$ matrix $J_{ij} = p_i(\delta_{ij} - p_j)$ (row $i$: the weight $p_i$;
# column $j$: the score $x_j$). The check runs it on four weight vectors, a one-hot one among
# them, and says what went wrong. Stuck? `ch04.softmax_jacobian.hint()`, or
# `ch04.softmax_jacobian.solution()`.

# %%
from attnlib.exercises import ch04


def my_jacobian(p):
    raise NotImplementedError  # replace this line with your code


ch04.softmax_jacobian.check(my_jacobian)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):


# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
def jacobian_solution(p):
    return np.diag(p) - np.outer(p, p)  # J[i, j] = p_i (delta_ij - p_j)


ch04.softmax_jacobian.check_solution(jacobian_solution)

# %% [markdown]
# Our version is the same one line. We compute it at the weights of section 1 and check it once
# against finite differences, $\partial p / \partial x_j \approx (\mathrm{softmax}(x +
# \varepsilon e_j) - \mathrm{softmax}(x - \varepsilon e_j)) / (2\varepsilon)$, with $e_j$ the
# $j$-th unit vector and $\varepsilon = 10^{-6}$:


# %%
def jacobian(p):
    return np.diag(p) - np.outer(p, p)  # J[i, j] = p_i (delta_ij - p_j)


J_small = jacobian(p_small)
eps = 1e-6
J_numeric = np.stack(
    [(softmax(small + eps * e) - softmax(small - eps * e)) / (2 * eps) for e in np.eye(3)], axis=1
)  # column j: d p / d x_j
print("J at softmax([1, 2, 3]):\n", J_small)
print("largest difference from finite differences:", f"{np.abs(J_small - J_numeric).max():.1e}")
print(
    "J at softmax([8, 16, 24]):\n",
    np.array2string(jacobian(p_large), formatter={"float": "{:.1e}".format}),
)

# %% [markdown]
# One number for "how much gradient can get through": the Frobenius norm
# $\|J\|_F = \sqrt{\sum_{ij} J_{ij}^2}$. It is not a gradient but a bound on one: whatever
# gradient $g$ arrives at the weights, the one passed on to the scores is $J^\top g$ (section 4),
# and $\|J^\top g\| \le \|J\|_F\,\|g\|$. The library versions live in `attnlib`
# (`softmax_jacobian`, and `entropy` and `softmax_jacobian_norm` in `attnlib.saturation`); they
# agree with ours:

# %%
from attnlib import softmax_jacobian
from attnlib.saturation import entropy, softmax_jacobian_norm

print("scores        ||J||_F  (attnlib)   entropy  (attnlib)   max weight")
for name, p in (("[1, 2, 3]  ", p_small), ("[8, 16, 24]", p_large)):
    J_norm, H = np.linalg.norm(jacobian(p)), -(p * np.log(p)).sum()
    print(
        f"{name}  {J_norm:.3e}  ({softmax_jacobian_norm(p):.3e})"
        f"   {H:.4f}   ({entropy(p):.4f})    {p.max():.6f}"
    )
print("same Jacobian as attnlib:", np.allclose(softmax_jacobian(p_small), J_small))

# %% [markdown]
# ## 4. A classic question, answered: why the network stops learning
#
# A common exam question asks:
#
# > *For $d_k = 1024$ the raw-score standard deviation is about 32. Using the softmax formula and
# > its gradient, explain why omitting the $1/\sqrt{d_k}$ scale makes a network fail to learn.*
#
# Training changes $W_Q$ and $W_K$ only through the gradient of the loss $L$ with respect to the
# scores $x$. The chain rule passes it through the Jacobian:
#
# $$\frac{\partial L}{\partial x_j} = \sum_i \frac{\partial L}{\partial p_i}\,
#   p_i(\delta_{ij} - p_j), \qquad \nabla_x L = J^\top \nabla_p L .$$
#
# Whatever the loss asks for ($\nabla_p L$), a saturated softmax multiplies it by a $J$ that is
# almost zero. Take the same upstream gradient for a soft and a saturated softmax over 8 keys:
# the loss would like more weight on key 2.

# %%
upstream = np.zeros(8)
upstream[2] = -1.0  # dL/dp: "raise p_2"
x = rng.standard_normal(8)  # scores with std 1 (scaled, any d_k)
for label, scores in (("std 1  (scaled)  ", x), ("std 32 (unscaled)", 32 * x)):
    p = softmax(scores)
    grad_x = jacobian(p).T @ upstream  # dL/dx
    print(f"{label}: max weight {p.max():.6f}, |dL/dx| = {np.linalg.norm(grad_x):.2e}")

# %% [markdown]
# **Answer.** With standard deviation 32 the top score usually beats the rest by many units, so
# $p$ is one-hot to many decimals (a gap of 30 is a factor $e^{30} \approx 10^{13}$). Every entry
# $p_i(\delta_{ij} - p_j)$ of the Jacobian then contains a factor that is almost 0, so the gradient
# $\partial L/\partial x_j$ reaching each score is almost 0, whatever the loss wants. No error
# signal reaches $W_Q$ and $W_K$ to move attention away from the token that happens to win, so the
# attention pattern freezes where it started. The network does not crash: it just stops learning
# where to look. Dividing by $\sqrt{d_k}$ brings the scores back to standard deviation 1, where the
# weights are spread out and the Jacobian, and so the gradient, stays well away from 0 (the first
# line printed above; section 6 shows it for every $d_k$).

# %% [markdown]
# ## 5. The lab: drag $d_k$ and watch
#
# One query attends over 8 keys (seeded random vectors of length 1024; at a given $d_k$ the lab
# uses their first $d_k$ coordinates). Left: the weights, the largest in red and hatched. Middle:
# the entropy for every $d_k$; right: $\|J\|_F$ for every $d_k$ **on a log scale** (a linear axis would draw
# $10^{-3}$ and $10^{-13}$ at the same height, both "zero"); scaled in blue, unscaled in orange;
# the circle marks where you are. The line above the picture gives the numbers.
#
# *Try:* unscaled, drag $d_k$ from 1 to 1024. Then tick "divide scores by √d_k". Then try other
# query tokens. (Without a running kernel you see a picture of the lab's starting state.)

# %% tags=["nbval-ignore-output"]
from attnlib.labs import saturation_lab

saturation_lab()

# %% [markdown]
# ### Why one query's curve goes up and down
#
# For a single query the unscaled curves are jagged: $\|J\|_F$ can fall to $10^{-8}$ at one
# $d_k$ and climb back to $10^{-2}$ at the next. Each step of the slider adds coordinates, so
# each score $q \cdot k_j = \sum_{m \le d_k} q_m k_{jm}$ is a *random walk* in $d_k$, and the gap
# between the two best keys wanders with it; two walks can even cross, and at a crossing the gap
# is near 0. When two keys dominate with gap $g$, the weights are about $(1 - \varepsilon,
# \varepsilon)$ with $\varepsilon = e^{-g}$, and the four nonzero entries of $J$ are all about
# $\pm\varepsilon$, so
#
# $$\|J\|_F \approx 2\,e^{-g} .$$
#
# A gap that shrinks from 18 to 4 raises $\|J\|_F$ by a factor $e^{14} \approx 10^{6}$. Here is
# the lab's query 1, the gap and $\|J\|_F$ at every slider position:

# %%
from attnlib.examples import saturation_data

queries, keys = saturation_data()  # the lab's vectors, (8, 1024) each
query = 1
print(" d_k   gap top - runner-up   ||J||_F unscaled   2 exp(-gap)")
for d in 2 ** np.arange(11):
    raw = keys[:, :d] @ queries[query, :d]  # the 8 unscaled scores at this d_k
    runner_up, top = np.sort(raw)[-2:]
    gap = top - runner_up
    J_norm = np.linalg.norm(jacobian(softmax(raw)))
    print(f"{d:4d}   {gap:19.2f}   {J_norm:16.1e}   {2 * np.exp(-gap):11.1e}")

# %% [markdown]
# Where the gap is large, $2e^{-g}$ matches $\|J\|_F$; where it is small, a third key still has
# weight and the two differ, but the point stands: the gradient tracks $e^{-\text{gap}}$, and the
# gap of one query is a noisy quantity. The *trend* with $d_k$ only shows across many queries.

# %% [markdown]
# ## 6. Across many draws: median and quartiles
#
# Draw 400 random queries with 8 keys each, for every $d_k$ from 1 to 1024, and look at the
# distribution of $\|J\|_F$ over the 400 draws: the median and the quartiles (the middle half of
# the draws lies between them). The mean would mislead here: a few draws with two nearly tied keys
# have $\|J\|_F \approx 0.3$ and pull the mean up, while the typical draw is many orders of
# magnitude smaller.

# %%
d_ks = 2 ** np.arange(11)
T, n_draws = 8, 400
J_norms = {"raw": [], "scaled": []}  # per d_k: the 400 values of ||J||_F
for d in d_ks:
    q = rng.standard_normal((n_draws, 1, d))
    K = rng.standard_normal((n_draws, T, d))
    raw = (q * K).sum(axis=-1)  # (n_draws, T)
    for kind, scores in (("raw", raw), ("scaled", raw / np.sqrt(d))):
        p = np.exp(scores - scores.max(axis=-1, keepdims=True))
        p /= p.sum(axis=-1, keepdims=True)
        J_norms[kind].append(softmax_jacobian_norm(p))
J_norms = {kind: np.array(values) for kind, values in J_norms.items()}  # (11, n_draws)
quartiles = {kind: np.percentile(v, [25, 50, 75], axis=1) for kind, v in J_norms.items()}

print("        ||J||_F unscaled: quartiles            scaled: median")
print(" d_k       25%      median        75%")
for i, d in enumerate(d_ks):
    q25, q50, q75 = quartiles["raw"][:, i]
    print(f"{d:4d}  {q25:9.1e}  {q50:9.1e}  {q75:9.1e}          {quartiles['scaled'][1, i]:.3f}")

# %%
at_1024 = J_norms["raw"][-1]
print(f"unscaled, d_k = 1024, {n_draws} draws:")
print(f"  median ||J||_F          = {np.median(at_1024):.1e}")
print(f"  share of draws < 1e-3   = {np.mean(at_1024 < 1e-3):.0%}")
print(f"  mean ||J||_F            = {at_1024.mean():.3f}  (pulled up by near-ties)")
print(f"scaled, d_k = 1024: median {np.median(J_norms['scaled'][-1]):.3f}")

# %% jupyter={"source_hidden": true}
fig, ax = plt.subplots(figsize=(7.5, 3.6))
for kind, colour, label in (
    ("scaled", "C0", r"scaled by $1/\sqrt{d_k}$"),
    ("raw", "C1", "unscaled"),
):
    q25, q50, q75 = quartiles[kind]
    ax.fill_between(d_ks, q25, q75, color=colour, alpha=0.25, lw=0)
    ax.plot(d_ks, q50, "-o", ms=4, color=colour, label=f"{label}: median, quartiles shaded")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xticks(d_ks[::2], [str(d) for d in d_ks[::2]])
ax.set_xlabel("$d_k$")
ax.set_ylabel(r"$\|J\|_F$ (log scale)")
ax.legend(loc="lower left", fontsize=9)
ax.set_title(f"softmax Jacobian norm over {n_draws} random queries and {T} keys per $d_k$")
fig.tight_layout()
plt.show()

# %% [markdown]
# *Figure:* The softmax Jacobian norm (log scale) against $d_k$ from 1 to 1024, a median line with
# its quartile band, scaled and unscaled; the unscaled median falls by orders of magnitude.
#
# (The plotting code is collapsed; click it to show it.) Scaled, the band is
# flat: the scores always have standard deviation 1, so the softmax looks
# the same at every $d_k$. Unscaled, the median falls by orders of magnitude as $d_k$ grows; at
# $d_k = 1024$ it is of order $10^{-6}$, five orders of magnitude below the scaled value, and
# about two draws in three pass back less than a thousandth of the gradient. The mean printed
# above is far larger than the median: a few draws with two nearly tied keys, as in the lab,
# keep a large gradient, which is luck, not a cure.

# %% [markdown]
# ## Check yourself
#
# 1. Softmax of $[0, 0, 0, 0]$ and of $[100, 100, 100, 100]$: what are the weights, and the norm
#    of the Jacobian? Does a large score by itself saturate a softmax?
# 2. A weight is $3.4 \times 10^{-4}$, printed as `0.00`. Is its gradient exactly zero? What is
#    $\partial p_i / \partial x_i$ for it, roughly?
# 3. Someone proposes to skip $1/\sqrt{d_k}$ and instead use float64 "so the small weights are not
#    lost". Does that fix the learning problem?
#
# <details><summary>Answers</summary>
#
# 1. Both are uniform, $[0.25, 0.25, 0.25, 0.25]$, with $\|J\|_F = \sqrt{3}/4 \approx 0.433$.
#    Softmax depends only on differences between scores: it is the *spread*, not the size, that
#    saturates it.
# 2. No: $\partial p_i / \partial x_i = p_i(1 - p_i) \approx 3.4 \times 10^{-4}$. Small, and
#    at $d_k = 1024$ such weights are $10^{-13}$ and smaller, so their gradients are too.
# 3. No. Float64 represents $10^{-13}$ perfectly well; the gradient is small *mathematically*,
#    because $p_i(\delta_{ij} - p_j)$ is small, not because of rounding. Only narrowing the spread
#    of the scores helps (notebook 05 takes this up).
#
# </details>

# %% [markdown]
# ## Summary
#
# - Multiplying scores by a constant keeps their order but widens their gaps; softmax turns the
#   gaps into ratios $e^{\text{gap}}$, so softmax([8, 16, 24]) is nearly one-hot where
#   softmax([1, 2, 3]) is not (its "zeros" are $1.1 \times 10^{-7}$ and $3.4 \times 10^{-4}$).
# - Unscaled scores at $d_k = 1024$ have standard deviation 32; $e^{30} \approx 1.07 \times 10^{13}$.
# - The softmax Jacobian, by the quotient rule, is $p_i(\delta_{ij} - p_j)$; it vanishes as $p$
#   goes one-hot, and with it every gradient that reaches $W_Q$ and $W_K$ through the scores. With
#   two dominant keys, $\|J\|_F \approx 2e^{-\text{gap}}$.
# - Unscaled, the median $\|J\|_F$ falls by orders of magnitude with $d_k$ (plot it on a log axis);
#   dividing by $\sqrt{d_k}$ keeps it the same at every $d_k$.
#
# Next: **05: "we scale to avoid overflow"**, a common misreading of why the scale is there.
