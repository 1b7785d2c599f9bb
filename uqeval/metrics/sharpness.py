"""Sharpness of Gaussian forecasts: how concentrated the predictive distributions are.

A property of the forecasts alone (it ignores the targets); smaller is sharper.
"""

from __future__ import annotations

import numpy as np

from ..validation import as_float_array, check_finite, check_nonempty, check_positive


def sharpness(std) -> dict[str, float]:
    r"""Sharpness of predictive standard deviations.

    .. math:: \text{sharp} = \Big(\frac1N\sum_i \sigma_i^2\Big)^{1/2}, \qquad
              \text{mean\_std} = \frac1N\sum_i \sigma_i

    ``sharp`` is the Uncertainty Toolbox's definition (``metrics_calibration.sharpness``:
    root of the mean predictive variance); ``mean_std`` is the plain mean of the
    standard deviations, which is what the toolbox paper's appendix A.3 describes.

    Returns
    -------
    ``{"sharp", "mean_std"}`` (floats, in the unit of the target).
    """
    sd = as_float_array(std, "std")
    check_nonempty(sd.size)
    check_finite(sd, "std")
    check_positive(sd, "std")
    from .blocks import row_mean

    top = float(sd.max())  # scaled by the largest std, so that sd**2 cannot overflow for huge values
    buf = np.empty_like(sd)
    return {
        "sharp": float(np.sqrt(row_mean(lambda sd: np.square(sd / top), sd, out=buf))) * top,
        "mean_std": row_mean(lambda sd: sd / top, sd, out=buf) * top,
    }
