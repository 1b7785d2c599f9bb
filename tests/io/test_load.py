"""Reading files into validated containers; every bad input names file, column and row."""

import gzip
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from uqeval.config import make_settings
from uqeval.errors import InputError, SchemaError
from uqeval.io.load import load_predictions
from uqeval.predictions import Gaussian

from ..conftest import SAMPLE, write_table

# these tests call the core directly and check the flags its messages name
pytestmark = pytest.mark.usefixtures("cli_voice")


def test_parquet_and_csv_agree(tmp_path, gaussian_cols):
    a = load_predictions(write_table(tmp_path / "a.parquet", gaussian_cols)).prediction
    b = load_predictions(write_table(tmp_path / "a.csv", gaussian_cols)).prediction
    assert isinstance(a, Gaussian)
    np.testing.assert_allclose(a.std, b.std, rtol=1e-15)
    np.testing.assert_allclose(a.y_true, b.y_true, rtol=1e-15)


def test_gzipped_csv(tmp_path, gaussian_cols):
    plain = write_table(tmp_path / "a.csv", gaussian_cols)
    gz = tmp_path / "a.csv.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    assert load_predictions(gz).prediction.n == 300


def test_variance_is_converted(tmp_path, gaussian_cols):
    cols = {"y": gaussian_cols["y"], "mean": gaussian_cols["mu"], "var": gaussian_cols["sigma"] ** 2}
    pred = load_predictions(write_table(tmp_path / "v.parquet", cols)).prediction
    np.testing.assert_allclose(pred.std, gaussian_cols["sigma"], rtol=1e-12)


@pytest.mark.parametrize(
    "bad,match",
    [
        (np.nan, r"column 'sigma' \(first at row 17\), found NaN"),
        (np.inf, r"column 'sigma' \(first at row 17\), found inf"),
        (0.0, r"std must be > 0: 1 non-positive value\(s\) in column 'sigma' \(first at row 17\)"),
        (-1.0, r"std must be > 0: .*row 17"),
    ],
)
def test_bad_std_names_column_and_row(tmp_path, gaussian_cols, bad, match):
    gaussian_cols["sigma"][17] = bad
    with pytest.raises(InputError, match=match):
        load_predictions(write_table(tmp_path / "b.parquet", gaussian_cols))


def test_nan_policy_omit_drops_and_counts(tmp_path, gaussian_cols):
    gaussian_cols["y"][[3, 40]] = np.nan
    gaussian_cols["mu"][5] = np.inf
    loaded = load_predictions(
        write_table(tmp_path / "b.parquet", gaussian_cols), make_settings(nan_policy="omit")
    )
    assert loaded.info["n_dropped"] == 3 and loaded.prediction.n == 297
    assert loaded.info["n_rows"] == 300


