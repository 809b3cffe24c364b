"""Exercises for notebook 02, why sqrt(d_k): ``ch02.product_variance``, ``ch02.score_variance``."""

from __future__ import annotations

import numpy as np

from .checking import NumberExercise

__all__ = ["product_variance", "score_variance"]

# Var(XY) for independent X, Y with non-zero means.
MU_X, SD_X, MU_Y, SD_Y = 1.0, 2.0, 3.0, 0.5
_var_xy = MU_X**2 * SD_Y**2 + MU_Y**2 * SD_X**2 + SD_X**2 * SD_Y**2

product_variance = NumberExercise(
    "ch02.product_variance",
    _var_xy,
    mistakes=[
        (
            SD_X**2 * SD_Y**2,
            "That is Var(X) Var(Y), the shortcut that holds only when both"
            " means are zero; here E[X] = 1 and E[Y] = 3.",
        ),
        (
            (SD_X**2 + MU_X**2) * (SD_Y**2 + MU_Y**2),
            "That is E[X^2] E[Y^2] = E[(XY)^2]; the variance subtracts (E[XY])^2 = (E[X] E[Y])^2.",
        ),
        (
            MU_X**2 * SD_Y**2 + MU_Y**2 * SD_X**2,
            "Two of the three terms: the product of the variances, Var(X) Var(Y), is missing.",
        ),
        (SD_X**2 + SD_Y**2, "Variances add for a sum of independent variables, not for a product."),
    ],
    hint="Var(XY) = E[X^2] E[Y^2] - (E[X] E[Y])^2 for independent X and Y, and"
    " E[X^2] = Var(X) + E[X]^2.",
    solution=f"E[X^2] = {SD_X:g}^2 + {MU_X:g}^2 = {SD_X**2 + MU_X**2:g} and"
    f" E[Y^2] = {SD_Y:g}^2 + {MU_Y:g}^2 = {SD_Y**2 + MU_Y**2:g}, so Var(XY) ="
    f" {SD_X**2 + MU_X**2:g} * {SD_Y**2 + MU_Y**2:g} - ({MU_X:g} * {MU_Y:g})^2 = {_var_xy:g}:"
    f" mu_X^2 sigma_Y^2 + mu_Y^2 sigma_X^2 + sigma_X^2 sigma_Y^2"
    f" = {MU_X**2 * SD_Y**2:g} + {MU_Y**2 * SD_X**2:g} + {SD_X**2 * SD_Y**2:g}.",
    correct_message="With non-zero means the shortcut Var(X) Var(Y) = 1 would be far too small.",
)

# Var(q . k) for entries with standard deviations sigma_q and sigma_k.
D_K, SIGMA_Q, SIGMA_K = 32, 0.5, 3.0
_var_qk = D_K * SIGMA_Q**2 * SIGMA_K**2

score_variance = NumberExercise(
    "ch02.score_variance",
    _var_qk,
    mistakes=[
        (
            D_K,
            "That is d_k alone, right only when the entries have variance 1. Here each"
            " term q_m k_m has variance sigma_q^2 sigma_k^2.",
        ),
        (
            D_K * SIGMA_Q * SIGMA_K,
            "You multiplied by sigma_q sigma_k; for a product of"
            " independent zero-mean variables the variances multiply: sigma_q^2 sigma_k^2.",
        ),
        (
            np.sqrt(_var_qk),
            "That is the standard deviation sqrt(d_k) sigma_q sigma_k; the"
            " question asks for the variance.",
        ),
        (
            SIGMA_Q**2 * SIGMA_K**2,
            "That is the variance of one term q_m k_m; the dot product"
            " adds d_k independent terms, and their variances add.",
        ),
        (
            D_K * (SIGMA_Q**2 + SIGMA_K**2),
            "The variances of the factors multiply in"
            " Var(q_m k_m); they add only across the d_k terms of the sum.",
        ),
    ],
    hint="One term: Var(q_m k_m) = E[q_m^2] E[k_m^2] - 0. Then add d_k independent terms.",
    solution=f"Var(q_m k_m) = sigma_q^2 sigma_k^2 = {SIGMA_Q**2:g} * {SIGMA_K**2:g} ="
    f" {SIGMA_Q**2 * SIGMA_K**2:g}, and the d_k = {D_K} independent terms add:"
    f" Var(q . k) = {D_K} * {SIGMA_Q**2 * SIGMA_K**2:g} = {_var_qk:g}. The right divisor of"
    f" the scores is its square root, sqrt(d_k) sigma_q sigma_k = {np.sqrt(_var_qk):.4g},"
    f" not sqrt(d_k) = {np.sqrt(D_K):.4g}.",
    correct_message="The right divisor is its square root, sqrt(d_k) sigma_q sigma_k, not"
    " sqrt(d_k) alone.",
)
