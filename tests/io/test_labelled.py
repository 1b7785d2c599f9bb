"""NetCDF and Zarr inputs (issue 41): a labelled Dataset flattened to rows is one more source.

The equality tests write the same data flattened by pandas (coordinates as columns) and run the ordinary
command line on that table: the numbers must agree to 1e-12, grouped by ``--by`` where the labelled run
keeps dimensions with ``--preserve-dims`` / ``--reduce-dims``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

xr = pytest.importorskip("xarray")
pytest.importorskip("h5netcdf")
pytest.importorskip("zarr")
pd = pytest.importorskip("pandas")

from uqeval.cli import app  # noqa: E402

runner = CliRunner()

T, LAT, LON, M = 6, 3, 4, 5
LATS = [-30.0, 12.5, 45.0]
LONS = [0.0, 90.0, 180.0, 270.0]


def _dataset(seed: int = 0):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=(T, LAT, LON))
    ens = y[..., None] + rng.normal(scale=1.3, size=(T, LAT, LON, M))
    return xr.Dataset(
        {"y": (("time", "lat", "lon"), y), "forecast": (("time", "lat", "lon", "member"), ens)},
        coords={
            "time": pd.date_range("2024-01-01", periods=T),
            "lat": LATS,
            "lon": LONS,
            "member": np.arange(M),
        },
    )


def _flat_table(ds, path):
    """The Dataset flattened by pandas: one row per (time, lat, lon), members as s_<j> columns."""
    base = ds["y"].to_dataframe().reset_index()
    wide = (
        ds["forecast"]
        .to_dataframe()
        .reset_index()
        .pivot_table(index=["time", "lat", "lon"], columns="member", values="forecast")
    )
    wide.columns = [f"s_{j}" for j in wide.columns]
    table = base.merge(wide.reset_index(), on=["time", "lat", "lon"])
    table["cos_lat"] = np.cos(np.deg2rad(table["lat"]))
    table.to_parquet(path, index=False)
    return table


def _score(*args: str) -> dict:
    result = runner.invoke(app, ["score", *args, "-f", "json"])
    assert result.exit_code == 0, result.output
    text = result.stdout
    return json.loads(text[text.index("{") :])


def _numbers(doc: dict, prefix: str = "") -> dict[str, float]:
    out: dict[str, float] = {}
    for k, v in doc.items():
        if isinstance(v, dict):
            out.update(_numbers(v, f"{prefix}{k}."))
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[prefix + k] = float(v)
    return out


def _same(a: dict, b: dict) -> None:
    na, nb = _numbers(a), _numbers(b)
    assert na.keys() == nb.keys()
    assert na == pytest.approx(nb, rel=1e-12, abs=1e-12, nan_ok=True)


@pytest.fixture
def files(tmp_path):
    ds = _dataset()
    ds.to_netcdf(tmp_path / "fc.nc")
    ds.chunk({"time": 2}).to_zarr(tmp_path / "fc.zarr", mode="w", consolidated=False)
    _flat_table(ds, tmp_path / "flat.parquet")
    return tmp_path


def test_netcdf_and_zarr_equal_the_flattened_table(files):
    table = _score(str(files / "flat.parquet"))
    nc = _score(str(files / "fc.nc"))
    assert nc["input"]["representation"] == "samples"
    assert nc["input"]["n_rows"] == T * LAT * LON
    _same(nc["metrics"], table["metrics"])
    _same(_score(str(files / "fc.zarr"), "--engine", "memory")["metrics"], table["metrics"])


def test_zarr_streams_in_chunks_equal_to_memory(files):
    memory = _score(str(files / "fc.zarr"), "--engine", "stream", "--chunk-rows", "1000")
    chunked = _score(str(files / "fc.zarr"), "--engine", "stream", "--chunk-rows", "7")
    _same(chunked["metrics"], memory["metrics"])


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_preserve_dims_equal_by_on_the_table(files, engine):
    table = _score(str(files / "flat.parquet"), "--by", "lat", "--engine", engine)
    nc = _score(str(files / "fc.nc"), "--preserve-dims", "lat", "--engine", engine)
    reduced = _score(str(files / "fc.nc"), "--reduce-dims", "time,lon", "--engine", engine)
    assert nc["groups"]["column"] == "cell"
    want = {f"lat={k}": v for k, v in table["groups"]["values"].items()}
    assert set(nc["groups"]["values"]) == set(want) == {"lat=-30", "lat=12.5", "lat=45"}
    for key, entry in nc["groups"]["values"].items():
        _same(entry["metrics"], want[key]["metrics"])
        _same(reduced["groups"]["values"][key]["metrics"], want[key]["metrics"])


def test_two_kept_dims_write_netcdf(files):
    out = files / "metrics.nc"
    doc = _score(str(files / "fc.nc"), "--preserve-dims", "lat,lon", "-o", str(out))
    assert len(doc["groups"]["values"]) == LAT * LON
    with xr.open_dataset(out) as m:
        assert m["scoring_rule.crps"].dims == ("lat", "lon")
        assert list(m["lat"].values) == LATS and list(m["lon"].values) == LONS
        for i, la in enumerate(LATS):
            for j, lo in enumerate(LONS):
                key = f"lat={la:g},lon={lo:g}"
                want = doc["groups"]["values"][key]["metrics"]["scoring_rule"]["crps"]
                assert float(m["scoring_rule.crps"][i, j]) == pytest.approx(want, rel=1e-12)
        assert (m["n_rows"].values == T).all()


def test_fully_reduced_is_the_usual_document(files):
    doc = _score(str(files / "fc.nc"), "--reduce-dims", "time,lat,lon")
    assert "groups" not in doc
    _same(doc["metrics"], _score(str(files / "fc.nc"))["metrics"])


def test_latitude_weights_equal_a_weights_column(files):
    table = _score(str(files / "flat.parquet"), "--weights", "cos_lat")
    nc = _score(str(files / "fc.nc"), "--weights", "lat")
    assert nc["input"]["weights"] == "cos(lat)"
    _same(nc["metrics"], table["metrics"])


def test_obs_file_aligned_by_coordinates(tmp_path):
    ds = _dataset(1)
    ds[["forecast"]].to_netcdf(tmp_path / "fc.nc")
    # other coordinate orders, one time missing, an extra lon the forecast lacks
    obs = ds[["y"]].isel(time=slice(1, None)).sortby("lat", ascending=False).rename(y="t2m")
    extra = obs.isel(lon=[0]).assign_coords(lon=[359.0])
    xr.concat([obs, extra], dim="lon").isel(lon=[3, 0, 4, 2, 1]).to_netcdf(tmp_path / "obs.nc")
    ds.isel(time=slice(1, None)).to_netcdf(tmp_path / "same.nc")
    result = runner.invoke(
        app, ["score", str(tmp_path / "fc.nc"), "--obs", str(tmp_path / "obs.nc"), "-f", "json"]
    )
    assert result.exit_code == 0, result.output
    assert "dropped 1 of the forecast's and 0 of the observations'" in result.output
    assert "dropped 0 of the forecast's and 1 of the observations'" in result.output
    doc = json.loads(result.stdout[result.stdout.index("{") :])
    _same(doc["metrics"], _score(str(tmp_path / "same.nc"))["metrics"])


def test_lead_time_and_quantiles(tmp_path):
    rng = np.random.default_rng(3)
    levels = [0.1, 0.5, 0.9]
    y = rng.normal(size=(4, 3, 2))
    q = np.sort(y[..., None] + rng.normal(size=(4, 3, 2, 3)), axis=-1)
    ds = xr.Dataset(
        {"y": (("time", "lead_time", "site"), y), "pred": (("time", "lead_time", "site", "quantile"), q)},
        coords={"time": np.arange(4), "lead_time": [6, 12, 24], "quantile": levels},
    )
    ds.to_netcdf(tmp_path / "q.nc")
    flat = ds["y"].to_dataframe().reset_index()
    for j, lv in enumerate(levels):
        flat[f"q_{lv:g}"] = q[..., j].reshape(-1)
    flat.to_parquet(tmp_path / "q.parquet", index=False)
    nc = _score(str(tmp_path / "q.nc"), "--preserve-dims", "lead_time")
    table = _score(str(tmp_path / "q.parquet"), "--by", "lead_time")
    assert nc["input"]["representation"] == "quantiles"
    for k, entry in table["groups"]["values"].items():
        _same(nc["groups"]["values"][f"lead_time={k}"]["metrics"], entry["metrics"])


def test_nan_values_follow_the_nan_policy(tmp_path):
    ds = _dataset()
    ds["y"][0, 1, 2] = np.nan
    ds.to_netcdf(tmp_path / "nan.nc")
    bad = runner.invoke(app, ["score", str(tmp_path / "nan.nc")])
    assert bad.exit_code == 3
    doc = _score(str(tmp_path / "nan.nc"), "--nan-policy", "omit")
    assert doc["input"]["n_dropped"] == 1


def _error(*args: str) -> str:
    result = runner.invoke(app, ["score", *args])
    assert result.exit_code == 3, result.output
    lines = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


def test_bad_inputs_are_one_clear_error(tmp_path):
    ds = _dataset()
    ds[["forecast"]].to_netcdf(tmp_path / "fc.nc")
    ds.to_netcdf(tmp_path / "both.nc")
    later = ds[["y"]].assign_coords(time=pd.date_range("2030-01-01", periods=T))
    later.to_netcdf(tmp_path / "later.nc")
    ds[["y"]].expand_dims(height=[2.0]).to_netcdf(tmp_path / "height.nc")
    fc, obs = str(tmp_path / "fc.nc"), tmp_path
    assert "do not overlap" in _error(fc, "--obs", str(obs / "later.nc"))
    assert "height" in _error(fc, "--obs", str(obs / "height.nc"))
    assert "'depth' is not a dimension" in _error(str(tmp_path / "both.nc"), "--preserve-dims", "depth")
    assert "--member-dim ens is not a dimension" in _error(str(tmp_path / "both.nc"), "--member-dim", "ens")
    assert "does not exist" in _error(str(tmp_path / "missing.nc"))


def test_grid_options_refused_for_tables(files):
    result = runner.invoke(app, ["score", str(files / "flat.parquet"), "--preserve-dims", "lat"])
    assert result.exit_code == 2, result.output
    assert "NetCDF" in result.output


def test_input_file_is_not_modified(files):
    before = (files / "fc.nc").read_bytes()
    _score(str(files / "fc.nc"), "--preserve-dims", "lat")
    assert (files / "fc.nc").read_bytes() == before


def test_gridded_guide_runs(tmp_path):
    """docs/guide/gridded.md, run here (its Python blocks are tagged ``py``: the generic page test runs without
    the xarray extra): the forecast script, the commands, and the map drawn from metrics.nc."""
    import runpy

    from .._docs import blocks, chdir, run_bash, shim, title
    from ..conftest import ROOT

    env = shim(tmp_path)
    ran, made, namespace = 0, False, {}  # the commands before the worked example illustrate (no files yet)
    for i, (lang, attrs, code) in enumerate(blocks(ROOT / "docs" / "guide" / "gridded.md")):
        if title(attrs) is not None:
            (tmp_path / title(attrs)).write_text(code, encoding="utf-8")
            continue
        for line in code.splitlines():
            if lang == "bash" and line.startswith("python "):
                with chdir(tmp_path):
                    runpy.run_path(line.split()[1], run_name="__main__")
                made = True
            elif lang == "bash" and line.startswith("uqeval ") and made:
                run_bash(line, tmp_path, env, f"gridded.md block {i + 1}")
                ran += 1
        if lang == "py":
            with chdir(tmp_path):
                exec(compile(code, f"gridded.md block {i + 1}", "exec"), namespace)  # noqa: S102 - our own docs
            ran += 1
    assert ran >= 4
    assert namespace["crps"] > 0
    overall = json.loads((tmp_path / "overall.json").read_text())
    assert overall["input"]["weights"] == "cos(lat)" and overall["input"]["n_rows"] == 29 * 5 * 8
    with xr.open_dataset(tmp_path / "metrics.nc") as m:
        assert m["scoring_rule.crps"].shape == (5, 8)
    assert (tmp_path / "crps_map.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_metric_map_refuses_a_wrong_shape(files):
    from uqeval.errors import InputError
    from uqeval.plots.maps import metric_map, plot_map

    with pytest.raises(InputError, match="expected \\(3, 4\\)"):
        plot_map(np.zeros((4, 3)), LONS, LATS)
    m = xr.Dataset({"crps": (("time",), np.zeros(2))})
    with pytest.raises(InputError, match="expected \\('lat', 'lon'\\)"):
        metric_map(m, "crps")


def test_python_evaluate_takes_a_dataset(files, tmp_path):
    import uqeval
    from uqeval.io.labelled import to_table

    with xr.open_dataset(files / "fc.nc") as ds:
        plain = uqeval.evaluate(ds)
        weighted = uqeval.evaluate(ds, weights="cos(lat)")
        ds[["forecast"]].to_netcdf(tmp_path / "fc_only.nc")
        ds[["y"]].isel(time=slice(2, None)).to_netcdf(tmp_path / "obs.nc")
        joined = uqeval.evaluate(to_table(ds["forecast"], obs=ds["y"].isel(time=slice(2, None))))
    cli = _score(str(files / "fc.nc"), "--engine", "memory")["metrics"]
    assert plain["scoring_rule.crps"] == pytest.approx(cli["scoring_rule"]["crps"], rel=1e-12)
    assert plain["accuracy.rmse"] == pytest.approx(cli["accuracy"]["rmse"], rel=1e-12)
    cli_w = _score(str(files / "fc.nc"), "--weights", "lat")["metrics"]
    assert weighted["scoring_rule.crps"] == pytest.approx(cli_w["scoring_rule"]["crps"], rel=1e-12)
    cli_obs = _score(str(tmp_path / "fc_only.nc"), "--obs", str(tmp_path / "obs.nc"))["metrics"]
    assert joined["scoring_rule.crps"] == pytest.approx(cli_obs["scoring_rule"]["crps"], rel=1e-12)
