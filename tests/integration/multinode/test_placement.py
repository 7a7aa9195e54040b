"""Placement by predicted time to result, on the real multi-node Slurm: two partitions that differ in speed and in
queue, and modak writes the one where the job finishes first.

'fast' runs on mn1-mn3 at the machine's speed; 'slow' on mn4-mn6, whose slurmd (and so every job step) runs under a
CPU quota of a quarter of a CPU (start-multinode.sh). The job spins a fixed amount of CPU work on a whole node. The
test records three runs of it on each partition (at once: one node each), then fills 'fast' with a job whose time
limit equals its run time (one minute: sbatch --test-only places later jobs by the time limits of those before
them), and asks `modak optimise` with the recorded runs where the job should go: Slurm's estimate says 'fast' starts
in a minute and 'slow' now, the runs say 'slow' takes about four times as long. Then the same job is submitted three
times to each partition at once, and the measured finishes (from the decision to the job's end) are compared with
the choice and its prediction: the chosen partition finishes first (median of 3) at least 1.5x sooner, and its
predicted finish is within 25 % of the measured one. While 'fast' is still busy, the optimise task of a playbook
(the module on the host, asking Slurm there) chooses the same. About 100 s; runs as root, on the multi-node worker
with the other tests of the cluster.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time

import yaml

from ansible_collections.sodalite.modak.plugins.module_utils.perf import runtime, store

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
MODAK = [os.path.join(ROOT, ".venv", "bin", "python"), os.path.join(ROOT, "bin", "modak")]
ANSIBLE_PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
ENDED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE")
WORK_CPU_S = 4.0          # the job's CPU work at the machine's speed: about 16 s on a slow node
BUSY_S = 60               # the job that fills 'fast': its time limit (a minute, Slurm's smallest) and its run time
REPEATS = 3


def spin_loops(cpu_s):
    """Iterations of the awk loop that take about ``cpu_s`` CPU seconds on this machine (measured on 10 M)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    subprocess.run(["awk", "BEGIN { for (i = 0; i < 10000000; i++) s += i }"], check=True)
    used = max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before, 0.01)
    return int(10000000 * cpu_s / used)


def write_job(directory):
    """The spinning program and its DSL: a whole node, placed among 'fast' and 'slow'."""
    with open(os.path.join(directory, "spin.sh"), "w") as handle:
        handle.write("awk 'BEGIN { for (i = 0; i < %d; i++) s += i; print s }'\n" % spin_loops(WORK_CPU_S))
    dsl = os.path.join(directory, "spin.json")
    with open(dsl, "w") as handle:
        json.dump({"job": {
            "job_options": {"job_name": "spin", "node_exclusive": True, "wall_time_limit": "3:00",
                            "standard_output_file": "spin-%j.out"},
            "application": {"executable": "bash spin.sh", "container_runtime": ""},
            "target": {"job_scheduler_type": "slurm"},
            "placement": {"partitions": [{"name": "fast"}, {"name": "slow"}]}}}, handle)
    return dsl


def optimise(cluster, dsl, store_path=None):
    """`modak optimise` on the login node (this host): the placement it reports, the script it wrote."""
    argv = MODAK + ["optimise", dsl, "-o", os.path.dirname(dsl), "--format", "json"]
    argv += ["--results-store", store_path] if store_path else []
    proc = subprocess.run(argv, env=cluster, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)["files"][0]
    return report["placement"], report["job_script"], report["explanation"]


