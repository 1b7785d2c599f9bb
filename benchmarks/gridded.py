"""Gridded ensembles (issue 41): uqeval against ``scores`` and ``xskillscore`` on the same NetCDF/Zarr files.

    python benchmarks/gridded.py                                  # 365 x 64 x 128 grid, 50 members
    python benchmarks/gridded.py --grid 60,16,32 --members 20     # a quick run
    python benchmarks/gridded.py --ref-python /work/venv-ref41/bin/python --format zarr

Builds one file holding an ensemble ``t2m(time, lat, lon, member)`` and its observations ``y(time, lat, lon)``
(float64) in a temporary directory (NetCDF, or a Zarr store chunked along ``time``), then times, each in a
child process of its own (wall time, and peak resident memory from ``getrusage`` of that child):

- ``uqeval score FILE --preserve-dims lat,lon --groups scoring_rule,calibration_tests -o metrics.nc`` (what
  the references compute: CRPS and the rank histogram, with their siblings in those groups: the fair CRPS,
  the rank histogram's chi-squared test, ...), on the engine ``--engine`` says; and, as ``uqeval-all``, the
  same with ``--diagnostics`` and no ``--groups`` (every per-cell metric uqeval computes on many cells and
  every metric of the whole data: MAE, the PIT histogram, coverage, the exact median in a second pass, ...);
- ``scores``: ``crps_for_ensemble(method="ecdf")`` and ``rank_histogram`` with ``preserve_dims=["lat",
  "lon"]``;
- ``xskillscore``: ``crps_ensemble`` and ``rank_histogram`` over ``time``.

Wall time on a shared machine moves with the others' load; the CPU time (user + system of the child) is
printed beside it.

The reference libraries run from ``--ref-python`` (a side environment; uqeval never imports them), and their
per-cell CRPS and rank counts are checked against uqeval's metrics.nc. Run it from a directory outside the
repository (``cd /tmp``) so that ``python -m uqeval`` imports the installed package. Figures are printed,
never asserted.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

#: runs a command in a child and prints its wall time and the child's peak RSS (one JSON line)
_WRAP = textwrap.dedent(
    """
    import json, resource, subprocess, sys, time
    t0 = time.perf_counter()
    p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = {"wall": wall, "cpu": use.ru_utime + use.ru_stime, "rss_mb": use.ru_maxrss / 1024}  # (kB on Linux)
    print(json.dumps({**out, "rc": p.returncode, "err": p.stderr[-1500:]}))
    """
)

_SCORES = textwrap.dedent(
    """
    import sys, numpy as np, xarray as xr
    from scores.probability import crps_for_ensemble, rank_histogram
    path, out = sys.argv[1], sys.argv[2]
    ds = xr.open_zarr(path, chunks=None) if path.endswith(".zarr") else xr.open_dataset(path)
    fc, obs = ds["t2m"].load(), ds["y"].load()
    crps = crps_for_ensemble(fc, obs, "member", method="ecdf", preserve_dims=["lat", "lon"])
    rank = rank_histogram(fc, obs, "member", preserve_dims=["lat", "lon"])
    np.savez(out, crps=crps.transpose("lat", "lon").values, rank=rank.transpose("lat", "lon", ...).values)
    """
)

_XSKILL = textwrap.dedent(
    """
    import sys, numpy as np, xarray as xr, xskillscore as xs
    path, out = sys.argv[1], sys.argv[2]
    ds = xr.open_zarr(path, chunks=None) if path.endswith(".zarr") else xr.open_dataset(path)
    fc, obs = ds["t2m"].load(), ds["y"].load()
    crps = xs.crps_ensemble(obs, fc, member_dim="member", dim="time")
    rank = xs.rank_histogram(obs, fc, dim="time", member_dim="member")
    np.savez(out, crps=crps.transpose("lat", "lon").values, rank=rank.transpose("lat", "lon", ...).values)
    """
)


def build(directory: Path, grid: tuple[int, int, int], members: int, fmt: str, chunk: int) -> Path:
    """The forecast file (targets and ensemble; seeded), written once per size and format."""
    import numpy as np
    import xarray as xr

    t, nlat, nlon = grid
    path = directory / f"gridded_{t}x{nlat}x{nlon}x{members}.{'zarr' if fmt == 'zarr' else 'nc'}"
    if path.exists():
        return path
    rng = np.random.default_rng(41)
    y = rng.normal(size=(t, nlat, nlon))
    ens = np.empty((t, nlat, nlon, members))
    for i in range(0, t, 16):  # a slab at a time: one copy of the ensemble in memory
        ens[i : i + 16] = y[i : i + 16, ..., None] + 0.2 + rng.normal(scale=1.1, size=ens[i : i + 16].shape)
    ds = xr.Dataset(
        {"y": (("time", "lat", "lon"), y), "t2m": (("time", "lat", "lon", "member"), ens)},
        coords={
            "time": np.arange(t),
            "lat": np.linspace(-90 + 90 / nlat, 90 - 90 / nlat, nlat),
            "lon": np.arange(nlon) * (360.0 / nlon),
            "member": np.arange(members),
        },
    )
    del ens
    if fmt == "zarr":
        ds.chunk({"time": chunk}).to_zarr(path, mode="w")
    else:
        ds.to_netcdf(path)
    return path


def timed(cmd: list[str], ok: tuple[int, ...] = (0,)) -> dict:
    """Wall time, CPU time and peak RSS of ``cmd`` run in a child of a fresh process (so its getrusage is that
    child's); ``ok``: the exit codes of a run that worked (uqeval exits 1 for a failed verdict)."""
    p = subprocess.run([sys.executable, "-c", _WRAP, *cmd], capture_output=True, text=True, check=True)
    out = json.loads(p.stdout.strip().splitlines()[-1])
    out["ok"] = out["rc"] in ok
    if not out["ok"]:  # the exception's last line (xskillscore: properscoring's N x M x M array)
        last = next((line for line in reversed(out["err"].splitlines()) if line.strip()), "")
        print(f"{Path(cmd[1]).name if len(cmd) > 1 else cmd[0]}: exit {out['rc']}: {last}", file=sys.stderr)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grid", default="365,64,128", help="time,lat,lon sizes (default 365,64,128)")
    ap.add_argument("--members", type=int, default=50)
    ap.add_argument("--format", choices=("netcdf", "zarr"), default="netcdf")
    ap.add_argument("--chunk", type=int, default=30, help="Zarr chunk length along time")
    ap.add_argument("--engine", default="stream", help="uqeval's --engine (stream, dask, memory, auto)")
    ap.add_argument(
        "--ref-python", default="/work/venv-ref41/bin/python", help="python with scores, xskillscore"
    )
    ap.add_argument("--dir", default=None, help="where the files go (default: a temporary directory)")
    ap.add_argument(
        "--skip", action="append", default=[], help="uqeval, uqeval-all, scores or xskillscore (repeatable)"
    )
    a = ap.parse_args()
    grid = tuple(int(v) for v in a.grid.split(","))
    assert len(grid) == 3, "--grid time,lat,lon"
    with tempfile.TemporaryDirectory(prefix="uqeval-gridded-") as tmp:
        root = Path(a.dir) if a.dir else Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        path = build(root, grid, a.members, a.format, a.chunk)  # type: ignore[arg-type]
        gb = grid[0] * grid[1] * grid[2] * (a.members + 1) * 8 / 1e9
        print(
            f"{path.name}: {grid[0]} x {grid[1]} x {grid[2]} grid, {a.members} members ({gb:.2f} GB float64)"
        )
        results: dict[str, dict] = {}
        metrics = root / "metrics.nc"
        if "uqeval" not in a.skip:
            cmd = [sys.executable, "-m", "uqeval", "score", str(path), "--preserve-dims", "lat,lon"]
            cmd += ["--engine", a.engine, "-f", "json"]
            # what the references compute: CRPS (group scoring_rule) and the rank histogram (calibration_tests)
            results["uqeval"] = timed(
                cmd + ["--groups", "scoring_rule,calibration_tests", "-o", str(metrics)], ok=(0, 1)
            )
            if "uqeval-all" not in a.skip:  # every metric of the whole data and every per-cell one
                everything = root / "metrics_all.nc"
                results["uqeval-all"] = timed(cmd + ["--diagnostics", "-o", str(everything)], ok=(0, 1))
        for name, code in (("scores", _SCORES), ("xskillscore", _XSKILL)):
            if name in a.skip:
                continue
            script = root / f"run_{name}.py"
            script.write_text(code)
            results[name] = timed([a.ref_python, str(script), str(path), str(root / f"{name}.npz")])
        for name, r in results.items():
            failed = "" if r["ok"] else f"  (failed: exit {r['rc']})"
            print(
                f"{name:12s} {r['wall']:8.2f} s wall {r['cpu']:8.2f} s CPU {r['rss_mb']:9.0f} MB peak RSS{failed}"
            )
        results = {n: r for n, r in results.items() if r["ok"]}
        refs = [r for n, r in results.items() if not n.startswith("uqeval")]
        if "uqeval" in results and refs:
            best = min(refs, key=lambda r: r["wall"])
            u = results["uqeval"]
            cpu = min(refs, key=lambda r: r["cpu"])
            print(
                f"uqeval vs the faster reference: {best['wall'] / u['wall']:.2f}x faster (wall), "
                f"{cpu['cpu'] / u['cpu']:.2f}x (CPU time), {u['rss_mb'] / best['rss_mb']:.2f}x its peak memory"
            )
        if "uqeval" in results:
            check(metrics, root, [n for n in results if not n.startswith("uqeval")])


def check(metrics: Path, root: Path, names: list[str]) -> None:
    """uqeval's per-cell CRPS and rank counts against each reference's (largest absolute difference)."""
    import numpy as np
    import xarray as xr

    with xr.open_dataset(metrics) as m:
        crps = m["scoring_rule.crps"].transpose("lat", "lon").values
        n = m["n_rows"].transpose("lat", "lon").values
        rank = m["calibration_tests.rank_histogram"].transpose("lat", "lon", ...).values
    for name in names:
        ref = np.load(root / f"{name}.npz")
        counts = ref["rank"] * (n[..., None] if name == "scores" else 1)  # scores: relative frequencies
        print(
            f"{name:12s} max |crps - uqeval| = {np.max(np.abs(ref['crps'] - crps)):.2e}, "
            f"max |rank counts - uqeval| = {np.max(np.abs(counts - rank)):.2e}"
        )


if __name__ == "__main__":
    main()
