"""Argument checks shared by every public function of attnlib.

Each check names the argument it looked at and shows what it got, so that a student who passes the
wrong thing reads *which* thing was wrong instead of a traceback from deep inside numpy.

Public functions check their arguments once, here, and then call private kernels that trust them.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

T_result = TypeVar("T_result")

#: The largest array (in bytes) a public function of attnlib allocates: 4 GiB, half the memory of
#: a small laptop. A size argument that would need more (``causal_mask(10**7)``: 100 TB) is
#: refused with a ValueError naming it, before numpy is asked for the memory.
MAX_BYTES = 4 * 2**30

#: dtype kinds accepted as numbers: signed and unsigned integers, floats (not bool, complex,
#: timedelta64 - which numpy counts as an integer type - datetime64, strings or objects).
_NUMERIC_KINDS = "iuf"


def _short_repr(value: object) -> str:
    """``repr(value)``, shortened when it is very long (an integer of 400 digits, say)."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text)} characters)"


def as_float_array(x: ArrayLike, name: str, min_ndim: int = 0) -> np.ndarray:
    """Return ``x`` as a floating array: floats keep their dtype, integers become float64.

    Raises TypeError for booleans, complex numbers, strings, times and objects, and ValueError
    when ``x`` has fewer than ``min_ndim`` dimensions.
    """
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError, RuntimeError) as err:  # ragged lists, tensors numpy can't read
        if getattr(x, "requires_grad", False):  # a PyTorch tensor in an autograd graph
            raise TypeError(
                f"{name} must be a numeric array; got a {type(x).__name__} that requires grad,"
                f" which numpy cannot read: pass {name}.detach().cpu().numpy()"
            ) from None
        raise TypeError(f"{name} must be a numeric array; could not convert it ({err})") from None
    if arr.dtype.kind not in _NUMERIC_KINDS:
        raise TypeError(
            f"{name} must be a real numeric array (int or float); got dtype {arr.dtype}"
            f" with shape {arr.shape}"
        )
    if arr.dtype.kind != "f":
        arr = arr.astype(np.float64)
    if arr.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimensions; got shape {arr.shape}"
            f" ({arr.ndim} dimension{'s' if arr.ndim != 1 else ''})"
        )
    return arr


def check_finite(x: np.ndarray, name: str) -> None:
    """Raise ValueError if ``x`` holds NaN or infinity (counts and the shape in the message)."""
    if not np.isfinite(x).all():
        n_nan = int(np.isnan(x).sum())
        n_inf = int(np.isinf(x).sum())
        raise ValueError(
            f"{name} must be finite; got {n_nan} NaN and {n_inf} infinite entries"
            f" in an array of shape {x.shape}"
        )


def as_bool_mask(
    mask: ArrayLike, target_shape: tuple[int, ...], name: str = "mask", target: str = "x"
) -> np.ndarray:
    """Return ``mask`` as a boolean array that broadcasts to ``target_shape`` without growing it.

    A mask of one or two dimensions (one key row, or a ``(T_q, T_k)`` matrix) broadcasts over
    every leading dimension. A mask with more dimensions carries batch dimensions, and must have
    exactly as many dimensions as the target: numpy aligns shapes from the right, so a
    ``(B, 1, T)`` padding mask against ``(B, H, T, T)`` per-head scores would otherwise pair the
    batch axis with the head axis (silently wrong when ``B == H``).

    ``target`` names what the mask applies to (e.g. ``"the scores (..., T_q, T_k)"``) in the
    error message.
    """
    arr = np.asarray(mask)
    if arr.dtype != bool:
        raise TypeError(
            f"{name} must be a boolean array (True = keep / may attend); got dtype {arr.dtype}"
            f" with shape {arr.shape}. If you hold 0/1 values, pass {name}.astype(bool)."
        )
    target_shape = tuple(target_shape)
    if 2 < arr.ndim < len(target_shape):
        fix = f"{name}[:, {'None, ' * (len(target_shape) - arr.ndim)}...]"
        raise ValueError(
            f"{name} of shape {arr.shape} has batch dimensions but {arr.ndim} dimensions,"
            f" while {target} has {len(target_shape)}, shape {target_shape}: numpy would align"
            f" the shapes from the right and pair the wrong axes. Give {name} one axis per"
            f" dimension of {target} (size 1 where it is shared), e.g. {fix} for a (B, 1, T)"
            f" padding mask against per-head scores (B, H, T, T)"
        )
    try:
        shape = np.broadcast_shapes(arr.shape, target_shape)
    except ValueError:
        shape = None
    if shape != target_shape:
        raise ValueError(
            f"{name} of shape {arr.shape} does not broadcast to the shape of {target},"
            f" {target_shape}"
        )
    return arr


