"""Containers built directly from Python (``uqeval.Samples(...)``, outside an API call) phrase their errors
for Python, as the API does; built by the command line's loader, the same errors name its flags."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

import uqeval
from uqeval.cli import app
from uqeval.errors import InputError, front_end


@pytest.mark.parametrize(
    ("build", "python_words", "cli_words"),
    [
        (lambda: uqeval.Samples(np.zeros((3, 1)), y_true=np.zeros(3)), "(use mean=)", "(use --mean)"),
        (
            lambda: uqeval.Quantiles(np.array([[2.0, 1.0]]), levels=[0.1, 0.9], y_true=np.zeros(1)),
            "pass fix_crossing=True",
            None,
        ),
        (
            lambda: uqeval.Categorical(np.array([[0.5, 0.6]]), y_true=np.zeros(1)),
            "pass renormalize=True",
            None,
        ),
        (
            lambda: uqeval.Point(np.zeros(2), y_true=np.array([np.nan, 1.0])),
            "drop those rows first, or pass nan_policy='omit' (uqeval.evaluate drops them)",
            None,
        ),
    ],
)
def test_a_container_built_directly_speaks_python(build, python_words, cli_words):
    with pytest.raises(InputError) as exc:
        build()
    assert python_words in str(exc.value) and "--" not in str(exc.value)
    if cli_words is not None:  # built by uqeval's own code (as the loader builds it): the running front end's
        scope = {"__name__": "uqeval.io.load", "np": np, "uqeval": uqeval}
        with front_end("cli"), pytest.raises(InputError) as inner:
            exec("uqeval.Samples(np.zeros((3, 1)), y_true=np.zeros(3))", scope)
        assert cli_words in str(inner.value)


def test_the_cli_loader_still_names_flags(tmp_path):
    f = tmp_path / "s.csv"
    f.write_text("y,s_0\n1,2\n3,4\n")
    r = CliRunner().invoke(app, ["score", str(f)])
    assert r.exit_code == 3 and "(use --mean)" in r.stderr, r.output


def test_valid_containers_and_replace_are_unchanged():
    g = uqeval.Gaussian(np.zeros(4), np.ones(4), y_true=np.arange(4.0))
    sub = g.subset(slice(0, 2))
    assert sub.n == 2 and isinstance(sub, uqeval.Gaussian)
    assert uqeval.evaluate(g)["crps"] == pytest.approx(uqeval.crps_normal(np.arange(4.0), 0.0, 1.0))
