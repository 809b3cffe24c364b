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
# # 05 · "We scale to avoid overflow": a misconception
#
# Why is there a $1/\sqrt{d_k}$ in $\mathrm{softmax}(QK^\top/\sqrt{d_k})\,V$? The usual answer,
# in lecture notes and blog posts alike, is some version of
#
# > "Dividing by $\sqrt{d_k}$ is a crucial step for **numerical stability**."
#
# and "numerical stability" is then read as *"to keep `exp` from overflowing"*. That reading is
# the misconception this notebook corrects. A better explanation takes it apart:
#
# > A frequent misreading is that dividing by $\sqrt{d_k}$ exists to keep the numbers going into
# > exp() from overflowing. [...] float32 overflows around $e^{88.7} \approx 3.4 \times 10^{38}$;
# > the code above already subtracts the row maximum before exponentiating [...] which [...] by
# > itself makes overflow impossible [...]. What max-subtraction does not touch is the spread
# > between scores.
#
# This notebook checks that argument with numbers, in float32, float64 and float16 (the half
# precision of mixed-precision training, where overflow is a real risk).
#
# **Learning goals.** After this notebook you can
# 1. compute where `exp` overflows in float16, float32 and float64, and show the `inf` and the
#    `NaN` that a naive softmax then returns;
# 2. derive the shift invariance $\mathrm{softmax}(x + c) = \mathrm{softmax}(x)$ and explain why
#    subtracting the maximum makes overflow impossible for any finite scores;
# 3. tell the *size* of the scores (which overflows) from their *spread* (which saturates), and
#    show that a wider float type leaves a saturated softmax, and its vanishing gradient, exactly
#    as saturated as before;
# 4. say what "numerical stability" means here: max-subtraction guards against overflow, the
#    scale against saturation.
#
# Prerequisites: notebook 02 ($\mathrm{Var}(q\cdot k) = d_k$) and notebook 04 (saturation).

# %%
import matplotlib.pyplot as plt
import numpy as np

import attnlib

np.set_printoptions(precision=4, suppress=True)
SEED = 5
rng = np.random.default_rng(SEED)

# %% [markdown]
# ## 1. Where does `exp` overflow?
#
# A floating-point type has a largest finite number $M$. Since $e^x$ is increasing,
#
# $$e^x \le M \iff x \le \ln M ,$$
#
# so every type has a threshold $\ln M$ above which `np.exp` returns `inf`. We compute it rather
# than trust a remembered number.

# %%
for dtype in (np.float16, np.float32, np.float64):
    M = np.finfo(dtype).max
    print(f"{dtype.__name__:>7}: largest number M = {float(M):.4e},  ln M = {np.log(float(M)):.4f}")

# %% [markdown]
# Just below and just above the float32 threshold. Going past it makes numpy emit a
# `RuntimeWarning: overflow encountered in exp`. **We silence that warning on purpose**, and only
# inside the `with` block, because here we want to look at the *result* of the overflow (in your
# own code, a warning like that is a bug report: read it).

# %%
x32 = np.array([88.72, 88.73], dtype=np.float32)
x64 = np.array([709.78, 709.79], dtype=np.float64)
with np.errstate(over="ignore"):
    print("float32: exp", x32, "=", np.exp(x32))
    print("float64: exp", x64, "=", np.exp(x64))

# %% [markdown]
# float16 stands out: its largest number is 65504, so `exp` overflows for any input above
# $\ln 65504 \approx 11.09$. A score of 12 is nothing unusual: unscaled scores at $d_k = 64$ have
# standard deviation 8 (notebook 02). In float16, overflow is not a thought experiment:

# %%
x16 = np.array([11.0, 11.1, 12.0], dtype=np.float16)
with np.errstate(over="ignore"):
    print("float16: exp", x16, "=", np.exp(x16))

