r"""Seeded generators of the synthetic heteroscedastic problems of the ACCRUE paper.

Camporeale & Carè (2021), Section 5.1. Targets are drawn as
:math:`y \sim \mathcal N(f(x), \sigma(x)^2)` with :math:`x` uniform on the domain.
The paper uses a Gaussian-process fit as the oracle mean; here ``mean`` is the exact
:math:`f(x)` (as the paper does for 5D), so that only the variance is to be learned.

``G`` (Goldberg et al. 1998)
    :math:`x \in [0, 1]`, :math:`f = 2\sin 2\pi x`, :math:`\sigma = x/2 + 1/2`.
``Y`` (Yuan & Wahba 2004)
    :math:`x \in [0, 1]`, :math:`f = 2(e^{-30(x - 1/4)^2} + \sin \pi x^2) - 2`,
    :math:`\sigma = e^{\sin 2\pi x}/3`.
``W`` (Weigend & Nix 1994; Williams 1996)
    :math:`x \in [0, \pi]`, :math:`f = \sin 2.5x \,\sin 1.5x`,
    :math:`\sigma = 0.01 + 0.25(1 - \sin 2.5x)^2`.
``5D`` (Genz 1984)
    :math:`x \in [0, 1]^5`, :math:`f = 0`,
    :math:`\sigma = 0.45(\cos(\pi + 5\sum_i x_i) + 1.2)`.

Every generator returns a dict of arrays: ``x`` ((N,) for the 1-D problems, (N, 5) for
5D), ``y`` (targets), ``mean`` (the oracle :math:`f(x)`) and ``true_std``
(:math:`\sigma(x)`), reproducible for a given ``seed``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from uqeval.errors import InputError


def _check_n(n: int) -> int:
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise InputError(f"n must be a positive integer number of rows, got {n!r}")
    return int(n)


def _draw(x: np.ndarray, f: np.ndarray, sigma: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
    y = f + sigma * rng.standard_normal(f.shape[0])
    return {"x": x, "y": y, "mean": f, "true_std": sigma}


def make_g(n: int = 100, seed: int = 0) -> dict[str, np.ndarray]:
    r"""Problem G: :math:`x \sim U[0,1]`, :math:`f = 2\sin 2\pi x`, :math:`\sigma = x/2 + 1/2`."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, _check_n(n))
    return _draw(x, 2.0 * np.sin(2.0 * np.pi * x), 0.5 * x + 0.5, rng)


def make_y(n: int = 100, seed: int = 0) -> dict[str, np.ndarray]:
    r"""Problem Y: :math:`x \sim U[0,1]`, :math:`f = 2(e^{-30(x-1/4)^2} + \sin\pi x^2) - 2`, :math:`\sigma = e^{\sin 2\pi x}/3`."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, _check_n(n))
    f = 2.0 * (np.exp(-30.0 * (x - 0.25) ** 2) + np.sin(np.pi * x**2)) - 2.0
    return _draw(x, f, np.exp(np.sin(2.0 * np.pi * x)) / 3.0, rng)


def make_w(n: int = 100, seed: int = 0) -> dict[str, np.ndarray]:
    r"""Problem W: :math:`x \sim U[0,\pi]`, :math:`f = \sin 2.5x\,\sin 1.5x`, :math:`\sigma = 0.01 + 0.25(1 - \sin 2.5x)^2`."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, np.pi, _check_n(n))
    f = np.sin(2.5 * x) * np.sin(1.5 * x)
    return _draw(x, f, 0.01 + 0.25 * (1.0 - np.sin(2.5 * x)) ** 2, rng)


def make_5d(n: int = 10_000, seed: int = 0) -> dict[str, np.ndarray]:
    r"""Problem 5D: :math:`x \sim U[0,1]^5`, :math:`f = 0`, :math:`\sigma = 0.45(\cos(\pi + 5\sum_i x_i) + 1.2)`."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, (_check_n(n), 5))
    sigma = 0.45 * (np.cos(np.pi + 5.0 * x.sum(axis=1)) + 1.2)
    return _draw(x, np.zeros(x.shape[0]), sigma, rng)


#: Problem name -> generator ``(n, seed) -> dict``.
PROBLEMS: dict[str, Callable[..., dict[str, np.ndarray]]] = {
    "G": make_g,
    "Y": make_y,
    "W": make_w,
    "5D": make_5d,
}


def make_problem(name: str, n: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Draw ``n`` rows of the ACCRUE synthetic problem ``name`` (one of G, Y, W, 5D)."""
    key = str(name).upper()
    if key not in PROBLEMS:
        raise InputError(f"unknown synthetic problem {name!r}; choose one of {', '.join(PROBLEMS)}")
    return PROBLEMS[key](n, seed)
