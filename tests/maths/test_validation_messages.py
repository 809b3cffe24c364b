"""Bad input raises ValueError/TypeError whose message names the argument and what it got."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from fractions import Fraction

import numpy as np
import pytest

from attnlib import (
    causal_mask,
    merge_heads,
    multi_head_attention,
    padding_mask,
    sample_dot_products,
    scaled_dot_product_attention,
    softmax,
    softmax_jacobian,
    split_heads,
    tiled_attention,
)
from attnlib.pictures.heatmap import attention_heatmap
from attnlib.saturation import entropy

Q4, K4, V4 = np.ones((4, 4)), np.ones((4, 4)), np.ones((4, 2))


class TensorRequiringGrad:
    """Stands in for a PyTorch tensor with ``requires_grad=True``: numpy's conversion raises
    torch's RuntimeError."""

    requires_grad = True

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(
            "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
        )


EYE4 = np.eye(4)
RNG = np.random.default_rng(0)


def sdpa(**overrides):
    args = {"Q": Q4, "K": K4, "V": V4} | overrides
    return lambda: scaled_dot_product_attention(**args)


def tiled(**overrides):
    args = {"Q": Q4, "K": K4, "V": V4} | overrides
    return lambda: tiled_attention(**args)


def mha(**overrides):
    args = {"X": np.ones((3, 4)), "W_q": EYE4, "W_k": EYE4, "W_v": EYE4, "W_o": EYE4, "n_heads": 2}
    return lambda: multi_head_attention(**(args | overrides))


def with_nan(shape, where=(0, 0), value=np.nan):
    a = np.ones(shape)
    a[where] = value
    return a