# %% [markdown]
# <details><summary>A precision note on "$e^{88.7} \approx 3.4 \times 10^{38}$" (optional)</summary>
#
# The quote pairs a rounded exponent with an unrounded maximum. The float32 maximum
# $3.40 \times 10^{38}$ is $e^{88.72}$; $e^{88.7}$ itself is about 2% smaller. It does not affect
# the argument; here are both numbers:
#
# </details>

# %%
print(f"e^88.7      = {np.exp(88.7):.4e}")
print(f"float32 max = {np.finfo(np.float32).max:.4e} = e^{np.log(np.finfo(np.float32).max):.4f}")

# %% [markdown]
# ## 2. The naive softmax turns overflow into NaN
#
# Softmax written straight from its definition,
#
# $$\mathrm{softmax}(x)_i = \frac{e^{x_i}}{\sum_j e^{x_j}},$$
#
# breaks for large scores: the numerator and the denominator both overflow to `inf`, and
# $\infty / \infty$ is `NaN` ("not a number"). Very negative scores break it the other way:
# every $e^{x_j}$ underflows to $0$, and $0/0$ is `NaN` too. Again we silence numpy's warnings
# (`over` for the overflow, `invalid` for the NaN) to see what comes out.


# %%
def naive_softmax(x):
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


big = np.array([1000.0, 1010.0, 1020.0], dtype=np.float32)
with np.errstate(over="ignore", invalid="ignore"):
    print("exp(big)                  =", np.exp(big))
    print("naive_softmax(big)        =", naive_softmax(big))
    print("naive_softmax(big - 2000) =", naive_softmax(big - 2000))  # exp underflows: 0/0
    print("same, big in float64      =", naive_softmax(big.astype(np.float64)))

# %% [markdown]
# So overflow is real: 1000 is far past both thresholds. Notice, though, what made it happen:
# the **size** of the scores, not how different they are from each other.
#
# In float16 the same failure needs no extreme scores at all. Scores such as $[9, 10, 12]$, of the
# size that raw scores at $d_k = 64$ (standard deviation 8) reach every day, already break the
# naive softmax: $e^{12} \approx 162{,}755$ does not fit in float16.

# %%
modest = np.array([9.0, 10.0, 12.0], dtype=np.float16)
with np.errstate(over="ignore", invalid="ignore"):
    print("float16 naive_softmax([9, 10, 12]) =", naive_softmax(modest))
    print("float32 naive_softmax([9, 10, 12]) =", naive_softmax(modest.astype(np.float32)))

# %% [markdown]
# ## 3. Max-subtraction removes overflow for any scores
#
# Add the same constant $c$ to every score. The factor $e^{c}$ appears in the numerator and in
# every term of the denominator, and cancels:
#
# $$\mathrm{softmax}(x + c)_i
#   = \frac{e^{x_i + c}}{\sum_j e^{x_j + c}}
#   = \frac{e^{c}\, e^{x_i}}{e^{c} \sum_j e^{x_j}}
#   = \mathrm{softmax}(x)_i .$$
#
# Softmax is **shift invariant**: it only sees the differences $x_i - x_j$. Choose
# $c = -\max_j x_j$. Then every exponent is $x_i - \max_j x_j \le 0$, so every term lies in
# $[0, 1]$ (a very small one may underflow to $0$, which is harmless: it is a weight of
# essentially $0$), the largest term is exactly $e^0 = 1$, and the denominator lies in $[1, n]$.
# Nothing can overflow, and the denominator can never be $0$: both NaNs of section 2 are gone,
# for every finite $x$ and every float type.

# %% [markdown]
# ### Exercise: a softmax that cannot overflow
#
# Before you read our version below, turn the derivation into code. Write `my_softmax(x)` for
# scores of shape $(\dots, n)$: a softmax along the last axis (one row of weights per query, any
# number of leading axes) that stays finite where section 2's naive softmax gave NaN, for large
# scores such as $[1000, 1001]$ and very negative ones such as $[-1000, -1001]$. The check runs
# it on seven inputs, batches among them, and says what went wrong. Stuck?
# `ch05.stable_softmax.hint()`, or `ch05.stable_softmax.solution()`.

