"""Regenerate the reference values frozen in tests/metrics/test_classification.py.

Reference libraries (not installed in CI; the tests only hold the printed numbers):

* Google Uncertainty Metrics 0.0.81 (``pip install "pip<24.1"; pip install
  uncertainty-metrics``), module ``uncertainty_metrics.numpy.general_calibration_error``
  (numpy only, no TensorFlow needed);
* scikit-learn 1.9.1 ``sklearn.metrics.log_loss``.

Run in a venv holding them, from the repository root::

    /work/venvs/um/bin/python tests/reference/regen_uncertainty_metrics.py

and paste the printed ``UM_REFERENCE`` / ``SKLEARN_LOG_LOSS`` literals into the test.

rmsce: release 0.0.81 squares the bin weights in its L2 error
(``sum((w_b * gap_b) ** 2)``); the library's current source (GitHub) weights the
squared gap, ``sum(w_b * gap_b ** 2)``, which is what uqeval implements. The
corrected value is computed here from the release's own per-bin accuracies and
confidences (``GeneralCalibrationError`` with the rmsce binning and the L1 norm)
and the bin counts of its own ``get_adaptive_bins`` + ``np.digitize``; the
release's buggy value is printed as a comment for the record. ``mce`` (not in the
library) is the largest per-bin gap of the library's ECE binning.

The datasets are built by :func:`make_datasets`, which the tests import; it
uses numpy only (reference libraries are imported inside :func:`main`).
"""

from __future__ import annotations

import importlib

import numpy as np

NUM_BINS = 15
TACE_THRESHOLD = 0.01


def make_datasets() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Seeded datasets: name -> (proba (N, K) or (N,) P(class 1), labels (N,))."""
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    # multiclass: N = 1000, K = 5, over-confident logits (labels drawn at temperature 1.7)
    rng = np.random.default_rng(20240601)
    z = rng.standard_normal((1000, 5)) * 2.0 + np.array([0.5, 0.0, -0.3, 0.2, -0.6])
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    zt = z / 1.7
    pt = np.exp(zt - zt.max(axis=1, keepdims=True))
    pt /= pt.sum(axis=1, keepdims=True)
    u = rng.random(1000)
    y = np.minimum((u[:, None] > np.cumsum(pt, axis=1)).sum(axis=1), 4)
    out["multiclass"] = (p, y.astype(np.int64))

    # binary: N = 1000, a single P(class 1) column, labels drawn at temperature 1.3
    rng = np.random.default_rng(20240602)
    z = rng.standard_normal(1000) * 2.5 + 0.4
    p1 = 1.0 / (1.0 + np.exp(-z))
    y = (rng.random(1000) < 1.0 / (1.0 + np.exp(-z / 1.3))).astype(np.int64)
    out["binary"] = (p1, y)

    # quantised: N = 600, K = 3, probabilities on a 1/20 grid: ties, exact 0 and exact 1.0
    rng = np.random.default_rng(20240603)
    a = rng.integers(0, 21, 600)
    b = np.floor(rng.random(600) * (21 - a)).astype(np.int64)
    c = 20 - a - b
    p = np.stack([a, b, c], axis=1) / 20.0
    y = rng.integers(0, 3, 600)
    out["quantised"] = (p, y.astype(np.int64))
    return out


def _two_class(p: np.ndarray) -> np.ndarray:
    return np.column_stack([1.0 - p, p]) if p.ndim == 1 else p


def main() -> None:
    import sklearn
    from sklearn.metrics import log_loss
    from uncertainty_metrics.version import __version__ as um_version

    # import the module itself: when matplotlib is installed the package namespace
    # re-exports a *function* called general_calibration_error
    gce_mod = importlib.import_module("uncertainty_metrics.numpy.general_calibration_error")

    GCE = gce_mod.GeneralCalibrationError

    def top_bins(probs, labels, scheme):
        """Per-bin (counts, accuracies, confidences) of the library's top-label binning."""
        metric = GCE(
            binning_scheme=scheme, max_prob=True, class_conditional=False, norm="l1", num_bins=NUM_BINS
        )
        metric.update_state(labels, probs)
        p2 = _two_class(probs)
        conf = p2.max(axis=1)
        if scheme == "even":
            upper = np.histogram_bin_edges([], bins=NUM_BINS, range=(0.0, 1.0))[1:]
        else:
            upper = gce_mod.get_adaptive_bins(conf, NUM_BINS)
        counts = np.bincount(np.digitize(conf, upper), minlength=NUM_BINS)
        w = counts / conf.size
        # consistency with the library's own L1 value
        assert abs(np.sum(w * np.abs(metric.accuracies - metric.confidences)) - metric.result()) < 1e-12
        return counts, metric.accuracies, metric.confidences, metric.result()

    print(
        f"# Uncertainty Metrics {um_version} (numpy general_calibration_error), "
        f"scikit-learn {sklearn.__version__}, numpy {np.__version__}"
    )
    print(f"# num_bins={NUM_BINS}, tace threshold={TACE_THRESHOLD}")
    ref: dict[str, dict] = {}
    ll: dict[str, float] = {}
    for name, (probs, labels) in make_datasets().items():
        r: dict = {}
        r["ece"] = float(gce_mod.ece(labels, probs, num_bins=NUM_BINS))
        r["sce"] = float(gce_mod.sce(labels, probs, num_bins=NUM_BINS))
        r["ace"] = float(gce_mod.ace(labels, probs, num_bins=NUM_BINS))
        r["tace"] = float(gce_mod.tace(labels, probs, num_bins=NUM_BINS, threshold=TACE_THRESHOLD))
        counts, acc, conf, l1 = top_bins(probs, labels, "adaptive")
        r["rmsce"] = float(np.sqrt(np.sum(counts / counts.sum() * (acc - conf) ** 2)))
        buggy = gce_mod.gce(
            labels,
            probs,
            binning_scheme="adaptive",
            max_prob=True,
            class_conditional=False,
            norm="l2",
            num_bins=NUM_BINS,
        )
        print(
            f"# {name}: release 0.0.81 rmsce (squared weights) = {float(buggy)!r}; corrected = {r['rmsce']!r}"
        )
        counts, acc, conf, l1 = top_bins(probs, labels, "even")
        assert abs(l1 - r["ece"]) < 1e-15
        r["mce"] = float(np.max(np.abs(acc - conf)[counts > 0]))
        if name == "quantised":  # per-bin data incl. the degenerate p = 1.0 bin
            r["bin_counts"] = counts.tolist()
            r["bin_accuracy"] = [float(v) for v in acc]
            r["bin_confidence"] = [float(v) for v in conf]
        ref[name] = r
        p2 = _two_class(probs)
        ll[name] = float(log_loss(labels, p2, labels=list(range(p2.shape[1]))))
    print("UM_REFERENCE = {")
    for name, r in ref.items():
        print(f"    {name!r}: {{")
        for key, val in r.items():
            print(f"        {key!r}: {val!r},")
        print("    },")
    print("}")
    print("SKLEARN_LOG_LOSS = {")
    for name, v in ll.items():
        print(f"    {name!r}: {v!r},")
    print("}")


if __name__ == "__main__":
    main()
