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
# # The lab bench: every live lab, at projector size
#
# This page is for **presenting in class**. It holds every live lab of the collection, one
# section each, drawn at projector size (`present=True`: the picture 1440 pixels wide, no text
# smaller than 14 pt on a 1920 × 1080 screen, large controls). Each lab comes with a **lab card**:
#
# * **Ask** the question to pose before touching anything;
# * **Drag**, in order, with what to have the class **predict** before each move;
# * **Notice**: what the class should see;
# * **Likely question**, with an answer.
#
# Serve it without code, with voila installed (`python -m pip install voila`), from the
# repository's folder: `python -m voila notebooks/lab_bench.ipynb` (the README's instructor
# section says more). Every control follows the arrow keys once
# clicked, so you can move a slider one step at a time while you talk. The notebook that
# teaches each lab's ideas is named in its section; students work there, at notebook size.
#
# <!-- For maintainers: the lab cells are skipped by nbval (each lab already runs in its own
# notebook); tests/browser/test_labs_in_browser.py runs this page under voila and moves every control. -->

# %%
from IPython.display import HTML

from attnlib.labs import (
    gqa_lab,
    gradient_lab,
    induction_lab,
    masking_lab,
    positions_lab,
    saturation_lab,
    tiling_lab,
    trained_attention_lab,
)

# Under voila, the lab cards read from the back of a room: large type, lines of at most ~65
# characters (a readable measure), centred above their lab.
HTML("""<style>
body[data-voila] .jp-MarkdownCell .jp-RenderedMarkdown {
    font-size: 26px; line-height: 1.45; max-width: 65ch; margin: 0 auto;
}
body[data-voila] .jp-MarkdownCell .jp-RenderedMarkdown h1 { font-size: 1.9em; }
body[data-voila] .jp-MarkdownCell .jp-RenderedMarkdown h2 { font-size: 1.5em; }
body[data-voila] .jp-MarkdownCell .jp-RenderedMarkdown code { font-size: 0.9em; }
</style>""")

# %% [markdown]
# ## 1. Softmax saturation (notebook 04)
#
# **Ask.** "We divide the scores by $\sqrt{d_k}$. What would go wrong without it?"
#
# **Drag, in order.**
# 1. Unscaled (box unticked), drag $d_k$ from 1 to 1024. *Predict first:* what happens to the
#    weight bars as $d_k$ grows?
# 2. Tick "divide scores by √d_k" and drag $d_k$ again. *Predict:* do the bars still collapse?
# 3. Move the query token. *Predict:* is the effect special to one query?
#
# **Notice.** Unscaled, the bars collapse onto one key, the entropy falls towards 0 and the
# size of the softmax's Jacobian $\|J\|_F$ drops by many orders of magnitude. It is not the
# gradient itself but a bound on it: whatever gradient $g$ arrives at the weights, the one
# passed on to the scores is $J^\top g$, no longer than $\|J\|_F\,\|g\|$. So a tiny $\|J\|_F$
# forces a tiny gradient on every score: a saturated softmax barely learns. Scaled, the weights
# stay spread and $\|J\|_F$ stays roughly level for every $d_k$.
#
# **Likely question.** "Isn't the scale there to stop overflow?" No: softmax implementations
# subtract the row maximum first, so nothing overflows either way (notebook 05). The scale keeps
# the scores' variance near 1, so the softmax stays in the range where it still has a gradient.

# %% tags=["nbval-skip"]
saturation_lab(present=True)

# %% [markdown]
# ## 2. Masking (notebook 06)
#
# **Ask.** "When the model reads *it*, which words may it look at, and how do we forbid the
# others?"
#
# **Drag, in order.**
# 1. Mask "none", then "causal", with the query on *it*. *Predict:* which bars vanish?
# 2. "zero after softmax (wrong)". *Predict:* do the remaining weights still sum to 1?
# 3. "padding", then drag the sentence length down. *Predict:* what happens to the `<pad>`
#    columns?
# 4. "causal + padding", and move the query token.
#
# **Notice.** A mask sets forbidden scores to $-\infty$ *before* the softmax, so the allowed
# weights renormalise and each row still sums to 1. Zeroing after the softmax leaves rows that
# sum to less than 1 (the caption prints the sum). Padding removes the `<pad>` keys for every
# query; causal removes the future, a triangle.
#
# **Likely question.** "Why not just multiply the weights by the mask?" That is the wrong mode,
# and wrong twice. The row no longer sums to 1, so the output is a shrunken average, by a
# different amount for every query. Worse, the future still leaks in: the kept weights were
# divided by the softmax's normaliser $\sum_j e^{s_{ij}}$, which includes the future keys (the
# hatched bars), so changing a future token changes the outputs of the past (notebook 06 shows
# it with numbers).