# %%
from attnlib.exercises import ch05


def my_softmax(x):
    raise NotImplementedError  # replace this line with your code


ch05.stable_softmax.check(my_softmax)

# %% [markdown]
# **Solution** (hidden; click the collapsed cell below to show it):


# %% jupyter={"outputs_hidden": true, "source_hidden": true}
# solution (click to expand)
def softmax_solution(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))  # largest exponent is e^0 = 1
    return e / e.sum(axis=-1, keepdims=True)


ch05.stable_softmax.check_solution(softmax_solution)

# %% [markdown]
# Our version, with the bound of each step in a comment, on the scores of section 2:


# %%
def stable_softmax(x):
    shifted = x - x.max(axis=-1, keepdims=True)  # largest exponent is now 0
    e = np.exp(shifted)  # every entry in [0, 1]
    return e / e.sum(axis=-1, keepdims=True)  # denominator in [1, n]


small = np.array([0.0, 10.0, 20.0], dtype=np.float32)
print("stable_softmax(big)        =", stable_softmax(big))
print("stable_softmax(big - 2000) =", stable_softmax(big - 2000))
print("stable_softmax(small)      =", stable_softmax(small))
print("attnlib.softmax(big)       =", attnlib.softmax(big))
print("float16 stable_softmax([9, 10, 12]) =", stable_softmax(modest))
print(
    "weights of big and small bit-for-bit identical:",
    np.array_equal(stable_softmax(big), stable_softmax(small)),
)

# %% [markdown]
# Shift invariance, numerically: add random constants, large and small, to a random score vector
# and compare with `attnlib.softmax` (which subtracts the maximum, exactly as above) on the
# unshifted scores. The differences are rounding error.

# %%
x = rng.normal(size=6)
reference = attnlib.softmax(x)
for c in rng.uniform(-1e4, 1e4, size=4):
    diff = np.abs(stable_softmax(x + c) - reference).max()
    print(f"c = {c:10.2f}: max |softmax(x + c) - softmax(x)| = {diff:.1e}")

# %% [markdown]
# This is where max-subtraction earns its keep. Mixed-precision training stores activations in
# float16 (or bfloat16, which has float32's range but only 8 bits of precision); a softmax that
# exponentiated float16 scores directly would overflow at a score of 11.09. Subtracting the
# maximum makes every exponent $\le 0$ in any float type, so real implementations do it always,
# and many also compute the softmax itself in float32. That is the honest content of "numerical
# stability": it is the job of the shift, not of the scale.
#
# **Checkpoint.** `[1000, 1010, 1020]` and `[0, 10, 20]` have very different sizes and exactly
# the same weights (after the shift both are `[-20, -10, 0]`, so not even rounding differs). If
# preventing overflow were the job of $1/\sqrt{d_k}$, max-subtraction would already have done that
# job, and the scale would be redundant. It is not redundant, so it must do something else.

# %% [markdown]
# ## 4. The spread is what saturates
#
# Look again at `softmax([0, 10, 20])`: $[0.0000, 0.0000, 1.0000]$ to four decimals. Nothing
# overflowed, yet the weights are almost one-hot. Softmax depends only on the differences between
# scores, and a difference of $10$ means a ratio of weights of $e^{10}$. Max-subtraction is a shift
# and leaves every difference where it was. Dividing by a number is a *rescaling*: it shrinks
# every difference, and that is what changes the weights.

# %%
spread_demo = np.array([0.0, 10.0, 20.0])
print(f"e^10 = {np.exp(10):,.0f}: the weight ratio between neighbours")
print("softmax([0, 10, 20]) in full:", ", ".join(f"{w:.3e}" for w in attnlib.softmax(spread_demo)))
for divisor in (1, 2, 4, 8, 16):
    print(f"softmax([0, 10, 20] / {divisor:2d}) =", attnlib.softmax(spread_demo / divisor))

