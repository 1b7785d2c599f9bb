"""Ensemble members, Dirichlet outputs and per-member log-likelihoods: detection, loading, validation.

Every bad input names the file's column and the first bad row (``rows`` count from 0).
"""

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from uqeval.config import make_settings
from uqeval.errors import InputError, SchemaError
from uqeval.io.columns import plan_columns
from uqeval.io.load import load_predictions
from uqeval.predictions import Categorical, Dirichlet, Gaussian, LogLikelihood, MemberCategorical

from ..conftest import SAMPLE, write_table

# these tests call the core directly and check the flags its messages name
pytestmark = pytest.mark.usefixtures("cli_voice")

N, M, K = 40, 3, 4


def _members(seed: int = 0, n: int = N, m: int = M, k: int = K) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k), size=(n, m))
    labels = rng.integers(0, k, n)
    return p, labels


def _flat_cols(p: np.ndarray, labels: np.ndarray) -> dict:
    _, m, k = p.shape
    return {"label": labels, **{f"m{j}_p_{c}": p[:, j, c] for j in range(m) for c in range(k)}}


def _list_file(path, p: np.ndarray, labels: np.ndarray):
    nested = pa.array(
        [[list(map(float, member)) for member in row] for row in p], type=pa.list_(pa.list_(pa.float64()))
    )
    pq.write_table(pa.table({"label": labels, "member_proba": nested}), path)
    return path


# --------------------------------------------------------------------------- detection
def test_member_columns_are_detected_and_reshaped_member_major(tmp_path):
    p, labels = _members()
    cols = _flat_cols(p, labels)
    shuffled = dict(reversed(list(cols.items())))  # file order must not matter
    pred = load_predictions(write_table(tmp_path / "e.parquet", shuffled)).prediction
    assert isinstance(pred, MemberCategorical) and pred.kind == "members"
    assert pred.member_proba.shape == (N, M, K)
    np.testing.assert_array_equal(pred.member_proba, p)
    np.testing.assert_array_equal(pred.labels, labels)
    np.testing.assert_allclose(pred.proba, p.mean(axis=1), rtol=1e-15)
    assert pred.columns["member_proba"][: K + 1] == ["m0_p_0", "m0_p_1", "m0_p_2", "m0_p_3", "m1_p_0"]
    assert pred.columns["y_true"] == "label"


def test_csv_flat_columns_and_parquet_list_of_lists_agree(tmp_path):
    p, labels = _members(1)
    a = load_predictions(write_table(tmp_path / "e.csv", _flat_cols(p, labels))).prediction
    b = load_predictions(_list_file(tmp_path / "l.parquet", p, labels)).prediction
    assert isinstance(b, MemberCategorical) and b.columns["member_proba"] == "member_proba"
    np.testing.assert_allclose(a.member_proba, b.member_proba, rtol=1e-15)
    np.testing.assert_array_equal(b.member_proba, p)


def test_mean_prediction_is_a_categorical():
    p, labels = _members(2)
    pred = MemberCategorical(y_true=labels.astype(float), member_proba=p)
    mean = pred.mean_prediction()
    assert isinstance(mean, Categorical)
    np.testing.assert_allclose(mean.proba, p.mean(axis=1), rtol=1e-15)
    np.testing.assert_array_equal(mean.labels, labels)


def test_plan_for_members_dirichlet_and_loglik():
    plan = plan_columns(["label", "m0_p_0", "m0_p_1", "m1_p_0", "m1_p_1", "loglik_0", "loglik_1"])
    assert plan.representation == "members" and plan.classes == 2
    assert plan.roles["member_proba"] == ["m0_p_0", "m0_p_1", "m1_p_0", "m1_p_1"]
    assert plan.roles["loglik"] == ["loglik_0", "loglik_1"] and plan.roles["y_true"] == "label"
    plan = plan_columns(["y", "alpha_1", "alpha_0"])
    assert plan.representation == "dirichlet" and plan.roles["alpha"] == ["alpha_0", "alpha_1"]
    plan = plan_columns(["loglik_0", "loglik_1", "shift"])
    assert plan.representation == "loglik" and "y_true" not in plan.roles
    plan = plan_columns(["y", "mu", "sigma", "loglik"], list_columns={"loglik"})
    assert (
        plan.representation == "gaussian" and plan.roles["loglik"] == "loglik" and "loglik" in plan.list_roles
    )


def test_members_next_to_plain_probabilities_is_ambiguous(tmp_path):
    p, labels = _members(3)
    cols = {**_flat_cols(p, labels), **{f"p_{c}": p.mean(axis=1)[:, c] for c in range(K)}}
    path = write_table(tmp_path / "a.parquet", cols)
    with pytest.raises(
        SchemaError, match=r"several representations \(categorical, members\).*--representation"
    ):
        load_predictions(path)
    assert load_predictions(path, make_settings(representation="members")).prediction.kind == "members"
    assert (
        load_predictions(path, make_settings(representation="categorical")).prediction.kind == "categorical"
    )