# %% tags=["nbval-skip"]
masking_lab(present=True)

# %% [markdown]
# ## 3. Grouped-query attention and the KV cache (notebook 08)
#
# **Ask.** "While a model generates text it keeps every past token's K and V. How much memory is
# that, and how do models cut it?"
#
# **Drag, in order.**
# 1. Set the K/V heads equal to the query heads (multi-head attention). *Predict:* how does the
#    cache grow when you double the context length?
# 2. Drag the context length to the largest value. *Predict:* does it still fit under the 80 GB
#    line?
# 3. Drag the K/V heads down to 1 (multi-query attention). *Predict:* by what factor does the
#    cache shrink?
#
# **Notice.** The cache is proportional to layers × K/V heads × head size × tokens: doubling the
# context doubles it, and sharing each K/V head among $g$ query heads divides it by $g$. The map
# shows which query heads share one K/V head.
#
# **Likely question.** "Doesn't sharing K and V hurt quality?" A little, for multi-query
# attention; grouped-query attention (several K/V heads) keeps most of the quality at a fraction
# of the memory, which is why large decoders use it.

# %% tags=["nbval-skip"]
gqa_lab(present=True)

# %% [markdown]
# ## 4. Word order: positions in the score (notebook 09)
#
# **Ask.** "Attention alone cannot tell 'dog bites man' from 'man bites dog'. How do models put
# the order back?"
#
# **Drag, in order.**
# 1. Scheme "none", then drag the offset $i - j$. *Predict:* does the score of "bites" against
#    "dog" change when the two words move apart?
# 2. Scheme "RoPE", and drag the offset again. *Predict:* does the score now depend on how far
#    apart the two words are?
# 3. Still RoPE, lower the frequency base. *Predict:* does the curve wiggle faster or slower?
# 4. Scheme "ALiBi", then step through the heads. *Predict:* which head looks only at close
#    neighbours?
#
# **Notice.** Without positions the curve is flat: the score ignores the offset, and the two
# "the"s of the sentence get identical rows. RoPE turns $q$ and $k$ by angles proportional to
# their positions, so their score depends on the content and on $i - j$ only; a smaller base
# turns every pair faster. ALiBi subtracts $m_h\,|i - j|$ from the score: a straight penalty,
# steep for the first head and nearly flat for the last.
#
# **Likely question.** "Which one do real models use?" Most recent decoders rotate their queries
# and keys (RoPE); the trained model of notebook 13, like BERT, learned a table of 512
# positions and can read no further; ALiBi was designed to run past the length it was trained
# on.

# %% tags=["nbval-skip"]
positions_lab(present=True)

# %% [markdown]
# ## 5. Tiled attention and the online softmax (notebook 10)
#
# **Ask.** "Can we compute attention without ever storing the whole $T \times T$ score matrix?"
#
# **Drag, in order.**
# 1. Drag "tiles done" one step at a time from 1. *Predict before each step:* will the running
#    maximum $m$ of a row change?
# 2. Watch a step where $m$ jumps. *Predict:* what must happen to the running normaliser $l$?
# 3. Drag to the last tile. *Predict:* do the outputs land exactly on the circles?
# 4. Change the block size and tick "causal mask". *Predict:* how many tiles does causal skip?
#
# **Notice.** Each tile updates, per query row, a running maximum $m$, a running sum $l$ of
# $e^{s - m}$ and an unnormalised output. When $m$ grows, the old $l$ and output are rescaled by
# $e^{m_{old} - m_{new}}$ (red edge); after the last tile, output / $l$ is exact attention.
#
# **Likely question.** "Is tiled attention an approximation?" No: it gives the same result as
# plain attention up to floating-point rounding (notebook 10 checks it), with memory linear
# in $T$ instead of quadratic.

