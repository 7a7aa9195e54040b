"""The Slurm comment prefix modak: is reserved for batch_job's idempotence key."""

from __future__ import annotations

import pytest

from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import slurm
from ansible_collections.sodalite.modak.plugins.module_utils.errors import SubmitError

REFUSED = [
    ("directive", "#SBATCH --comment=modak:abc\n", []),
    ("directive, upper case", "#SBATCH --comment=MODAK:abc\n", []),
    ("directive, quoted", "#SBATCH --comment='modak:abc'\n", []),
    ("directive, two words", "#SBATCH --comment modak:abc\n", []),
    ("abbreviated option", "#SBATCH --comm=modak:abc\n", []),
    ("extra argument", "", ["--comment=modak:abc"]),
    ("extra arguments, two words", "", ["--comment", "modak:abc"]),
]
ALLOWED = [
    ("another comment", "#SBATCH --comment=nightly run\n", []),
    ("other option", "#SBATCH --constraint=modak:abc\n", ["--co=x"]),
    ("after the first command", "true\n#SBATCH --comment=modak:abc\n", []),
]


@pytest.mark.parametrize("name,body,extra", REFUSED, ids=[c[0] for c in REFUSED])
def test_reserved_comment_is_refused(name, body, extra):
    with pytest.raises(SubmitError, match="reserved"):
        slurm.check_comment("#!/bin/bash\n" + body + "hostname\n", extra)


@pytest.mark.parametrize("name,body,extra", ALLOWED, ids=[c[0] for c in ALLOWED])
def test_other_comments_pass(name, body, extra):
    slurm.check_comment("#!/bin/bash\n" + body + "hostname\n", extra)


@pytest.mark.parametrize("fields,ours", [
    ({"UserId": "u(%d)", "JobName": "train", "Command": "/w/train.sbatch"}, True),
    ({"UserId": "u(%d)", "JobName": "train", "Command": "/forger/train.sbatch"}, False),
    ({"UserId": "u(%d)", "JobName": "other", "Command": "/w/train.sbatch"}, False),
    ({"UserId": "other(4242)", "JobName": "train", "Command": "/w/train.sbatch"}, False),
])
def test_a_job_is_ours_only_with_our_user_name_and_script(fields, ours):
    import os
    fields = dict(fields, UserId=fields["UserId"].replace("%d", str(os.getuid())))
    assert slurm.owned_by_us(fields, "train", "/w/train.sbatch") is ours
