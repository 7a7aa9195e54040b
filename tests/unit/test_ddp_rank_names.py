"""A Charliecloud data-parallel training may not set the names each rank gets from the launch (RANK,
MASTER_ADDR...) in its environment: inside the container the job's value would override each rank's own, and every
rank would be rank 0. The DSL refuses them by path, in environment, environment_expanded and secrets alike."""

from __future__ import annotations

import pytest
from helpers import with_
from test_distributed import ddp_doc, problems

from ansible_collections.sodalite.modak.plugins.module_utils import distributed


@pytest.mark.parametrize("field,value", [("environment", "0"), ("environment_expanded", "${SLURM_PROCID}"),
                                         ("secrets", {"env": "X"})])
@pytest.mark.parametrize("name", ["RANK", "MASTER_ADDR", "LOCAL_RANK", "WORLD_SIZE"])
def test_a_charliecloud_ddp_dsl_refuses_the_ranks_own_names(field, value, name):
    assert name in distributed.RENDEZVOUS_NAMES
    doc = with_(ddp_doc(engine="charliecloud"), "job.application." + field, {name: value})
    found = problems(doc)
    assert "job.application.%s.%s" % (field, name) in found
    assert "every rank the same one" in found["job.application.%s.%s" % (field, name)]


def test_the_review_document_is_refused_with_both_paths():
    doc = with_(ddp_doc(engine="charliecloud"), "job.application.environment", {"RANK": "0", "MASTER_ADDR": "n1"})
    assert {"job.application.environment.RANK", "job.application.environment.MASTER_ADDR"} <= set(problems(doc))
