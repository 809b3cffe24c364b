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
# out through its gradient.
#
# **After this notebook you can**
#
# 1. say what "softmax saturates" means, and measure it with the entropy and the largest weight;
# 2. write the softmax Jacobian $\partial p_i / \partial x_j = p_i(\delta_{ij} - p_j)$, compute it
#    in numpy, and check it against finite differences;
# 3. explain, mechanism and numbers, why without $1/\sqrt{d_k}$ the gradient reaching the scores
#    vanishes at $d_k = 1024$ (question 5 of the source lesson), and show it live with a lab.

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
# difference by 8. A source lesson compares $[1, 2, 3]$ with $[8, 16, 24]$, "what $d_k = 64$ would
# produce", since $\sqrt{64} = 8$:


# %%
def softmax(x):
    e = np.exp(x - x.max())  # subtracting the max changes no weight (see notebook 05)
    return e / e.sum()


small = np.array([1.0, 2.0, 3.0])
large = 8 * small
p_small, p_large = softmax(small), softmax(large)

print("at the lesson's 2 decimals:")
print("  softmax([1, 2, 3])   =", np.array2string(p_small, precision=2, floatmode="fixed"))
print("  softmax([8, 16, 24]) =", np.array2string(p_large, precision=2, floatmode="fixed"))
print("at full precision:")
print("  softmax([1, 2, 3])   =", np.array2string(p_small, formatter={"float": "{:.6e}".format}))
print("  softmax([8, 16, 24]) =", np.array2string(p_large, formatter={"float": "{:.6e}".format}))

# %% [markdown]
# The lesson prints the second vector as `[0.00 0.00 1.00]`. Those zeros are a rounding artefact:
# the weights are $e^{-16}/(\dots) \approx 1.1 \times 10^{-7}$ and $e^{-8}/(\dots) \approx
# 3.4 \times 10^{-4}$, small but not zero. That distinction matters below: a weight that is
# tiny but positive still has a gradient, just a tiny one.

# %% [markdown]
# ## 2. How big the exponentials get
#
# Exercise 1 of the source lesson: with $d_k = 64$, a raw score of 16 becomes $16/\sqrt{64} = 2$.

# %%
d_k = 64
raw_score = 16.0
scaled_score = raw_score / np.sqrt(d_k)
print(f"scaled score = {raw_score} / sqrt({d_k}) = {scaled_score}")
print(f"exp({raw_score:.0f}) = {np.exp(raw_score):,.2f}")
print(f"exp({scaled_score:.0f})  = {np.exp(scaled_score):.3f}")
print(
    f"against a rival score of 0: weight {1 / (1 + np.exp(-raw_score)):.8f} unscaled,"
    f" {1 / (1 + np.exp(-scaled_score)):.4f} scaled"
)

# %% [markdown]
# The lesson writes $e^{16} \approx 8{,}886{,}110$ (the digits before the decimal point, so
# 8,886,111 when rounded) and $e^2 \approx 7.389$. Its "weight $\approx 0.999999$" holds when the
# rival score is 0, as printed above: $1/(1 + e^{-16}) = 0.99999989$.
#
# At $d_k = 1024$ the raw scores have standard deviation $\sqrt{1024} = 32$, and the lesson says
# gaps of 20 to 40 between the top score and the runner-up are routine. A gap of 30 gives the top
# token $e^{30}$ times the weight of the runner-up:

# %%
print(f"std of raw scores at d_k = 1024: sqrt(1024) = {np.sqrt(1024):.0f}")
print(f"exp(30) = {np.exp(30):.4e}   (about {np.exp(30):.2e})")
print(f"exp(10) = {np.exp(10):,.0f};  exp(30) / exp(10) = exp(20) = {np.exp(20):.3e}")

# %% [markdown]
# So $e^{30} \approx 1.07 \times 10^{13}$. The lesson on $\sqrt{d_k}$ (seed 004) writes
# $1.06 \times 10^{13}$, cutting off the digits instead of rounding; and the ratio
# $e^{30}/e^{10} = e^{20}$ it calls "billions to one" is about $4.9 \times 10^{8}$, half a billion.
# Neither slip changes the argument.
#
# Is a gap of "20 to 40" routine? Draw random queries and 8 keys with $d_k = 1024$ and look at the
# gap between the largest and second-largest raw score:

# %%
T, d_k, n_trials = 8, 1024, 2000
q = rng.standard_normal((n_trials, 1, d_k))
K = rng.standard_normal((n_trials, T, d_k))
raw = (q * K).sum(axis=-1)  # (n_trials, T) raw scores q . k_j
top_two = np.sort(raw, axis=-1)[:, -2:]
gap = top_two[:, 1] - top_two[:, 0]
print(f"std of the raw scores: {raw.std():.1f}")
print(
    f"gap between top score and runner-up (T = {T}): median {np.median(gap):.1f},"
    f" quartiles {np.percentile(gap, 25):.1f} .. {np.percentile(gap, 75):.1f}"
)
print(f"share of trials with gap > 10: {np.mean(gap > 10):.2f};  gap > 20: {np.mean(gap > 20):.2f}")

# %% [markdown]
# With 8 keys the typical gap is smaller than the lesson suggests (gaps shrink as the number of
# keys grows, because the top two crowd together), but it does not need to be 30: a gap of 10
# already gives a weight ratio of $e^{10} \approx 22{,}026$. The lab below lets you see what one
# such draw does.

