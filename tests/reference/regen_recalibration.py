"""Recompute the Uncertainty Toolbox reference values frozen in tests/recalibration.

Run with the toolbox installed (not needed by the tests themselves):

    python tests/reference/regen_recalibration.py

Values printed with uncertainty-toolbox 0.1.1 are pasted into
tests/recalibration/test_isotonic.py and test_std_scaling.py.
"""

import numpy as np
import uncertainty_toolbox as uct
from uncertainty_toolbox.metrics_calibration import (
    get_proportion_lists_vectorized,
    mean_absolute_calibration_error,
    miscalibration_area,
    root_mean_squared_calibration_error,
)
from uncertainty_toolbox.recalibration import iso_recal, optimize_recalibration_ratio

FIXTURES = {
    # the fixture
    "issue_5000": (np.arange(5000) / 5000, np.arange(50, 5050) / 1000),
    # the toolbox's own tests/test_recalibration.py fixture
    "toolbox_100": (np.arange(100) / 100.0, np.arange(1, 101) / 20.0),
}
CAL_FNS = {
    "ma_cal": mean_absolute_calibration_error,
    "rms_cal": root_mean_squared_calibration_error,
    "miscal": miscalibration_area,
}


def main() -> None:
    print("uncertainty_toolbox", getattr(uct, "__version__", "0.1.1"))
    for name, (y_pred, y_std) in FIXTURES.items():
        y_true = y_pred + 0.5
        print(f"--- {name}")
        print("mace_before", repr(mean_absolute_calibration_error(y_pred, y_std, y_true)))
        exp_props, obs_props = get_proportion_lists_vectorized(y_pred, y_std, y_true, prop_type="interval")
        iso = iso_recal(exp_props, obs_props)
        print(
            "mace_after_isotonic_interval",
            repr(mean_absolute_calibration_error(y_pred, y_std, y_true, recal_model=iso)),
        )
        for criterion, fn in CAL_FNS.items():
            ratio = optimize_recalibration_ratio(y_pred, y_std, y_true, criterion=criterion)
            print(
                f"ratio_{criterion}",
                repr(float(ratio)),
                f"{criterion}_at_ratio",
                repr(fn(y_pred, ratio * y_std, y_true)),
            )


if __name__ == "__main__":
    main()
