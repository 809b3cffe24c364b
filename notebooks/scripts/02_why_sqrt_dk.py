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
# 2. check a variance formula by Monte Carlo, **and say how close the check should come**
#    (the standard error of a variance estimate);
# 3. explain what a score standard deviation of 32 does to a softmax;
# 4. find the right denominator, $\sqrt{d_k}\,\sigma_q\sigma_k$, when the entries do not have
#    variance 1.

# %% [markdown]
# ## The question
#
# The score of query $q$ against key $k$, both in $\mathbb{R}^{d_k}$, is a sum of $d_k$ products:
#
# $$q \cdot k = \sum_{m=1}^{d_k} q_m k_m .$$
#
# Attention divides every score by $\sqrt{d_k}$ before the softmax. Why that number? We follow
# seeds 000 and 004: suppose that, as is roughly true once a network runs through normalised
# layers, every entry $q_m$, $k_m$ behaves like an independent random variable with mean 0 and
# variance 1. How big is $q \cdot k$ then?

# %%
import matplotlib.pyplot as plt
import numpy as np

from attnlib import sample_dot_products

np.set_printoptions(precision=4, suppress=True)
SEED = 1706  # arXiv 1706.03762, "Attention Is All You Need"
rng = np.random.default_rng(SEED)
N_PAIRS = 200_000

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
# ## Step 2: $\mathrm{Var}(XY)$ in general (seed 004)
#
# Drop the zero means. For independent $X$ and $Y$ with means $\mu_X, \mu_Y$ and variances
# $\sigma_X^2, \sigma_Y^2$, the same two lines give
#
# $$\mathrm{Var}(XY) = E[X^2]E[Y^2] - \mu_X^2\mu_Y^2
#   = (\sigma_X^2 + \mu_X^2)(\sigma_Y^2 + \mu_Y^2) - \mu_X^2\mu_Y^2
#   = \mu_X^2\,\sigma_Y^2 + \mu_Y^2\,\sigma_X^2 + \sigma_X^2\sigma_Y^2,$$
#
# which is seed 004's formula
# $E[X]^2\mathrm{Var}(Y) + E[Y]^2\mathrm{Var}(X) + \mathrm{Var}(X)\mathrm{Var}(Y)$.
# With zero means only the last term is left, $\mathrm{Var}(X)\mathrm{Var}(Y)$; that is the
# shortcut seed 002 writes, $\mathrm{Var}(q_i k_i) = \mathrm{Var}(q_i)\mathrm{Var}(k_i)$, and it is
# right *only because* the means are zero.
#
# A check with non-zero means and a non-normal $Y$: $X \sim N(2, 3^2)$ and $Y$ exponential with
# mean 1.5 (so variance $1.5^2 = 2.25$).

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
# be? We answer that properly in step 4.
#
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
#
# This is active-recall question 3 of seed 000, answered: the scale factor is $1/\sqrt{d_k}$.

# %% [markdown]
# ## Step 4: how close should a Monte Carlo check come?
#
# From $n$ draws we estimate the variance by $\hat\sigma^2 = \frac1n\sum_i (s_i - \bar s)^2$
# (`np.var`). It is itself random; its standard error is
#
# $$\mathrm{SE}(\hat\sigma^2) \approx \sqrt{\frac{\mu_4 - \sigma^4}{n}},\qquad
#   \mu_4 = E[(s - E s)^4].$$
#
# For $s = q\cdot k$ the fourth moment follows by expanding $(\sum_m q_m k_m)^4$: only terms where
# every index appears an even number of times survive, giving
# $\mu_4 = \sum_m E[q_m^4]E[k_m^4] + 3\sum_{m \ne l} 1 = 9\,d_k + 3\,d_k(d_k - 1) = 3d_k^2 + 6d_k$
# (a standard normal has $E[z^4] = 3$). Hence
#
# $$\frac{\mathrm{SE}(\hat\sigma^2)}{d_k} = \sqrt{\frac{2 + 6/d_k}{n}} .$$
#
# With $n = 200{,}000$ that is 0.63 % at $d_k = 1$ and about 0.32 % for large $d_k$. A correct
# formula should land within about two standard errors ($|z| < 2$) most of the time, and
# beyond three almost never. The mean has standard error $\sqrt{d_k/n}$, and the standard
# deviation about half the variance's relative error.