@pytest.mark.parametrize(
    "names,match",
    [
        (["label", "m0_p_0", "m0_p_1", "m1_p_0"], r"missing m1_p_1"),
        (["label", "m0_p_0", "m0_p_1", "m2_p_0", "m2_p_1"], r"without gaps; found members \[0, 2\]"),
        (["label", "m0_p_1", "m0_p_2", "m1_p_1", "m1_p_2"], r"found members \[0, 1\] and classes \[1, 2\]"),
        (["label", "m0_p_0", "m0_p_1", "M0_P_1", "m1_p_0", "m1_p_1"], r"'m0_p_1' and 'M0_P_1' name the same"),
    ],
)
def test_incomplete_member_grid_is_a_schema_error(names, match):
    with pytest.raises(SchemaError, match=match):
        plan_columns(names, path="f.csv")


# --------------------------------------------------------------------------- validation
def test_member_off_simplex_names_member_columns_and_row(tmp_path):
    p, labels = _members(4)
    p[7, 1, 2] += 0.01
    with pytest.raises(
        InputError,
        match=r"off the simplex in member 1 columns 'm1_p_0, m1_p_1, m1_p_2, m1_p_3' "
        r"\(first at row 7, sum 1.01\)",
    ) as err:
        load_predictions(write_table(tmp_path / "e.parquet", _flat_cols(p, labels)))
    assert err.value.fix == "renormalize"  # the CLI phrases it as --renormalize
    pred = load_predictions(
        write_table(tmp_path / "e.parquet", _flat_cols(p, labels)), make_settings(renormalize=True)
    ).prediction
    np.testing.assert_allclose(pred.member_proba.sum(axis=2), 1.0, rtol=1e-15)


def test_member_negative_and_nan_name_the_column_and_row(tmp_path):
    p, labels = _members(5)
    p[9, 2, 1] = -0.1
    with pytest.raises(
        InputError, match=r">= 0: 1 row\(s\) with negative values in column 'm2_p_1' \(first at row 9"
    ):
        load_predictions(write_table(tmp_path / "e.parquet", _flat_cols(p, labels)))
    p, labels = _members(5)
    p[11, 0, 3] = np.nan
    with pytest.raises(
        InputError, match=r"finite: 1 bad row\(s\) in column 'm0_p_3' \(first at row 11, found nan"
    ):
        load_predictions(write_table(tmp_path / "e.parquet", _flat_cols(p, labels)))
    with pytest.raises(InputError, match=r"column 'member_proba\[0\]\[3\]' \(first at row 11, found nan"):
        load_predictions(_list_file(tmp_path / "l.parquet", p, labels))


def test_nan_policy_omit_drops_member_rows(tmp_path):
    p, labels = _members(6)
    p[[3, 30], 1, 0] = np.nan
    loaded = load_predictions(
        write_table(tmp_path / "e.parquet", _flat_cols(p, labels)), make_settings(nan_policy="omit")
    )
    assert loaded.info["n_dropped"] == 2 and loaded.prediction.n == N - 2
    assert 3 not in loaded.prediction.rows and 30 not in loaded.prediction.rows


def test_member_labels_out_of_range_and_single_member(tmp_path):
    p, labels = _members(7)
    labels[5] = K
    with pytest.raises(
        InputError, match=rf"labels must be integers in 0..{K - 1}.*'label' \(first at row 5, found {K}"
    ):
        load_predictions(write_table(tmp_path / "e.parquet", _flat_cols(p, labels)))
    p, labels = _members(7, m=1)
    with pytest.raises(InputError, match=r"at least 2 members, found 1 in 'm0_p_0, m0_p_1"):
        load_predictions(write_table(tmp_path / "e.parquet", _flat_cols(p, labels)))


def test_ragged_list_of_lists_names_row_and_member(tmp_path):
    def write(rows):
        data = pa.array(rows, type=pa.list_(pa.list_(pa.float64())))
        return pq.write_table(pa.table({"label": [0, 1, 0], "member_proba": data}), tmp_path / "r.parquet")

    write([[[0.5, 0.5], [0.4, 0.6]], [[0.5, 0.5], [0.4, 0.6]], [[1.0, 0.0]]])
    with pytest.raises(
        InputError, match=r"ragged list column 'member_proba': row 2 has 1 member lists but row 0 has 2"
    ):
        load_predictions(tmp_path / "r.parquet")
    write([[[0.5, 0.5], [0.4, 0.6]], [[0.5, 0.5], [0.2, 0.2, 0.6]], [[0.5, 0.5], [0.4, 0.6]]])
    with pytest.raises(
        InputError, match=r"ragged list column 'member_proba': row 1 member 1 has 3 class values"
    ):
        load_predictions(tmp_path / "r.parquet")
    pq.write_table(
        pa.table({"label": [0, 1], "member_proba": pa.array([[0.5, 0.5], [0.1, 0.9]])}),
        tmp_path / "flat.parquet",
    )
    with pytest.raises(SchemaError, match=r"'member_proba' must be a list of lists"):
        load_predictions(tmp_path / "flat.parquet")