# %% [markdown]
# Now real attention scores. Notebook 02 derived $\mathrm{Var}(q \cdot k) = d_k$ for
# unit-variance entries, so at $d_k = 1024$ a raw score has standard deviation
# $\sqrt{1024} = 32$. One query against eight keys:

# %%
d_k, T = 1024, 8
q = rng.standard_normal(d_k)
K = rng.standard_normal((T, d_k))

raw = K @ q  # raw scores, one per key
scaled = raw / np.sqrt(d_k)  # what attention actually uses
top2 = np.sort(raw)[-2:]

print("raw scores    :", raw)
print("scaled scores :", scaled)
print(f"spread (standard deviation) of this row: {raw.std():.2f} raw, {scaled.std():.2f} scaled")
print(
    f"largest raw score {raw.max():.1f}; float32 overflow threshold ln M = "
    f"{np.log(np.finfo(np.float32).max):.2f}"
)
print(
    f"top score - runner-up: {top2[1] - top2[0]:.2f} raw, "
    f"{(top2[1] - top2[0]) / np.sqrt(d_k):.2f} scaled"
)
print("softmax(raw)    =", attnlib.softmax(raw))
print("softmax(scaled) =", attnlib.softmax(scaled))

# %% [markdown]
# Every number is finite (the largest raw score is below the float32 threshold, and with
# max-subtraction it would not matter if it were above), and still the raw distribution is
# one-hot to four decimals. The scaled scores have a spread near $1$ and give a distribution in
# which every key keeps some weight.
#
# This one row is typical: why a gap of 10 or so between the top two scores already makes a
# softmax one-hot, and how common such gaps are, is told in notebook 04 (section 2).
#
# (How often an unscaled row does pass the overflow threshold, in float16 and float32, is worked
# out in the optional section at the end.)

# %% [markdown]
# ## 5. A wider float type fixes nothing
#
# If the problem were numerical, more bits would help. Compute the same raw scores in float32,
# float64 and `np.longdouble` (80-bit extended precision on x86-64 Linux, the machine these
# outputs come from; on other platforms it is 128-bit or just float64). How fine-grained each
# type is:

# %%
dtypes = (np.float32, np.float64, np.longdouble)
DTYPE_NAMES = {np.float32: "float32", np.float64: "float64", np.longdouble: "longdouble"}
for dtype in dtypes:
    print(f"{DTYPE_NAMES[dtype]:>10}: machine epsilon {np.finfo(dtype).eps:.3e}")

# %% [markdown]
# Learning happens through the gradient, and the gradient of softmax is its Jacobian
# $J = \mathrm{diag}(p) - p\,p^\top$, nearly zero when $p$ is one-hot (notebook 04 derives it
# and shows why). We compute $J$ in each type, check it against `attnlib.softmax_jacobian`, and
# print its largest entry.


# %%
def jacobian(p):
    return np.diag(p) - np.outer(p, p)  # J_ij = p_i (delta_ij - p_j)


matches_attnlib = []
print("scores  float type      max p    1 - max p      max|J|")
for name, scores in (("raw   ", raw), ("scaled", scaled)):
    for dtype in dtypes:
        p = stable_softmax(scores.astype(dtype))
        J = jacobian(p)
        matches_attnlib.append(J.dtype == dtype and np.allclose(J, attnlib.softmax_jacobian(p)))
        print(
            f"{name}  {DTYPE_NAMES[dtype]:>10}   {float(p.max()):.4f}   {float(1 - p.max()):.3e}"
            f"   {float(np.abs(J).max()):.3e}"
        )
print("hand-written J equals attnlib.softmax_jacobian, same dtype, all six cases:")
print(" ", all(matches_attnlib))

