"""The paired tests of a comparison in memory: per ``(metric, model, reference)`` the sign-flip permutation
test and Diebold--Mariano's on the per-row score differences, made block by block, with the lag-1 check of
serially correlated rows."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ...errors import option
from ...metrics.normal import central_z

if TYPE_CHECKING:
    pass

from .resampling import BLOCK_ROWS, sign_flip_tests, spans

if TYPE_CHECKING:
    from .core import RowScores


def without_rounding_noise(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``b`` with entries equal to ``a`` up to a relative 1e-12 replaced by ``a``.

    Two models that are the same forecast written differently (a Gaussian and its
    quantiles) differ per row only by rounding; a paired test would find those
    differences "significant", since their variance is tiny too.
    """
    same = np.abs(a - b) <= 1e-12 * np.maximum(np.abs(a), np.abs(b))
    return np.where(same, a, b)


def test_entry(metric: str, model: str, reference: str) -> dict[str, Any]:
    """One paired test of the document, its numbers not yet computed (NaN)."""
    nan = math.nan
    return dict(
        metric=metric,
        model=model,
        reference=reference,
        mean_diff=nan,
        permutation_p=nan,
        dm_statistic=nan,
        dm_p=nan,
    )


class PairedTests:
    """The paired tests of the models' score differences (:meth:`run`: the sign-flip permutation test and
    Diebold-Mariano's, per ``(metric, model, reference)``), made block by block from :class:`RowScores`;
    ``units``: the clusters or blocks the sign flips flip (None: rows). With weights the tests take
    z_i = w_i d_i / mean(w), whose mean is the weighted mean difference."""

    def __init__(
        self,
        rows: RowScores,
        estimates: dict[str, dict[str, float | None]],
        notes: list[str],
        units: np.ndarray | None,
    ) -> None:
        self.rows, self.estimates, self.notes, self.units = rows, estimates, notes, units
        uw, n = rows.uw, rows.n
        self.z = None if uw is None else uw / (uw.sum() / n)

    def run(self, todo: list[tuple[str, int, int]]) -> list[dict[str, Any]]:
        """One entry per ``(metric, model index, reference index)`` of ``todo``."""

        plan, n = self.rows.plan, self.rows.n
        tests = [test_entry(name, plan.names[a], plan.names[b]) for name, a, b in todo]
        if not todo:
            return tests
        diffs = _Differences(self.rows, todo, self._shift(todo), self.z, self.units)
        if plan.options.n_permutations:
            from ...resample import flip_seed, rows_key

            seed = flip_seed(plan.options.seed or 0, rows_key([m.prediction for m in self.rows.models]))
            p_values = sign_flip_tests(
                diffs, plan.options.n_permutations, seed, shape=(n, len(todo)), units=self.units
            )
            for entry, p in zip(tests, p_values):
                entry["permutation_p"] = float(p)
        else:
            buf = np.empty((min(n, BLOCK_ROWS + 1), len(todo)))
            for start, stop in spans(n, BLOCK_ROWS):
                diffs(start, stop, buf[: stop - start])
        for j, entry in enumerate(tests):
            entry["mean_diff"] = diffs.means[j].total() / n if n else math.nan
            if n >= 2 and plan.options.dm_lag < n:
                dm = diffs.moments.dm(j)
                entry["dm_statistic"], entry["dm_p"] = dm["statistic"], dm["p_value"]
        if diffs.lag1 is not None:
            note = diffs.lag1.note(diffs.moments, todo, plan.names)
            if note:
                self.notes.append(note)
        return tests

    def _shift(self, todo: list[tuple[str, int, int]]) -> tuple[np.ndarray, np.ndarray]:
        """``(shift, unit)`` of each pair's differences: the difference of the estimates (near the mean
        difference, it keeps the lag products accurate), and a power of two near the size of scores near the
        float64 limit (the test statistic does not depend on the scores' unit; the squares must not
        overflow; 1 for ordinary scores: nothing changes)."""
        names = self.rows.plan.names
        est = [(self.estimates[name][names[a]], self.estimates[name][names[b]]) for name, a, b in todo]
        shift = np.array([math.nan if None in e else cast("float", e[0]) - cast("float", e[1]) for e in est])
        shift[~np.isfinite(shift)] = 0.0
        size = np.array([max((abs(v) for v in e if v is not None), default=0.0) for e in est])
        unit = np.where(
            np.isfinite(size) & (size > 2.0**400), np.exp2(np.floor(np.log2(np.maximum(size, 1.0)))), 1.0
        )
        return shift / unit, unit


