"""Column detection: names, overrides, ambiguity, representations."""

import pytest

from uqeval.errors import SchemaError
from uqeval.io.columns import plan_columns

# these tests call the core directly and check the flags its messages name
pytestmark = pytest.mark.usefixtures("cli_voice")


def test_gaussian_aliases():
    plan = plan_columns(["Y", "mu", "sigma", "x"])
    assert plan.representation == "gaussian"
    assert plan.roles == {"std": "sigma", "y_true": "Y", "mean": "mu"}


def test_variance_column():
    plan = plan_columns(["target", "y_pred", "variance"])
    assert plan.roles["var"] == "variance" and plan.roles["mean"] == "y_pred"


def test_ambiguous_target_names_flag():
    with pytest.raises(SchemaError, match=r"ambiguous y_true column: 'y', 'target'.*--y"):
        plan_columns(["y", "target", "mean", "std"])


def test_override_wins_and_missing_override_lists_columns():
    plan = plan_columns(["y", "target", "mean", "std"], explicit={"y_true": "target"})
    assert plan.roles["y_true"] == "target"
    with pytest.raises(
        SchemaError, match=r"column 'nope' given for std \(--std\) not found; available columns: y"
    ):
        plan_columns(["y", "mean", "std"], explicit={"std": "nope"})


def test_std_and_var_both_is_ambiguous():
    with pytest.raises(SchemaError, match="both a std column"):
        plan_columns(["y", "mean", "std", "var"])


def test_quantile_names_and_levels():
    plan = plan_columns(["y", "q_0.9", "q0.1", "quantile_0.5"])
    assert plan.representation == "quantiles"
    assert plan.levels == [0.1, 0.5, 0.9]
    assert plan.roles["quantiles"] == ["q0.1", "quantile_0.5", "q_0.9"]


def test_samples_must_be_contiguous():
    assert plan_columns(["y", "s_1", "s_0"]).roles["samples"] == ["s_0", "s_1"]
    with pytest.raises(SchemaError, match="numbered 0..1"):
        plan_columns(["y", "s_0", "s_2"])


def test_interval_pairs():
    plan = plan_columns(["y", "pred", "lower_0.9", "upper_0.9", "lower_0.5", "upper_0.5"])
    assert plan.representation == "intervals" and plan.levels == [0.5, 0.9]
    with pytest.raises(SchemaError, match="pairs"):
        plan_columns(["y", "lower_0.9", "upper_0.8"])
    with pytest.raises(SchemaError, match="no upper bound"):
        plan_columns(["y", "lower"])


def test_several_representations_need_a_choice():
    with pytest.raises(SchemaError, match="several representations.*--representation"):
        plan_columns(["y", "mean", "std", "q_0.5"])
    assert (
        plan_columns(["y", "mean", "std", "q_0.5"], representation="quantiles").representation == "quantiles"
    )


def test_classification_columns():
    plan = plan_columns(["label", "p_0", "p_1", "p_2"])
    assert plan.representation == "categorical" and plan.roles["y_true"] == "label"
    plan = plan_columns(["y", "logit_0", "logit_1"])
    assert plan.logits and plan.roles["proba"] == ["logit_0", "logit_1"]


def test_point_only_and_nothing():
    assert plan_columns(["y", "pred"]).representation == "point"
    with pytest.raises(SchemaError, match="no prediction columns"):
        plan_columns(["y", "x"])


def test_level_columns_that_do_not_parse_are_errors():
    with pytest.raises(
        SchemaError, match=r"cannot parse the level of column 'q_median'; name it like q_0.05"
    ):
        plan_columns(["y", "q_0.1", "q_median"])
    with pytest.raises(
        SchemaError, match=r"column 'q_5' names level 5, which is not strictly between 0 and 1"
    ):
        plan_columns(["y", "q_5", "q_0.5"])
    with pytest.raises(
        SchemaError, match=r"cannot parse the level of column 'lower_ninety'; name it like lower_0.9"
    ):
        plan_columns(["y", "lower_ninety", "upper_0.9"])
