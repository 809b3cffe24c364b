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
# # 02 · Why divide by $\sqrt{d_k}$? The variance of a dot product
#
# **Learning goals.** After this notebook you can
#
# 1. derive $\mathrm{Var}(q_m k_m) = 1$ and $\mathrm{Var}(q \cdot k) = d_k$ for independent,
#    zero-mean, unit-variance entries, and the general $\mathrm{Var}(XY)$ for independent $X, Y$;
# 2. see the same result geometrically: $q \cdot k = |q|\,|k| \cos\theta$, with
#    $|q|\,|k| \approx d_k$ and $\cos\theta$ of size $1/\sqrt{d_k}$;
# 3. check a variance formula by Monte Carlo, **and say how close the check should come**;
# 4. find the right denominator, $\sqrt{d_k}\,\sigma_q\sigma_k$, when the entries do not have
#    variance 1, and say when the unit-variance assumption fails.

# %% [markdown]
# ## The question
#
# The score of query $q$ against key $k$, both in $\mathbb{R}^{d_k}$, is a sum of $d_k$ products:
#
# $$q \cdot k = \sum_{m=1}^{d_k} q_m k_m .$$
#
# Attention divides every score by $\sqrt{d_k}$ before the softmax. Why that number? The paper
# that introduced it, Vaswani et al., *Attention Is All You Need* (2017), gives its reason in
# section 3.2.1:
#
# > "We suspect that for large values of $d_k$, the dot products grow large in magnitude,
# > pushing the softmax function into regions where it has extremely small gradients. To
# > counteract this effect, we scale the dot products by $\frac{1}{\sqrt{d_k}}$."
#
# and its footnote 4 is the whole argument of this notebook in two sentences:
#
# > "To illustrate why the dot products get large, assume that the components of $q$ and $k$
# > are independent random variables with mean 0 and variance 1. Then their dot product,
# > $q \cdot k = \sum_{i=1}^{d_k} q_i k_i$, has mean 0 and variance $d_k$."
#
# Note the words: "we suspect". The first sentence is a conjecture about training (notebook 04
# shows the small gradients, notebook 11 tests the conjecture by training a head); the footnote
# is a fact about random vectors, and that we can derive and check here. We take its assumption,
# see what follows, and at the end look at when it holds.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np

from attnlib import sample_dot_products, softmax

np.set_printoptions(precision=4, suppress=True)
SEED = 1706  # arXiv 1706.03762, "Attention Is All You Need"
rng = np.random.default_rng(SEED)
N_PAIRS = 200_000  # draws for steps 1-2, the by-hand d_k = 16 check and the σ table
N_SWEEP = 50_000  # 200_000 reproduces the text's sample size: 4x the time, half the error

# %% [markdown]
# ## Step 1: one term, $\mathrm{Var}(q_m k_m) = 1$
#
# For any random variable $\mathrm{Var}(Z) = E[Z^2] - (E[Z])^2$. With $Z = q_m k_m$ and $q_m$,
# $k_m$ independent, expectations of products factor:
#
# $$\mathrm{Var}(q_m k_m) = E[q_m^2]\,E[k_m^2] - \big(E[q_m]\,E[k_m]\big)^2
#   = 1 \cdot 1 - (0 \cdot 0)^2 = 1,$$
#
# because $E[q_m^2] = \mathrm{Var}(q_m) + (E[q_m])^2 = 1 + 0$. One line of numpy checks it:

# %%
q_m = rng.standard_normal(N_PAIRS)
k_m = rng.standard_normal(N_PAIRS)
print(f"Var(q_m k_m) from {N_PAIRS:,} draws: {np.var(q_m * k_m):.4f}   (theory: 1)")