# %% tags=["nbval-skip"]
tiling_lab(present=True)

# %% [markdown]
# ## 6. Training with and without the scale (notebook 11)
#
# **Ask.** "Saturation makes the gradient small. Does that really stop a model from learning?"
#
# **Drag, in order.**
# 1. $d_k = 256$, unscaled: drag the training step from 0 to the end. *Predict:* does the
#    loss fall?
# 2. Tick "divide scores by √d_k" and drag again. *Predict:* the same?
# 3. Try $d_k = 4$ unscaled. *Predict:* is the damage the same at small $d_k$?
#
# **Notice.** Both runs start from the same weights. Unscaled at large $d_k$, the gradient
# reaching the scores (middle, log scale) collapses within a few steps and the loss stays flat;
# scaled, it stays large and the loss falls. The weight map shows whether each query has found
# its key (the squares).
#
# **Likely question.** "Couldn't a bigger learning rate fix it?" Not on its own: at
# $d_k = 256$, from the unit-variance start, notebook 11 tries step sizes from 0.001 to 1 (and
# eight seeds) and the unscaled run stalls every time. What does fix it is a smaller start
# *and* a smaller step: divide the initial $W_Q$ and $W_K$ by $d_k^{1/4}$ and the step size by
# $\sqrt{d_k}$, and the unscaled run follows the scaled one exactly (notebook 11 checks it, to
# rounding). That is all the scale does: it keeps the spread of the scores the same at every
# $d_k$, so one standard initialisation and step size work at every width.

# %% tags=["nbval-skip"]
gradient_lab(present=True)

# %% [markdown]
# ## 7. Attention in a trained model (notebook 13)
#
# **Ask.** "Does a real model's attention look like our toy examples?"
#
# **Drag, in order.**
# 1. Query token *it*; drag the layer and the head. *Predict:* will most heads put their
#    weight on *animal* or *street*?
# 2. Layer 0, head 2, any query token. *Predict:* which key wins (notebook 13 found a
#    previous-token head here)?
# 3. Type a sentence of the class's choosing and press Enter.
#
# **Notice.** Heads differ: one follows the previous token, many pile their weight on `[CLS]`
# (32 of the 72 heads put more than half there, none on `[SEP]`), and a few shift their
# preference between the two nouns when the referent changes, in one sentence frame but not in
# another. The same softmax of scaled scores is at work in every one of the 6 × 12 heads.
#
# **Likely question.** "So this head *knows* what *it* refers to?" Careful: a weight is not an
# explanation. Notebook 13 shows why: counted over all 72 heads, as many flip the wrong way as
# the right way; the heads that shift on "cross the street" do not shift on the trophy pair; a
# large weight is not a large contribution (in the head it examines, `[CLS]` has the largest
# weight but its short value vector adds less than *animal*).

# %% tags=["nbval-skip"]
trained_attention_lab(present=True)

# %% [markdown]
# ## 8. Heads that form in training (notebook 14)
#
# **Ask.** "Nobody programs a head to copy. Can training make one?"
#
# **Drag, in order.**
# 1. Step 0. *Predict:* where do the two heads look before any training?
# 2. Drag slowly to step 160. *Predict:* has the loss on the repeated half moved much yet?
# 3. Drag on to step 260, watching both patterns. *Predict:* do the two heads change at the
#    same time, or one after the other?
#
# **Notice.** Untrained, both heads spread their weight thinly over the earlier tokens, and the
# loss sits at a uniform guess over 30 tokens (3.40 nats). Then, within a few dozen steps, the
# loss drops and both patterns sharpen together: the layer-0 head puts its weight on the token
# just before (a line below the diagonal), and the layer-1 head, in the second half of the
# sequence, on the token that *followed* the current token's earlier copy (a stripe 11 places
# below the diagonal). The second head reads what the first one wrote.
#
# **Likely question.** "Is this one lucky run?" Notebook 14 trains five seeds it was not tuned on:
# both heads formed in every one, each with a sudden drop between steps 150 and 300, and zeroing
# the induction head at least doubled the loss on repeats. A model trained on sequences that never
# repeat grows no induction head.

# %% tags=["nbval-skip"]
induction_lab(present=True)