# --------------------------------------------------------------------------- Dirichlet
def test_dirichlet_columns_and_list_column(tmp_path):
    rng = np.random.default_rng(8)
    alpha = rng.gamma(2.0, 1.0, (N, 3)) + 0.1
    labels = rng.integers(0, 3, N)
    a = load_predictions(
        write_table(
            tmp_path / "d.parquet", {"label": labels, **{f"alpha_{c}": alpha[:, c] for c in range(3)}}
        )
    ).prediction
    b = load_predictions(
        write_table(tmp_path / "l.parquet", {"label": labels, "alpha": pa.array(list(alpha))})
    )
    assert isinstance(a, Dirichlet) and isinstance(b.prediction, Dirichlet)
    np.testing.assert_array_equal(a.alpha, b.prediction.alpha)
    np.testing.assert_allclose(a.proba, alpha / alpha.sum(1, keepdims=True), rtol=1e-15)
    np.testing.assert_allclose(a.mean_prediction().proba.sum(1), 1.0, rtol=1e-15)


def test_dirichlet_alpha_must_be_positive(tmp_path):
    alpha = np.ones((N, 3))
    alpha[13, 2] = 0.0
    cols = {"label": np.zeros(N), **{f"alpha_{c}": alpha[:, c] for c in range(3)}}
    with pytest.raises(
        InputError, match=r"alpha values must be > 0: 1 bad row\(s\) in column 'alpha_2' \(first at row 13"
    ):
        load_predictions(write_table(tmp_path / "d.parquet", cols))


# --------------------------------------------------------------------------- log-likelihoods
def test_loglik_rides_along_with_a_gaussian(tmp_path, gaussian_cols):
    ll = np.random.default_rng(9).normal(-1, 0.3, (300, 4))
    cols = {**gaussian_cols, **{f"loglik_{j}": ll[:, j] for j in range(4)}}
    pred = load_predictions(write_table(tmp_path / "g.parquet", cols)).prediction
    assert isinstance(pred, Gaussian)
    np.testing.assert_array_equal(pred.loglik, ll)
    sub = pred.subset(np.array([5, 7]))  # --by keeps the members aligned with the rows
    np.testing.assert_array_equal(sub.loglik, ll[[5, 7]])


def test_loglik_alone_needs_no_target(tmp_path):
    ll = np.random.default_rng(10).normal(-1, 0.3, (50, 6))
    loaded = load_predictions(write_table(tmp_path / "l.csv", {f"loglik_{j}": ll[:, j] for j in range(6)}))
    assert isinstance(loaded.prediction, LogLikelihood) and loaded.prediction.y_true is None
    assert loaded.info["representation"] == "loglik" and loaded.prediction.n == 50
    np.testing.assert_allclose(loaded.prediction.loglik, ll, rtol=1e-15)
    listed = load_predictions(write_table(tmp_path / "l.parquet", {"loglik": pa.array(list(ll))})).prediction
    np.testing.assert_array_equal(listed.loglik, ll)


def test_bad_loglik_names_column_and_row(tmp_path):
    ll = np.random.default_rng(11).normal(-1, 0.3, (50, 3))
    ll[21, 1] = np.inf
    with pytest.raises(
        InputError,
        match=r"loglik values must be finite: 1 bad row\(s\) in column 'loglik_1' "
        r"\(first at row 21, found inf",
    ):
        load_predictions(write_table(tmp_path / "l.parquet", {f"loglik_{j}": ll[:, j] for j in range(3)}))
    with pytest.raises(InputError, match=r"at least 2 members per row, found 1 in 'loglik_0'"):
        load_predictions(write_table(tmp_path / "one.parquet", {"loglik_0": ll[:, 0]}))
    with pytest.raises(SchemaError, match=r"log-likelihood columns must be numbered 0..1"):
        load_predictions(write_table(tmp_path / "gap.parquet", {"loglik_0": ll[:, 0], "loglik_2": ll[:, 2]}))


def test_sample_files_load():
    assert load_predictions(SAMPLE / "ensemble_classification.parquet").prediction.loglik.shape == (2000, 5)
    assert load_predictions(SAMPLE / "dirichlet.parquet").prediction.kind == "dirichlet"
    assert load_predictions(SAMPLE / "loglik.parquet").prediction.kind == "loglik"