# %% [markdown]
# ## Step 2: $\mathrm{Var}(XY)$ in general
#
# Drop the zero means. For independent $X$ and $Y$ with means $\mu_X, \mu_Y$ and variances
# $\sigma_X^2, \sigma_Y^2$, the same two lines give
#
# $$\mathrm{Var}(XY) = E[X^2]E[Y^2] - \mu_X^2\mu_Y^2
#   = (\sigma_X^2 + \mu_X^2)(\sigma_Y^2 + \mu_Y^2) - \mu_X^2\mu_Y^2
#   = \mu_X^2\,\sigma_Y^2 + \mu_Y^2\,\sigma_X^2 + \sigma_X^2\sigma_Y^2 .$$
#
# With zero means only the last term is left, $\mathrm{Var}(X)\mathrm{Var}(Y)$: the shortcut
# $\mathrm{Var}(q_i k_i) = \mathrm{Var}(q_i)\mathrm{Var}(k_i)$ that some texts write is right
# *only because* the means are zero. A check with non-zero means and a non-normal $Y$:
# $X \sim N(2, 3^2)$ and $Y$ exponential with mean 1.5 (so variance $1.5^2 = 2.25$).

# %%
mu_X, sd_X = 2.0, 3.0
mu_Y, sd_Y = 1.5, 1.5  # an exponential's std equals its mean
X = rng.normal(mu_X, sd_X, N_PAIRS)
Y = rng.exponential(mu_Y, N_PAIRS)

formula = mu_X**2 * sd_Y**2 + mu_Y**2 * sd_X**2 + sd_X**2 * sd_Y**2
shortcut = sd_X**2 * sd_Y**2
print(f"formula  mu_X^2 Var(Y) + mu_Y^2 Var(X) + Var(X) Var(Y) = {formula:.4f}")
print(f"shortcut Var(X) Var(Y) (right only for zero means)   = {shortcut:.4f}")
print(f"Monte Carlo Var(XY), {N_PAIRS:,} draws                 = {np.var(X * Y):.4f}")

# %% [markdown]
# The Monte Carlo value sits near the formula and far from the shortcut. *How* near should it
# be? Step 4 answers that.

# %% [markdown]
# ### Exercise: $\mathrm{Var}(XY)$ with non-zero means
#
# Use the formula on new numbers, with pencil or numpy: $X$ and $Y$ independent, $X$ with mean 1
# and standard deviation 2, $Y$ with mean 3 and standard deviation 0.5. What is
# $\mathrm{Var}(XY)$? Replace the `...` and run the cell. Stuck?
# `ch02.product_variance.hint()`, or `ch02.product_variance.solution()`.

# %%
from attnlib.exercises import ch02

mu_x, sd_x, mu_y, sd_y = 1.0, 2.0, 3.0, 0.5
var_xy = ...  # your answer: Var(XY)
ch02.product_variance.check(var_xy)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
# Var(XY) = E[X^2] E[Y^2] - (E[X] E[Y])^2, with E[X^2] = sd^2 + mu^2
ch02.product_variance.check_solution((sd_x**2 + mu_x**2) * (sd_y**2 + mu_y**2) - (mu_x * mu_y) ** 2)

# %% [markdown]
# ## Step 3: the sum, $\mathrm{Var}(q \cdot k) = d_k$
#
# The $d_k$ terms $q_m k_m$ use different coordinates, so they are independent, and variances of
# independent terms add:
#
# $$\mathrm{Var}(q \cdot k) = \sum_{m=1}^{d_k} \mathrm{Var}(q_m k_m) = d_k,\qquad
#   \mathrm{std}(q \cdot k) = \sqrt{d_k}.$$
#
# The mean is $\sum_m E[q_m]E[k_m] = 0$. So the typical size of a raw score grows like
# $\sqrt{d_k}$, and dividing by $\sqrt{d_k}$ brings it back to 1 whatever $d_k$ is:
#
# $$\mathrm{Var}\!\left(\frac{q \cdot k}{\sqrt{d_k}}\right) = \frac{\mathrm{Var}(q\cdot k)}{d_k}
#   = \frac{d_k}{d_k} = 1 .$$

# %% [markdown]
# ## The same result, seen geometrically
#
# A dot product is lengths times the cosine of the angle between the vectors:
#
# $$q \cdot k = |q|\,|k|\cos\theta .$$
#
# Both factors are easy to estimate. $|q|^2 = \sum_m q_m^2$ is a sum of $d_k$ terms of mean 1,
# so $|q| \approx \sqrt{d_k}$ and $|q|\,|k| \approx d_k$: the lengths grow. The angle goes the
# other way: two random directions in many dimensions are **nearly orthogonal**, with
# $\cos\theta$ of typical size $1/\sqrt{d_k}$. The product is $d_k \cdot 1/\sqrt{d_k} =
# \sqrt{d_k}$: the standard deviation of step 3, without computing a variance. Measured on
# 2,000 random pairs per width:

# %%
print(f"{'d_k':>5} {'mean |q||k|/d_k':>16} {'std of cos θ':>13} {'1/√d_k':>8}", end="")
print(f" {'std of q·k':>11} {'√d_k':>6}")
for d in (4, 64, 1024):
    q = rng.standard_normal((2000, d))
    k = rng.standard_normal((2000, d))
    lengths = np.linalg.norm(q, axis=1) * np.linalg.norm(k, axis=1)
    dots = (q * k).sum(axis=1)
    cos = dots / lengths
    print(f"{d:>5} {np.mean(lengths / d):>16.3f} {cos.std():>13.4f} {1 / np.sqrt(d):>8.4f}", end="")
    print(f" {dots.std():>11.2f} {np.sqrt(d):>6.2f}")

# %% [markdown]
# In 1024 dimensions a random key is almost at right angles to a random query ($\cos\theta$
# about $\pm 0.03$), yet the score is large, because it multiplies that small cosine by lengths
# of about 32 each. Dividing by $\sqrt{d_k}$ removes exactly the growth that the lengths add and
# the cosine does not take back.

# %% [markdown]
# ## Step 4: how close should a Monte Carlo check come?
#
# From $n$ draws we estimate the variance by $\hat\sigma^2 = \frac1n\sum_i (s_i - \bar s)^2$
# (`np.var`). It is itself random; for $s = q \cdot k$ its relative standard error is
#
# $$\frac{\mathrm{SE}(\hat\sigma^2)}{d_k} = \sqrt{\frac{2 + 6/d_k}{n}} .$$
#
# It shrinks like $1/\sqrt n$: four times the draws halve it. The next cell prints it for the
# two sample sizes this notebook uses. A correct formula lands within about two standard errors
# ($|z| < 2$) most of the time, and beyond three almost never.
#
# <details><summary>Where the formula comes from (optional)</summary>
#
# For $n$ independent draws, $\mathrm{SE}(\hat\sigma^2) \approx \sqrt{(\mu_4 - \sigma^4)/n}$ with
# $\mu_4 = E[(s - E s)^4]$. For $s = q\cdot k$ expand $(\sum_m q_m k_m)^4$: only terms where every
# index appears an even number of times survive, giving
# $\mu_4 = \sum_m E[q_m^4]E[k_m^4] + 3\sum_{m \ne l} 1 = 9\,d_k + 3\,d_k(d_k - 1) = 3d_k^2 + 6d_k$
# (a standard normal has $E[z^4] = 3$). With $\sigma^4 = d_k^2$ this gives the formula above.
# Without any theory, put the *sample* fourth moment in instead: the next cell does that for the
# $XY$ check of step 2. The mean has standard error $\sqrt{d_k/n}$, and the standard deviation
# about half the variance's relative error.
#
# </details>

# %%
print("relative SE of the variance")
print(f"{'pairs n':>9} {'d_k = 1':>9} {'d_k = 1024':>11}")
for n in (N_SWEEP, N_PAIRS):
    print(f"{n:>9,} {np.sqrt((2 + 6 / 1) / n):>9.2%} {np.sqrt((2 + 6 / 1024) / n):>11.2%}")

xy = X * Y
m4 = np.mean((xy - xy.mean()) ** 4)
se = np.sqrt((m4 - np.var(xy) ** 2) / N_PAIRS)
print(f"Var(XY): Monte Carlo {np.var(xy):.3f} +- {se:.3f} (1 SE); formula {formula:.3f}")
print(f"         z = (Monte Carlo - formula) / SE = {(np.var(xy) - formula) / se:+.2f}")

