"""Fixtures shared by the streaming tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def dask_cluster():
    """One 2-process Dask LocalCluster for every --engine dask test of a (worker) process: starting one
    costs seconds (two worker processes importing numpy, pandas and pyarrow), the tests only submit to it."""
    distributed = pytest.importorskip(
        "distributed", reason="the Dask extra is not installed (pip install 'uqeval[dask]')"
    )
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0", silence_logs=50
    ) as c:
        yield c


@pytest.fixture(scope="session")
def scheduler():
    """The address of one in-process Dask cluster (2 worker threads over TCP on 127.0.0.1) for the tests that
    pass ``--scheduler``/``scheduler=``: cheaper to start than :func:`dask_cluster`'s processes."""
    distributed = pytest.importorskip(
        "distributed", reason="the Dask extra is not installed (pip install 'uqeval[dask]')"
    )
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        protocol="tcp://",
        dashboard_address="127.0.0.1:0",
        silence_logs=50,
    ) as cluster:
        yield cluster.scheduler_address
