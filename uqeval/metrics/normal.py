"""The standard normal's special functions, vectorised in numpy: ``ndtr``, ``ndtri``, ``erf``, ``erfc`` (and
the density ``norm_pdf`` and the central intervals' ``central_z``).

These are the Cephes algorithms that ``scipy.special`` evaluates (``xsf/cephes/ndtr.h`` and
``ndtri.h`` in SciPy's xsf library, after S. L. Moshier's Cephes Math Library): the same
rational approximations, coefficients, branch points and order of operations. So the results
equal SciPy's to the last bit wherever numpy's ``exp``/``log`` round as the C library does, and
within a couple of units in the last place elsewhere (``tests/metrics/test_normal.py`` checks both
on 10^6 points and the special values). uqeval uses them instead of ``scipy.special`` because
importing ``scipy.special`` costs ~60 ms of start-up, more than ``uqeval score`` needs to score
10^5 Gaussian rows.

Every function takes a scalar or an array and returns float64 of its shape (a numpy scalar for a
scalar), as a ufunc would. No Python loop runs over elements: each branch of the algorithm is
evaluated on the elements that take it,
in cache-sized blocks of elements.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .blocks import BLOCK

__all__ = ["central_z", "erf", "erfc", "ndtr", "ndtri", "norm_pdf"]

# erf on [0, 1]: x T(x^2) / U(x^2);  erfc on [1, 8): exp(-x^2) P(x) / Q(x);  on [8, inf): R(x) / S(x)
_T = (
    9.60497373987051638749e0,
    9.00260197203842689217e1,
    2.23200534594684319226e3,
    7.00332514112805075473e3,
    5.55923013010394962768e4,
)
_U = (
    3.35617141647503099647e1,
    5.21357949780152679795e2,
    4.59432382970980127987e3,
    2.26290000613890934246e4,
    4.92673942608635921086e4,
)  # leading coefficient 1
_P = (
    2.46196981473530512524e-10,
    5.64189564831068821977e-1,
    7.46321056442269912687e0,
    4.86371970985681366614e1,
    1.96520832956077098242e2,
    5.26445194995477358631e2,
    9.34528527171957607540e2,
    1.02755188689515710272e3,
    5.57535335369399327526e2,
)
_Q = (
    1.32281951154744992508e1,
    8.67072140885989742329e1,
    3.54937778887819891062e2,
    9.75708501743205489753e2,
    1.82390916687909736289e3,
    2.24633760818710981792e3,
    1.65666309194161350182e3,
    5.57535340817727675546e2,
)
_R = (
    5.64189583547755073984e-1,
    1.27536670759978104416e0,
    5.01905042251180477414e0,
    6.16021097993053585195e0,
    7.40974269950448939160e0,
    2.97886665372100240670e0,
)
_S = (
    2.26052863220117276590e0,
    9.39603524938001434673e0,
    1.20489539808096656605e1,
    1.70814450747565897222e1,
    9.60896809063285878198e0,
    3.36907645100081516050e0,
)

# ndtri: |y - 1/2| <= 3/8;  sqrt(-2 log y) in [2, 8);  in [8, 64)
_P0 = (
    -5.99633501014107895267e1,
    9.80010754185999661536e1,
    -5.66762857469070293439e1,
    1.39312609387279679503e1,
    -1.23916583867381258016e0,
)
_Q0 = (
    1.95448858338141759834e0,
    4.67627912898881538453e0,
    8.63602421390890590575e1,
    -2.25462687854119370527e2,
    2.00260212380060660359e2,
    -8.20372256168333339912e1,
    1.59056225126211695515e1,
    -1.18331621121330003142e0,
)
_P1 = (
    4.05544892305962419923e0,
    3.15251094599893866154e1,
    5.71628192246421288162e1,
    4.40805073893200834700e1,
    1.46849561928858024014e1,
    2.18663306850790267539e0,
    -1.40256079171354495875e-1,
    -3.50424626827848203418e-2,
    -8.57456785154685413611e-4,
)
_Q1 = (
    1.57799883256466749731e1,
    4.53907635128879210584e1,
    4.13172038254672030440e1,
    1.50425385692907503408e1,
    2.50464946208309415979e0,
    -1.42182922854787788574e-1,
    -3.80806407691578277194e-2,
    -9.33259480895457427372e-4,
)
_P2 = (
    3.23774891776946035970e0,
    6.91522889068984211695e0,
    3.93881025292474443415e0,
    1.33303460815807542389e0,
    2.01485389549179081538e-1,
    1.23716634817820021358e-2,
    3.01581553508235416007e-4,
    2.65806974686737550832e-6,
    6.23974539184983293730e-9,
)
_Q2 = (
    6.02427039364742014255e0,
    3.67983563856160859403e0,
    1.37702099489081330271e0,
    2.16236993594496635890e-1,
    1.34204006088543189037e-2,
    3.28014464682127739104e-4,
    2.89247864745380683936e-6,
    6.79019408009981274425e-9,
)

_MAXLOG = 7.097827128933839730962063185871e2  # log(DBL_MAX): exp(-x^2) underflows beyond it
_SQRT1_2 = 0.707106781186547524401
_SQRT2PI = 2.50662827463100050242e0
_EXP_M2 = 0.13533528323661269189  # exp(-2)


def _polevl(x: np.ndarray, coef: tuple) -> np.ndarray:
    """Horner's rule c0 x^n + ... + cn, in Cephes's order (no fused multiply-add)."""
    ans = coef[0] * x
    ans += coef[1]
    for c in coef[2:]:
        ans *= x
        ans += c
    return ans


def _p1evl(x: np.ndarray, coef: tuple) -> np.ndarray:
    """:func:`_polevl` with an implicit leading coefficient 1."""
    ans = x + coef[0]
    for c in coef[1:]:
        ans *= x
        ans += c
    return ans


def _erf_small(x: np.ndarray) -> np.ndarray:
    """erf(x) for |x| <= 1 (odd: the sign of x carries through exactly)."""
    z = x * x
    return x * _polevl(z, _T) / _p1evl(z, _U)


def _erfc_large(x: np.ndarray) -> np.ndarray:
    """erfc(x) for x >= 1 or NaN: exp(-x^2) P(x)/Q(x) below 8, R(x)/S(x) from 8, 0 once exp(-x^2) underflows."""
    out = np.zeros_like(x)
    z = -x * x
    live = np.flatnonzero(~(z < -_MAXLOG))  # NaN stays live and comes out NaN
    if live.size == 0:
        return out
    xs, e = x[live], np.exp(z[live])
    mid = xs < 8.0
    if mid.all():
        out[live] = (e * _polevl(xs, _P)) / _p1evl(xs, _Q)
        return out
    y = np.empty_like(xs)
    a, b = np.flatnonzero(mid), np.flatnonzero(~mid)
    y[a] = (e[a] * _polevl(xs[a], _P)) / _p1evl(xs[a], _Q)
    y[b] = (e[b] * _polevl(xs[b], _R)) / _p1evl(xs[b], _S)
    out[live] = y
    return out


def _split(x: np.ndarray, small: np.ndarray, f_small, f_large) -> np.ndarray:
    """``f_small(x)`` where ``small``, ``f_large(x)`` elsewhere, each evaluated only on its elements (1-d ``x``)."""
    if small.all():
        return f_small(x)
    if not small.any():
        return f_large(x)
    out = np.empty_like(x)
    i, j = np.flatnonzero(small), np.flatnonzero(~small)
    out[i] = f_small(x[i])
    out[j] = f_large(x[j])
    return out


def _elementwise(kernel):
    """A ufunc-like function of ``kernel`` (a function of a 1-d float64 array): any shape in, the same shape
    out, a numpy scalar for a scalar; floating-point warnings off (NaN and infinities are results here)."""

    def function(x):
        x = np.asarray(x, dtype=np.float64)
        flat = x.ravel()
        with np.errstate(all="ignore"):
            if flat.size <= BLOCK:
                out = kernel(flat)
            else:  # cache-sized blocks: a dozen temporaries per branch stay in cache (8x faster at 1e7)
                out = np.empty_like(flat)
                for start in range(0, flat.size, BLOCK):
                    out[start : start + BLOCK] = kernel(flat[start : start + BLOCK])
        out = out.reshape(x.shape)
        return out[()] if out.ndim == 0 else out

    function.__name__, function.__doc__ = kernel.__name__, kernel.__doc__
    return function


@_elementwise
def erf(x):
    """The error function, as ``scipy.special.erf``."""
    a = np.abs(x)
    return np.copysign(_split(a, ~(a > 1.0), _erf_small, lambda v: 1.0 - _erfc_large(v)), x)


def _erfc_reflected(x: np.ndarray) -> np.ndarray:
    """erfc(x) for |x| >= 1: erfc(|x|), reflected as 2 - erfc(|x|) below zero."""
    y = _erfc_large(np.abs(x))
    return np.where(x < 0.0, 2.0 - y, y)


@_elementwise
def erfc(x):
    """The complementary error function, as ``scipy.special.erfc``: full relative precision in the upper tail."""
    return _split(x, np.abs(x) < 1.0, lambda v: 1.0 - _erf_small(v), _erfc_reflected)


def _ndtr_tails(x: np.ndarray) -> np.ndarray:
    y = 0.5 * _erfc_large(np.abs(x))
    return np.where(x > 0.0, 1.0 - y, y)


@_elementwise
def ndtr(x):
    """The standard normal CDF, as ``scipy.special.ndtr``: ``erfc`` in both tails, so the lower tail keeps
    full relative precision."""
    x = x * _SQRT1_2
    return _split(x, np.abs(x) < 1.0, lambda v: 0.5 + 0.5 * _erf_small(v), _ndtr_tails)


def _ndtri_central(y: np.ndarray) -> np.ndarray:
    y = y - 0.5
    y2 = y * y
    return (y + y * (y2 * _polevl(y2, _P0) / _p1evl(y2, _Q0))) * _SQRT2PI


def _ndtri_tail(y: np.ndarray) -> np.ndarray:
    """The quantile of y <= exp(-2), as a positive number of standard deviations below the mean."""
    x = np.sqrt(-2.0 * np.log(y))
    x0 = x - np.log(x) / x
    z = 1.0 / x
    return x0 - _split(
        z,
        x < 8.0,
        lambda v: v * _polevl(v, _P1) / _p1evl(v, _Q1),
        lambda v: v * _polevl(v, _P2) / _p1evl(v, _Q2),
    )


@_elementwise
def ndtri(p):
    """The standard normal quantile, as ``scipy.special.ndtri``: -inf at 0, inf at 1, NaN outside [0, 1]."""
    upper = p > 1.0 - _EXP_M2
    y = np.where(upper, 1.0 - p, p)
    central = y > _EXP_M2
    x = _split(y, central, _ndtri_central, _ndtri_tail)
    x = np.where(upper | central, x, -x)
    x = np.where(p == 0.0, -np.inf, np.where(p == 1.0, np.inf, x))
    return np.where((p < 0.0) | (p > 1.0), np.nan, x)


_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)


def norm_pdf(x: Any) -> Any:
    r"""The standard normal density :math:`e^{-x^2/2}/\sqrt{2\pi}`, as ``scipy.stats.norm.pdf``: 0 where
    :math:`x^2` overflows (|x| > 1e154, its limit), without numpy's overflow warning. The one place of the
    density: the Gaussian CRPS and its derivative (:mod:`uqeval.metrics.scoring`) and the weighted CRPS's
    integrals (:mod:`uqeval.metrics.weighted`) call it."""
    with np.errstate(over="ignore"):
        return _INV_SQRT_2PI * np.exp(-0.5 * x * x)


def central_z(level: Any) -> Any:
    r""":math:`\Phi^{-1}(\tfrac12 + \tfrac p2)`: the half-width, in standard deviations, of the central ``level``
    interval of a normal distribution (``level`` a scalar or an array in [0, 1]; 1 gives inf), computed as the
    Uncertainty Toolbox's ``norm.ppf(0.5 + p / 2)`` (bitwise, with :func:`ndtri`). The one place of this
    quantile: the calibration curve's thresholds, the Gaussian container's intervals, the interval score's
    profile, std-scaling, isotonic recalibration, the SPCE interval and the verdict's intervals call it."""
    return ndtri(0.5 + np.asarray(level, dtype=np.float64) / 2.0)
