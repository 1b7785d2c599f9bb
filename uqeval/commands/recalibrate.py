r"""Glue of ``uqeval recalibrate``: fit a recalibrator on one file, apply it to another,
score both before and after, and build the output table.

The kernels (:mod:`.std_scaling`, :mod:`.isotonic`, :mod:`.conformal`, :mod:`.accrue`,
:mod:`.temperature`) stay pure; this module connects them to loaded files
(:func:`uqeval.io.load.load_predictions`) and to the metric catalogue. It never prints;
it reads files but never writes them: the CLI writes the table with :func:`uqeval.io.writers.write_table`
after everything else has succeeded, so a failed run writes nothing.

What each method needs and produces
-----------------------------------
============  =====================  ==========================================  =========================
method        input                  output columns (added or replaced)           before / after groups
============  =====================  ==========================================  =========================
std-scaling   mean + std             the std column (a variance column stays a    avg_calibration,
                                     variance)                                    reliability, scoring_rule,
                                                                                  coverage
isotonic      mean + std             ``lower_{c}``/``upper_{c}`` per central      the same (after: from the
                                     level, or ``q_{t}`` with ``quantiles``;      recalibrated cdf, see
                                     ``std_{c}`` (equivalent std) if asked        :func:`isotonic_metrics`)
conformal     mean (+ std)           ``lower_{c}``/``upper_{c}``                  coverage, scoring_rule
                                                                                  (interval scores)
accrue        mean (+ features)      ``std`` (replaced if the file had one)       as std-scaling
temperature   class probabilities    the probability columns (``p_k`` added for  accuracy, calibration
              or logits              logit inputs)
============  =====================  ==========================================  =========================

"Before" is the input forecast. Point predictions have no spread: for ``accrue`` the
before column then scores the CRPS-optimal constant σ of the fitted state (the
``constant`` baseline, named in ``before_basis``); for ``conformal`` there is nothing
to score before.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np

from ..config import Settings
from ..errors import InputError, SchemaError, UsageError, naming, option
from ..io.columns import ALIASES, LOGIT_RE, _find, match_column, plan_columns
from ..io.load import Loaded, evaluated_rows, load_predictions
from ..io.readers import inspect, to_float
from ..metrics.blocks import rowwise
from ..metrics.intervals import bound_levels, central_pairs, coverage_from_bounds, coverage_metrics, level_key
from ..predictions import Categorical, Gaussian, Intervals, Point, Prediction
from ..validation import finite_difference

SCHEMA = "uqeval.recalibrate/1"

P = TypeVar("P", bound=Prediction)

#: CLI method name -> ``state["method"]`` of its kernel.
METHODS: dict[str, str] = {
    "std-scaling": "std_scaling",
    "isotonic": "isotonic",
    "conformal": "conformal",
    "accrue": "accrue",
    "temperature": "temperature",
}
_CLI_NAME = {v: k for k, v in METHODS.items()}

#: Central levels of the interval outputs and of the coverage group when --levels is not given.
DEFAULT_LEVELS: tuple[float, ...] = (0.5, 0.9, 0.95)
#: Quantile levels of isotonic ``quantiles`` outputs when --levels is not given.
DEFAULT_QUANTILE_LEVELS: tuple[float, ...] = (0.05, 0.25, 0.5, 0.75, 0.95)

REGRESSION_GROUPS: tuple[str, ...] = ("avg_calibration", "reliability", "scoring_rule", "coverage")
INTERVAL_GROUPS: tuple[str, ...] = ("coverage", "scoring_rule")
CLASSIFICATION_GROUPS: tuple[str, ...] = ("accuracy", "calibration")


@dataclass(frozen=True)
class Options:
    """Fit and apply options of one run (CLI flags with their defaults resolved).

    ``levels``: central coverage levels (isotonic intervals, conformal, coverage group),
    or quantile levels when ``quantiles`` is True (isotonic only); None means the
    method's default. ``features``: ACCRUE input columns (None: those stored in a loaded
    state).
    """

    method: str
    criterion: str = "ma_cal"
    model: str = "mlp"
    clusters: int = 5
    seed: int = 0
    features: tuple[str, ...] | None = None
    levels: tuple[float, ...] | None = None
    quantiles: bool = False
    equivalent_std: bool = False


@dataclass
class Applied:
    """A recalibrated forecast of one file: its new columns and what the metrics need."""

    columns: dict[str, np.ndarray] = field(default_factory=dict)  # output name -> (N,) or (N, K) list column
    std: np.ndarray | None = None  # Gaussian after (std-scaling, accrue)
    lower: np.ndarray | None = None  # (N, L) central intervals after (isotonic, conformal)
    upper: np.ndarray | None = None
    levels: list[float] = field(default_factory=list)  # central levels of lower/upper
    proba: np.ndarray | None = None  # (N, K) after (temperature)
    before_std: np.ndarray | None = None  # accrue on point predictions: the constant-sigma baseline
    before_basis: str = "input"


@dataclass
class Result:
    """Everything a run produced: the JSON summary, the full state (for --save) and the output table."""

    summary: dict[str, Any]
    state: dict[str, Any]
    table: Any = None  # pyarrow.Table of the applied file with the recalibrated columns, or None


# --------------------------------------------------------------------------- names and levels


def cli_method(state: dict[str, Any]) -> str:
    """The ``--method`` name of a (loaded) state; InputError for methods this command cannot apply."""
    name = state.get("method") if isinstance(state, dict) else None
    if name not in _CLI_NAME:
        raise InputError(
            f"saved recalibrator has method {name!r}, which uqeval recalibrate cannot apply; "
            f"expected one of {', '.join(METHODS.values())}"
        )
    return _CLI_NAME[name]


def central_levels(method: str, options: Options, state: dict[str, Any] | None = None) -> list[float]:
    """Central levels at which intervals are produced and coverage is reported."""
    if method == "temperature":
        return []
    if method == "conformal" and state is not None:
        from ..catalogue import pick_levels

        return pick_levels(
            state.get("levels", []), options.levels, "this conformal recalibrator was fitted at", UsageError
        )
    if method == "isotonic" and options.quantiles:
        return [lv for _, _, lv in central_pairs(np.sort(np.asarray(quantile_levels(options))))]
    return [float(v) for v in (options.levels or DEFAULT_LEVELS)]


def quantile_levels(options: Options) -> list[float]:
    levels = [float(v) for v in (options.levels or DEFAULT_QUANTILE_LEVELS)]
    if len({level_key(v) for v in levels}) != len(levels):
        raise InputError(f"quantile levels must be distinct, got {levels}")
    return sorted(levels)


# --------------------------------------------------------------------------- reading


def _representation(method: str, table: Any, settings: Settings, state: dict[str, Any] | None) -> str:
    """Representation to load a file (its header ``table``) as, with a clear error when the method's
    columns are missing."""
    names, p = table.columns, str(table.path)
    explicit = {k: v for k, v in settings.columns.items() if v}
    try:
        detected = plan_columns(
            names,
            table.list_columns,
            explicit=explicit,
            representation=settings.representation,
            logits=settings.logits,
            path=p,
        ).representation
    except SchemaError:
        detected = None
    if method == "temperature" and detected in ("members", "dirichlet"):
        raise SchemaError(
            f"{p}: {option('method', 'temperature')} rescales one classifier's probabilities or logits; this file "
            f"holds {'an ensemble of classifiers' if detected == 'members' else 'Dirichlet outputs'}, "
            "to which it does not apply"
        )
    if (
        method != "temperature"
        and detected not in (None, "gaussian", "point")
        and _find(names, "mean", explicit, p) is None
    ):
        needs = "a mean and a std (or variance)" if method in ("std-scaling", "isotonic") else "a mean column"
        raise SchemaError(
            f"{p}: {option('method', method)} recalibrates point or Gaussian predictions ({needs}); this file "
            f"holds {detected} predictions without a mean column, to which it does not apply"
        )
    if method == "temperature":
        try:
            plan_columns(
                names,
                table.list_columns,
                explicit=explicit,
                representation="categorical",
                logits=settings.logits,
                path=p,
            )
        except SchemaError as exc:
            raise SchemaError(
                f"{p}: {option('method', 'temperature')} needs class probabilities (p_0..p_K-1, prob_*, a 'proba' list column) "
                f"or logits (logit_*): {str(exc).split(': ', 1)[-1].split('; it needs ', 1)[0]}"
            ) from None
        return "categorical"
    has_std = _find(names, "std", explicit, p) is not None or _find(names, "var", explicit, p) is not None
    if method in ("std-scaling", "isotonic"):
        if not has_std:
            raise SchemaError(
                f"{p}: {option('method', method)} needs Gaussian predictions, a mean and a std (std/sigma/y_std) or "
                f"variance column; none found (name it with {option('std')} or {option('var')}, or use {option('method', 'conformal')} or accrue "
                "for point predictions)"
            )
        return "gaussian"
    if method == "conformal" and state is not None:
        if state.get("normalized"):
            if not has_std:
                raise SchemaError(
                    f"{p}: this conformal recalibrator was fitted on normalised residuals |y - mean|/std, so the "
                    f"file needs a std column (std/sigma/y_std, or {option('std')}); none found"
                )
            return "gaussian"
        return "point"
    return "gaussian" if has_std else "point"


def load_for(
    method: str,
    path: str | Path,
    settings: Settings,
    *,
    require_targets: bool,
    state: dict[str, Any] | None = None,
    features: Sequence[str] = (),
    every_column: bool = False,
) -> Loaded:
    """Load ``path`` as the representation ``method`` works on (see the module table).

    The ACCRUE ``features`` (:func:`read_features`), or with ``every_column`` every column of the
    file (:func:`build_table`), are read in the same pass.
    """
    table = inspect(path)
    rep = _representation(method, table, settings, state)
    loaded = load_predictions(
        path,
        replace(settings, representation=rep),
        require_targets=require_targets,
        extra=table.columns if every_column else features,
    )
    if (
        require_targets and loaded.prediction.y_true is None
    ):  # pragma: no cover - load_predictions raises first
        raise InputError(
            f"{path}: the calibration file needs a target column; name it with {option('y_true')}"
        )
    return loaded


def read_features(loaded: Loaded, names: Sequence[str]) -> np.ndarray:
    """The ``names`` columns of a loaded file (read with it: :func:`load_for` ``features``) as an
    (N, d) float array aligned with the rows of its prediction.

    Missing columns are a :class:`SchemaError`; NaN/inf an :class:`InputError` naming the
    file, column, count and first row.
    """
    table = loaded.table
    assert table is not None  # read from a file by load_for: its header
    found: list[str] = []
    missing: list[str] = []
    for name in names:
        col = match_column(table.columns, name)
        (found if col is not None else missing).append(col if col is not None else name)
    if missing:
        raise SchemaError(
            f"{table.path}: feature column(s) {', '.join(repr(m) for m in missing)} not found; the recalibrator "
            f"needs {', '.join(names)}; available columns: {', '.join(table.columns[:20])}"
            f"{' ...' if len(table.columns) > 20 else ''}"
        )
    # Loaded.extra is keyed by the names asked for: these features, or every column of the file (load_for)
    keys = [match_column(list(loaded.extra), name) or name for name in names]
    x = np.column_stack([to_float(loaded.extra[k], c, table.path) for k, c in zip(keys, found, strict=True)])
    return evaluated_rows(loaded, x, found, "feature column")


# --------------------------------------------------------------------------- fit and apply


def fit_state(
    method: str, loaded: Loaded, options: Options, settings: Settings, features: np.ndarray | None = None
) -> dict[str, Any]:
    """Fit ``method`` on a loaded calibration file; returns the kernel's JSON-serialisable state.

    ACCRUE states also record the feature column names (``features``), so that
    ``--load`` can find them in the applied file.
    """
    pred = loaded.prediction
    y = pred.require_targets()
    if method == "temperature":
        from ..recalibration.temperature import fit_temperature

        return fit_temperature(pred.proba, pred.labels, kind="proba")  # type: ignore[attr-defined]
    # loaded as gaussian or point (_representation): a mean; sd None for point predictions
    mu, sd = cast("Point", pred).point(), pred.spread()
    if method == "std-scaling":
        from ..recalibration.std_scaling import fit_std_scaling

        assert sd is not None  # loaded as gaussian (_representation)
        return fit_std_scaling(y, mu, sd, options.criterion, num_bins=settings.num_bins)
    if method == "isotonic":
        from ..recalibration.isotonic import fit_isotonic

        assert sd is not None  # loaded as gaussian (_representation)
        return fit_isotonic(y, mu, sd, num_bins=settings.num_bins)
    if method == "conformal":
        from ..recalibration.conformal import fit_conformal

        return fit_conformal(y, mu, sd, levels=list(options.levels or DEFAULT_LEVELS))
    if method == "accrue":
        from ..recalibration.accrue import fit_accrue

        if features is None or options.features is None:
            raise UsageError(
                f"{option('method', 'accrue')} needs {option('features', 'COLUMNS')} (the inputs sigma(x) depends on)"
            )
        names = (str(pred.columns.get("y_true", "y_true")), str(pred.columns.get("mean", "mean")))
        finite_difference(y, mu, names, pred.rows)  # as the kernel does, but naming the columns
        state = fit_accrue(
            features, y, mu, model=options.model, clusters=options.clusters, seed=options.seed, rows=pred.rows
        )
        state["features"] = list(options.features)
        return state
    raise UsageError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")


def _std_target(loaded: Loaded, settings: Settings) -> tuple[str, str]:
    """``("std" | "var", column)``: the column that holds the input spread."""
    name = loaded.prediction.columns["std"]
    explicit_var = settings.columns.get("var")
    is_var = (explicit_var is not None and explicit_var.lower() == str(name).lower()) or (
        not settings.columns.get("std") and str(name).lower() in ALIASES["var"]
    )
    return ("var" if is_var else "std"), str(name)


def _spread_columns(loaded: Loaded, settings: Settings, std: np.ndarray) -> dict[str, np.ndarray]:
    if loaded.prediction.spread() is None:  # point predictions: a new std column
        return {"std": std}
    kind, name = _std_target(loaded, settings)
    return {name: std * std if kind == "var" else std}


def _proba_columns(loaded: Loaded, proba: np.ndarray, logits: bool = False) -> dict[str, np.ndarray]:
    cols = loaded.prediction.columns["proba"]  # a loaded categorical prediction names its columns
    k = proba.shape[1]
    if isinstance(cols, str):  # one Parquet list column
        return {cols: proba}
    cols = list(cols)
    if len(cols) == 1 and k == 2:  # binary: a single column holds P(class 1)
        return {cols[0]: proba[:, 1]}

    if logits or all(LOGIT_RE.match(str(c)) for c in cols):  # logits in, probabilities out
        return {f"p_{j}": proba[:, j] for j in range(k)}
    return {str(c): proba[:, j] for j, c in enumerate(cols)}


def apply_state(
    state: dict[str, Any],
    loaded: Loaded,
    options: Options,
    settings: Settings,
    features: np.ndarray | None = None,
    columns: bool = True,
) -> Applied:
    """Recalibrate the forecasts of ``loaded`` with a fitted state (see the module table).

    ``columns=False`` when only the before/after metrics are wanted (the calibration file):
    isotonic then makes no output columns and no (N, L) bounds; :func:`isotonic_metrics`
    makes each level's interval when it scores it.
    """
    method = cli_method(state)
    pred = loaded.prediction
    out = Applied()
    if method == "temperature":
        from ..recalibration.temperature import apply_temperature

        out.proba = apply_temperature(pred.proba, state, kind="proba")  # type: ignore[attr-defined]
        out.columns = _proba_columns(loaded, out.proba, settings.logits)
        return out
    # loaded as gaussian or point (_representation): a mean; sd None for point predictions
    mu, sd = cast("Point", pred).point(), pred.spread()
    out.levels = central_levels(method, options, state)
    if method == "std-scaling":
        from ..recalibration.std_scaling import apply_std_scaling

        assert sd is not None  # loaded as gaussian (_representation)
        out.std = apply_std_scaling(state, sd)
        out.columns = _spread_columns(loaded, settings, out.std)
    elif method == "accrue":
        from ..recalibration.accrue import apply_accrue

        if features is None:
            raise UsageError(f"{option('method', 'accrue')} needs {option('features', 'COLUMNS')}")
        out.std = apply_accrue(state, features)
        out.columns = _spread_columns(loaded, settings, out.std)
        if pred.spread() is None:  # point predictions
            out.before_std = np.full(pred.n, float(state["sigma_constant"]))
            out.before_basis = (
                f"constant std {float(state['sigma_constant']):.6g} "
                "(CRPS-optimal on the calibration file; the input has point predictions only)"
            )
    elif method == "isotonic":
        from ..recalibration.isotonic import isotonic_equivalent_std, isotonic_intervals, isotonic_quantiles

        if not columns:
            return out
        assert sd is not None  # loaded as gaussian (_representation)
        if options.quantiles:
            tau = quantile_levels(options)
            q = isotonic_quantiles(state, mu, sd, tau)
            out.columns = {f"q_{level_key(t)}": q[:, j] for j, t in enumerate(tau)}
        if out.levels:
            out.lower, out.upper = isotonic_intervals(state, mu, sd, out.levels)
            if not options.quantiles:
                for j, lv in enumerate(out.levels):
                    out.columns[f"lower_{level_key(lv)}"] = out.lower[:, j]
                    out.columns[f"upper_{level_key(lv)}"] = out.upper[:, j]
        if options.equivalent_std:
            for lv, k in isotonic_equivalent_std(state, out.levels).items():
                out.columns[f"std_{level_key(lv)}"] = k * sd
    elif method == "conformal":
        from ..recalibration.conformal import apply_conformal

        bounds = apply_conformal(state, mu, sd if state.get("normalized") else None)
        by_key = {level_key(lv): b for lv, b in bounds.items()}
        lo = [by_key[level_key(lv)][0] for lv in out.levels]
        hi = [by_key[level_key(lv)][1] for lv in out.levels]
        out.lower, out.upper = np.column_stack(lo), np.column_stack(hi)
        for j, lv in enumerate(out.levels):
            out.columns[f"lower_{level_key(lv)}"] = out.lower[:, j]
            out.columns[f"upper_{level_key(lv)}"] = out.upper[:, j]
    return out


# --------------------------------------------------------------------------- metrics


def _groups(pred: Prediction, settings: Settings, names: Sequence[str]) -> tuple[dict, dict]:
    from ..catalogue import compute, get_family, orientation_of

    metrics: dict[str, Any] = {}
    orientation: dict[str, str] = {}
    for name in names:
        family = get_family(name)
        result = compute(family, pred, settings)
        if result is None:
            continue
        metrics[name] = result
        orientation.update(orientation_of(result, family, pred.kind))
    return metrics, orientation


def _orient(metrics: dict[str, Any]) -> dict[str, str]:
    from ..catalogue import get_family, orientation_of

    out: dict[str, str] = {}
    for name, result in metrics.items():
        out.update(orientation_of(result, get_family(name), None))
    return out


def isotonic_metrics(
    state: dict[str, Any],
    y_true: np.ndarray,
    mean: np.ndarray,
    std: np.ndarray,
    lower: np.ndarray | None,
    upper: np.ndarray | None,
    levels: Sequence[float],
    settings: Settings,
) -> dict[str, Any]:
    r"""Metric groups of the isotonically recalibrated forecast :math:`R(F_i(y))`.

    The recalibrated forecast is not Gaussian, so its groups are computed from its cdf and
    quantile function with the same definitions as the Gaussian ones:

    * ``avg_calibration``: interval-mode calibration curve of the recalibrated PIT
      :math:`u_i = R(\Phi(z_i))` (y lies in the central :math:`p` interval iff
      :math:`|2u_i - 1| \le p`) at ``linspace(0, 1, num_bins)``;
    * ``reliability``: ``max_cal_err`` of :math:`u` (RS and the ACCRUE cost are defined
      for Gaussian forecasts only);
    * ``scoring_rule``: ``check`` (mean pinball loss over ``linspace(0.01, 0.99,
      resolution)``) and ``interval`` (mean interval score over the same central levels)
      of the recalibrated quantiles :math:`\mu_i + \sigma_i q'_\tau`,
      :math:`q'_\tau = \Phi^{-1}(R^{-1}(\tau))`; NLL and CRPS are not reported;
    * ``coverage`` of the recalibrated central intervals at ``levels`` (``lower``/``upper``, or
      when they are None each level's interval, made when it is scored).

    The level averages are closed forms in z (:func:`uqeval.metrics.scoring._check_profile`,
    ``_interval_profile``): O(N log resolution) time, no (rows x levels) array; the per-row
    terms are made in blocks of rows (:func:`uqeval.metrics.blocks.rowwise`).
    """
    from ..metrics.calibration import calibration_errors, expected_proportions
    from ..metrics.quantiles import interval_calibration_curve_from_pit
    from ..metrics.reliability import max_calibration_error
    from ..metrics.scoring import _check_profile, _interval_profile, toolbox_levels
    from ..recalibration.isotonic import isotonic_cdf, isotonic_intervals, isotonic_quantiles

    y = np.asarray(y_true, dtype=np.float64)
    mu = np.asarray(mean, dtype=np.float64)
    sd = np.asarray(std, dtype=np.float64)
    u = isotonic_cdf(state, y, mu, sd)
    expected = expected_proportions(settings.num_bins)
    out: dict[str, Any] = {
        "avg_calibration": calibration_errors(expected, interval_calibration_curve_from_pit(u, expected)),
        "reliability": {"max_cal_err": max_calibration_error(u)},
    }
    del u
    tau = toolbox_levels(settings.resolution)
    std_q = isotonic_quantiles(state, np.zeros(1), np.ones(1), tau)[0]  # q'_tau of a standard forecast
    bounds = isotonic_quantiles(state, np.zeros(1), np.ones(1), bound_levels(tau))[0]
    lo_q, hi_q = bounds[: tau.size], bounds[tau.size :]
    # sigma * rho_tau(z, q'_tau) summed in closed form over the levels (prefix sums, no (rows x levels) array)
    rows = rowwise(lambda y, mu, sd: sd * _check_profile((y - mu) / sd, tau, std_q), y, mu, sd)
    check = float(np.sum(rows))
    rows = rowwise(
        lambda y, mu, sd: sd * _interval_profile((y - mu) / sd, tau, lo_q, hi_q), y, mu, sd, out=rows
    )
    interval = float(np.sum(rows))
    del rows
    out["scoring_rule"] = {"check": check / y.size, "interval": interval / y.size}
    if levels:

        def coverage_at(j: int, lv: float) -> dict[str, float]:
            if lower is not None and upper is not None:  # given together
                return coverage_metrics(y, lower[:, j], upper[:, j], lv, y_std=settings.y_std)

            def block(
                start: int, stop: int
            ) -> tuple[np.ndarray, np.ndarray]:  # the level's bounds of these rows
                lo, hi = isotonic_intervals(state, mu[start:stop], sd[start:stop], [lv])
                if not (np.isfinite(lo).all() and np.isfinite(hi).all() and (lo <= hi).all()):
                    whole = isotonic_intervals(state, mu, sd, [lv])  # raises coverage_metrics' message
                    coverage_metrics(y, whole[0][:, 0], whole[1][:, 0], lv, y_std=settings.y_std)
                return lo[:, 0], hi[:, 0]

            return coverage_from_bounds(y, block, lv, y_std=settings.y_std)  # never both bounds whole

        out["coverage"] = {level_key(lv): coverage_at(j, lv) for j, lv in enumerate(levels)}
    return out


def _like(kind: type[P], pred: Prediction, **fields: Any) -> P:
    """A ``kind`` prediction of ``pred``'s targets, columns and rows with the forecast ``fields``."""
    return kind(y_true=pred.y_true, columns=dict(pred.columns), rows=pred.rows, **fields)


def _intervals(pred: Prediction, lower: np.ndarray, upper: np.ndarray, levels: Sequence[float]) -> Intervals:
    return _like(
        Intervals, pred, lower=lower, upper=upper, levels=np.asarray(levels), mean=getattr(pred, "mean", None)
    )


def evaluate(state: dict[str, Any], loaded: Loaded, applied: Applied, settings: Settings) -> dict[str, Any]:
    """``{"before", "after", "orientation", "before_basis"}`` metric groups of one file with targets."""
    method = cli_method(state)
    pred = loaded.prediction
    levels = applied.levels
    s = replace(settings, levels=tuple(levels) if levels else None)
    if method == "temperature":
        before, o1 = _groups(pred, s, CLASSIFICATION_GROUPS)
        assert applied.proba is not None  # apply_state made it (temperature)
        after_pred: Prediction = _like(Categorical, pred, proba=applied.proba)
        after, o2 = _groups(after_pred, s, CLASSIFICATION_GROUPS)
    elif method in ("std-scaling", "accrue"):
        mean = cast("Point", pred).mean  # loaded as gaussian or point (_representation)
        assert applied.std is not None  # apply_state made it (std-scaling, accrue)
        base = (
            pred if applied.before_std is None else _like(Gaussian, pred, mean=mean, std=applied.before_std)
        )
        before, o1 = _groups(base, s, REGRESSION_GROUPS)
        after_pred = _like(Gaussian, pred, mean=mean, std=applied.std)
        after, o2 = _groups(after_pred, s, REGRESSION_GROUPS)
    elif method == "isotonic":
        before, o1 = _groups(pred, s, REGRESSION_GROUPS)
        g = cast("Gaussian", pred)  # loaded as gaussian (_representation)
        after = isotonic_metrics(
            state, g.require_targets(), g.mean, g.std, applied.lower, applied.upper, levels, s
        )
        o2 = _orient(after)
    else:  # conformal: intervals at the fitted levels, calibration from the score distribution
        before, o1 = {}, {}
        if pred.spread() is not None:  # Gaussian: intervals at every level before
            before, o1 = _groups(
                _intervals(pred, *pred.intervals_at(np.asarray(levels)), levels), s, INTERVAL_GROUPS
            )
            _add_central_calibration(before, o1, np.abs(2.0 * cast("Gaussian", pred).pit() - 1.0), s)
        assert applied.lower is not None and applied.upper is not None  # apply_state made them (conformal)
        after, o2 = _groups(_intervals(pred, applied.lower, applied.upper, levels), s, INTERVAL_GROUPS)
        from ..recalibration.conformal import conformal_central_pit

        # loaded as gaussian or point (_representation)
        central = conformal_central_pit(
            state, pred.require_targets(), cast("Point", pred).mean, pred.spread()
        )
        if central is not None:  # None: a state saved without score_sample has no calibration curve
            _add_central_calibration(after, o2, central, s)
    basis = applied.before_basis
    if method == "conformal" and pred.spread() is None:
        basis = "none (point predictions have no intervals before conformal)"
    return {"before_basis": basis, "before": before, "after": after, "orientation": {**o1, **o2}}


def _add_central_calibration(
    metrics: dict[str, Any], orientation: dict[str, str], central: np.ndarray, settings: Settings
) -> None:
    """``avg_calibration`` and ``reliability.max_cal_err`` from central PIT values ``c`` (y lies in
    the central p interval iff c <= p): the interval-mode curve at ``linspace(0, 1, num_bins)``
    and the bin-free sup |C(p) - p| of their ECDF."""
    from ..metrics.calibration import (
        calibration_errors,
        central_cover_index,
        expected_proportions,
        observed_from_cover_index,
    )
    from ..metrics.reliability import max_calibration_error

    expected = expected_proportions(settings.num_bins)
    c = np.asarray(central, dtype=np.float64)
    metrics["avg_calibration"] = calibration_errors(
        expected, observed_from_cover_index(central_cover_index(c, expected), expected.size)
    )
    metrics["reliability"] = {"max_cal_err": max_calibration_error(np.clip(c, 0.0, 1.0))}
    orientation.update(_orient({g: metrics[g] for g in ("avg_calibration", "reliability")}))


# --------------------------------------------------------------------------- parameters


def compact_parameters(state: dict[str, Any], levels: Sequence[float] = ()) -> dict[str, Any]:
    """The fitted parameters worth printing; bulky arrays (MLP weights, isotonic knots) are summarised.

    The full state is what ``--save`` writes.
    """
    method = cli_method(state)
    keep: tuple[str, ...]
    if method == "std-scaling":
        keep = ("criterion", "factor", "n_rows", "num_bins", "at_bound")
    elif method == "temperature":
        keep = ("temperature", "nll_before", "nll_after")
    elif method == "isotonic":
        keep = ("direction", "n_rows", "num_bins")
    elif method == "conformal":
        keep = ("normalized", "n_rows")
    else:
        keep = (
            "model",
            "features",
            "n_rows",
            "n_features",
            "seed",
            "sigma_constant",
            "beta",
            "cost",
            "cost_constant",
        )
    out: dict[str, Any] = {k: state[k] for k in keep if k in state}
    if method == "isotonic":
        from ..recalibration.isotonic import isotonic_equivalent_std

        out["n_knots"] = len(state.get("expected", []))
        if levels:
            out["equivalent_std_factor"] = {
                level_key(k): v for k, v in isotonic_equivalent_std(state, levels).items()
            }
    elif method == "conformal":
        names = ("rank", "score_quantile", "coverage_guaranteed", "coverage_upper")
        lv = state.get("levels", [])
        out["per_level"] = {
            level_key(v): {n: state[n][j] for n in names if n in state and j < len(state[n])}
            for j, v in enumerate(lv)
        }
    elif method == "temperature":
        from ..recalibration.temperature import TEMPERATURE_BOUNDS

        t = float(state.get("temperature", 1.0))
        out["at_bound"] = any(math.isclose(t, b, rel_tol=1e-3) for b in TEMPERATURE_BOUNDS)
    elif method == "accrue":
        model = state.get("model")
        if model == "constant":
            out["sigma"] = state.get("sigma")
        elif model == "kmeans":
            for k in ("clusters", "cluster_sigma", "cluster_sizes", "centroids"):
                if k in state:
                    out[k] = state[k]
        elif model == "poly":
            for k in ("basis", "order", "coef", "u_range"):
                if k in state:
                    out[k] = state[k]
        elif model == "mlp":
            weights = state.get("weights", [])
            shapes = [list(np.shape(w)) for w in weights]
            out["hidden"] = state.get("hidden")
            out["activation"] = state.get("activation")
            out["layer_shapes"] = shapes
            out["n_parameters"] = int(sum(np.prod(s) + s[-1] for s in shapes if s))
            for k in ("best_restart", "validation_rows"):
                if k in state:
                    out[k] = state[k]
    return out


# --------------------------------------------------------------------------- output table


def build_table(loaded: Loaded, applied: Applied):
    """Every column of the loaded file (read with it: :func:`load_for` ``every_column``) in its order,
    recalibrated columns replaced in place, new ones appended.

    Existing columns are matched by name case-insensitively. (N, K) arrays become
    Parquet list columns.
    """
    import pyarrow as pa

    info, cols, n = loaded.table, loaded.extra, loaded.info["n_rows"]
    assert info is not None  # read from a file by load_for: its header
    if loaded.prediction.n != n:
        raise InputError(
            f"{loaded.info['path']}: {n} rows in the file but {loaded.prediction.n} recalibrated; "
            "rows were dropped"
        )

    def arrow(v: np.ndarray):
        v = np.asarray(v, dtype=np.float64)
        if v.ndim == 2:
            k = v.shape[1]
            return pa.ListArray.from_arrays(
                pa.array(np.arange(0, v.size + 1, k, dtype=np.int32)), pa.array(v.ravel())
            )
        return pa.array(v)

    data = {c: cols[c] for c in info.columns}
    lower = {c.lower(): c for c in info.columns}
    for name, values in applied.columns.items():
        data[lower.get(name.lower(), name)] = arrow(values)
    return pa.table(data)


# --------------------------------------------------------------------------- the whole run


def with_saved_defaults(options: Options, state: dict[str, Any]) -> Options:
    """Fill output options a loaded state was fitted with (``apply_defaults``) unless given again.

    ``--save`` records ``--levels``, ``--quantiles`` and ``--equivalent-std`` so that
    ``--load`` reproduces the fitted run's output; flags given with ``--load`` win.
    """
    saved = state.get("apply_defaults")
    if not isinstance(saved, dict):
        return options
    levels = options.levels
    if levels is None and saved.get("levels"):
        try:
            levels = tuple(float(v) for v in saved["levels"])
        except (TypeError, ValueError):
            raise InputError(
                "the saved recalibrator's apply_defaults.levels must be numbers; refit it"
            ) from None
    return replace(
        options,
        levels=levels,
        quantiles=options.quantiles or bool(saved.get("quantiles")),
        equivalent_std=options.equivalent_std or bool(saved.get("equivalent_std")),
    )


def _file_block(role: str, path: str | Path, loaded: Loaded) -> dict[str, Any]:
    return {
        "role": role,
        "path": str(path),
        "n_rows": int(loaded.prediction.n),
        "representation": loaded.prediction.kind,
        "has_targets": loaded.prediction.y_true is not None,
    }


def run(
    calibration: str | Path | None,
    apply: str | Path | None,
    options: Options,
    settings: Settings,
    state: dict[str, Any] | None = None,
    loaded_from: str | Path | None = None,
) -> Result:
    """Fit on ``calibration`` (unless ``state`` is given), apply to ``apply``, score both.

    Returns the summary (``schema``, ``method``, ``parameters``, ``fitted_on``,
    ``loaded_from``, ``levels``, ``files`` (``calibration`` / ``applied``: ``path``,
    ``n_rows``, ``representation``, ``has_targets``, and with targets ``before_basis``,
    ``before``, ``after``), ``orientation``, ``notes``), the full state and the output
    table (None without ``apply``). Writes nothing.
    """
    if settings.nan_policy != "raise":
        raise UsageError(
            "recalibrate keeps every input row: nan_policy 'omit' is not supported; clean the data"
        )
    method = options.method if state is None else cli_method(state)
    files: dict[str, Any] = {}
    orientation: dict[str, str] = {}
    notes: list[str] = []
    loaded_c = feats_c = None
    if state is None:
        if calibration is None:
            raise UsageError(f"give a calibration FILE to fit, or {option('load')} a saved recalibrator")
        loaded_c = load_for(
            method,
            calibration,
            settings,
            require_targets=True,
            features=options.features if method == "accrue" and options.features else (),
        )
        if method == "accrue":
            if not options.features:
                raise UsageError(
                    f"{option('method', 'accrue')} needs {option('features', 'COLUMNS')} (the inputs sigma(x) depends on)"
                )
            feats_c = read_features(loaded_c, options.features)
        with naming(calibration):
            state = fit_state(method, loaded_c, options, settings, feats_c)
        state["apply_defaults"] = {
            "levels": list(options.levels) if options.levels else None,
            "quantiles": bool(options.quantiles),
            "equivalent_std": bool(options.equivalent_std),
        }
    else:
        options = with_saved_defaults(options, state)
    features = options.features or (
        tuple(state["features"]) if method == "accrue" and state.get("features") else None
    )
    if method == "accrue" and not features:
        raise UsageError(
            f"this ACCRUE recalibrator does not name its features: pass {option('features', 'COLUMNS')}"
        )

    def one(role: str, path: str | Path, loaded: Loaded, feats: np.ndarray | None) -> Applied:
        # the calibration file's recalibrated forecast is only scored, never written
        applied = apply_state(
            state, loaded, replace(options, features=features), settings, feats, columns=role == "applied"
        )
        block = _file_block(role, path, loaded)
        if loaded.prediction.y_true is not None:
            result = evaluate(state, loaded, applied, settings)
            orientation.update(result.pop("orientation"))
            block.update(result)
        files[role] = block
        return applied

    if loaded_c is not None and calibration is not None:  # fitted here on the calibration file
        one("calibration", calibration, loaded_c, feats_c)
    table = None
    if apply is not None:
        loaded_a = load_for(method, apply, settings, require_targets=False, state=state, every_column=True)
        feats_a = read_features(loaded_a, features) if method == "accrue" and features else None
        applied_a = one("applied", apply, loaded_a, feats_a)
        table = build_table(loaded_a, applied_a)
        if method in ("isotonic", "conformal") and loaded_a.prediction.spread() is not None:
            notes.append(
                "the output keeps the mean/std columns and adds interval or quantile columns: score it with "
                f"{option('representation', 'intervals')} (or quantiles)"
            )
        if not files["applied"]["has_targets"]:
            notes.append(f"{apply}: no target column, so no before/after metrics for it")
    levels = central_levels(method, options, state)
    params = compact_parameters(state, levels if method == "isotonic" else ())
    if params.get("at_bound"):
        notes.append(
            f"the fitted {'factor' if method == 'std-scaling' else 'temperature'} sits at the end of its "
            "search interval; the data want a more extreme value"
        )
    if method == "conformal":
        guaranteed = params.get("per_level", {})
        if guaranteed:
            notes.append(
                "conformal guarantee (exchangeable rows): marginal coverage >= "
                + ", ".join(
                    f"{v.get('coverage_guaranteed', float('nan')):.4g} at {k}" for k, v in guaranteed.items()
                )
            )
    from .._version import __version__

    summary = {
        "schema": SCHEMA,
        "uqeval_version": __version__,
        "method": method,
        "parameters": params,
        "fitted_on": str(calibration) if loaded_c is not None else None,
        "loaded_from": str(loaded_from) if loaded_from is not None else None,
        "levels": [level_key(v) for v in levels],
        "files": files,
        "orientation": dict(sorted(orientation.items())),
        "notes": notes,
    }
    if method == "isotonic" and options.quantiles:
        summary["quantile_levels"] = [level_key(v) for v in quantile_levels(options)]
    return Result(summary, state, table)