# %% [markdown]
# ## The Monte Carlo table
#
# A common explanation says that "sampling 200,000 independent (q, k) pairs at several
# dimensions and measuring the empirical variance of q·k gives:" a table it does not show.
# Here it is, with one difference: for the six dimensions below this notebook draws
# `N_SWEEP` = 50,000 pairs per $d_k$, so that it runs in a couple of seconds. By step 4 that
# costs precision, not correctness: a quarter of the pairs doubles the relative standard error
# of each variance (step 4's table prints both sizes), and every $z$ below is computed with the
# $n$ actually drawn. Set `N_SWEEP = 200_000` in the first code cell to reproduce the text's
# sample size.
#
# First, the numpy for one dimension, in plain sight: draw the pairs, take the row-wise dot
# products, and measure.

# %%
d_k = 16
q = rng.standard_normal((N_PAIRS, d_k))  # 200,000 queries, entries N(0, 1)
k = rng.standard_normal((N_PAIRS, d_k))  # 200,000 keys
scores = (q * k).sum(axis=1)  # one dot product per pair

print(f"d_k = {d_k}: mean {scores.mean():.4f}, variance {scores.var():.4f}, std {scores.std():.4f}")
print(f"theory:  mean 0, variance {d_k}, std {np.sqrt(d_k):.4f}")

# %% [markdown]
# At $d_k = 1024$ those two arrays would hold 3.3 GB. `attnlib.sample_dot_products` draws the
# same kind of pairs in small chunks, fast. Its variance at $d_k = 16$ agrees with the by-hand
# draw within the sampling error of step 4 (two independent estimates differ by about
# $\sqrt 2$ standard errors of one):

# %%
from_library = sample_dot_products(d_k, N_PAIRS, rng)
se16 = d_k * np.sqrt((2 + 6 / d_k) / N_PAIRS)  # SE of one variance estimate (step 4)
se_diff = np.sqrt(2) * se16  # SE of the difference of two independent estimates
diff = scores.var() - from_library.var()
print(f"variance by hand {scores.var():.4f}, attnlib {from_library.var():.4f}, theory {d_k}")
print(f"difference {diff:+.4f}; SE of a difference sqrt(2) x {se16:.4f} = {se_diff:.4f}", end="")
print(f", z = {diff / se_diff:+.2f}")

# %% [markdown]
# Now all six dimensions, `N_SWEEP` pairs each, from the one seeded `rng`. Besides mean,
# variance and standard deviation we print the variance's standard error from step 4 (for the
# $n$ drawn) and $z = (\widehat{\mathrm{Var}} - d_k)/\mathrm{SE}$.

# %%
D_KS = [1, 4, 16, 64, 256, 1024]
raw = {d: sample_dot_products(d, N_SWEEP, rng) for d in D_KS}


def variance_table(samples, theory_var):
    """Print mean, variance and std of each sample beside the theory, with the variance's z."""
    print(
        f"{'d_k':>5} {'√d_k':>8} {'mean':>8} {'theory var':>11} {'variance':>10}"
        f" {'SE of var':>10} {'z':>6} {'std':>8}"
    )
    for d, s in samples.items():
        var = s.var()
        se = theory_var(d) * np.sqrt((2 + 6 / d) / s.size)
        print(
            f"{d:>5} {np.sqrt(d):>8.4f} {s.mean():>8.4f} {theory_var(d):>11.4f} {var:>10.4f}"
            f" {se:>10.4f} {(var - theory_var(d)) / se:>+6.2f} {s.std():>8.4f}"
        )


print(f"raw scores q·k, {N_SWEEP:,} pairs per row")
variance_table(raw, theory_var=lambda d: d)

# %% [markdown]
# The variance tracks $d_k$ and the standard deviation tracks $\sqrt{d_k}$, every row within
# the sampling error we predicted. Now the scaled scores, $q\cdot k/\sqrt{d_k}$ (same samples,
# divided):

# %%
scaled = {d: s / np.sqrt(d) for d, s in raw.items()}
print(f"scaled scores q·k / √d_k, same {N_SWEEP:,} pairs per row")
variance_table(scaled, theory_var=lambda d: 1)

# %% [markdown]
# Dividing by $\sqrt{d_k}$ divides each row by its own theory (so the $z$ column is unchanged):
# the variance is 1 at every width. The histograms show what the two tables say. On the left
# the raw scores spread out as $d_k$ grows; on the right, after the division, the three
# histograms lie on top of each other and on the standard normal curve (the plotting code is
# collapsed; click it to show it).