# %%
for d_k in (1, 1024):
    print(f"d_k = {d_k:>4}: relative SE of the variance = {np.sqrt((2 + 6 / d_k) / N_PAIRS):.4%}")

# %% [markdown]
# The same estimate works for step 2 without any theory: put the *sample* fourth moment into
# the formula.

# %%
xy = X * Y
m4 = np.mean((xy - xy.mean()) ** 4)
se = np.sqrt((m4 - np.var(xy) ** 2) / N_PAIRS)
print(
    f"Var(XY): Monte Carlo {np.var(xy):.3f} +- {se:.3f} (1 SE);"
    f" formula {formula:.3f}, z = {(np.var(xy) - formula) / se:+.2f}"
)

# %% [markdown]
# ## The Monte Carlo table seed 000 refers to
#
# Seed 000 says "sampling 200,000 independent $(q, k)$ pairs at several dimensions ... gives:"
# and then the table is missing. Here it is. First, the numpy for one dimension, in plain
# sight: draw the pairs, take the row-wise dot products, and measure.

# %%
d_k = 16
q = rng.standard_normal((N_PAIRS, d_k))  # 200,000 queries, entries N(0, 1)
k = rng.standard_normal((N_PAIRS, d_k))  # 200,000 keys
scores = (q * k).sum(axis=1)  # one dot product per pair

print(
    f"d_k = {d_k}: mean {scores.mean():.4f}, variance {scores.var():.4f},"
    f" std {scores.std():.4f}   (theory: 0, {d_k}, {np.sqrt(d_k):.4f})"
)

# %% [markdown]
# At $d_k = 1024$ those two arrays would hold 3.3 GB. `attnlib.sample_dot_products` draws the
# same way in chunks. With a fresh generator on the same seed and a small $n$ (one chunk), it
# returns exactly the numbers of the by-hand draw:

# %%
by_hand_rng, library_rng = np.random.default_rng(SEED), np.random.default_rng(SEED)
q_small = by_hand_rng.standard_normal((1000, d_k))
k_small = by_hand_rng.standard_normal((1000, d_k))
by_hand = (q_small * k_small).sum(axis=1)
from_library = sample_dot_products(d_k, 1000, library_rng)
print("same numbers:", np.allclose(by_hand, from_library, rtol=1e-12, atol=0))

# %% [markdown]
# Now all six dimensions, 200,000 pairs each, from the one seeded `rng`. Besides mean, variance
# and standard deviation we print the variance's standard error from step 4 and
# $z = (\widehat{\mathrm{Var}} - d_k)/\mathrm{SE}$.

# %%
D_KS = [1, 4, 16, 64, 256, 1024]
raw = {d: sample_dot_products(d, N_PAIRS, rng) for d in D_KS}


def variance_table(samples, theory_var):
    """Print mean, variance, std of each sample beside the theory, with the variance's z-score."""
    print(
        f"{'d_k':>5} {'sqrt(d_k)':>9} {'mean':>8} {'theory var':>10} {'var':>10}"
        f" {'SE(var)':>8} {'z':>6} {'std':>8}"
    )
    for d, s in samples.items():
        var = s.var()
        se = theory_var(d) * np.sqrt((2 + 6 / d) / s.size)
        print(
            f"{d:>5} {np.sqrt(d):>9.4f} {s.mean():>8.4f} {theory_var(d):>10.4f} {var:>10.4f}"
            f" {se:>8.4f} {(var - theory_var(d)) / se:>+6.2f} {s.std():>8.4f}"
        )


