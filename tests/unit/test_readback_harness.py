"""The read-back harness's own logic (tests/integration/slurm/readback.py) on a record Slurm 22.05 printed."""

from __future__ import annotations

import importlib.util
import os

from helpers import ROOT

_SPEC = importlib.util.spec_from_file_location(
    "readback", os.path.join(ROOT, "tests", "integration", "slurm", "readback.py"))
readback = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(readback)

# `scontrol show job -o` of a held array job (abridged), submitted from /w
RECORD = ("JobId=1 ArrayJobId=1 ArrayTaskId=0-3%2 ArrayTaskThrottle=2 JobName=p1 UserId=root(0) GroupId=root(0) "
          "Account=acc1 QOS=(null) JobState=PENDING Reason=JobHeldUser Dependency=afterok:7_*(unfulfilled) "
          "TimeLimit=01:01:00 Partition=gpu AllocNode:Sid=localhost:6668 ReqNodeList=node01 NodeList= NumNodes=4-4 "
          "NumCPUs=64 NumTasks=32 CPUs/Task=2 NtasksPerN:B:S:C=8:0:*:* MinMemoryNode=2000M Features=avx2&ib "
          "OverSubscribe=NO WorkDir=/w StdErr=/w/e-1-p1.err StdIn=/dev/null StdOut=/w/x-1_4294967294.out Power= "
          "TresPerNode=gres:gpu:2 MailUser=a@b.org MailType=BEGIN,END ")
DOC = {"job": {"job_options": {
    "job_name": "p1", "node_count": 4, "process_count_per_node": 8, "core_count_per_process": 2,
    "request_gpus": 2, "account": "acc1", "qos": "high", "memory_limit": 2000, "wall_time_limit": "1:00:30",
    "request_event_notification": "BEGIN,END", "email_address": "a@b.org", "job_array": "0-3%2",
    "standard_output_file": "x-%A_%a.out", "standard_error_file": "e-%j-%x.err", "combine_stdout_stderr": False,
    "partition": "gpu", "architecture_constraint": "avx2&ib", "node_exclusive": True,
    "request_specific_nodes": "node01", "job_dependency": "afterok:7"},
    "application": {"executable": "hostname"}}}


def test_record_parses_keys_with_slashes_colons_and_empty_values():
    record = readback.parse_record(RECORD)
    assert record["CPUs/Task"] == "2" and record["NtasksPerN:B:S:C"] == "8:0:*:*"
    assert record["Power"] == "" and record["TresPerNode"] == "gres:gpu:2" and record["MailType"] == "BEGIN,END"


def test_record_that_matches_the_dsl_has_no_mismatch():
    record = readback.parse_record(RECORD)
    assert readback.mismatches(readback.expect(DOC), record, record["WorkDir"]) == []


def test_every_differing_field_is_reported():
    options = dict(DOC["job"]["job_options"], node_count=2, request_gpus=1, wall_time_limit=7200, job_array="0-7")
    doc = {"job": dict(DOC["job"], job_options=options)}
    record = readback.parse_record(RECORD)
    fields = [m[0] for m in readback.mismatches(readback.expect(doc), record, record["WorkDir"])]
    assert fields == ["NumNodes", "ArrayTaskId", "TimeLimit", "GPUs"]