# %% jupyter={"source_hidden": true}
fig, (ax_raw, ax_scaled) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
colors = {4: "tab:green", 64: "tab:orange", 1024: "tab:blue"}
for d, color in colors.items():
    ax_raw.hist(
        raw[d],
        bins=np.linspace(-120, 120, 121),
        density=True,
        histtype="step",
        lw=1.5,
        color=color,
        label=f"$d_k$ = {d}  (std {raw[d].std():.1f})",
    )
    ax_scaled.hist(
        scaled[d],
        bins=np.linspace(-5, 5, 101),
        density=True,
        histtype="step",
        lw=1.5,
        color=color,
        label=f"$d_k$ = {d}",
    )
z = np.linspace(-5, 5, 201)
ax_scaled.plot(z, np.exp(-(z**2) / 2) / np.sqrt(2 * np.pi), "k--", lw=1, label="N(0, 1)")
ax_raw.set_title(r"raw scores $q\cdot k$")
ax_scaled.set_title(r"scaled scores $q\cdot k/\sqrt{d_k}$")
for ax, xlabel in ((ax_raw, r"$q\cdot k$"), (ax_scaled, r"$q\cdot k/\sqrt{d_k}$")):
    ax.set_xlabel(xlabel)
    ax.set_ylabel("density")
    ax.legend(loc="upper right", fontsize=9)
ax_raw.set_ylim(0, 0.06)
fig.suptitle(f"{N_SWEEP:,} random (q, k) pairs per width")
plt.show()

# %% [markdown]
# *Figure:* Histograms for $d_k$ = 4, 64 and 1024: left, the raw scores widen as $d_k$ grows;
# right, the scaled scores all lie on the dashed standard normal curve.
#
# (At $d_k = 4$ the raw histogram is a narrow spike, cut off at the top so that the wider ones
# can be seen; its scaled version is a little more peaked than the normal curve, because a sum
# of only four products is not yet normal.)
#
# ## Typical head widths
#
# Real heads use $d_k = 64$ or 128. Without the scale the raw scores' standard deviation is

# %%
for d in (64, 128):
    print(f"d_k = {d:>3}: std of raw scores = sqrt({d}) = {np.sqrt(d):.4f}")
print(f"Monte Carlo at d_k = 64 (table above): std = {raw[64].std():.4f}")

# %% [markdown]
# 8 and 11.3: a score two standard deviations out is 16 at $d_k = 64$. (How often unscaled
# scores reach "±20 or ±30", as is often said they easily do, is worked out in the
# optional section at the end.)
#
# A common exercise puts a number on it: at $d_k = 64$ a raw score of 16 is two standard
# deviations, and scaling turns it into $16/8 = 2$. Compare what the softmax exponentiates:

# %%
raw_score, d = 16.0, 64
print(f"scaled score = {raw_score:g} / sqrt({d}) = {raw_score / np.sqrt(d):g}")
print(f"exp({raw_score:g}) = {np.exp(raw_score):,.2f}", end="    ")
print(f"exp({raw_score / np.sqrt(d):g}) = {np.exp(raw_score / np.sqrt(d)):.3f}")

# %% [markdown]
# A factor of over a million between the two exponentials. (The exercise prints
# exp(16) ≈ 8,886,110, the integer part of 8,886,110.52.) What a softmax does with such ratios,
# a nearly one-hot row whose gradient vanishes, is the subject of notebook 04.

# %% [markdown]
# ## Entries with variance $\sigma^2$
#
# A classic question: *suppose the learned $W_Q, W_K$ produce entries with variance
# $\sigma_q^2$ and $\sigma_k^2$ instead of 1 (still independent, zero mean). What is the right
# denominator?*
#
# Step 1 again: $\mathrm{Var}(q_m k_m) = E[q_m^2]E[k_m^2] - 0 = \sigma_q^2\sigma_k^2$. Step 3
# again: $\mathrm{Var}(q\cdot k) = d_k\,\sigma_q^2\sigma_k^2$, so
#
# $$\mathrm{std}(q\cdot k) = \sqrt{d_k}\,\sigma_q\sigma_k
#   \quad\Longrightarrow\quad \text{divide by } \sqrt{d_k}\,\sigma_q\sigma_k .$$
#
# The textbook $1/\sqrt{d_k}$ is exact only when $\sigma_q\sigma_k = 1$. Otherwise it leaves a
# variance of $\sigma_q^2\sigma_k^2$: too large (softmax saturates again) or too small (softmax
# goes flat). The check, 200,000 pairs at $d_k = 16$ for each $(\sigma_q, \sigma_k)$, with the
# $z$-score of step 4:

