"""Argument checks shared by every public function of attnlib.

Each check names the argument it looked at and shows what it got, so that a student who passes the
wrong thing reads *which* thing was wrong instead of a traceback from deep inside numpy.
"""

from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike


def as_float_array(x: ArrayLike, name: str, min_ndim: int = 0) -> np.ndarray:
    """Return ``x`` as a floating array: floats keep their dtype, integers become float64.

    Raises TypeError for booleans, complex numbers, strings and objects, and ValueError when ``x``
    has fewer than ``min_ndim`` dimensions.
    """
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as err:  # ragged nested lists
        raise TypeError(f"{name} must be a numeric array; could not convert it ({err})") from None
    if arr.dtype == bool or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise TypeError(
            f"{name} must be a real numeric array (int or float); got dtype {arr.dtype}"
            f" with shape {arr.shape}"
        )
    if not np.issubdtype(arr.dtype, np.floating):
        arr = arr.astype(np.float64)
    if arr.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimensions; got shape {arr.shape}"
            f" ({arr.ndim} dimension{'s' if arr.ndim != 1 else ''})"
        )
    return arr


def check_finite(x: np.ndarray, name: str) -> None:
    """Raise ValueError if ``x`` holds NaN or infinity (counts and the shape in the message)."""
    bad = ~np.isfinite(x)
    if bad.any():
        n_nan = int(np.isnan(x).sum())
        n_inf = int(bad.sum()) - n_nan
        raise ValueError(
            f"{name} must be finite; got {n_nan} NaN and {n_inf} infinite entries"
            f" in an array of shape {x.shape}"
        )


def as_bool_mask(
    mask: ArrayLike, target_shape: tuple[int, ...], name: str = "mask", target: str = "x"
) -> np.ndarray:
    """Return ``mask`` as a boolean array that broadcasts to ``target_shape`` without growing it.

    ``target`` names what the mask applies to (e.g. ``"the scores (..., T_q, T_k)"``) in the
    error message.
    """
    arr = np.asarray(mask)
    if arr.dtype != bool:
        raise TypeError(
            f"{name} must be a boolean array (True = keep / may attend); got dtype {arr.dtype}"
            f" with shape {arr.shape}. If you hold 0/1 values, pass {name}.astype(bool)."
        )
    try:
        shape = np.broadcast_shapes(arr.shape, target_shape)
    except ValueError:
        shape = None
    if shape != tuple(target_shape):
        raise ValueError(
            f"{name} of shape {arr.shape} does not broadcast to the shape of {target},"
            f" {tuple(target_shape)}"
        )
    return arr


def check_int(value: object, name: str, minimum: int = 1) -> int:
    """Return ``value`` as a Python int, checking it is an integer (not bool) and >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer; got {value!r} of type {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}; got {name}={value}")
    return int(value)


def check_scale(scale: object, d_k: int) -> float:
    """Return the softmax temperature: ``1/sqrt(d_k)`` for None, else a finite number > 0."""
    if scale is None:
        return 1.0 / float(np.sqrt(d_k))
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise TypeError(f"scale must be a real number or None; got {scale!r}")
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(
            f"scale must be a finite number > 0 (None means 1/sqrt(d_k)); got scale={scale!r}"
        )
    return float(scale)


def batch_shape(name_shapes: dict[str, tuple[int, ...]]) -> tuple[int, ...]:
    """Broadcast the leading (batch) dimensions of several ``(..., T, d)`` arrays."""
    leading = {name: shape[:-2] for name, shape in name_shapes.items()}
    try:
        return np.broadcast_shapes(*leading.values())
    except ValueError:
        described = ", ".join(f"{n} shape {s}" for n, s in name_shapes.items())
        raise ValueError(f"the leading (batch) dimensions do not broadcast: {described}") from None


def check_probabilities(
    p: np.ndarray, name: str = "p", axis: int = -1, allow_zero_rows: bool = False
) -> None:
    """Raise ValueError unless ``p`` holds finite probabilities that sum to 1 along ``axis``.

    ``allow_zero_rows`` also accepts all-zero rows (the output of a fully masked softmax row).
    The tolerance on the sums is ``sqrt(eps) * n``: 1.5e-8 * n in float64, 3.5e-4 * n in float32.
    """
    check_finite(p, name)
    if (p < 0).any() or (p > 1).any():
        raise ValueError(
            f"{name} must hold probabilities in [0, 1] (softmax outputs); got values from"
            f" {p.min()} to {p.max()} in {name} of shape {p.shape}"
        )
    sums = p.sum(axis=axis)
    ok = np.isclose(sums, 1, rtol=0, atol=np.sqrt(np.finfo(p.dtype).eps) * p.shape[axis])
    if allow_zero_rows:
        ok |= sums == 0
    if not ok.all():
        raise ValueError(
            f"each row of {name} must sum to 1 along axis {axis}"
            f"{' (or be all zeros)' if allow_zero_rows else ''}; got row sums from {sums.min()}"
            f" to {sums.max()} in {name} of shape {p.shape}"
        )
