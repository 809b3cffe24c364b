"""attnlib.induction: the hand-written backward pass agrees with finite differences; the model is
causal; the scores are the means they claim to be; training is reproducible and stores what a lab
needs; bad arguments are named."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import threadpoolctl
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlib import induction
from attnlib.induction import (
    POSITIONS,
    Params,
    Trained,
    drop_step,
    head_scores,
    init_params,
    loss_on_repeats,
    pattern_scores,
    repeated_sequences,
    run,
    summary,
    train,
)

FAST = settings(max_examples=20, deadline=None, database=None)
#: A model small enough to differentiate numerically in a fraction of a second.
TINY = {"vocab": 5, "context": 8, "d_model": 4, "n_layers": 2, "n_heads": 2, "d_head": 2}


def tiny_params(seed: int = 0, positions: str = "learned", **sizes) -> Params:
    return init_params(np.random.default_rng(seed), **{**TINY, **sizes, "positions": positions})


@pytest.fixture(scope="module")
def tiny_trained() -> Trained:
    """A few steps of training of a tiny model (a few hundredths of a second)."""
    return train(3, steps=12, **TINY, batch_size=4, checkpoint_every=5, half_length=4)


@pytest.fixture(scope="module")
def held_out() -> np.ndarray:
    return repeated_sequences(np.random.default_rng(99), 6, 4, TINY["vocab"])


# --- the backward pass --------------------------------------------------------------------------


def numerical_gradient(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of the scalar function ``f`` at ``x``, one entry at a time."""
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        grad[index] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


@pytest.mark.parametrize("positions", POSITIONS)
def test_the_backward_pass_agrees_with_finite_differences(positions: str) -> None:
    rng = np.random.default_rng(5)
    p = tiny_params(5, positions)
    tokens, counted = induction._training_batch(rng, 3, TINY["context"] + 1, TINY["vocab"], True)
    _, grads = induction._loss_and_gradients(p, tokens, counted)
    assert set(grads) == set(p.arrays())
    for name, array in p.arrays().items():

        def loss(a, name=name):  # the forward pass alone: the mean counted cross-entropy
            logits = induction._forward(replace(p, **{name: a}), tokens[:, :-1])[0]
            log_p = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
            chosen = np.take_along_axis(log_p, tokens[:, 1:, None], axis=-1)[..., 0]
            return -(chosen * counted).sum() / counted.sum()

        np.testing.assert_allclose(grads[name], numerical_gradient(loss, array), atol=1e-8)


def test_the_loss_counts_only_the_predictions_inside_the_second_copy() -> None:
    """Changing a token that only an uncounted prediction aims at leaves the loss alone."""
    p = tiny_params(1)
    tokens = np.array([[0, 1, 2, 3, 1, 2, 3, 4, 0]])  # segment (1, 2, 3) at 1, copy at 4
    counted = np.zeros((1, 8))
    counted[0, 4:6] = 1  # predictions at positions 4 and 5 (of tokens 5 and 6)
    changed = tokens.copy()
    changed[0, 8] = 3  # the target of position 7, not counted
    loss = induction._loss_and_gradients(p, tokens, counted)[0]
    assert induction._loss_and_gradients(p, changed, counted)[0] == loss


def test_the_training_rows_repeat_a_segment_and_count_the_predictions_inside_its_copy() -> None:
    tokens, counted = induction._training_batch(np.random.default_rng(0), 200, 33, 30, True)
    for row, c in zip(tokens, counted):
        first, last = np.flatnonzero(c)[[0, -1]]  # f + L and f + 2L - 2
        seg = last - first + 2
        start = first - seg
        assert 4 <= seg <= 16 and start >= 0 and last + 1 < 33
        np.testing.assert_array_equal(row[start + seg : start + 2 * seg], row[start : start + seg])


# --- laws of the model --------------------------------------------------------------------------


