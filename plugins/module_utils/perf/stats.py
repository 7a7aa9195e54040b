# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The statistics the search and the model use, in plain Python (no numpy for a plain optimise).

* ``median``: of a list, None for an empty one.
* ``expected_improvement``: E[max(0, best - Y)] for a normal Y, the search's measure of what a run may save.
* ``t_quantile``: Student's t one-sided 95 % quantile, the threshold of the never-slower test.
* ``mean_var``: the mean and the sample variance of values, the variance taken at least a floor.
* ``welch``: the difference of two means, its standard error and Welch-Satterthwaite degrees of freedom.
"""

from __future__ import annotations

import math

Z_95 = 1.6448536269514722   # the normal one-sided 95 % quantile the t quantile expands around


def median(values):
    """The median of ``values``; None when there are none."""
    values = sorted(values)
    n = len(values)
    if not n:
        return None
    return values[n // 2] if n % 2 else 0.5 * (values[n // 2 - 1] + values[n // 2])


def expected_improvement(mean_log, sd_log, best_log):
    """E[max(0, best - Y)] for Y ~ N(mean, sd) in log time: the expected fractional saving."""
    if sd_log <= 0:
        return max(0.0, best_log - mean_log)
    z = (best_log - mean_log) / sd_log
    pdf = math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    cdf = 0.5 * (1.0 + math.erf(z / math.sqrt(2)))
    return (best_log - mean_log) * cdf + sd_log * pdf


def t_quantile(dof):
    """Student's t one-sided 95 % quantile for ``dof`` degrees of freedom (fractional ones rounded down, so the
    test errs on the side of the default): exact for 1 and 2, else the Cornish-Fisher expansion around the normal
    quantile (Abramowitz and Stegun 26.7.5), within 0.1 % of the tables from 3 up."""
    dof = max(1, int(math.floor(dof)))
    if dof == 1:
        return math.tan(math.pi * 0.45)
    if dof == 2:
        return 0.9 / math.sqrt(2 * 0.95 * 0.05)
    x = Z_95
    terms = ((x ** 3 + x) / 4.0,
             (5 * x ** 5 + 16 * x ** 3 + 3 * x) / 96.0,
             (3 * x ** 7 + 19 * x ** 5 + 17 * x ** 3 - 15 * x) / 384.0,
             (79 * x ** 9 + 776 * x ** 7 + 1482 * x ** 5 - 1920 * x ** 3 - 945 * x) / 92160.0)
    return x + sum(term / dof ** (power + 1) for power, term in enumerate(terms))


def mean_var(values, sd_floor=0.0):
    """(mean, sample variance) of two or more ``values``, the variance at least ``sd_floor`` squared."""
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    return mean, max(var, sd_floor ** 2)


def welch(first, second, sd_floor=0.0):
    """Welch's comparison of two samples of two or more values each: (mean of ``first`` - mean of ``second``, its
    standard error, the Welch-Satterthwaite degrees of freedom, (variance of first, variance of second)), each
    sample's sd taken at least ``sd_floor``."""
    (mean_a, var_a), (mean_b, var_b) = mean_var(first, sd_floor), mean_var(second, sd_floor)
    parts = (var_a / len(first), var_b / len(second))
    dof = sum(parts) ** 2 / (parts[0] ** 2 / (len(first) - 1) + parts[1] ** 2 / (len(second) - 1))
    return mean_a - mean_b, math.sqrt(sum(parts)), dof, (var_a, var_b)