print(f"raw scores q.k, {N_PAIRS:,} pairs per row")
variance_table(raw, theory_var=lambda d: d)

# %% [markdown]
# The variance tracks $d_k$ and the standard deviation tracks $\sqrt{d_k}$, every row within
# the sampling error we predicted. Now the scaled scores, $q\cdot k/\sqrt{d_k}$ (same samples,
# divided):

# %%
scaled = {d: s / np.sqrt(d) for d, s in raw.items()}
print(f"scaled scores q.k / sqrt(d_k), same {N_PAIRS:,} pairs per row")
variance_table(scaled, theory_var=lambda d: 1)

# %% [markdown]
# Dividing by $\sqrt{d_k}$ exactly divides each row by its own theory (so the $z$ column is
# unchanged): the variance is 1 at every width. On a log-log plot the raw variance is a line of
# slope 1 and the scaled one is flat (at $d_k = 1$ the two coincide: $\sqrt{1} = 1$). Error bars
# of $\pm 2$ SE are drawn but are smaller than the markers.

# %%
d_arr = np.array(D_KS)
raw_var = np.array([raw[d].var() for d in D_KS])
scaled_var = np.array([scaled[d].var() for d in D_KS])
rel_se = np.sqrt((2 + 6 / d_arr) / N_PAIRS)

fig, ax = plt.subplots(figsize=(7, 4.6))
ax.plot(d_arr, d_arr, color="tab:blue", lw=1, alpha=0.6, label=r"theory: $d_k$")
ax.errorbar(
    d_arr,
    raw_var,
    yerr=2 * rel_se * d_arr,
    fmt="o",
    color="tab:blue",
    label=r"raw $q\cdot k$ (Monte Carlo)",
)
ax.plot(d_arr, np.ones_like(d_arr), color="tab:orange", lw=1, alpha=0.6, label="theory: 1")
ax.errorbar(
    d_arr,
    scaled_var,
    yerr=2 * rel_se,
    fmt="s",
    color="tab:orange",
    label=r"scaled $q\cdot k/\sqrt{d_k}$ (Monte Carlo)",
)
ax.set_xscale("log", base=2)
ax.set_yscale("log", base=2)
ax.set_xticks(D_KS, [str(d) for d in D_KS])
ax.set_yticks([1, 4, 16, 64, 256, 1024], ["1", "4", "16", "64", "256", "1024"])
ax.set_ylim(0.6, 2000)
ax.set_xlabel(r"$d_k$")
ax.set_ylabel("variance of the score")
ax.set_title(f"Score variance, {N_PAIRS:,} pairs per point")
ax.grid(True, which="major", alpha=0.3)
ax.legend(loc="upper left")
plt.show()

# %% [markdown]
# ## Typical head widths (seed 004)
#
# Real heads use $d_k = 64$ or 128. Without the scale, the raw scores' standard deviation is

# %%
for d in (64, 128):
    print(f"d_k = {d:>3}: std of raw scores = sqrt({d}) = {np.sqrt(d):.4f}")
print(f"Monte Carlo at d_k = 64 (table above): std = {raw[64].std():.4f}")

# %% [markdown]
# 8 and 11.3, as seed 004 says. Scores of $\pm 20$ or $\pm 30$ are then ordinary.
#
# Seed 004's exercise 1 puts a number on it: at $d_k = 64$ a raw score of 16 is two standard
# deviations, and scaling turns it into $16/8 = 2$. Compare what the softmax exponentiates:

# %%
raw_score, d = 16.0, 64
print(f"scaled score = {raw_score:g} / sqrt({d}) = {raw_score / np.sqrt(d):g}")
print(
    f"exp({raw_score:g}) = {np.exp(raw_score):,.2f}    exp({raw_score / np.sqrt(d):g}) ="
    f" {np.exp(raw_score / np.sqrt(d)):.3f}"
)