@FAST
@given(seed=st.integers(0, 2**32 - 1), positions=st.sampled_from(POSITIONS))
def test_attention_is_causal_no_weight_on_a_later_position(seed: int, positions: str) -> None:
    p = tiny_params(seed % 100, positions)
    tokens = np.random.default_rng(seed).integers(0, TINY["vocab"], (3, TINY["context"]))
    weights = run(p, tokens).weights  # (n_layers, n, n_heads, T, T)
    T = tokens.shape[1]
    assert (weights[..., ~np.tri(T, dtype=bool)] == 0).all()
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-12)


@FAST
@given(seed=st.integers(0, 2**32 - 1), cut=st.integers(1, TINY["context"] - 1))
def test_changing_later_tokens_changes_no_earlier_prediction(seed: int, cut: int) -> None:
    rng = np.random.default_rng(seed)
    p = tiny_params(seed % 100, str(rng.choice(POSITIONS)))
    tokens = rng.integers(0, TINY["vocab"], (2, TINY["context"]))
    other = tokens.copy()
    other[:, cut:] = rng.integers(0, TINY["vocab"], (2, TINY["context"] - cut))
    np.testing.assert_array_equal(run(p, tokens).logits[:, :cut], run(p, other).logits[:, :cut])


@FAST
@given(seed=st.integers(0, 2**32 - 1), half=st.integers(1, TINY["context"] // 2))
def test_the_scores_are_the_mean_weights_on_the_previous_and_the_induction_position(
    seed: int, half: int
) -> None:
    p = tiny_params(seed % 100)
    tokens = repeated_sequences(np.random.default_rng(seed), 3, half, TINY["vocab"])
    weights = run(p, tokens).weights
    scores = head_scores(p, tokens)
    T = 2 * half
    previous = np.mean([weights[..., i, i - 1] for i in range(1, T)], axis=(0, 2))
    induced = np.mean([weights[..., i, i - half + 1] for i in range(half, T)], axis=(0, 2))
    np.testing.assert_allclose(scores["previous_token"], previous, atol=1e-15)
    np.testing.assert_allclose(scores["induction"], induced, atol=1e-15)
    for name in ("previous_token", "induction"):
        assert scores[name].shape == (p.n_layers, p.n_heads)
        assert ((scores[name] >= 0) & (scores[name] <= 1)).all()


def test_head_scores_are_the_pattern_scores_averaged_over_the_sequences(held_out) -> None:
    p = tiny_params(6)
    weights = run(p, held_out).weights  # (n_layers, n, n_heads, T, T)
    per_pattern = pattern_scores(weights)  # (n_layers, n, n_heads)
    for name, value in head_scores(p, held_out).items():
        np.testing.assert_allclose(value, per_pattern[name].mean(axis=1), atol=1e-15)


def test_a_perfect_induction_pattern_scores_one_and_a_previous_token_pattern_zero() -> None:
    h = 4
    induction_pattern = np.eye(2 * h)
    for i in range(h, 2 * h):
        induction_pattern[i] = np.eye(2 * h)[i - h + 1]
    scores = pattern_scores(induction_pattern)
    assert scores["induction"] == 1.0
    previous = pattern_scores(np.eye(2 * h, k=-1) + np.eye(2 * h)[:, :1] * np.eye(2 * h)[0])
    assert previous["previous_token"] == 1.0 and previous["induction"] == 0.0


def test_an_untrained_model_scores_near_chance(held_out: np.ndarray) -> None:
    """A random start attends almost evenly: the induction score is near the mean of 1/(i+1)."""
    tokens = repeated_sequences(np.random.default_rng(0), 50, 16, 30)
    scores = head_scores(init_params(np.random.default_rng(0)), tokens)
    chance = np.mean(1 / (np.arange(16, 32) + 1))
    assert np.abs(scores["induction"] - chance).max() < 0.05
    assert scores["induction"].max() <= 0.15


def test_ablating_nothing_changes_nothing(held_out: np.ndarray) -> None:
    p = tiny_params(2)
    assert loss_on_repeats(p, held_out, ablate=[]) == loss_on_repeats(p, held_out)
    np.testing.assert_array_equal(run(p, held_out, ablate=[]).logits, run(p, held_out).logits)


@pytest.mark.parametrize(("layer", "head"), [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_ablating_a_head_is_zeroing_its_rows_of_W_O(held_out, layer: int, head: int) -> None:
    p = tiny_params(2)
    W_O = p.W_O.copy()
    W_O[layer, head * p.d_head : (head + 1) * p.d_head] = 0
    ablated = loss_on_repeats(p, held_out, ablate=[(layer, head)])
    assert ablated == pytest.approx(loss_on_repeats(replace(p, W_O=W_O), held_out), abs=1e-12)
    assert ablated != loss_on_repeats(p, held_out)


def test_loss_on_repeats_is_the_cross_entropy_of_predictions_h_to_2h_minus_2(held_out) -> None:
    p = tiny_params(4)
    h = held_out.shape[1] // 2
    logits = run(p, held_out).logits
    log_p = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    expected = -np.mean(
        [log_p[b, i, held_out[b, i + 1]] for b in range(len(held_out)) for i in range(h, 2 * h - 1)]
    )
    assert loss_on_repeats(p, held_out) == pytest.approx(expected, rel=1e-12)


def test_repeated_sequences_repeat_their_first_half_and_depend_only_on_the_generator() -> None:
    a = repeated_sequences(np.random.default_rng(7), 5, 6, 30)
    b = repeated_sequences(np.random.default_rng(7), 5, 6, 30)
    assert a.shape == (5, 12) and np.issubdtype(a.dtype, np.integer)
    np.testing.assert_array_equal(a[:, 6:], a[:, :6])
    np.testing.assert_array_equal(a, b)
    assert a.min() >= 0 and a.max() < 30


# --- training -----------------------------------------------------------------------------------


def test_training_is_reproducible_from_its_seed(tiny_trained: Trained) -> None:
    again = train(3, **tiny_trained.settings)
    np.testing.assert_array_equal(again.loss, tiny_trained.loss)
    other = train(4, **tiny_trained.settings)
    assert not np.array_equal(other.loss, tiny_trained.loss)


def test_the_record_holds_params_sizes_loss_and_checkpoints(tiny_trained: Trained) -> None:
    t = tiny_trained
    assert t.half_length == 4 and t.vocab == TINY["vocab"]
    assert t.loss.shape == (12,) and np.isfinite(t.loss).all()
    assert t.steps == (0, 5, 10, 12)
    assert t.checkpoints[-1].params.arrays().keys() == t.params.arrays().keys()
    for name, a in t.params.arrays().items():
        np.testing.assert_array_equal(t.checkpoints[-1].params.arrays()[name], a)
    assert t.at(7) is t.checkpoints[1].params and t.at(0) is t.checkpoints[0].params


def test_checkpoints_are_copies_taken_as_training_went(tiny_trained: Trained) -> None:
    start = init_params(np.random.default_rng(3), **TINY).astype(np.float32).astype(np.float64)
    for name, a in start.arrays().items():
        np.testing.assert_array_equal(tiny_trained.checkpoints[0].params.arrays()[name], a)
    assert not np.array_equal(tiny_trained.checkpoints[1].params.W_Q, start.W_Q)


def test_params_keep_float32_and_astype_casts_every_array() -> None:
    p32 = tiny_params(0).astype(np.float32)
    assert p32.dtype == np.float32 and all(a.dtype == np.float32 for a in p32.arrays().values())
    mixed = replace(p32, W_U=p32.W_U.astype(np.float64))  # one float64 array: all float64
    assert all(a.dtype == np.float64 for a in mixed.arrays().values())


def test_float32_gradients_are_the_float64_ones_to_float32_precision() -> None:
    p = tiny_params(7)
    tokens, counted = induction._training_batch(np.random.default_rng(7), 4, 9, 5, True)
    loss64, g64 = induction._loss_and_gradients(p, tokens, counted)
    loss32, g32 = induction._loss_and_gradients(p.astype(np.float32), tokens, counted)
    assert loss32 == pytest.approx(loss64, rel=1e-5)
    for name in g64:
        assert g32[name].dtype == np.float32
        np.testing.assert_allclose(g32[name], g64[name], rtol=1e-3, atol=1e-5)


def test_training_returns_float64_parameters() -> None:
    t = train(0, steps=2, **TINY, half_length=4)
    assert all(c.params.dtype == np.float64 for c in t.checkpoints)


def test_training_lowers_the_loss_on_repeats() -> None:
    """Sixty steps of a tiny model: the heads need not form, but Adam must go downhill."""
    t = train(0, 60, **{**TINY, "context": 12}, batch_size=16, learning_rate=0.05, half_length=6)
    tokens = repeated_sequences(np.random.default_rng(1), 100, 6, TINY["vocab"])
    assert loss_on_repeats(t.params, tokens) < loss_on_repeats(t.checkpoints[0].params, tokens)


def test_training_runs_numpys_blas_on_one_thread(monkeypatch) -> None:
    seen = []
    inner = induction._loss_and_gradients

    def spy(*args):
        seen.extend(i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"])
        return inner(*args)

    monkeypatch.setattr(induction, "_loss_and_gradients", spy)
    train(0, steps=2, **TINY, half_length=4)
    assert seen and set(seen) == {1}


def test_the_baseline_trains_on_rows_that_never_repeat() -> None:
    tokens, _ = induction._training_batch(np.random.default_rng(0), 200, 33, 30, repeats=False)
    repeats = [
        any((r[s : s + 4] == r[s + L : s + L + 4]).all() for L in range(4, 17) for s in range(8))
        for r in tokens
    ]
    assert np.mean(repeats) < 0.01  # chance coincidences of four tokens in a row


# --- summary and the training curves --------------------------------------------------------------


def test_drop_step_is_where_the_running_mean_falls_below_half_its_start() -> None:
    curve = np.r_[np.full(50, 3.4), np.full(50, 0.4)]  # steps 1-50, then 51-100
    # steps 47-56 average (4 x 3.4 + 6 x 0.4) / 10 = 1.6, the first window below 3.4 / 2;
    # its middle step is 47 + 10 // 2
    assert drop_step(curve, window=10) == 52
    assert drop_step(np.full(100, 3.4)) is None


def test_summary_picks_the_best_heads_and_measures_the_ablation(tiny_trained, held_out) -> None:
    s = summary(tiny_trained, held_out)
    scores = head_scores(tiny_trained.params, held_out)
    assert s.previous_token_head == (0, int(np.argmax(scores["previous_token"][0])))
    assert s.induction_head == (1, int(np.argmax(scores["induction"][1])))
    assert s.induction_score == scores["induction"][s.induction_head]
    ablated = loss_on_repeats(tiny_trained.params, held_out, ablate=[s.induction_head])
    assert s.ablation_ratio == pytest.approx(ablated / s.loss)
    assert s.formed == (s.induction_score >= 0.5 and s.ablation_ratio >= 2)


def test_training_curves_are_the_checkpoints_losses_and_the_final_heads_scores(
    tiny_trained: Trained, held_out: np.ndarray
) -> None:
    curves = induction.training_curves(tiny_trained, held_out)
    final = summary(tiny_trained, held_out)
    assert curves.heads == (final.previous_token_head, final.induction_head)
    np.testing.assert_array_equal(curves.steps, tiny_trained.steps)
    for i, checkpoint in enumerate(tiny_trained.checkpoints):
        scores = head_scores(checkpoint.params, held_out)
        assert curves.loss_on_repeats[i] == pytest.approx(
            loss_on_repeats(checkpoint.params, held_out), rel=1e-12
        )
        assert curves.previous_token[i] == scores["previous_token"][final.previous_token_head]
        assert curves.induction[i] == scores["induction"][final.induction_head]


def test_the_curves_patterns_are_the_two_heads_weights_on_the_first_sequence(
    tiny_trained: Trained, held_out: np.ndarray
) -> None:
    curves = induction.training_curves(tiny_trained, held_out)
    (l0, h0), (l1, h1) = curves.heads
    T = held_out.shape[1]
    assert curves.patterns.shape == (len(tiny_trained.checkpoints), 2, T, T)
    for i, checkpoint in enumerate(tiny_trained.checkpoints):
        weights = run(checkpoint.params, held_out).weights
        np.testing.assert_array_equal(curves.patterns[i], [weights[l0, 0, h0], weights[l1, 0, h1]])


# --- bad arguments are named --------------------------------------------------------------------


def bad_calls():
    p = tiny_params(0)
    good = repeated_sequences(np.random.default_rng(0), 2, 3, TINY["vocab"])
    rng = np.random.default_rng(0)
    return [
        (lambda: train(-1), ValueError, "seed must be >= 0"),
        (lambda: train(0, steps=0), ValueError, "steps must be >= 1"),
        (lambda: train(0, steps=1.5), TypeError, "steps must be an integer"),
        (lambda: train(0, positions="alibi"), ValueError, "positions must be one of"),
        (lambda: train(0, learning_rate=-1), ValueError, "learning_rate must be a finite"),
        (lambda: train(0, vocab=1), ValueError, "vocab must be >= 2"),
        (lambda: train(0, repeats="yes"), TypeError, "repeats must be True or False"),
        (lambda: train(0, positions="rope", d_head=3), ValueError, "even d_head"),
        (lambda: train(0, context=16, half_length=9), ValueError, "longer than context=16"),
        (lambda: repeated_sequences(0, 2, 3, 30), TypeError, "rng must be a numpy.random"),
        (lambda: repeated_sequences(rng, 0, 3, 30), ValueError, "n must be >= 1"),
        (lambda: repeated_sequences(rng, 2, 0, 30), ValueError, "half_length must be >= 1"),
        (lambda: head_scores(good, good), TypeError, "params must be an attnlib.induction"),
        (lambda: head_scores(p, good.astype(float)), TypeError, "tokens must be an array of int"),
        (lambda: head_scores(p, good[0]), ValueError, "tokens must have shape (n, T)"),
        (lambda: head_scores(p, good + TINY["vocab"]), ValueError, "tokens must hold ids 0 to"),
        (lambda: head_scores(p, good[:, :5]), ValueError, "second half equal to the first"),
        (lambda: head_scores(p, np.c_[good, good]), ValueError, "longer than the model's context"),
        (lambda: loss_on_repeats(p, good, ablate=[(2, 0)]), ValueError, "ablate names (2, 0)"),
        (lambda: loss_on_repeats(p, good, ablate=(1, 0)), TypeError, "ablate must list (layer"),
        (lambda: loss_on_repeats(p, good, ablate="1,0"), TypeError, "ablate must be None or"),
        (lambda: run(p, good, ablate=[(True, 0)]), TypeError, "two integers"),
        (lambda: replace(p, W_O=p.W_O[:, :3]), ValueError, "W_O must have shape (2, 4, 4)"),
        (lambda: replace(p, W_E=p.W_E * np.nan), ValueError, "W_E must be finite"),
        (lambda: replace(p, W_pos=None), ValueError, "W_pos is None, but positions='learned'"),
        (lambda: replace(p, positions="rope"), ValueError, "uses no learned table"),
        (lambda: pattern_scores(np.full((3, 3), 1 / 3)), ValueError, "T = 2h even"),
        (lambda: pattern_scores(np.ones((2, 2))), ValueError, "each row of weights must sum"),
    ]


@pytest.mark.parametrize(("index"), range(len(bad_calls())))
def test_bad_arguments_raise_an_error_that_names_them(index: int) -> None:
    call, error, phrase = bad_calls()[index]
    with pytest.raises(error) as info:
        call()
    assert phrase in str(info.value), str(info.value)


def test_a_trained_record_passed_as_params_is_pointed_to_its_params(tiny_trained) -> None:
    with pytest.raises(TypeError, match=r"pass trained\.params"):
        head_scores(tiny_trained, repeated_sequences(np.random.default_rng(0), 2, 3, 5))