# %% [markdown]
# Read the two blocks row by row.
#
# * **Raw scores:** the weights are one-hot in all three types, and the largest gradient entry is
#   about $4 \times 10^{-13}$ in all three. The wider types compute that tiny number a little more
#   accurately, but a more accurate near-zero is still near zero for learning.
# * **Scaled scores:** a healthy distribution and gradient entries of order $0.1$, identical in
#   every type to the printed digits.
#
# <details><summary>Why float32's row differs a little</summary>
#
# float32 rounds $p_{\max}$ to exactly $1$ (its $1 - \max p$ is $0$), so its diagonal entry
# $p_{\max}(1 - p_{\max})$ vanishes and its largest entry is the off-diagonal
# $p_{\max}\,p_{\text{runner-up}}$; float64 and longdouble resolve $1 - p_{\max}$ and agree
# to every printed digit.
#
# </details>
#
# Bits buy *precision*. Saturation is not a precision problem: the exact, infinitely precise
# softmax of the raw scores is itself one-hot to twelve decimals. Only changing the spread, the
# $1/\sqrt{d_k}$, changes that.

# %% [markdown]
# ## 6. The picture: saturation comes long before overflow
#
# Take one score vector $z$ with mean 0 and spread (standard deviation) 1, our eight scaled scores
# standardised, and feed $s \cdot z$ to softmax for spreads $s$ from $0.5$ to $200$. Unit-variance
# queries and keys give raw scores with spread $s = \sqrt{d_k}$ (top axis); scaling brings the
# spread back to $1$ for every $d_k$. We track the largest weight and the largest Jacobian entry in
# float32, float64 and longdouble, and the naive float32 softmax, which returns NaN once
# $s \cdot \max_i z_i$ passes $88.72$.

# %%
z = (scaled - scaled.mean()) / scaled.std()
spreads = np.geomspace(0.5, 200, 240)

max_weight, max_jac = {}, {}
for dtype in dtypes:
    P = stable_softmax((spreads[:, None] * z).astype(dtype))  # (240, T)
    max_weight[dtype] = P.max(axis=-1).astype(np.float64)
    max_jac[dtype] = np.array([np.abs(jacobian(p)).max() for p in P], dtype=np.float64)

with np.errstate(over="ignore", invalid="ignore"):
    naive32 = naive_softmax((spreads[:, None] * z).astype(np.float32)).max(axis=-1)
overflow_spread = np.log(np.finfo(np.float32).max) / z.max()

print(f"largest standardised score max z = {z.max():.4f}")
print(f"naive float32 softmax overflows for spread > 88.72 / {z.max():.4f} = {overflow_spread:.2f}")
print(f"first spread with a NaN in the naive float32 curve: {spreads[np.isnan(naive32)][0]:.2f}")
print(
    f"first spread where float32's largest |J| underflows to exactly 0: "
    f"{spreads[max_jac[np.float32] == 0][0]:.2f}"
)
for s in (1, 8, 32):
    i = np.argmin(np.abs(spreads - s))
    print(
        f"spread {spreads[i]:5.2f}: max weight {max_weight[np.float64][i]:.4f}, "
        f"max|J| {max_jac[np.float64][i]:.3e} (float64), {max_jac[np.float32][i]:.3e} (float32)"
    )

# %% jupyter={"source_hidden": true}
styles = {
    np.float32: {"lw": 6, "alpha": 0.35, "color": "C0"},
    np.float64: {"lw": 2, "color": "C1"},
    np.longdouble: {"lw": 1, "ls": (0, (4, 3)), "color": "k"},
}
fig, (ax_w, ax_j) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
for dtype, style in styles.items():
    label = DTYPE_NAMES[dtype] + ", max-subtraction"
    ax_w.plot(spreads, max_weight[dtype], label=label, **style)
    positive = np.where(max_jac[dtype] > 0, max_jac[dtype], np.nan)  # log axis: hide exact 0
    ax_j.plot(spreads, positive, label=label, **style)