def test_non_numeric_column_names_row(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("y,mean,std\n1,2,1\n1,2,abc\n")
    with pytest.raises(SchemaError, match=r"column 'std' is not numeric \(row 1 holds 'abc'\)"):
        load_predictions(p)


def test_empty_header_only_corrupt_directory_and_extension(tmp_path):
    empty = tmp_path / "e.csv"
    empty.write_text("")
    with pytest.raises(InputError, match="file is empty"):
        load_predictions(empty)
    header = tmp_path / "h.csv"
    header.write_text("y,mean,std\n")
    with pytest.raises(InputError, match="no data rows"):
        load_predictions(header)
    corrupt = tmp_path / "c.parquet"
    corrupt.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(InputError, match="cannot read Parquet"):
        load_predictions(corrupt)
    d = tmp_path / "d.parquet"
    d.mkdir()
    with pytest.raises(InputError, match="is a directory"):
        load_predictions(d)
    with pytest.raises(InputError, match="unsupported file type"):
        load_predictions(tmp_path / "x.xlsx")
    with pytest.raises(InputError, match="does not exist"):
        load_predictions(tmp_path / "missing.csv")


def test_ragged_csv_is_an_error(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("y,mean,std\n1,2,1\n1,2,3,4\n")
    with pytest.raises(
        InputError, match=r"cannot read CSV data at row 1 \(line 3: 4 fields, the header has 3\)"
    ):
        load_predictions(p)


def test_missing_target(tmp_path):
    p = write_table(tmp_path / "m.parquet", {"mean": [1.0, 2.0], "std": [1.0, 1.0]})
    with pytest.raises(InputError, match="no target column.*--y"):
        load_predictions(p)


def test_ragged_list_column(tmp_path):
    p = tmp_path / "l.parquet"
    pq.write_table(pa.table({"y": [1.0, 2.0], "samples": pa.array([[1.0, 2.0], [1.0, 2.0, 3.0]])}), p)
    with pytest.raises(InputError, match="ragged list column 'samples': row 1 has 3 values"):
        load_predictions(p)


def test_lower_above_upper(tmp_path):
    p = write_table(
        tmp_path / "i.parquet", {"y": [1.0, 2.0, 3.0], "lower": [0.0, 3.0, 2.0], "upper": [2.0, 2.5, 4.0]}
    )
    with pytest.raises(
        InputError, match=r"lower > upper in 1 row\(s\).*'lower' and 'upper' \(first at row 1"
    ):
        load_predictions(p)


def test_crossing_quantiles(tmp_path):
    cols = {"y": [0.0, 0.0, 0.0], "q_0.1": [-1.0, -1.0, 1.0], "q_0.9": [1.0, 1.0, -1.0]}
    p = write_table(tmp_path / "q.parquet", cols)
    with pytest.raises(
        InputError, match=r"crossing quantiles in 1 row\(s\): column 'q_0.9' < 'q_0.1' \(first at row 2"
    ):
        load_predictions(p)
    loaded = load_predictions(p, make_settings(fix_crossing=True))
    assert loaded.info["n_fixed_crossing"] == 1


def test_off_simplex_and_bad_labels(tmp_path):
    p = write_table(tmp_path / "c.parquet", {"label": [0, 1], "p_0": [0.5, 0.2], "p_1": [0.5, 0.9]})
    with pytest.raises(InputError, match=r"off the simplex.*first at row 1, sum 1.1"):
        load_predictions(p)
    p = write_table(tmp_path / "c2.parquet", {"label": [0, 2], "p_0": [0.5, 0.2], "p_1": [0.5, 0.8]})
    with pytest.raises(
        InputError, match=r"labels must be integers in 0..1.*'label' \(first at row 1, found 2"
    ):
        load_predictions(p)


@pytest.mark.parametrize("logits", [False, True])
def test_class_columns_of_parquet_decoded_in_batches_equal_csv(tmp_path, logits):
    # a Parquet file's probability (or logit) columns are decoded batch by batch into the (N, K) block:
    # the values of the whole-column read of a CSV file, also past a batch (and a block) boundary
    rng = np.random.default_rng(3)
    n, k = 70_000, 4
    z = rng.normal(size=(n, k))
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    prefix = "logit" if logits else "p"
    cols = {"label": rng.integers(0, k, n), **{f"{prefix}_{j}": (z if logits else p)[:, j] for j in range(k)}}
    settings = make_settings(logits=logits) if logits else None
    a = load_predictions(write_table(tmp_path / "c.parquet", cols), settings).prediction
    b = load_predictions(write_table(tmp_path / "c.csv", cols), settings).prediction
    np.testing.assert_array_equal(a.proba, b.proba)
    np.testing.assert_array_equal(a.labels, cols["label"])
    if not logits:
        np.testing.assert_array_equal(a.proba, p)


def test_input_file_is_not_modified(tmp_path, gaussian_cols):
    p = write_table(tmp_path / "a.parquet", gaussian_cols)
    before = (p.read_bytes(), os.stat(p).st_mtime_ns)
    load_predictions(p)
    assert (p.read_bytes(), os.stat(p).st_mtime_ns) == before


def test_sample_data_files_all_load():
    kinds = {
        f.name: load_predictions(f).prediction.kind
        for f in SAMPLE.glob("*.parquet")
        if f.name != "train.parquet"
    }
    kinds.update({f.name: load_predictions(f).prediction.kind for f in SAMPLE.glob("*.csv")})
    assert set(kinds.values()) >= {"gaussian", "point", "intervals", "quantiles", "samples", "categorical"}


def test_atomic_writes_get_normal_permissions(tmp_path):
    import os

    from uqeval.io.writers import write_json

    out = tmp_path / "s.json"
    write_json(out, {"a": float("nan"), "b": 1})
    mask = os.umask(0)
    os.umask(mask)
    assert (out.stat().st_mode & 0o777) == 0o666 & ~mask  # as a plain open(path, "w") would give
    assert out.read_text() == '{\n  "a": null,\n  "b": 1\n}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]  # no temporary file left


def test_renormalize_rescales_small_drift_only(tmp_path):
    p = write_table(tmp_path / "c.parquet", {"label": [0, 1], "p_0": [0.5, 0.2], "p_1": [0.51, 0.79]})
    loaded = load_predictions(p, make_settings(renormalize=True))
    np.testing.assert_allclose(loaded.prediction.proba.sum(axis=1), 1.0, rtol=1e-15)
    p = write_table(tmp_path / "c2.parquet", {"label": [0, 1], "p_0": [0.5, 0.2], "p_1": [0.5, 0.3]})
    with pytest.raises(InputError, match=r"first at row 1, sum 0.5\); drift above 0.05 is not rescaled"):
        load_predictions(p, make_settings(renormalize=True))


def test_quantile_and_probability_blocks_are_decoded_batch_by_batch(tmp_path, monkeypatch):
    """Parquet quantile and class-probability columns go straight into their block (no whole Arrow table
    next to it); the quantile block is column-major and kept by the container as it is; CSV gives the same."""
    import uqeval.io.load as load_mod

    made = []
    real = load_mod.read_block

    def spy(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(load_mod, "read_block", spy)
    rng = np.random.default_rng(0)
    q = np.sort(rng.normal(size=(50, 3)), axis=1)
    qcols = {"y": rng.normal(size=50), "q_0.1": q[:, 0], "q_0.5": q[:, 1], "q_0.9": q[:, 2]}
    pred = load_predictions(write_table(tmp_path / "q.parquet", qcols)).prediction
    assert pred.quantiles is made[-1] and pred.quantiles.flags.f_contiguous
    assert np.array_equal(
        pred.quantiles, load_predictions(write_table(tmp_path / "q.csv", qcols)).prediction.quantiles
    )
    p = rng.dirichlet(np.ones(3), size=50)
    pcols = {"label": rng.integers(0, 3, 50), **{f"p_{k}": p[:, k] for k in range(3)}}
    pred = load_predictions(write_table(tmp_path / "p.parquet", pcols)).prediction
    assert pred.kind == "categorical" and pred.proba is made[-1]
    assert np.array_equal(
        pred.proba, load_predictions(write_table(tmp_path / "p.csv", pcols)).prediction.proba
    )