# %%
d_k = 16
print("                               theory       variance after dividing by")
print(" σ_q   σ_k    Var(q·k)   d_k σ_q² σ_k²         √d_k    √d_k σ_q σ_k       z")
for sigma_q, sigma_k in [(1.0, 1.0), (2.0, 3.0), (0.5, 0.5)]:
    s = sample_dot_products(d_k, N_PAIRS, rng, sigma_q=sigma_q, sigma_k=sigma_k)
    theory = d_k * sigma_q**2 * sigma_k**2
    se = theory * np.sqrt((2 + 6 / d_k) / N_PAIRS)
    textbook = s / np.sqrt(d_k)
    corrected = s / (np.sqrt(d_k) * sigma_q * sigma_k)
    print(
        f"{sigma_q:>4} {sigma_k:>5} {s.var():>11.4f} {theory:>15.4f} {textbook.var():>12.4f}"
        f" {corrected.var():>15.4f} {(s.var() - theory) / se:>+7.2f}"
    )

# %% [markdown]
# With $\sigma_q = 2$, $\sigma_k = 3$ the textbook scale leaves a variance of about
# $2^2 \cdot 3^2 = 36$ (standard deviation 6); with $\sigma_q = \sigma_k = 0.5$ it leaves
# $0.0625$. Dividing by $\sqrt{d_k}\,\sigma_q\sigma_k$ restores 1 in every row.

# %% [markdown]
# ### Exercise: the variance of a score
#
# $d_k = 32$; the entries of $q$ have standard deviation $\sigma_q = 0.5$, those of $k$
# $\sigma_k = 3$ (all independent, mean 0). What is $\mathrm{Var}(q \cdot k)$, and so what
# should the scores be divided by? Stuck? `ch02.score_variance.hint()`, or
# `ch02.score_variance.solution()`.

# %%
d_k, sigma_q, sigma_k = 32, 0.5, 3.0
var_score = ...  # your answer: Var(q . k)
ch02.score_variance.check(var_score)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):

# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
ch02.score_variance.check_solution(d_k * sigma_q**2 * sigma_k**2)  # d_k terms of variance sq^2 sk^2

# %% [markdown]
# ## When does the unit-variance assumption hold?
#
# Everything above assumed independent entries with mean 0 and variance 1. That is a model,
# true at best near initialisation, and it is worth knowing where it bends:
#
# * **LayerNorm normalises $x$, not $q = xW_Q$.** The entries of $q$ have variance set by the
#   size of $W_Q$: of order 1 with the usual initialisation, and whatever training makes it
#   later.
# * **$q$ and $k$ of one token are correlated**, because both are computed from the same $x$.
#   With $W_K = W_Q$, a token's score against itself is $|q|^2$, with mean $d_k$, not 0.
# * **Trained scores grow.** Training is free to enlarge $W_Q$ and $W_K$ to sharpen attention,
#   and in large models the scores can grow until the softmax saturates and training becomes
#   unstable. That is why some models also normalise $q$ and $k$ themselves (a LayerNorm on
#   each, "QK-norm", used for example in the 22-billion-parameter vision transformer ViT-22B)
#   before the dot product.
#
# So $1/\sqrt{d_k}$ is the right scale for unit-variance entries, a sound default at
# initialisation, and the reason the other parts of a transformer try to keep activations near
# unit variance; it is not a guarantee that trained scores stay near 1.