# %% [markdown]
# A factor of over a million between the two exponentials. (Seed 004 prints
# exp(16) ≈ 8,886,110, the integer part of 8,886,110.52.)
#
# ## What a standard deviation of 32 does to a softmax: a first look
#
# At $d_k = 1024$ the raw scores have standard deviation $\sqrt{1024} = 32$. Softmax turns
# differences of scores into *ratios* of weights: $p_i / p_j = e^{x_i - x_j}$. Seed 000 says a
# gap of 30 between the top score and the runner-up makes the top weight $e^{30} \approx 10^{13}$
# times larger; seed 004 compares $e^{30}$ with $e^{10}$.

# %%
print(f"e^30         = {np.exp(30):.4e}  (to 3 significant figures {np.exp(30):.2e})")
print(f"e^10         = {np.exp(10):,.2f}")
print(f"e^30 / e^10  = e^20 = {np.exp(30) / np.exp(10):.4e}")

# %% [markdown]
# Two small corrections to seed 004, which writes "exp(30) ≈ 1.06 × 10^13" and "the ratio is
# billions to one": $e^{30} = 1.0686 \times 10^{13}$, so **1.07** × 10^13 when rounded (1.06 is
# a truncation), and $e^{30}/e^{10} = e^{20} \approx 4.85 \times 10^{8}$, about **half a
# billion** to one, not billions. Seed 000's $e^{30} \approx 10^{13}$ is right as an order of
# magnitude. Neither correction weakens the argument: half a billion to one is one-hot for any
# practical purpose.
#
# Is a gap of 30 realistic? One query against $T = 8$ keys at $d_k = 1024$, drawn with our
# `rng`, then the same experiment on 500 queries:

# %%
d_k, T = 1024, 8
q = rng.standard_normal(d_k)
K = rng.standard_normal((T, d_k))
s = K @ q


def softmax_row(x):
    e = np.exp(x - x.max())
    return e / e.sum()


top2 = np.sort(s)[-2:]
print("raw scores       :", s)
print(f"top - runner-up  : {top2[1] - top2[0]:.2f}")
print("softmax(raw)     :", softmax_row(s))
print("softmax(scaled)  :", softmax_row(s / np.sqrt(d_k)))

q_many = rng.standard_normal((500, d_k))
K_many = rng.standard_normal((500, T, d_k))
s_many = np.einsum("nd,ntd->nt", q_many, K_many)
gaps = np.diff(np.sort(s_many, axis=1)[:, -2:], axis=1)[:, 0]
top_raw = np.array([softmax_row(r).max() for r in s_many])
top_scaled = np.array([softmax_row(r / np.sqrt(d_k)).max() for r in s_many])
print(
    f"\n500 queries, T = {T}: median gap top - runner-up = {np.median(gaps):.1f};"
    f" gap >= 20 in {np.mean(gaps >= 20):.0%} of rows"
)
print(
    f"top weight > 0.99: raw {np.mean(top_raw > 0.99):.0%} of rows,"
    f" scaled {np.mean(top_scaled > 0.99):.0%} of rows"
)

# %% [markdown]
# With 8 keys the gap between the two best raw scores is often 10 to 20 and sometimes well
# beyond, not "routinely 20 to 40" (seed 000 overstates a little: the gap between the top two of
# $T$ scores shrinks as $T$ grows). Even so, without the scale the top weight exceeds 0.99 in
# a large share of rows; scaled, in none. A near one-hot softmax passes almost no gradient to
# the losing scores: its derivative $p_i(\delta_{ij} - p_j)$ is close to 0 when every $p$ is
# close to 0 or 1. That is the real reason for the scale, and notebook 04 explores it with a
# live lab.

