"""Recompute the scoringrules quick-start values frozen in tests/test_python_api.py (SCORINGRULES).

Usage (needs ``pip install scoringrules==0.10.0``; CI never runs this)::

    python tests/reference/regen_scoringrules_api.py
"""

from __future__ import annotations

import pprint


def main() -> None:
    import numpy as np
    import scoringrules as sr

    ens = np.array([0.1, 0.5, -0.2, 1.1])
    pprint.pprint(
        {
            "crps_normal(0.1, 0.0, 1.0)": float(sr.crps_normal(0.1, 0.0, 1.0)),
            "logs_normal(0.1, 0.0, 1.0)": float(sr.logs_normal(0.1, 0.0, 1.0)),
            "crps_ensemble(0.3, [0.1, 0.5, -0.2, 1.1])": float(sr.crps_ensemble(0.3, ens, estimator="nrg")),
            "crps_ensemble(0.3, [0.1, 0.5, -0.2, 1.1], estimator='fair')": float(
                sr.crps_ensemble(0.3, ens, estimator="fair")
            ),
        }
    )


if __name__ == "__main__":
    main()