# %% [markdown]
# ## Check yourself
#
# 1. A model uses $d_k = 256$ and does not scale. What is the standard deviation of its raw
#    scores under our assumptions, and what number should it divide by?
# 2. You rerun the $d_k = 64$ row with 20,000 pairs instead of 50,000. Roughly how far from 64
#    may the empirical variance land before you should suspect the formula?
# 3. $q_m$ has mean 1, variance 1; $k_m$ has mean 0, variance 1 (independent). What is
#    $\mathrm{Var}(q_m k_m)$?
#
# <details><summary>Answers</summary>
#
# 1. $\sqrt{256} = 16$; divide by 16 (see the table's $d_k = 256$ row).
# 2. Relative SE $= \sqrt{(2 + 6/64)/20000} \approx 1.02\,\%$, i.e. about 0.65; beyond about
#    $\pm 1.3$ (two SE) is unusual and beyond $\pm 2$ (three SE) is a red flag.
# 3. $\mu_q^2\sigma_k^2 + \mu_k^2\sigma_q^2 + \sigma_q^2\sigma_k^2 = 1 + 0 + 1 = 2$. A
#    non-zero mean inflates the score variance too; the $\sqrt{d_k}$ argument assumes zero
#    means.
#
# </details>

# %% [markdown]
# ## Summary
#
# * For independent entries with mean 0 and variance 1, $\mathrm{Var}(q_m k_m) = 1$ and
#   $\mathrm{Var}(q\cdot k) = d_k$: raw scores grow like $\sqrt{d_k}$ (8 at 64, 11.3 at 128,
#   32 at 1024). Geometrically: $|q|\,|k| \approx d_k$ while random vectors are nearly
#   orthogonal, $\cos\theta \sim 1/\sqrt{d_k}$.
# * 50,000 pairs per width confirm it to within the predicted sampling error,
#   $\sqrt{(2 + 6/d_k)/n}$ relative: about 0.6 to 1.3 % at $n = 50{,}000$, half that at the
#   200,000 pairs of the common explanation.
# * Dividing by $\sqrt{d_k}$ makes the variance 1 at every width; with entry variances
#   $\sigma_q^2, \sigma_k^2$ the right divisor is $\sqrt{d_k}\,\sigma_q\sigma_k$. Trained models
#   need not keep unit variance, which is why some also normalise $q$ and $k$.
# * Vaswani et al.'s footnote 4 is this notebook's derivation; their "we suspect" about small
#   gradients is notebook 04's subject (and notebook 11 tests it). Next: notebook 03 works the
#   "it" example by hand.

# %% [markdown]
# ## Optional: how large and how far apart are unscaled scores?
#
# Two common claims about unscaled scores, checked. First: "without scaling, raw
# scores can easily reach ±20 or ±30". How easily, at standard deviation 8? For a normal score,
# $P(|s| \ge c) = \mathrm{erfc}\big(c/(8\sqrt 2)\big)$; and we can count in the 50,000
# Monte Carlo scores at $d_k = 64$:

# %%
for c in (20, 30):
    p = math.erfc(c / 8 / math.sqrt(2))
    count = np.sum(np.abs(raw[64]) >= c)
    print(f"|score| >= {c}: {c / 8:.2f} std, probability {p:.2e}, about 1 in {1 / p:,.0f}")
    print(f"    Monte Carlo: {count:,} of {N_SWEEP:,} scores (normal theory: {p * N_SWEEP:,.0f})")

# %% [markdown]
# $\pm 20$ is 2.5 standard deviations: about one score in 80, so most rows of a few hundred
# keys have some. $\pm 30$ is 3.75 standard deviations: about 2 in 10,000 scores, rare, not
# "easy" (it becomes ordinary at $d_k = 1024$, where the standard deviation is 32). Far out in
# the tail the Monte Carlo count runs above the normal theory: given $q$, the score is exactly
# normal with spread $|q|$, but $|q|$ varies from query to query, and that mixture of normals
# has heavier tails than a single one. Rare either way.

# %% [markdown]
# ### How far apart are the top two?
#
# Softmax turns differences of scores into *ratios* of weights: $p_i / p_j = e^{x_i - x_j}$. So
# what matters in a row is the **gap** between the top score and the runner-up. A common claim
# is that at $d_k = 1024$ (standard deviation 32) "it is routine for the top score and
# the runner-up to differ by 20–40", and that a gap of 30 gives the top token "e³⁰ ≈ 10¹³ times
# more weight". First the exponentials:

