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
# # 00 · Start here: the mathematics of scaled dot-product attention
#
# Every transformer layer computes, for each token, a weighted average of every other token's
# information. The weights come from one formula:
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V$$
#
# These notebooks take that line apart until every symbol is something you have computed
# yourself, in numpy, on numbers small enough to check by hand, and then on numbers large enough
# to see why each piece is there.
#
# **Who it is for.** Students who know matrix multiplication and a little probability
# (mean, variance, independence) and want to *see* the mathematics rather than take it on trust.
# Instructors who want to show it live in class, with sliders.
#
# **Learning goals.** After this notebook you can find your way around the collection, and
# compute a first attention output by hand in numpy and with `attnlib`.

# %% [markdown]
# ## The map
#
# | notebook | what you will be able to do | minutes |
# | --- | --- | ---: |
# | `00_start_here` | find your way around; run a first attention computation | 7 |
# | `01_qkv_projections` | build Q, K and V from token embeddings and state every shape, with and without a batch | 28 |
# | `02_why_sqrt_dk` | derive $\mathrm{Var}(q \cdot k) = d_k$, as the paper that introduced the scale argues it, and check it by Monte Carlo | 28 |
# | `03_worked_example_it` | trace the "Order was late it" example by hand and reproduce every published number | 30 |
# | `04_softmax_saturation` | watch softmax saturate as $d_k$ grows, derive its Jacobian and see the gradient vanish; live | 26 |
# | `05_overflow_misconception` | explain why $1/\sqrt{d_k}$ is *not* there to prevent overflow | 30 |
# | `06_masking` | apply causal and padding masks, know why the mask goes in before the softmax, and align a causal mask for a KV cache; live | 29 |
# | `07_multi_head` | split a layer into heads, merge them with $W_O$, and count what heads cost | 30 |
# | `08_gqa_and_kv_cache` | share K/V heads (multi-query, grouped-query attention), and size and use a KV cache; live | 30 |
# | `09_positions` | give attention word order: sinusoidal positions, RoPE and ALiBi; live | 30 |
# | `10_cost_and_tiling` | count the quadratic cost of the $(T, T)$ scores, and compute attention in tiles with the online softmax (FlashAttention's idea); live | 29 |
# | `11_gradients` | write the backward pass through a head, check it by finite differences, and see why unscaled training stalls; live | 30 |
# | `12_active_recall` | test yourself: self-checked questions across 01-11, each pointing back to the notebook to revisit | 19 |
# | `13_trained_model` | find the same attention inside a real trained model (all-MiniLM-L6-v2, run in numpy); live | 28 |
# | `14_induction_heads` | watch a previous-token head and an induction head form in training, check it over seeds and baselines, and test it by ablation | 29 |
# | `lab_bench` | every live lab at projector size, with a lab card for class | 12 |
#
# "minutes": the main path at one sitting, prose read at 238 words a minute (the average adult's
# rate for non-fiction), a quarter of a second for each symbol of a formula and 10 seconds for
# each line of code (reading it, guessing what it prints, reading what it printed); collapsed
# boxes and sections marked optional come on top. The exercises take 10-25 minutes more in most
# notebooks (the README's map gives each), and 12's questions about an hour.
# "live": the notebook has a lab, sliders that redraw a figure as you drag them. Read the
# notebooks in order; do 12 after 11, and again a week later to see what stayed.

# %% [markdown]
# ## How to use these notebooks
#
# **Students.** Run the cells in order with Shift+Enter. Before you run a cell that prints
# numbers, guess what it will print. Change the numbers and run it again: nothing here can break.
# If a notebook gets into a strange state, use *Kernel → Restart Kernel and Run All Cells*.
#
# **Exercises.** Notebooks 01 to 11 each stop once or twice for an exercise, right where its
# idea was taught: replace the `...` (or, for a function, the line `raise NotImplementedError`)
# with your answer and run the cell, and its check says **Correct!** or what went wrong. Stuck? Call `.hint()` or
# `.solution()` on the exercise, or open the collapsed solution cell below it.
#
# **Instructors.** The map gives each notebook's length as a lesson. The notebooks with live
# labs (04, 06, 08, 09, 10, 11 and 13) show sliders that move a figure as you drag them. To
# present one without the code, install voila once (`python -m pip install voila`), then run,
# from the repository's folder, `python -m voila notebooks/04_softmax_saturation.ipynb` and use
# the browser page it opens (the README's instructor section says more).
#
# **What is where.** The mathematics is in the notebook cells, written out in numpy. The package
# `attnlib` holds what would distract from it: example data, plots, the live labs, and
# reference versions of every function, which later notebooks reuse once an earlier notebook
# has built them by hand.

# %% [markdown]
# ## A first computation
#
# Two tokens, each with a query, a key and a value. Scores are dot products of queries with
# keys, divided by $\sqrt{d_k}$; softmax turns each row of scores into weights that sum to 1;
# the output is the weighted average of the values.

# %%
import textwrap

import numpy as np

Q = np.array([[2.0, 0.0, 2.0, 0.0], [0.0, 4.0, 0.0, 2.0]])  # 2 queries, d_k = 4
K = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0]])  # 2 keys,    d_k = 4
V = np.array([[1.0, 2.0], [3.0, 0.0]])  # 2 values,  d_v = 2

d_k = Q.shape[-1]
scores = Q @ K.T / np.sqrt(d_k)
weights = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
output = weights @ V

np.set_printoptions(precision=4, suppress=True)
print("scaled scores:\n", scores)
print("weights (each row sums to 1):\n", weights)
print("output:\n", output)

# %% [markdown]
# The same computation with the reference function from `attnlib`. The two agree, and
# `attnlib` also checks its inputs: try giving it a `K` with the wrong number of columns.

# %%
from attnlib import scaled_dot_product_attention

ref_output, ref_weights = scaled_dot_product_attention(Q, K, V)
print("same weights:", np.allclose(ref_weights, weights))
print("same output: ", np.allclose(ref_output, output))

# %%
try:
    scaled_dot_product_attention(Q, K[:, :3], V)
except ValueError as err:
    print(textwrap.fill(f"ValueError: {err}", 88, subsequent_indent="  "))

# %% [markdown]
# Next: **01 — Q, K and V projections**, where these matrices come from.