CASES = {
    # scaled_dot_product_attention (and tiled_attention shares its checks)
    "d_k mismatch": (
        sdpa(K=np.ones((4, 3))),
        ValueError,
        r"K has d_k=3 but Q has d_k=4: .*\(Q shape \(4, 4\), K shape \(4, 3\)",
    ),
    "K/V length mismatch": (
        sdpa(V=np.ones((5, 2))),
        ValueError,
        r"V has 5 rows but K has 4.*V shape \(5, 2\)",
    ),
    "mask not boolean": (
        sdpa(mask=np.ones((4, 4))),
        TypeError,
        r"mask must be a boolean array.*dtype float64 with shape \(4, 4\)",
    ),
    "mask not broadcastable": (
        sdpa(mask=np.ones((3, 4), bool)),
        ValueError,
        r"mask of shape \(3, 4\) does not broadcast.*\(4, 4\)",
    ),
    "mask would grow the batch": (
        sdpa(mask=np.ones((2, 4, 4), bool)),
        ValueError,
        r"mask of shape \(2, 4, 4\) does not broadcast",
    ),
    "scale zero": (sdpa(scale=0.0), ValueError, r"scale must be a finite number > 0.*scale=0.0"),
    "scale negative": (sdpa(scale=-1), ValueError, r"scale=-1"),
    "scale nan": (sdpa(scale=float("nan")), ValueError, r"scale=nan"),
    "scale not a number": (sdpa(scale="2"), TypeError, r"scale must be a real number.*'2'"),
    "scale too large for a float": (
        sdpa(scale=10**400),
        ValueError,
        r"scale must be a finite number > 0.*got scale=1000.*\(401 characters\) \(too large",
    ),
    "scale rounding to zero": (
        sdpa(scale=Fraction(1, 10**400)),
        ValueError,
        r"scale must be a finite number > 0.*rounds to 0.0 as a float",
    ),
    "Q timedelta": (
        sdpa(Q=np.ones((4, 4), "m8[s]")),
        TypeError,
        r"Q must be a real numeric array.*dtype timedelta64\[s\]",
    ),
    "padding mask without its head axis": (
        sdpa(
            Q=np.ones((2, 2, 4, 4)),
            K=np.ones((2, 2, 4, 4)),
            V=np.ones((2, 2, 4, 2)),
            mask=padding_mask([4, 2], 4),
        ),
        ValueError,
        r"mask of shape \(2, 1, 4\) has batch dimensions.*e\.g\. mask\[:, None, \.\.\.\]",
    ),
    "Q 1-D": (
        sdpa(Q=np.ones(4)),
        ValueError,
        r"Q must have at least 2 dimensions; got shape \(4,\)",
    ),
    "V 1-D": (
        sdpa(V=np.ones(4)),
        ValueError,
        r"V must have at least 2 dimensions; got shape \(4,\)",
    ),
    "Q strings": (sdpa(Q=[["a", "b"]]), TypeError, r"Q must be a real numeric array.*dtype <U1"),
    "K ragged": (sdpa(K=[[1.0, 2.0], [3.0]]), TypeError, r"K must be a numeric array"),
    "V complex": (sdpa(V=np.ones((4, 2), complex)), TypeError, r"V must be a real.*complex128"),
    "Q boolean": (sdpa(Q=np.ones((4, 4), bool)), TypeError, r"Q must be a real.*dtype bool"),
    "Q NaN": (
        sdpa(Q=with_nan((4, 4))),
        ValueError,
        r"Q must be finite; got 1 NaN and 0 infinite entries.*shape \(4, 4\)",
    ),
    "K +inf": (
        sdpa(K=with_nan((4, 4), value=np.inf)),
        ValueError,
        r"K must be finite; got 0 NaN and 1 infinite",
    ),
    "V -inf": (sdpa(V=with_nan((4, 2), value=-np.inf)), ValueError, r"V must be finite"),
    "zero keys": (
        sdpa(K=np.ones((0, 4)), V=np.ones((0, 2))),
        ValueError,
        r"K must hold at least one key; got K shape \(0, 4\)",
    ),
    "batch not broadcastable": (
        sdpa(Q=np.ones((2, 4, 4)), K=np.ones((3, 4, 4))),
        ValueError,
        r"leading \(batch\) dimensions do not broadcast.*Q shape \(2, 4, 4\)",
    ),
    # tiled_attention
    "tiled d_k mismatch": (tiled(K=np.ones((4, 3))), ValueError, r"K has d_k=3 but Q has d_k=4"),
    "block_size zero": (
        tiled(block_size=0),
        ValueError,
        r"block_size must be >= 1; got block_size=0",
    ),
    "block_size float": (
        tiled(block_size=2.0),
        TypeError,
        r"block_size must be an integer; got 2.0",
    ),
    "causal not bool": (tiled(causal="yes"), TypeError, r"causal must be True or False; got 'yes'"),
    "causal with T_k < T_q": (
        tiled(K=np.ones((2, 4)), V=np.ones((2, 2)), causal=True),
        ValueError,
        r"causal=True needs .*T_q=4, T_k=2",
    ),
    "tiled scale negative": (tiled(scale=-0.5), ValueError, r"scale=-0.5"),
    "tiled Q NaN": (tiled(Q=with_nan((4, 4))), ValueError, r"Q must be finite"),
    "tiled overflow": (
        tiled(Q=np.full((4, 4), 1e200), K=np.full((4, 4), 1e200)),
        ValueError,
        r"overflowed in float64",
    ),
    # softmax
    "softmax NaN": (
        lambda: softmax([0.0, np.nan]),
        ValueError,
        r"x must not contain NaN or \+inf.*1 NaN and 0 \+inf.*shape \(2,\)",
    ),
    "softmax +inf": (lambda: softmax([0.0, np.inf]), ValueError, r"0 NaN and 1 \+inf"),
    "softmax scalar": (lambda: softmax(3.0), ValueError, r"x must have at least 1 dimensions"),
    "softmax strings": (lambda: softmax(["a"]), TypeError, r"x must be a real numeric array"),
    "softmax mask not bool": (
        lambda: softmax([1.0, 2.0], mask=[1, 0]),
        TypeError,
        r"mask must be a boolean array.*dtype int64 with shape \(2,\)",
    ),
    "softmax mask shape": (
        lambda: softmax([1.0, 2.0], mask=[True, False, True]),
        ValueError,
        r"mask of shape \(3,\) does not broadcast to the shape of x, \(2,\)",
    ),
    "softmax axis out of range": (
        lambda: softmax([[1.0]], axis=2),
        ValueError,
        r"axis=2 is out of range for x of shape \(1, 1\)",
    ),
    "softmax axis not int": (
        lambda: softmax([[1.0]], axis=1.0),
        TypeError,
        r"axis must be an integer; got 1.0",
    ),
    "softmax axis bool": (
        lambda: softmax([[1.0]], axis=True),
        TypeError,
        r"axis must be an integer; got True",
    ),
    "softmax timedelta": (
        lambda: softmax(np.array([1, 2], "m8[s]")),
        TypeError,
        r"x must be a real numeric array.*timedelta64",
    ),
    "entropy axis float": (
        lambda: entropy([[0.5, 0.5]], axis=1.0),
        TypeError,
        r"axis must be an integer; got 1.0 of type float \(for p of shape \(1, 2\)\)",
    ),
    "softmax empty axis": (
        lambda: softmax(np.ones((2, 0))),
        ValueError,
        r"x has no entries along axis=-1 \(x shape \(2, 0\)\)",
    ),
    # softmax_jacobian
    "jacobian NaN": (
        lambda: softmax_jacobian([np.nan, np.nan]),
        ValueError,
        r"p must be finite; got 2 NaN",
    ),
    "jacobian negative": (
        lambda: softmax_jacobian([-0.5, 1.5]),
        ValueError,
        r"p must hold probabilities in \[0, 1\].*-0.5 to 1.5",
    ),
    "jacobian bad sum": (
        lambda: softmax_jacobian([0.5, 0.2]),
        ValueError,
        r"each row of p must sum to 1.*0.7",
    ),
    # masks
    "causal_mask T_q zero": (lambda: causal_mask(0), ValueError, r"T_q must be >= 1; got T_q=0"),
    "causal_mask T_q negative": (lambda: causal_mask(-2), ValueError, r"T_q=-2"),
    "causal_mask T_k float": (lambda: causal_mask(2, 3.0), TypeError, r"T_k must be an integer"),
    "causal_mask T_k < T_q": (
        lambda: causal_mask(3, 2),
        ValueError,
        r"T_k=2 is smaller than T_q=3",
    ),
    "padding negative length": (
        lambda: padding_mask([3, -1], 4),
        ValueError,
        r"lengths must lie in \[0, T=4\]; got lengths=\[3, -1\]",
    ),
    "padding length > T": (lambda: padding_mask([5], 4), ValueError, r"lengths=\[5\]"),
    "padding float lengths": (
        lambda: padding_mask([2.5], 4),
        TypeError,
        r"lengths must hold integers",
    ),
    "padding 2-D lengths": (
        lambda: padding_mask([[1, 2]], 4),
        ValueError,
        r"lengths must be 1-D.*shape \(1, 2\)",
    ),
    "padding empty batch": (
        lambda: padding_mask([], 3),
        ValueError,
        r"lengths is empty: a batch needs at least one sequence",
    ),
    "padding T zero": (lambda: padding_mask([0], 0), ValueError, r"T must be >= 1; got T=0"),
    # heads
    "split n_heads not dividing": (
        lambda: split_heads(np.ones((3, 10)), 4),
        ValueError,
        r"n_heads=4 does not divide the last dimension of x \(10; x shape \(3, 10\)",
    ),
    "split n_heads zero": (
        lambda: split_heads(np.ones((3, 4)), 0),
        ValueError,
        r"n_heads must be >= 1",
    ),
    "split 1-D": (
        lambda: split_heads(np.ones(4), 2),
        ValueError,
        r"x must have at least 2 dimensions",
    ),
    "merge 2-D": (
        lambda: merge_heads(np.ones((3, 4))),
        ValueError,
        r"x must have at least 3 dimensions",
    ),
    "mha n_heads not dividing d_model": (
        mha(n_heads=3),
        ValueError,
        r"n_heads=3 does not divide the query width 4 \(W_q shape \(4, 4\)",
    ),
    "mha X without rows": (
        mha(X=np.ones((0, 4))),
        ValueError,
        r"X must hold at least one token \(one row\); got X shape \(0, 4\)",
    ),
    "mha W_q without columns": (
        mha(W_q=np.ones((4, 0))),
        ValueError,
        r"n_heads=2 does not divide the query width 0 \(W_q shape \(4, 0\).*d_head >= 1",
    ),
    "mha n_heads not a multiple of n_kv_heads": (
        mha(n_heads=4, n_kv_heads=3),
        ValueError,
        r"n_heads=4 is not a multiple of n_kv_heads=3",
    ),
    "mha n_kv_heads zero": (mha(n_kv_heads=0), ValueError, r"n_kv_heads must be >= 1"),
    "mha W_q wrong rows": (
        mha(W_q=np.ones((3, 4))),
        ValueError,
        r"W_q has 3 rows but must have 4 \(W_q shape \(3, 4\), X shape \(3, 4\)\)",
    ),
    "mha W_k wrong columns": (
        mha(W_k=np.ones((4, 6))),
        ValueError,
        r"W_k must have n_kv_heads \* d_head = 2 \* 2 = 4 columns; got W_k shape \(4, 6\)",
    ),
    "mha W_o wrong rows": (
        mha(W_o=np.ones((3, 4))),
        ValueError,
        r"W_o must have n_heads \* d_v = 2 \* 2 = 4 rows.*\(3, 4\)",
    ),
    "mha W_v 3-D": (
        mha(W_v=np.ones((1, 4, 4))),
        ValueError,
        r"W_v must be a 2-D matrix; got shape \(1, 4, 4\)",
    ),
    "mha X NaN": (
        mha(X=with_nan((3, 4))),
        ValueError,
        r"X must be finite; got 1 NaN.*shape \(3, 4\)",
    ),
    "mha W_o inf": (mha(W_o=with_nan((4, 4), value=np.inf)), ValueError, r"W_o must be finite"),
    "mha mask shape": (
        mha(mask=np.ones((2, 2), bool)),
        ValueError,
        (
            r"mask of shape \(2, 2\) does not broadcast to the shape of the scores"
            r" \(\.\.\., T, T\), \(3, 3\)"
        ),
    ),
    "mha mask not bool": (
        mha(mask=np.ones((3, 3))),
        TypeError,
        r"mask must be a boolean array.*with shape \(3, 3\)",
    ),
    # sample_dot_products
    "d_k zero": (
        lambda: sample_dot_products(0, 10, RNG),
        ValueError,
        r"d_k must be >= 1; got d_k=0",
    ),
    "n_pairs negative": (lambda: sample_dot_products(4, -5, RNG), ValueError, r"n_pairs=-5"),
    "n_pairs float": (
        lambda: sample_dot_products(4, 1e5, RNG),
        TypeError,
        r"n_pairs must be an integer; got 100000.0",
    ),
    "rng a seed": (
        lambda: sample_dot_products(4, 10, 0),
        TypeError,
        r"rng must be a numpy.random.Generator.*got int",
    ),
    "sigma_q zero": (
        lambda: sample_dot_products(4, 10, RNG, sigma_q=0.0),
        ValueError,
        r"sigma_q must be a finite number > 0; got sigma_q=0.0",
    ),
    "sigma_k inf": (
        lambda: sample_dot_products(4, 10, RNG, sigma_k=np.inf),
        ValueError,
        r"sigma_k=inf",
    ),
    "sigma_k string": (
        lambda: sample_dot_products(4, 10, RNG, sigma_k="1"),
        TypeError,
        r"sigma_k must be a real number",
    ),
    "sigma product overflows": (
        lambda: sample_dot_products(4, 10, RNG, sigma_q=1e200, sigma_k=1e200),
        ValueError,
        r"sigma_q \* sigma_k = 1e\+200 \* 1e\+200 is inf in float64",
    ),
    "sigma too large for a float": (
        lambda: sample_dot_products(4, 10, RNG, sigma_q=10**400),
        ValueError,
        r"sigma_q must be a finite number > 0; got sigma_q=1000.*too large for a float",
    ),
    "workers zero": (
        lambda: sample_dot_products(4, 10, RNG, workers=0),
        ValueError,
        r"workers must be >= 1; got workers=0",
    ),
    "Q a tensor that requires grad": (
        sdpa(Q=TensorRequiringGrad()),
        TypeError,
        r"Q must be a numeric array; got a TensorRequiringGrad that requires grad, which numpy"
        r" cannot read: pass Q\.detach\(\)\.cpu\(\)\.numpy\(\)",
    ),
    # attention_heatmap
    "heatmap 1-D": (
        lambda: attention_heatmap([0.5, 0.5]),
        ValueError,
        r"weights must be a 2-D \(T_q, T_k\) matrix; got shape \(2,\)",
    ),
    "heatmap labels": (
        lambda: attention_heatmap(np.eye(2), key_labels=["a"]),
        ValueError,
        r"key_labels has 1 labels but weights shape \(2, 2\) needs 2",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_bad_input_raises_a_message_naming_the_argument(case: str) -> None:
    call, error, pattern = CASES[case]
    with pytest.raises(error, match=pattern):
        call()