# %%
print(f"e^30         = {np.exp(30):.4e}  (to 3 significant figures {np.exp(30):.2e})")
print(f"e^10         = {np.exp(10):,.2f}")
print(f"e^30 / e^10  = e^20 = {np.exp(30) / np.exp(10):.4e}")

# %% [markdown]
# <details><summary>Two small corrections to a common rounding (optional)</summary>
#
# Another explanation writes "exp(30) ≈ 1.06 × 10^13" and calls $e^{30}/e^{10}$ "billions to one".
# $e^{30} = 1.0686 \times 10^{13}$, so **1.07** × 10^13 when rounded (1.06 cuts the digits off),
# and $e^{30}/e^{10} = e^{20} \approx 4.85 \times 10^{8}$, about **half a billion** to one. The
# $e^{30} \approx 10^{13}$ above is right as an order of magnitude. Neither correction weakens
# the argument: half a billion to one is one-hot for any practical purpose.
#
# </details>
#
# Now one query against $T = 8$ keys at $d_k = 1024$, real vectors drawn with our `rng`:

# %%
d_k, T = 1024, 8
q = rng.standard_normal(d_k)
K = rng.standard_normal((T, d_k))
s = K @ q  # (T,) raw scores
top_two = np.sort(s)[-2:]
print("raw scores       :", np.array2string(s, precision=1))
print(f"top - runner-up  : {top_two[1] - top_two[0]:.2f}")
print("softmax(raw)     :", softmax(s))
print("softmax(scaled)  :", softmax(s / np.sqrt(d_k)))

# %% [markdown]
# Is that row typical? We need many rows, for several sequence lengths $T$. Drawing 64 keys of
# 1024 numbers for each of 5,000 rows would be 330 million numbers, but there is an exact
# shortcut: **given** $q$, each score $q \cdot k_j = \sum_m q_m k_{jm}$ is a sum of independent
# normals with variances $q_m^2$, so it is exactly $N(0, |q|^2)$, independently for each key. So
# we draw real queries, take their lengths, and draw the scores as $|q|$ times standard normals.

# %%
n_rows = 5_000
q_len = np.linalg.norm(rng.standard_normal((n_rows, d_k)), axis=1)  # |q| of 5,000 queries
print(f"|q| at d_k = {d_k}: mean {q_len.mean():.2f}, std {q_len.std():.2f} (sqrt(d_k) = 32)\n")
print("          median   gap in    gap    top weight > 0.99   top score")
print("keys T       gap  [20, 40]  >= 10      raw   scaled      > 88.7")
for T in (4, 8, 64):
    s = q_len[:, None] * rng.standard_normal((n_rows, T))  # (n_rows, T) raw scores
    top_two = np.sort(s, axis=1)[:, -2:]
    gap = top_two[:, 1] - top_two[:, 0]
    top_raw = softmax(s).max(axis=1)
    top_scaled = softmax(s / np.sqrt(d_k)).max(axis=1)
    print(
        f"{T:>6} {np.median(gap):>9.1f} {np.mean((gap >= 20) & (gap <= 40)):>9.0%}"
        f" {np.mean(gap >= 10):>6.0%} {np.mean(top_raw > 0.99):>8.0%}"
        f" {np.mean(top_scaled > 0.99):>8.0%} {np.mean(top_two[:, 1] > 88.7):>11.1%}"
    )

# %% [markdown]
# Reading the table:
#
# * The typical gap is smaller than "20–40" and **shrinks** as $T$ grows: more keys crowd the
#   top. A gap in $[20, 40]$ happens in a minority of rows, not routinely.
# * It does not need to be 30: without the scale the top weight exceeds 0.99 in most rows
#   (notebook 04, section 2, says why a gap of 10 is already enough). After dividing by
#   $\sqrt{d_k} = 32$ the gaps are 32 times smaller and no row is that one-sided.
# * The last column is the share of rows whose largest raw score passes 88.7, where $e^x$
#   overflows float32 (notebook 05 explains why that is *not* the reason for the scale).

# %% [markdown]
# Why a row that one-sided stops learning, for the winner as much as for the losers, is
# notebook 04's subject.