# %% [markdown]
# ## 3. The gradient of softmax
#
# Write $p = \mathrm{softmax}(x)$. Differentiating $p_i = e^{x_i} / \sum_k e^{x_k}$ with the
# quotient rule gives
#
# $$\frac{\partial p_i}{\partial x_j} = p_i(\delta_{ij} - p_j), \qquad
#   J = \mathrm{diag}(p) - p\,p^\top .$$
#
# Each entry is a product of weights. If $p$ is one-hot ($p_k = 1$, all others 0), every entry
# is 0: for $i \ne k$ the factor $p_i$ is 0, and for $i = k$ it is $1 \cdot (\delta_{kj} - p_j) = 0$.
# Compute it in numpy and check it once against finite differences:


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
# $\|J\|_F = \sqrt{\sum_{ij} J_{ij}^2}$. The tested versions live in `attnlib`
# (`softmax_jacobian`, and `entropy` and `softmax_jacobian_norm` in `attnlib.saturation`); they
# agree with ours:

# %%
from attnlib import softmax_jacobian
from attnlib.saturation import entropy, softmax_jacobian_norm

for name, p in (("[1, 2, 3]  ", p_small), ("[8, 16, 24]", p_large)):
    print(
        f"scores {name}: ||J||_F = {np.linalg.norm(jacobian(p)):.3e}"
        f" (attnlib {softmax_jacobian_norm(p):.3e}),"
        f" entropy = {-(p * np.log(p)).sum():.4f} nats (attnlib {entropy(p):.4f}),"
        f" max weight = {p.max():.6f}"
    )
print("same Jacobian as attnlib:", np.allclose(softmax_jacobian(p_small), J_small))

# %% [markdown]
# ## 4. Question 5, answered: why the network stops learning
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
# **Answer.** With standard deviation 32 the top score beats the rest by tens of units, so
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
# uses their first $d_k$ coordinates). Left: the weights, the largest in red. Middle and right:
# the entropy and $\|J\|_F$ for every $d_k$, scaled (blue) and unscaled (orange); the circle marks
# where you are.
#
# *Try:* unscaled, drag $d_k$ from 1 to 1024. Then tick "divide scores by √d_k". Then try other
# query tokens: for some, two keys stay nearly tied even at $d_k = 1024$, and the weight splits
# between them; that is luck, not a cure. (Without a running kernel you see a picture of the
# lab's starting state.)

# %%
# NBVAL_IGNORE_OUTPUT
from attnlib.widgets import saturation_lab

saturation_lab()

# %% [markdown]
# ## 6. Averaged over many draws
#
# One query is an anecdote. Average over 400 random queries with 8 keys each, for every $d_k$
# from 1 to 1024: mean entropy and mean $\|J\|_F$, scaled and unscaled.

# %%
d_ks = 2 ** np.arange(11)
T, n_draws = 8, 400
curves = {key: [] for key in ("H_raw", "H_scaled", "J_raw", "J_scaled")}
for d in d_ks:
    q = rng.standard_normal((n_draws, 1, d))
    K = rng.standard_normal((n_draws, T, d))
    raw = (q * K).sum(axis=-1)  # (n_draws, T)
    for kind, scores in (("raw", raw), ("scaled", raw / np.sqrt(d))):
        p = np.exp(scores - scores.max(axis=-1, keepdims=True))
        p /= p.sum(axis=-1, keepdims=True)
        curves[f"H_{kind}"].append(entropy(p).mean())
        curves[f"J_{kind}"].append(softmax_jacobian_norm(p).mean())

print(" d_k | mean H unscaled  scaled | mean ||J|| unscaled  scaled")
for i, d in enumerate(d_ks):
    print(
        f"{d:4d} |        {curves['H_raw'][i]:.3f}   {curves['H_scaled'][i]:.3f} |"
        f"            {curves['J_raw'][i]:.3f}   {curves['J_scaled'][i]:.3f}"
    )

# %%
fig, (ax_h, ax_j) = plt.subplots(1, 2, figsize=(9, 3.2))
for ax, key, title in ((ax_h, "H", "mean entropy (nats)"), (ax_j, "J", r"mean $\|J\|_F$")):
    ax.plot(d_ks, curves[f"{key}_scaled"], "-o", ms=4, label=r"scaled by $1/\sqrt{d_k}$")
    ax.plot(d_ks, curves[f"{key}_raw"], "--o", ms=4, label="unscaled")
    ax.set_xscale("log", base=2)
    ax.set_xticks(d_ks[::2], [str(d) for d in d_ks[::2]])
    ax.set_xlabel("$d_k$")
    ax.set_title(title)
ax_h.axhline(np.log(T), color="0.6", ls=":", lw=1)
ax_h.text(1, np.log(T) - 0.18, f"uniform: ln {T}", color="0.4", fontsize=8)
ax_j.legend()
fig.suptitle(f"{n_draws} random queries over {T} keys per $d_k$ (seed {SEED})")
fig.tight_layout()
plt.show()

# %% [markdown]
# Scaled, both curves are flat: the scores always have standard deviation 1, so the softmax
# looks the same at every $d_k$. Unscaled, the mean entropy falls steadily as $d_k$ grows, and the
# mean gradient norm falls with it, to a small fraction of the scaled value at $d_k = 1024$. (The means do not reach exactly 0 at 1024: the odd
# draw with two nearly tied keys keeps some entropy and gradient, as in the lab.)

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
# - The softmax Jacobian is $p_i(\delta_{ij} - p_j)$; it vanishes as $p$ goes one-hot, and with
#   it every gradient that reaches $W_Q$ and $W_K$ through the scores.
# - Dividing by $\sqrt{d_k}$ keeps entropy and gradient norm the same at every $d_k$.
#
# Next: **05: "we scale to avoid overflow"**, a common misreading of why the scale is there.
