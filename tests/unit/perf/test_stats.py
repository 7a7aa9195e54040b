"""The search's statistics: the median, expected improvement, Student's t quantile and Welch's comparison."""

from __future__ import annotations

import math

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils.perf import stats


def test_the_median_of_odd_even_and_no_values():
    assert stats.median([3, 1, 2]) == 2
    assert stats.median([4, 1, 2, 3]) == 2.5
    assert stats.median([]) is None


def test_expected_improvement_prefers_better_and_more_uncertain():
    assert stats.expected_improvement(-0.2, 0.1, 0.0) > stats.expected_improvement(0.0, 0.1, 0.0)
    assert stats.expected_improvement(0.0, 0.2, 0.0) > stats.expected_improvement(0.0, 0.1, 0.0)
    assert stats.expected_improvement(0.5, 0.0, 0.0) == 0.0


def test_the_t_quantile_matches_the_tables():
    """One-sided 95 % quantiles of Student's t (the tables' values to three decimals)."""
    table = {1: 6.314, 2: 2.920, 3: 2.353, 4: 2.132, 5: 2.015, 10: 1.812, 30: 1.697, 120: 1.658}
    for dof, value in table.items():
        assert stats.t_quantile(dof) == pytest.approx(value, abs=1.5e-3), dof
    assert stats.t_quantile(3.9) == stats.t_quantile(3)      # fractional degrees of freedom round down
    assert stats.t_quantile(10 ** 6) == pytest.approx(1.6448536, abs=1e-5)   # the normal quantile


def test_welch_compares_two_samples_with_the_noise_floor():
    diff, stderr, dof, (var_a, var_b) = stats.welch([1.0, 1.2, 1.1], [0.5, 0.5], sd_floor=0.03)
    assert diff == pytest.approx(0.6)
    assert var_a == pytest.approx(0.01) and var_b == pytest.approx(0.03 ** 2)      # the floor, not 0
    assert stderr == pytest.approx(math.sqrt(0.01 / 3 + 0.03 ** 2 / 2))
    assert 2 <= dof <= 3                                                            # Welch-Satterthwaite, between
