"""Regression plots: valid images, exact reductions of large inputs, validation, no pyplot."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from matplotlib.figure import Figure
from scipy import integrate

from uqeval.config import Settings
from uqeval.errors import InputError, UsageError
from uqeval.metrics.calibration import calibration_errors
from uqeval.metrics.reliability import max_calibration_error_at
from uqeval.plots.common import (
    band_downsample,
    envelope_downsample,
    figure_to_bytes,
    step_vertices,
    subsample_indices,
)
from uqeval.plots.kinds import build_figures
from uqeval.plots.regression import (
    plot_adversarial,
    plot_calibration_curve,
    plot_intervals_ordered,
    plot_pit_histogram,
    plot_predictions_band,
    plot_reliability_diagram,
    plot_residuals_vs_std,
    plot_sharpness,
)
from uqeval.predictions import Gaussian

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
Z95 = 1.959963984540054


def gaussian_data(n: int = 400, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-10, 10, n)
    mean = np.sin(x / 2) + x * np.cos(0.8 * x)
    std = 0.2 + np.abs(x) / 10
    y = mean + rng.normal(size=n) * std * 1.2
    return x, y, mean, std


ADV = {
    "group_sizes": list(np.linspace(0.01, 1, 10)),
    "ma_mean": [0.30, 0.2, 0.15, 0.12, 0.1, 0.09, 0.08, 0.07, 0.065, 0.06],
    "ma_stderr": [0.02] * 10,
}


def assert_png(fig: Figure) -> bytes:
    assert isinstance(fig, Figure)
    data = figure_to_bytes(fig, dpi=72)  # low dpi keeps the suite fast
    assert data[:8] == PNG_SIGNATURE
    assert len(data) > 8_000  # a real picture, not an empty canvas
    return data


# ----------------------------------------------------------------------------- each plot
def test_every_plot_function_gives_a_png():
    x, y, mu, sd = gaussian_data()
    lo, hi = mu - Z95 * sd, mu + Z95 * sd
    pit = np.clip((y - mu) / sd / 6 + 0.5, 0, 1)
    expected = np.linspace(0, 1, 100)
    observed = expected**1.3
    figs = [
        plot_predictions_band(y, mu, lo, hi, x=x, title="band: a.csv", x_label="x"),
        plot_predictions_band(y, mu, lo, hi, title="band by index: a.csv"),
        plot_intervals_ordered(y, mu, lo, hi, order_by="target", title="ordered: a.csv"),
        plot_intervals_ordered(y, mu, lo, hi, order_by="prediction", title="ordered: a.csv"),
        plot_calibration_curve(expected, observed, 0.05, title="calibration: a.csv"),
        plot_adversarial(ADV["group_sizes"], ADV["ma_mean"], ADV["ma_stderr"], title="adv: a.csv"),
        plot_sharpness(sd, title="sharpness: a.csv"),
        plot_residuals_vs_std(y, mu, sd, title="residuals: a.csv"),
        plot_reliability_diagram(pit, 0.1, title="reliability: a.csv"),
        plot_pit_histogram(pit, title="pit: a.csv"),
        plot_pit_histogram(counts=[5, 9, 12, 7], title="pit counts: a.csv"),
    ]
    for fig in figs:
        assert_png(fig)
        ax = fig.axes[0]
        assert ax.get_title().endswith("a.csv")
        assert ax.get_xlabel() and ax.get_ylabel()


def test_axis_labels_carry_units_of_y():
    x, y, mu, sd = gaussian_data(100)
    fig = plot_predictions_band(y, mu, mu - sd, mu + sd)
    assert "units of y" in fig.axes[0].get_ylabel()
    fig = plot_sharpness(sd)
    assert "units of y" in fig.axes[0].get_xlabel()


@pytest.mark.parametrize("fmt,magic", [("png", PNG_SIGNATURE), ("svg", b"<?xml"), ("pdf", b"%PDF")])
def test_figure_to_bytes_formats(fmt, magic):
    _, _, _, sd = gaussian_data(50)
    data = figure_to_bytes(plot_sharpness(sd), fmt=fmt)
    assert data.startswith(magic)


def test_figure_to_bytes_is_deterministic_and_rejects_unknown_format():
    _, _, _, sd = gaussian_data(50)
    fig = plot_sharpness(sd)
    assert figure_to_bytes(fig, dpi=50) == figure_to_bytes(fig, dpi=50)
    a, b = figure_to_bytes(plot_sharpness(sd), "svg"), figure_to_bytes(plot_sharpness(sd), "svg")
    assert a == b
    with pytest.raises(UsageError, match="png, svg, pdf"):
        figure_to_bytes(fig, fmt="gif")


@pytest.mark.parametrize(
    "kind", ["predictions", "intervals", "calibration", "sharpness", "pit", "reliability"]
)
def test_png_is_the_picture_savefig_draws_drawn_once(kind):
    # figure_to_bytes runs the layout engine alone and draws once (savefig draws twice): same pixels
    import io

    from PIL import Image

    x, y, mu, sd = gaussian_data(3000)
    pit = np.clip((y - mu) / (3 * sd) + 0.5, 0, 1)
    make = {
        "predictions": lambda: plot_predictions_band(
            y, mu, mu - 2 * sd, mu + 2 * sd, x=x, title="band: a.csv"
        ),
        "intervals": lambda: plot_intervals_ordered(y, mu, mu - 2 * sd, mu + 2 * sd, max_points=500),
        "calibration": lambda: plot_calibration_curve(np.linspace(0, 1, 11), np.linspace(0, 1, 11) ** 1.2),
        "sharpness": lambda: plot_sharpness(sd),
        "pit": lambda: plot_pit_histogram(pit),
        "reliability": lambda: plot_reliability_diagram(pit),
    }[kind]
    ref = make()
    ref.savefig(buf := io.BytesIO(), format="png", dpi=60, facecolor="white")
    fig = make()
    engine = fig.get_layout_engine()
    draws = []
    draw = fig.draw
    fig.draw = lambda renderer: (draws.append(1), draw(renderer))[1]
    data = figure_to_bytes(fig, dpi=60)
    assert len(draws) == 1
    assert fig.get_layout_engine() is engine and fig.dpi == 100  # restored
    ours, theirs = (np.asarray(Image.open(io.BytesIO(b)).convert("RGBA")) for b in (data, buf.getvalue()))
    assert Image.open(io.BytesIO(data)).mode == "RGB"  # every pixel is opaque: no alpha channel
    assert ours.shape == theirs.shape and np.array_equal(ours, theirs)


def test_binomial_band_equals_scipy_binom_ppf():
    from scipy.stats import binom

    from uqeval.plots.common import binomial_band

    n = np.array([1, 7, 100, 12345, 1_000_000, 3_000_017], dtype=float)[:, None]
    p = np.array([1e-4, 0.01, 1 / 11, 0.1, 0.5, 0.9, 0.999])[None, :]
    for level in (0.5, 0.9, 0.95, 0.99):
        lo, hi = binomial_band(n, p, level)
        assert np.array_equal(lo, binom.ppf((1 - level) / 2, n, p))
        assert np.array_equal(hi, binom.ppf(1 - (1 - level) / 2, n, p))
        assert np.all(lo <= hi)


def test_dpi_changes_pixel_size():
    _, _, _, sd = gaussian_data(50)
    fig = plot_sharpness(sd)
    small, big = figure_to_bytes(fig, dpi=30), figure_to_bytes(fig, dpi=90)
    width = lambda png: int.from_bytes(png[16:20], "big")  # noqa: E731  (IHDR width)
    assert width(big) == 3 * width(small)


# ----------------------------------------------------------------------------- what the glue passes
def test_calibration_curve_from_pit_matches_interval_definition():
    # The curve drawn is the one avg_calibration summarises:
    # share of rows with |y - mu| / sd <= Phi^-1(1/2 + p/2).
    from scipy.stats import norm

    _, y, mu, sd = gaussian_data(300)
    pred = Gaussian(y_true=y, mean=mu, std=sd)
    fig = build_figures(pred, None, Settings(num_bins=11), kinds=["calibration"]).figures["calibration"]
    line = [ln for ln in fig.axes[0].get_lines() if ln.get_label() == "observed"][0]
    p = np.linspace(0, 1, 11)
    z = np.abs(y - mu) / sd
    with np.errstate(divide="ignore"):
        expect = [(z <= norm.ppf(0.5 + q / 2)).mean() for q in p]
    np.testing.assert_allclose(line.get_xdata(), p)
    np.testing.assert_allclose(line.get_ydata(), expect)


# ----------------------------------------------------------------------------- validation
def test_validation_errors_name_the_argument():
    _, y, mu, sd = gaussian_data(20)
    with pytest.raises(InputError, match="inconsistent numbers of rows"):
        plot_residuals_vs_std(y, mu[:-1], sd)
    bad = sd.copy()
    bad[3] = 0.0
    with pytest.raises(InputError, match="std must be > 0"):
        plot_sharpness(bad)
    nan = y.copy()
    nan[5] = np.nan
    with pytest.raises(InputError, match="y_true must be finite"):
        plot_residuals_vs_std(nan, mu, sd)
    with pytest.raises(InputError, match=r"pit must lie in \[0, 1\].*row 2"):
        plot_reliability_diagram([0.1, 0.5, 1.5])
    with pytest.raises(InputError, match="lower must be <= upper.*row 0"):
        plot_predictions_band(y, mu, mu + 1, mu - 1)
    with pytest.raises(InputError, match="order_by"):
        plot_intervals_ordered(y, mu, mu - 1, mu + 1, order_by="x")
    with pytest.raises(InputError, match="exactly one of pit"):
        plot_pit_histogram()
    with pytest.raises(InputError, match="observed must lie"):
        plot_calibration_curve([0, 0.5, 1], [0, 50, 100])
    with pytest.raises(InputError, match="no rows"):
        plot_pit_histogram([])


# ----------------------------------------------------------------------------- reductions
def test_subsample_indices():
    assert np.array_equal(subsample_indices(10, 100), np.arange(10))
    a = subsample_indices(100_000, 500, seed=3)
    assert np.array_equal(a, subsample_indices(100_000, 500, seed=3))
    assert not np.array_equal(a, subsample_indices(100_000, 500, seed=4))
    assert a.size == 500 and np.unique(a).size == 500
    assert np.all(np.diff(a) > 0) and a[0] >= 0 and a[-1] < 100_000
    with pytest.raises(InputError):
        subsample_indices(10, 0)


def test_envelope_downsample_keeps_each_bins_extremes():
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(0, 1, 50_000))
    y = np.sin(20 * x) + rng.normal(size=x.size)
    xs, ys = envelope_downsample(x, y, n_bins=100)
    assert xs.size <= 400
    assert np.all(np.diff(xs) >= 0)
    # brute force: per equal-width bin, min and max of y appear among the vertices
    edges = np.linspace(x[0], x[-1], 101)
    b = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, 99)
    for k in range(0, 100, 7):
        inbin = (xs >= x[b == k][0]) & (xs <= x[b == k][-1])
        assert ys[inbin].max() == y[b == k].max()
        assert ys[inbin].min() == y[b == k].min()
    assert ys[0] == y[0] and ys[-1] == y[-1]
    # small inputs pass through untouched
    xs2, ys2 = envelope_downsample(x[:100], y[:100], n_bins=100)
    assert np.array_equal(xs2, x[:100]) and np.array_equal(ys2, y[:100])


def test_band_downsample_covers_every_row():
    rng = np.random.default_rng(1)
    x = np.sort(rng.uniform(0, 10, 30_000))
    lo = -1 - rng.uniform(size=x.size)
    hi = 1 + rng.uniform(size=x.size)
    bx, blo, bhi = band_downsample(x, lo, hi, n_bins=50)
    assert bx.size <= 100
    # every row's band lies inside the drawn band of the segment that spans its x
    seg = np.searchsorted(bx[1::2], x, side="left")  # segment k spans bx[2k]..bx[2k+1]
    assert np.all(lo >= blo[2 * seg]) and np.all(hi <= bhi[2 * seg])
    assert blo.min() == lo.min() and bhi.max() == hi.max()


def test_step_vertices_keeps_requested_indices():
    idx = step_vertices(1_000_000, 2000, keep=(123_457, 999_999))
    assert 123_457 in idx and 0 in idx and 999_999 in idx
    assert idx.size <= 2002
    assert np.array_equal(step_vertices(10, 2000), np.arange(10))


def _brute_max_deviation(u):
    """sup_phi |C(phi) - phi| from counts at every data point (right limit and left limit)."""
    u = np.asarray(u)
    best = 0.0
    for phi in np.unique(u):
        right = np.sum(u <= phi) / u.size
        left = np.sum(u < phi) / u.size
        best = max(best, abs(right - phi), abs(left - phi))
    return best


@pytest.mark.parametrize("seed", range(5))
def test_max_calibration_error_at_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    u = rng.beta(0.7 + seed / 5, 1.2, size=200)
    if seed % 2:
        u = np.round(u, 2)  # ties
    value, phi, c = max_calibration_error_at(u)
    assert value == pytest.approx(_brute_max_deviation(u), abs=1e-15)
    assert abs(c - phi) == pytest.approx(value, abs=1e-15)


def test_max_calibration_error_at_hand_case():
    # u = (0.5, 0.5): C jumps 0 -> 1 at 0.5; the gap is 0.5 either side of the jump.
    value, phi, _ = max_calibration_error_at([0.5, 0.5])
    assert value == 0.5 and phi == 0.5
    # u = (0.9,): C(0.9-) = 0 is 0.9 below the diagonal.
    assert max_calibration_error_at([0.9])[:2] == (0.9, 0.9)


def test_reliability_diagram_is_thinned_but_marks_the_exact_maximum():
    rng = np.random.default_rng(7)
    pit = rng.beta(1.3, 1.0, size=300_000)
    value, phi, c = max_calibration_error_at(pit)
    fig = plot_reliability_diagram(pit)
    lines = {ln.get_label(): ln for ln in fig.axes[0].get_lines()}
    ecdf = lines["empirical CDF of PIT"]
    xs, ys = np.asarray(ecdf.get_xdata()), np.asarray(ecdf.get_ydata())
    assert xs.size <= 2010
    assert np.any((xs == phi) & (ys == c)) or np.any((xs[:-1] <= phi) & (xs[1:] >= phi) & (ys[:-1] == c))
    marker = [ln for label, ln in lines.items() if label.startswith("max |C")][0]
    assert list(marker.get_xdata()) == [phi, phi]
    assert list(marker.get_ydata()) == [phi, c]
    assert f"{value:.4f}" in marker.get_label()


def test_large_inputs_draw_few_vertices_and_max_points_scatter():
    n = 200_000
    x, y, mu, sd = gaussian_data(n)
    fig = plot_predictions_band(y, mu, mu - sd, mu + sd, x=x, max_points=3000)
    ax = fig.axes[0]
    assert sum(len(ln.get_xdata()) for ln in ax.get_lines()) <= 4000
    assert ax.collections[-1].get_offsets().shape[0] == 3000  # the observations
    fig = plot_residuals_vs_std(y, mu, sd, max_points=2500)
    assert fig.axes[0].collections[-1].get_offsets().shape[0] == 2500
    fig = plot_intervals_ordered(y, mu, mu - sd, mu + sd, max_points=1000)
    assert fig.axes[0].collections[0].get_segments().__len__() == 1000


def test_scatter_subsample_is_seeded():
    x, y, mu, sd = gaussian_data(20_000)

    def off(seed):
        fig = plot_residuals_vs_std(y, mu, sd, max_points=500, seed=seed)
        return fig.axes[0].collections[-1].get_offsets()

    assert np.array_equal(off(1), off(1))
    assert not np.array_equal(off(1), off(2))


# ----------------------------------------------------------------------------- calibration area
def test_miscalibration_area_hand_cases_and_quadrature():
    p = np.linspace(0, 1, 11)
    area = lambda e, o: calibration_errors(e, o)["miscal_area"]  # noqa: E731  (what the plot annotates)
    assert area(p, p) == 0.0
    assert area([0, 1], [1, 1]) == pytest.approx(0.5)
    # a segment crossing the diagonal: d goes from +0.2 to -0.2 -> two triangles of 0.05
    assert area([0, 1], [0.2, 0.8]) == pytest.approx(0.1)
    rng = np.random.default_rng(0)
    q = np.clip(p + rng.normal(scale=0.1, size=p.size), 0, 1)
    f = lambda t: abs(np.interp(t, p, q) - t)  # noqa: E731
    ref, _ = integrate.quad(f, 0, 1, points=list(p), limit=200, epsabs=1e-13)
    assert area(p, q) == pytest.approx(ref, abs=1e-10)


def test_calibration_plot_annotates_given_or_computed_area():
    p = np.linspace(0, 1, 5)
    fig = plot_calibration_curve(p, p**2, 0.1234)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert any("0.1234" in t for t in texts)
    fig = plot_calibration_curve(p, p**2)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert any(f"{calibration_errors(p, p**2)['miscal_area']:.4f}" in t for t in texts)


def test_pit_histogram_band_is_binomial():
    from scipy.stats import binom

    fig = plot_pit_histogram(counts=[10, 30, 20, 40])
    n, p = 100, 0.25
    lo, hi = binom.ppf(0.025, n, p), binom.ppf(0.975, n, p)
    band = [pa for pa in fig.axes[0].patches if pa.get_label().startswith("95% band")][0]
    ys = band.get_path().vertices[:, 1]
    assert ys.min() == pytest.approx(lo) and ys.max() == pytest.approx(hi)


def test_sharpness_marks_mean_and_rms():
    sd = np.array([1.0, 1.0, 3.0, 3.0])
    fig = plot_sharpness(sd)
    labels = [ln.get_label() for ln in fig.axes[0].get_lines()]
    assert "mean σ = 2" in labels
    assert f"RMS σ (sharpness) = {np.sqrt(5):.4g}" in labels


# ----------------------------------------------------------------------------- no pyplot
def test_plots_never_import_pyplot():
    code = textwrap.dedent(
        """
        import sys, numpy as np
        from uqeval.config import Settings
        from uqeval.predictions import Gaussian
        from uqeval.plots.kinds import build_figures
        from uqeval.plots.common import figure_to_bytes
        rng = np.random.default_rng(0)
        pred = Gaussian(y_true=rng.normal(size=300), mean=np.zeros(300), std=np.ones(300))
        for f in build_figures(pred, None, Settings(), kinds=["pit", "residuals"]).figures.values():
            figure_to_bytes(f, dpi=50)
        assert "matplotlib.pyplot" not in sys.modules, "pyplot was imported"
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=".")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
