"""Settings: built-in defaults, overridden by a TOML config file, overridden by flags.

``configs/default.toml`` in the repository spells out exactly these defaults
(a test keeps the two in step). A config file has the tables ``[metrics]``,
``[columns]`` and ``[input]``; unknown keys are an error naming the key and line.
"""

from __future__ import annotations

from ._toml import tomllib
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .errors import InputError

COLUMN_ROLES = (
    "y_true", "mean", "std", "var", "lower", "upper", "quantiles", "samples", "proba", "logits", "by",
)


@dataclass(frozen=True)
class Settings:
    """Every tunable of a scoring run; written to the JSON summary under ``settings``."""

    num_bins: int = 100            # avg calibration: expected proportions linspace(0, 1, num_bins)
    resolution: int = 99           # check / interval score: levels linspace(0.01, 0.99, resolution)
    seed: int = 0                  # adversarial group calibration, bootstrap, permutation tests
    adv_num_group_sizes: int = 10  # group fractions linspace(0.01, 1, adv_num_group_sizes)
    adv_num_trials: int = 10
    adv_num_group_draws: int = 10
    levels: tuple[float, ...] | None = None  # coverage levels; None: 0.95, or the levels quantiles/intervals carry
    level: float = 0.95            # nominal level of a single lower/upper pair
    class_bins: int = 15           # classification calibration bins
    tace_threshold: float = 0.01
    oca_fraction: float = 0.01     # oracle collaborative accuracy: share of most uncertain rows sent to the oracle
    bayes_samples: int = 500       # posterior draws of the Bayesian ECE
    nan_policy: str = "raise"
    fix_crossing: bool = False
    renormalize: bool = False
    logits: bool = False
    y_std: float | None = None     # reference std of training targets (coverage width_norm)
    representation: str | None = None
    columns: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _validate(self)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["levels"] = list(self.levels) if self.levels is not None else None
        return d


_TABLES = {
    "metrics": {"num_bins", "resolution", "seed", "adv_num_group_sizes", "adv_num_trials",
                "adv_num_group_draws", "levels", "level", "class_bins", "tace_threshold", "y_std",
                "oca_fraction", "bayes_samples"},
    "input": {"nan_policy", "fix_crossing", "renormalize", "logits", "representation"},
    "columns": set(COLUMN_ROLES),
}


def _line_of(text: str, key: str) -> str:
    for i, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith(key) or line.strip().startswith(f'"{key}"'):
            return f" (line {i})"
    return ""


def load_config(path: str | Path) -> dict[str, Any]:
    """Read a TOML config file into flat ``Settings`` keyword overrides."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"config file '{p}' does not exist") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read config file '{p}': {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"config file '{p}' is not valid TOML: {exc}") from None
    out: dict[str, Any] = {}
    for table, body in data.items():
        if table not in _TABLES or not isinstance(body, dict):
            raise InputError(
                f"config file '{p}': unknown table [{table}]{_line_of(text, '[' + table)}; "
                f"expected one of {sorted(_TABLES)}"
            )
        for key, value in body.items():
            if key not in _TABLES[table]:
                raise InputError(
                    f"config file '{p}': unknown key '{key}' in [{table}]{_line_of(text, key)}; "
                    f"allowed: {', '.join(sorted(_TABLES[table]))}"
                )
            if table == "columns":
                out.setdefault("columns", {})[key] = value
            else:
                out[key] = value
    return out


def make_settings(config: str | Path | None = None, baseline: dict[str, Any] | None = None,
                  **overrides: Any) -> Settings:
    """The one settings resolution: defaults <- ``baseline`` (the ``settings`` of a baseline
    summary) <- config file <- non-None ``overrides`` (flags). Validated on construction."""
    values: dict[str, Any] = {}
    columns: dict[str, Any] = {}
    if baseline is not None:
        known = {f.name for f in fields(Settings)} - {"columns"}
        values.update({k: v for k, v in baseline.items() if k in known and v is not None})
        columns.update({k: v for k, v in (baseline.get("columns") or {}).items() if k != "by" and v})
    if config is not None:
        cfg = load_config(config)
        columns.update(cfg.pop("columns", {}) or {})
        values.update(cfg)
    columns.update(overrides.pop("columns", None) or {})
    values.update({k: v for k, v in overrides.items() if v is not None})
    known = {f.name for f in fields(Settings)}
    unknown = set(values) - known
    if unknown:
        raise InputError(f"unknown settings: {sorted(unknown)}")
    if "levels" in values:
        values["levels"] = tuple(float(v) for v in values["levels"])
    return replace(Settings(), **values, columns={k: v for k, v in columns.items() if v})


def _validate(s: Settings) -> None:
    from .validation import check_level

    for name in ("num_bins", "resolution", "adv_num_group_sizes", "adv_num_trials", "adv_num_group_draws", "class_bins"):
        v = getattr(s, name)
        if not isinstance(v, int) or v < 2:
            raise InputError(f"setting {name} must be an integer >= 2, got {v!r}")
    for lv in s.levels or ():
        check_level(lv, "coverage level (--levels)")
    check_level(s.level, "interval level (--level)")
    if s.nan_policy not in ("raise", "omit"):
        raise InputError(f"nan_policy must be 'raise' or 'omit', got {s.nan_policy!r}")
    if s.y_std is not None and not (s.y_std > 0):
        raise InputError(f"y_std must be > 0, got {s.y_std!r}")
    if isinstance(s.oca_fraction, bool) or not isinstance(s.oca_fraction, (int, float)) \
            or not 0.0 <= s.oca_fraction <= 1.0:
        raise InputError(f"oca_fraction (--oca-fraction) must be a number in [0, 1], got {s.oca_fraction!r}")
    if isinstance(s.bayes_samples, bool) or not isinstance(s.bayes_samples, int) or s.bayes_samples < 1:
        raise InputError(f"bayes_samples (--bayes-samples) must be an integer >= 1, got {s.bayes_samples!r}")