ax_w.plot(
    spreads,
    naive32,
    color="C3",
    ls="none",
    marker="x",
    markersize=4,
    markevery=6,
    zorder=5,
    label="float32, naive (NaN: not drawn)",
)

for ax in (ax_w, ax_j):
    ax.set_xscale("log")
    ax.set_xlabel("spread of the scores (standard deviation)")
    ax.axvspan(overflow_spread, spreads[-1], color="C3", alpha=0.12, lw=0)
    for s, text in ((1, "scaled\n(any $d_k$)"), (8, "raw\n$d_k$=64"), (32, "raw\n$d_k$=1024")):
        ax.axvline(s, color="0.5", lw=0.8)
        ax.annotate(
            text,
            (s, 0.02),
            xycoords=("data", "axes fraction"),
            fontsize=8,
            xytext=(3, 0),
            textcoords="offset points",
        )
    top = ax.secondary_xaxis("top", functions=(np.square, np.sqrt))
    top.xaxis.set_minor_locator(plt.NullLocator())  # decades only: its minor ticks are slow to draw
    top.set_xlabel("$d_k$ whose raw scores have this spread")
ax_w.annotate(
    "naive float32\noverflows here",
    (overflow_spread, 0.75),
    xycoords=("data", "axes fraction"),
    xytext=(4, 0),
    textcoords="offset points",
    fontsize=8,
    color="C3",
)
ax_w.set_ylabel("largest weight")
ax_w.set_ylim(0, 1.05)
ax_w.legend(loc="center right", bbox_to_anchor=(1, 0.42), fontsize=8)
ax_j.set_yscale("log")
ax_j.set_ylabel(r"largest $|J_{ij}| = |p_i(\delta_{ij} - p_j)|$")
ax_j.annotate(
    "same three float types,\nsame line styles as on the left",
    (0.03, 0.25),
    xycoords="axes fraction",
    fontsize=8,
)
fig.suptitle("Saturation depends on the spread of the scores; the float type does not matter")
plt.show()

# %% [markdown]
# *Figure:* Against the spread of the scores (log axis): left, the largest softmax weight rises to
# 1; right, the largest Jacobian entry falls (log scale); three float types.
#
# (The plotting code is collapsed; click it to show it.) The three float types
# draw one curve (the wide pale band is float32, the other two lie on it).
# The largest weight passes 0.99 and the gradient falls by orders of magnitude at spreads around
# 8 to 32, the spreads of raw scores at ordinary head sizes. The naive float32 softmax (crosses)
# fails only in the shaded band on the right, at a spread several times larger still, and
# max-subtraction removes even that failure. The float32 gradient curve ends a little further
# right, where its small weights underflow to exactly 0; float64 carries on down to numbers like
# $10^{-70}$. Both are zero as far as learning is concerned. The scale $1/\sqrt{d_k}$ moves every
# $d_k$ to the line marked "scaled", where the weights are spread out and the gradient is large.

