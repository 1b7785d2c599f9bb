"""uqeval.metrics.normal: the Cephes normal CDF/quantile and error functions in numpy.

Checked two ways: against SciPy's own evaluation of the same algorithms (``scipy.special``, a
dependency, so no frozen values are needed) to a few units in the last place, and against values of
the exact functions computed by mpmath 1.3.0 at 40 significant digits (frozen below).
"""

import numpy as np
import pytest
import scipy.special as sc

from uqeval.metrics import normal

RNG = np.random.default_rng(20261125)


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in units of the last place of ``want``; 0 where both are NaN or equal (infinities included)."""
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    with np.errstate(invalid="ignore"):
        dist = np.abs(got - want) / np.spacing(np.abs(want))
    return np.where(same, 0.0, dist)


SPECIAL_X = np.array(
    [
        0.0,
        -0.0,
        1.0,
        -1.0,
        np.sqrt(2),
        -np.sqrt(2),
        8.0,
        -8.0,
        8 * np.sqrt(2),
        -8 * np.sqrt(2),
        26.6,
        -26.6,
        37.5,
        -37.5,
        38.5,
        -38.5,
        1e300,
        -1e300,
        1e-300,
        -1e-300,
        5e-324,
        np.inf,
        -np.inf,
        np.nan,
    ]
)
EXACT_X = np.array([0.0, -0.0, 1e-300, -1e-300, 5e-324, 38.5, -38.5, 1e300, -1e300, np.inf, -np.inf, np.nan])
EXACT_P = np.array([0.0, -0.0, 1.0, 0.5, -1e-300, -0.5, 1.5, np.inf, -np.inf, np.nan])
X = np.concatenate(
    [
        RNG.normal(0, 1, 200_000),
        RNG.normal(0, 6, 200_000),
        RNG.uniform(-45, 45, 200_000),
        np.nextafter(1.0, [0.0, 2.0]),
        np.nextafter(-1.0, [0.0, -2.0]),
        SPECIAL_X,
    ]
)
P = np.concatenate(
    [
        RNG.uniform(0, 1, 200_000),
        10.0 ** RNG.uniform(-320, 0, 200_000),
        1.0 - 10.0 ** RNG.uniform(-16, 0, 50_000),
        [
            0.0,
            1.0,
            0.5,
            np.exp(-2),
            1 - np.exp(-2),
            np.exp(-32),
            5e-324,
            np.nextafter(1.0, 0.0),
            -0.0,
            -1e-300,
            -0.5,
            1.5,
            np.inf,
            -np.inf,
            np.nan,
        ],
    ]
)


@pytest.mark.parametrize("name, x", [("ndtr", X), ("erf", X), ("erfc", X), ("ndtri", P)])
def test_agrees_with_scipy_special_to_a_few_ulps(name, x):
    got, want = getattr(normal, name)(x), getattr(sc, name)(x)
    ulps = _ulps(got, want)
    # the same Cephes rational approximations in the same order; numpy's SIMD exp/log may round
    # differently from the C library's by one ulp, which moves the result by a few ulps at most
    assert ulps.max() <= 8, (name, x[np.argmax(ulps)], got[np.argmax(ulps)], want[np.argmax(ulps)])
    assert np.mean(ulps == 0) > 0.95
    # special values (zeros, infinities, NaN, underflow, the domain of ndtri) exactly as SciPy's
    specials = EXACT_X if name != "ndtri" else EXACT_P
    np.testing.assert_array_equal(getattr(normal, name)(specials), getattr(sc, name)(specials))


# mpmath 1.3.0, mp.dps = 40, at the exact binary value of each double argument: ncdf, erf, erfc,
# sqrt(2) erfinv(2p - 1)
MPMATH = {
    "ndtr": [
        (-37.5, 4.6053530095819548438e-308),
        (-20.0, 2.7536241186062336951e-89),
        (-8.5, 9.4795348222033183542e-18),
        (-3.0, 0.0013498980316300945267),
        (-1.4142, 0.078651593994225533008),
        (-0.5, 0.30853753872598689636),
        (1e-10, 0.50000000003989422804),
        (0.5, 0.69146246127401310364),
        (1.4143, 0.92136308151583109198),
        (3.0, 0.99865010196836990547),
        (8.5, 0.99999999999999999052),
    ],
    "ndtri": [
        (1e-20, -9.2623400897984075796),
        (1e-5, -4.2648907939228246102),
        (0.01, -2.3263478740408410931),
        (0.13, -1.1263911290388005682),
        (0.3, -0.52440051270804081597),
        (0.75, 0.6744897501960817432),
        (0.9, 1.2815515655446005935),
        (0.99999, 4.2648907939238407699),
    ],
    "erf": [
        (-5.0, -0.99999999999846254021),
        (-1.0, -0.84270079294971486934),
        (-0.3, -0.32862675945912741619),
        (0.3, 0.32862675945912741619),
        (1.0, 0.84270079294971486934),
        (2.5, 0.99959304798255504106),
    ],
    "erfc": [
        (-5.0, 1.9999999999984625402),
        (-1.0, 1.8427007929497148693),
        (-0.3, 1.3286267594591274162),
        (0.3, 0.67137324054087258381),
        (1.0, 0.15729920705028513066),
        (2.5, 0.00040695201744495893956),
        (5.0, 1.5374597944280348502e-12),
        (10.0, 2.088487583762544757e-45),
        (26.0, 5.6631924088561428465e-296),
    ],
}


@pytest.mark.parametrize("name", sorted(MPMATH))
def test_matches_the_exact_function(name):
    x, want = np.array(MPMATH[name]).T
    # Cephes evaluates exp(-x^2) at a rounded x (for ndtr at a / sqrt 2): a relative error of about
    # 2 x^2 eps, which SciPy shares (5e-14 at ndtr(-20)); elsewhere a few eps
    eps = np.finfo(float).eps
    rtol = 4 * eps + (x * x * eps if name == "ndtr" else 2 * x * x * eps if name == "erfc" else 0.0)
    got = getattr(normal, name)(x)
    assert np.all(np.abs(got - want) <= rtol * np.abs(want)), (x, (got - want) / want)


def test_shapes_and_scalars_as_a_ufunc():
    assert isinstance(normal.ndtr(0.3), np.float64) and normal.ndtr(0.3) == sc.ndtr(0.3)
    grid = RNG.normal(size=(3, 4))
    assert normal.ndtr(grid).shape == (3, 4) and normal.ndtri(np.full((2, 0), 0.5)).shape == (2, 0)
    np.testing.assert_array_equal(normal.ndtr(grid), normal.ndtr(grid.ravel()).reshape(3, 4))
    big = RNG.normal(size=50_000)  # more than one block of elements: the same values as element by element
    np.testing.assert_array_equal(
        normal.ndtr(big), np.concatenate([normal.ndtr(big[i : i + 7]) for i in range(0, 50_000, 7)])
    )
    x = np.array([0.5, -2.0])
    normal.ndtr(x)
    np.testing.assert_array_equal(x, [0.5, -2.0])  # the input is not modified


def test_identities():
    x = RNG.uniform(-6, 6, 10_000)
    np.testing.assert_allclose(normal.erf(x) + normal.erfc(x), 1.0, rtol=0, atol=4e-16)
    np.testing.assert_allclose(normal.ndtr(x) + normal.ndtr(-x), 1.0, rtol=0, atol=4e-16)
    np.testing.assert_allclose(normal.ndtri(normal.ndtr(x)), x, rtol=0, atol=2e-9 * np.exp(x * x / 2).max())
    np.testing.assert_array_equal(normal.erf(-x), -normal.erf(x))


def test_norm_pdf_is_scipys_density_and_the_crps_derivative():
    """norm_pdf equals scipy.stats.norm.pdf (1e-15; 0 without a warning where x^2 overflows), and
    scoring._crps_z_dsd, built on it, is the derivative of the Gaussian CRPS in sigma at a fixed error
    (central differences of scoring._crps_z, 1e-7)."""
    import warnings

    from scipy import stats

    from uqeval.metrics.normal import norm_pdf
    from uqeval.metrics.scoring import _crps_z, _crps_z_dsd

    x = np.linspace(-38.0, 38.0, 2001)
    np.testing.assert_allclose(norm_pdf(x), stats.norm.pdf(x), rtol=1e-14, atol=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert norm_pdf(np.array([1e200, -1e200])).tolist() == [0.0, 0.0]
    eps, sd, h = np.array([-2.0, -0.3, 0.0, 0.7, 3.0]), 1.3, 1e-6
    numeric = (_crps_z(eps / (sd + h), sd + h) - _crps_z(eps / (sd - h), sd - h)) / (2.0 * h)
    np.testing.assert_allclose(_crps_z_dsd(eps / sd), numeric, rtol=1e-7, atol=1e-9)


def test_central_z_is_the_toolbox_threshold():
    """central_z (every central interval's half-width in sigmas: calibration thresholds, Gaussian intervals,
    std-scaling, isotonic, SPCE, the verdict) is scipy's norm.ppf(0.5 + p / 2) bitwise on the toolbox grid, the
    same as norm.ppf((1 + p) / 2), 1.959963984540054 at 0.95, 0 at 0 and inf at 1, and takes scalars."""
    from scipy import stats

    from uqeval.metrics.normal import central_z

    p = np.linspace(0.0, 1.0, 100)
    assert np.array_equal(central_z(p), stats.norm.ppf(0.5 + p / 2.0))
    assert np.array_equal(central_z(p), stats.norm.ppf((1.0 + p) / 2.0))
    assert float(central_z(0.95)) == pytest.approx(1.959963984540054, rel=1e-15)
    assert float(central_z(0.0)) == 0.0 and float(central_z(1.0)) == np.inf
