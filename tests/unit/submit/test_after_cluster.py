"""A job after another whose id is sbatch --parsable's answer on a multi-cluster site ('42;cluster1'), as the
optimised_job role passes the staging job's id: the dependency is afterok:42, never 'afterok:42;cluster1'."""

from __future__ import annotations

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils.errors import SubmitError
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry


def test_a_multi_cluster_id_waits_for_the_id_alone():
    slurm = registry.scheduler_class("slurm")
    assert slurm.after_args([("42;cluster1", "ok")]) == ["--dependency=afterok:42", "--kill-on-invalid-dep=yes"]
    assert slurm.after_args([("42;cluster1", "ok"), ("43", "any")])[0] == "--dependency=afterok:42,afterany:43"


@pytest.mark.parametrize("job", ["42;", ";cluster1", "42;cluster1;x y", "x;cluster1"])
def test_anything_else_with_a_semicolon_is_still_refused(job):
    with pytest.raises(SubmitError):
        registry.scheduler_class("slurm").after_args([(job, "ok")])