# %% [markdown]
# ## Question 6 of seed 000: entries with variance $\sigma^2$
#
# *Suppose the learned $W_Q, W_K$ produce entries with variance $\sigma_q^2$ and $\sigma_k^2$
# instead of 1 (still independent, zero mean). What is the right denominator?*
#
# Step 1 again: $\mathrm{Var}(q_m k_m) = E[q_m^2]E[k_m^2] - 0 = \sigma_q^2\sigma_k^2$. Step 3
# again: $\mathrm{Var}(q\cdot k) = d_k\,\sigma_q^2\sigma_k^2$, so
#
# $$\mathrm{std}(q\cdot k) = \sqrt{d_k}\,\sigma_q\sigma_k
#   \quad\Longrightarrow\quad \text{divide by } \sqrt{d_k}\,\sigma_q\sigma_k .$$
#
# The textbook $1/\sqrt{d_k}$ is exact only when $\sigma_q\sigma_k = 1$. Otherwise it leaves a
# variance of $\sigma_q^2\sigma_k^2$: too large (softmax saturates again) or too small (softmax
# goes flat). That is why transformers pair the scale with initialisation and normalisation
# (LayerNorm) that keep activations near unit variance. The check, 200,000 pairs at
# $d_k = 16$ for each $(\sigma_q, \sigma_k)$, with the $z$-score of step 4:

# %%
d_k = 16
header = (
    f"{'sigma_q':>7} {'sigma_k':>7} {'Var(q.k)':>10} {'d_k sq^2 sk^2':>13}"
    f" {'Var(/sqrt d_k)':>14} {'Var(/(sqrt d_k sq sk))':>22} {'z':>6}"
)
lines = [header]
for sigma_q, sigma_k in [(1.0, 1.0), (2.0, 3.0), (0.5, 0.5)]:
    s = sample_dot_products(d_k, N_PAIRS, rng, sigma_q=sigma_q, sigma_k=sigma_k)
    theory = d_k * sigma_q**2 * sigma_k**2
    se = theory * np.sqrt((2 + 6 / d_k) / N_PAIRS)
    textbook = s / np.sqrt(d_k)
    corrected = s / (np.sqrt(d_k) * sigma_q * sigma_k)
    lines.append(
        f"{sigma_q:>7} {sigma_k:>7} {s.var():>10.4f} {theory:>13.4f}"
        f" {textbook.var():>14.4f} {corrected.var():>22.4f}"
        f" {(s.var() - theory) / se:>+6.2f}"
    )
print("\n".join(lines))

# %% [markdown]
# With $\sigma_q = 2$, $\sigma_k = 3$ the textbook scale leaves a variance of about
# $2^2 \cdot 3^2 = 36$ (standard deviation 6); with $\sigma_q = \sigma_k = 0.5$ it leaves
# $0.0625$. Dividing by $\sqrt{d_k}\,\sigma_q\sigma_k$ restores 1 in every row.

# %% [markdown]
# ## Check yourself
#
# 1. A model uses $d_k = 256$ and does not scale. What is the standard deviation of its raw
#    scores under our assumptions, and what number should it divide by?
# 2. You rerun the $d_k = 64$ row with 20,000 pairs instead of 200,000. Roughly how far from 64
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
#   32 at 1024). In general $\mathrm{Var}(XY) = \mu_X^2\sigma_Y^2 + \mu_Y^2\sigma_X^2 +
#   \sigma_X^2\sigma_Y^2$.
# * 200,000 pairs per width confirm it to within the predicted sampling error,
#   $\sqrt{(2 + 6/d_k)/n}$ relative, about 0.3 to 0.6 %.
# * Dividing by $\sqrt{d_k}$ makes the variance 1 at every width; with entry variances
#   $\sigma_q^2, \sigma_k^2$ the right divisor is $\sqrt{d_k}\,\sigma_q\sigma_k$.
# * Large score spreads make softmax nearly one-hot ($e^{20} \approx 4.85 \times 10^8$), which
#   starves learning of gradient. Next: notebook 03 works the "it" example by hand.