# %% [markdown]
# ## Check yourself
#
# **1.** A colleague trains with $d_k = 1024$ and no scaling, sees attention gradients of about
# $10^{-13}$, and switches to float64 "to fix the vanishing gradient". What happens, and why?
#
# <details><summary>Answer</summary>
#
# Nothing changes. Section 5 printed one-hot weights and a largest Jacobian entry near
# $4 \times 10^{-13}$ in float32, float64 and longdouble alike. The gradient is tiny because the
# exact softmax of scores with spread $\approx 32$ is one-hot, and
# $p_i(\delta_{ij} - p_j) \approx 0$ whenever every $p$ is $0$ or $1$. A wider type only
# represents that tiny number more accurately. The fix is to reduce the spread: divide the scores
# by $\sqrt{d_k}$.
# </details>
#
# **2.** In float32, does the naive softmax of `[500, 501, 502]` overflow? Does the
# max-subtracted softmax of the same scores saturate?
#
# <details><summary>Answer</summary>
#
# It overflows: $502 > \ln M = 88.72$, so every $e^{x_i}$ is `inf` and the result is NaN. It does
# not saturate: shifted by $-502$ the scores are $[-2, -1, 0]$, so the weights equal those of
# `softmax([1, 2, 3])`, the soft example of notebook 04. Check it: run
# `attnlib.softmax(np.float32([500, 501, 502]))` in a new cell. Large size with a small spread:
# an overflow problem (solved by the shift), not a saturation problem.
# </details>
#
# **3.** Why can subtracting the maximum never cure saturation, while dividing by $\sqrt{d_k}$ can?
#
# <details><summary>Answer</summary>
#
# Softmax depends only on the differences $x_i - x_j$ (shift invariance). Subtracting the maximum
# is a shift, so it leaves every difference, and hence every weight and every gradient, unchanged.
# Dividing by $\sqrt{d_k}$ multiplies every difference by $1/\sqrt{d_k}$; since the differences
# grow like $\sqrt{d_k}$ (notebook 02), it brings their spread back to about 1.
# </details>

# %% [markdown]
# ## Summary
#
# * `exp` overflows past $\ln M$: $11.09$ in float16, $88.72$ in float32 and $709.78$ in float64;
#   the naive softmax then returns $\infty/\infty = $ NaN (and $0/0 = $ NaN for very negative
#   scores). In float16 ordinary unscaled scores reach that threshold.
# * Softmax is shift invariant, $\mathrm{softmax}(x + c) = \mathrm{softmax}(x)$. Subtracting the
#   maximum makes the largest exponent $e^0 = 1$ and the denominator at least 1, so overflow is
#   impossible for any finite scores. Every real softmax, `attnlib.softmax` included, does this.
# * What saturates softmax is the **spread** of the scores, which a shift cannot change. Raw
#   scores at $d_k = 1024$ (spread $\approx 32$) give one-hot weights and a gradient near
#   $10^{-13}$ with no overflow anywhere; float32, float64 and longdouble agree.
# * So "scaling is crucial for numerical stability" is true only if "stability" means *training*
#   stability. $1/\sqrt{d_k}$ is not an overflow guard (max-subtraction is, and it matters most in
#   float16). It is a variance correction that keeps the spread near 1, so that softmax stays
#   soft and its gradient $p_i(\delta_{ij} - p_j)$ stays alive.
#
# Next: **06 Masking**, where $-\infty$ scores are put into softmax on purpose.

# %% [markdown]
# ## Optional: how often does an unscaled row overflow?
#
# There is a fair point *for* the overflow worry. How often does the largest raw score of a
# row pass the overflow threshold? At $d_k = 1024$ the scores of one row are close to independent
# $N(0, 32^2)$ draws, so the chance that all $T$ stay below a threshold $t$ is $\Phi(t/32)^T$, with
# $\Phi$ the standard normal distribution function, $\Phi(z) = \tfrac12(1 + \mathrm{erf}(z/\sqrt2))$.
# No sampling needed:

# %%
from math import erf, sqrt


def normal_cdf(z):
    return 0.5 * (1 + erf(z / sqrt(2)))


print("keys T   P(max raw score > 11.09)   P(max raw score > 88.72)")
print("              float16 overflows           float32 overflows")
for n_keys in (8, 64, 1024):
    p16 = 1 - normal_cdf(11.09 / 32) ** n_keys
    p32 = 1 - normal_cdf(88.72 / 32) ** n_keys
    print(f"{n_keys:6d}   {p16:24.4f}   {p32:24.4f}")

# %% [markdown]
# In float32 a naive softmax would meet an overflowing row now and then, more often with many
# keys; in float16 almost every unscaled row overflows. That is exactly the failure
# max-subtraction removes, scaled or not. It does nothing for the rows that saturate with every
# score far below the threshold, as our row above does.
