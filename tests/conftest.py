from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"


def write_table(path: Path, cols: dict) -> Path:
    table = pa.table(cols)
    if str(path).endswith((".csv", ".csv.gz")):
        pacsv.write_csv(table, path)
    else:
        pq.write_table(table, path)
    return path


@pytest.fixture
def gaussian_cols() -> dict:
    rng = np.random.default_rng(0)
    n = 300
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 1.5, n)
    y = mean + std * rng.normal(size=n)
    return {"y": y, "mu": mean, "sigma": std}


@pytest.fixture
def gaussian_file(tmp_path, gaussian_cols) -> Path:
    return write_table(tmp_path / "preds.parquet", gaussian_cols)