def check_int(value: object, name: str, minimum: int = 1) -> int:
    """Return ``value`` as a Python int, checking it is an integer (not bool) and >= ``minimum``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer; got {value!r} of type {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}; got {name}={value}")
    return int(value)


def check_axis(axis: object, arr: np.ndarray, name: str) -> int:
    """Return ``axis`` as an int, checking it is an integer (not bool) that indexes ``arr``."""
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, numbers.Integral):
        raise TypeError(
            f"axis must be an integer; got {axis!r} of type {type(axis).__name__}"
            f" (for {name} of shape {arr.shape})"
        )
    if not -arr.ndim <= axis < arr.ndim:
        raise ValueError(f"axis={axis} is out of range for {name} of shape {arr.shape}")
    return int(axis)


def check_positive_real(value: object, name: str, note: str = "") -> float:
    """Return ``value`` as a Python float, checking it is a real number, finite and > 0.

    Accepts any real number type (int, float, numpy scalars, ``fractions.Fraction``); one too
    large for a float (``10**400``) or so small that it rounds to 0.0 raises ValueError.
    ``note`` is added to the message (e.g. what None would have meant).
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number{note}; got {_short_repr(value)}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not (math.isfinite(number) and number > 0):
        rounded = " (too large for a float)" if value > 0 and number == math.inf else ""
        rounded = " (it rounds to 0.0 as a float)" if value > 0 and number == 0 else rounded
        raise ValueError(
            f"{name} must be a finite number > 0{note}; got {name}={_short_repr(value)}{rounded}"
        )
    return number


def check_scale(scale: object, d_k: int) -> float:
    """Return the softmax temperature: ``1/sqrt(d_k)`` for None, else a finite number > 0."""
    if scale is None:
        return 1.0 / math.sqrt(d_k)
    return check_positive_real(scale, "scale", note=" (None means 1/sqrt(d_k))")


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
    The tolerance on the sums is ``max(n, 16) * eps`` for rows of ``n`` entries (eps of the
    dtype): rounding in a softmax and in the sum moves a row sum by a few eps (measured: at most
    4 eps for n from 1 to 100,000, float32 and float64), and a naive sum of n terms by at most
    about n eps. For n = 1000 that is 2.2e-13 in float64 and 1.2e-4 in float32.
    """
    check_finite(p, name)
    if (p < 0).any() or (p > 1).any():
        raise ValueError(
            f"{name} must hold probabilities in [0, 1] (softmax outputs); got values from"
            f" {p.min()} to {p.max()} in {name} of shape {p.shape}"
        )
    sums = p.sum(axis=axis, dtype=working_dtype(p.dtype))
    tolerance = max(p.shape[axis], 16) * np.finfo(p.dtype).eps
    ok = np.abs(sums - 1) <= tolerance
    if allow_zero_rows:
        ok |= sums == 0
    if not ok.all():
        raise ValueError(
            f"each row of {name} must sum to 1 along axis {axis}"
            f"{' (or be all zeros)' if allow_zero_rows else ''} within {tolerance:.2g}; got row"
            f" sums from {sums.min():.7g} to {sums.max():.7g} in {name} of shape {p.shape}"
        )


def check_allocation(shape: tuple[int, ...], dtype: DTypeLike, what: str) -> None:
    """Raise ValueError if an array of ``shape`` and ``dtype`` would exceed :data:`MAX_BYTES`.

    ``what`` names the array and the arguments its size comes from, e.g.
    ``"the scores (..., T_q, T_k) of Q shape (1000000, 64) and K shape (1000000, 64)"``.
    """
    shape = tuple(int(n) for n in shape)
    dtype = np.dtype(dtype)
    check_bytes(math.prod(shape) * dtype.itemsize, f"{what} (shape {shape} of {dtype})")


def check_bytes(n_bytes: int, what: str) -> None:
    """Raise ValueError naming ``what`` if ``n_bytes`` exceeds :data:`MAX_BYTES`."""
    if n_bytes > MAX_BYTES:
        raise ValueError(
            f"{what} would take {n_bytes:,} bytes ({_human_bytes(n_bytes)}), more than attnlib's"
            f" limit of {_human_bytes(MAX_BYTES)} (attnlib._validation.MAX_BYTES); use smaller"
            f" sizes"
        )


def _human_bytes(n: int) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


def working_dtype(dtype: DTypeLike) -> np.dtype:
    """The dtype a kernel computes in: float32 for float16, else ``dtype`` itself.

    A float16 sum overflows past 65,504 (the normaliser of 70,000 equal scores, a dot product of
    256 entries of 16), so attnlib computes float16 inputs in float32 and rounds the results
    back to float16, as PyTorch does.
    """
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype.itemsize < 4 else dtype


def abs_max(a: np.ndarray) -> float:
    """Largest ``|a|`` entry (0.0 for an empty array), without allocating a copy of ``a``."""
    return max(float(a.max(initial=0)), -float(a.min(initial=0)))


def finite_result(
    compute: Callable[[], T_result], what: str, operands: dict[str, np.ndarray], detail: str = ""
) -> T_result:
    """Run ``compute()`` and return its result (an array or a tuple of arrays), or raise
    ValueError if it overflowed.

    The one overflow guard of attnlib: finite inputs can still give an infinite (or NaN) result
    when they are huge (entries of 1e200, or 1e20 in float32). ``what`` says what was computed
    (``"the scores scale * Q @ K^T"``) and ``operands`` maps the *caller's* argument names to
    the arrays it came from, so that the message says which argument to rescale; ``detail`` is
    added to the message's parenthesis (e.g. the shapes).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        result = compute()
    arrays = result if isinstance(result, tuple) else (result,)
    if not all(np.isfinite(a).all() for a in arrays):
        largest = ", ".join(f"largest |{n}| entry {abs_max(a):.3g}" for n, a in operands.items())
        names = " or ".join(operands)
        raise ValueError(
            f"{what} overflowed in {arrays[0].dtype} ({largest}{detail}); rescale {names}"
        )
    return result