class _Differences:
    """The score differences of the pairs ``todo`` of rows ``start`` .. ``stop`` - 1, written into ``out``
    when called (the block callback of :func:`sign_flip_tests`), with their running means, their
    Diebold-Mariano moments and (rows only) their lag-1 autocorrelation check."""

    def __init__(
        self,
        rows: RowScores,
        todo: list[tuple[str, int, int]],
        shift_unit: tuple[np.ndarray, np.ndarray],
        z: np.ndarray | None,
        units: np.ndarray | None,
    ) -> None:
        from ...metrics.blocks import PairwiseSum
        from ...metrics.comparison import Moments

        self.rows, self.todo, self.z = rows, todo, z
        self.shift, self.unit = shift_unit
        self.scaled = bool((self.unit != 1.0).any())
        lag = rows.plan.options.dm_lag
        self.means = [PairwiseSum(rows.n) for _ in todo]
        self.moments = Moments(lag, self.shift)
        self.lag1 = _Lag1(len(todo), self.shift) if units is None and rows.n >= _LAG1_MIN_ROWS else None

    def __call__(self, start: int, stop: int, out: np.ndarray) -> None:
        from ...metrics.comparison import Moments

        here: dict[tuple[str, int], np.ndarray] = {}
        for j, (name, a, b) in enumerate(self.todo):
            for k in (a, b):
                if (name, k) not in here:
                    here[(name, k)] = self.rows.score(name, k, start, stop)
            sa = here[(name, a)]
            out[:, j] = sa - without_rounding_noise(sa, here[(name, b)])
            if self.z is not None:
                out[:, j] *= self.z[start:stop]
            self.means[j].add(out[:, j])
        part = out / self.unit if self.scaled else out
        self.moments = self.moments.merge(Moments.of(part, self.rows.plan.options.dm_lag, self.shift))
        if self.lag1 is not None:
            self.lag1.add(part)


#: fewest rows for the serial-correlation note (the normal band of the lag-1 autocorrelation needs a few dozen)
_LAG1_MIN_ROWS = 30


class _Lag1:
    r"""Lag-1 autocorrelation of each column of the paired differences, folded block by block in row order:
    the products :math:`S_1 = \sum_i e_i e_{i-1}` of :math:`e = d - c` (``shift`` :math:`c`, as
    :class:`~uqeval.metrics.comparison.Moments`) and the first and last :math:`e`; with the moments' mean and
    centred sum of squares, :math:`\hat\rho_1 = \hat\gamma_1 / \hat\gamma_0`."""

    def __init__(self, t: int, shift: np.ndarray) -> None:
        self.shift = shift
        self.s1 = np.zeros(t)
        self.first: np.ndarray | None = None
        self.last: np.ndarray | None = None

    def add(self, d: np.ndarray) -> None:
        if not len(d):
            return
        e = d - self.shift
        self.s1 += np.einsum("ij,ij->j", e[1:], e[:-1])
        if self.last is None:
            self.first = e[0].copy()
        else:
            self.s1 += self.last * e[0]
        self.last = e[-1].copy()

    def rho(self, moments: Any) -> np.ndarray:
        from ...metrics.comparison import lag_autocovariance

        n = moments.n
        delta = moments.mean - self.shift
        sum_e = moments.total - n * self.shift
        a, b = sum_e - self.first, sum_e - self.last
        with np.errstate(all="ignore"):
            gamma1 = lag_autocovariance(self.s1, delta, a, b, n, 1)
            return gamma1 / (moments.m2 / n)

    def note(self, moments: Any, todo: list[tuple[str, int, int]], names: list[str]) -> str | None:
        """The note when some pair's differences look serially correlated (None: none does)."""
        if self.last is None:
            return None
        rho = self.rho(moments)
        band = float(central_z(0.99)) / math.sqrt(moments.n)  # the 99 % band of rho under independence
        worst = np.where(np.isfinite(rho), np.abs(rho), 0.0)
        j = int(np.argmax(worst))
        if not worst[j] > band:
            return None
        name, a, b = todo[j]
        count = int(np.count_nonzero(worst > band))
        more = f" (and {count - 1} more pair(s))" if count > 1 else ""
        return (
            f"rows look serially correlated: the lag-1 autocorrelation of the {name} differences "
            f"{names[a]} - {names[b]} is {rho[j]:.3f}{more}, outside ±{band:.3f} (its 99 % band for independent "
            f"rows); the bootstrap intervals and the paired tests assume independent rows: give "
            f"{option('block_size', 'N')} (or auto) for rows in time order, or {option('cluster', 'COLUMN')} for "
            "groups of related rows"
        )