def optimise_task(cluster, dsl, store_path):
    """The sodalite.modak.optimise task of a playbook with the same DSL and store: its result (the module runs on
    the host, whose Slurm it asks)."""
    directory = os.path.join(os.path.dirname(dsl), "task")
    os.makedirs(directory)
    book = os.path.join(directory, "book.yml")
    task = {"dsl_file": dsl, "output_dir": directory, "results_store": store_path}
    save = {"content": "{{ optimised | to_json }}", "dest": os.path.join(directory, "result.json")}
    with open(book, "w") as handle:
        yaml.safe_dump([{"hosts": "localhost", "connection": "local", "gather_facts": False,
                         "vars": {"ansible_python_interpreter": sys.executable},
                         "tasks": [{"sodalite.modak.optimise": task, "register": "optimised"},
                                   {"ansible.builtin.copy": save}]}], handle)
    env = dict(cluster, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([ANSIBLE_PLAYBOOK, book], cwd=directory, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    with open(os.path.join(directory, "result.json")) as handle:
        return json.load(handle)


def submit(cluster, argv, cwd):
    proc = cluster.run(["sbatch", "--parsable"] + argv, timeout=60, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().split(";")[0]


def fields(cluster, job_id):
    out = cluster.run(["scontrol", "show", "job", "-o", job_id], timeout=30).stdout
    return dict(token.split("=", 1) for token in out.split() if "=" in token)


def epoch(text):
    return time.mktime(time.strptime(text, "%Y-%m-%dT%H:%M:%S"))


def elapsed(job):
    """A job's run time as Slurm says it (whole seconds)."""
    return epoch(job["EndTime"]) - epoch(job["StartTime"])


def wait_ended(cluster, ids, timeout):
    """{job id: its scontrol fields} once every job has ended."""
    deadline, ended = time.monotonic() + timeout, {}
    while len(ended) < len(ids) and time.monotonic() < deadline:
        for job_id in ids:
            if job_id not in ended:
                found = fields(cluster, job_id)
                if found.get("JobState") in ENDED:
                    ended[job_id] = found
        time.sleep(0.5)
    assert len(ended) == len(ids), "jobs still queued or running after %d s: %s" % (
        timeout, sorted(set(ids) - set(ended)))
    assert all(f["JobState"] == "COMPLETED" for f in ended.values()), ended
    return ended


def wait_for(cluster, argv, wanted, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        said = cluster.run(argv, timeout=30).stdout.split()
        if said and all(word == wanted for word in said):
            return
        time.sleep(0.3)
    raise AssertionError("%s did not say %s within %d s" % (" ".join(argv), wanted, timeout))


def on(cluster, script, partitions):
    """The same job REPEATS times on each of ``partitions``, all at once (in turns): {partition: [job ids]}."""
    runs = dict((partition, []) for partition in partitions)
    for _repeat in range(REPEATS):
        for partition in partitions:
            runs[partition].append(submit(cluster, ["--partition=%s" % partition, script], os.path.dirname(script)))
    return runs


def test_the_partition_predicted_to_finish_first_finishes_first(multinode, shared_dir):
    cluster = multinode
    dsl = write_job(shared_dir)
    partitions = (cluster.fast_partition, cluster.slow_partition)
    submitted = []
    try:
        # 1. three recorded runs on each partition, one partition after the other (so that the slow runs share the
        # machine with nothing of this test, as later); no runs recorded yet: the wall time limit stands in
        _first, script, _said = optimise(cluster, dsl)
        records = []
        for partition in partitions:
            ids = on(cluster, script, [partition])[partition]
            submitted.extend(ids)
            ended = wait_ended(cluster, ids, 240)
            records.extend(runtime.run_record("spin", elapsed(ended[i]), 1, partition) for i in ids)
        results = os.path.join(shared_dir, "runs.sqlite")
        store.append(results, records)
        # 2. 'fast' is busy for a minute, by its time limit; 'slow' is free
        busy = submit(cluster, ["--partition=%s" % cluster.fast_partition, "--nodes=%d" % len(cluster.nodes),
                                "--exclusive", "--time=%d" % (BUSY_S // 60), "--job-name=busy",
                                "--output=busy-%j.out", "--wrap=sleep %d" % BUSY_S], shared_dir)
        submitted.append(busy)
        wait_for(cluster, ["squeue", "-h", "-j", busy, "-o", "%T"], "RUNNING")
        wait_for(cluster, ["sinfo", "-h", "-p", cluster.slow_partition, "-o", "%T"], "idle")
        # 3. modak chooses; the same job then runs on each partition, from the moment of the choice
        placed, script, explanation = optimise(cluster, dsl, results)
        runs = on(cluster, script, partitions)
        submitted.extend(i for ids in runs.values() for i in ids)
        ended = wait_ended(cluster, runs[cluster.slow_partition], 240)
        # while 'fast' is still busy, the optimise task chooses too, asking Slurm from the managed host
        task = optimise_task(cluster, dsl, results)
        ended.update(wait_ended(cluster, runs[cluster.fast_partition], BUSY_S + 240))
    finally:
        cluster.run(["scancel"] + submitted, timeout=30)
    decided = placed["decided_at_s"]

    def finish(job_id):    # Slurm's EndTime is a whole second: the job ended within the second after it
        return epoch(ended[job_id]["EndTime"]) + 0.5 - decided
    measured = dict((partition, statistics.median(finish(i) for i in ids)) for partition, ids in runs.items())
    predicted = dict((row["partition"], row) for row in placed["candidates"])
    for partition in sorted(measured):
        row = predicted[partition]
        recorded = sorted(r["job_run"]["elapsed_s"] for r in records if r["job_run"]["partition"] == partition)
        print("%s: recorded runs %s s; predicted start in %.0f s, run %.1f s %s, finish in %.1f s; measured finish "
              "in %.1f s (median of %d: %s)" % (
                  partition, recorded, row["start_in_s"], row["run_s"], row["run_interval_s"], row["finish_in_s"],
                  measured[partition], REPEATS,
                  sorted(round(finish(i), 1) for i in runs[partition])))
    print("\n".join(line for line in explanation if line.startswith("placement")))
    chosen = placed["partition"]
    other = [p for p in measured if p != chosen][0]
    with open(script) as handle:
        assert "#SBATCH --partition=%s" % chosen in handle.read()
    assert min(measured, key=measured.get) == chosen, (placed, measured)
    assert measured[other] >= 1.5 * measured[chosen], measured
    assert abs(predicted[chosen]["finish_in_s"] - measured[chosen]) <= 0.25 * measured[chosen], (placed, measured)
    assert predicted[other]["start_in_s"] > 0.5 * BUSY_S, predicted[other]    # Slurm's estimate saw the queue
    asked = dict((row["partition"], row) for row in task["placement"]["candidates"])
    assert task["placement"]["partition"] == chosen and "#SBATCH --partition=%s" % chosen in task["job_script_content"]
    assert asked[other]["start_from"] == "Slurm's estimate" and asked[other]["start_in_s"] > 0, asked
