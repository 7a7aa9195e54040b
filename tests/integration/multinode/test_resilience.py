"""Long training that outlives its time limit, on the real multi-node Slurm: modak writes
examples/pytorch-requeue-slurm.yaml's job (short times, no container: torch 2.13.0 in a venv on the host, as
test_ddp.py's bare runs), two nodes with one rank each. Slurm signals the batch shell before the limit
(--signal=B:USR1@30), the trap forwards USR1 to the ranks (scancel --signal to the job's steps), every rank writes its
checkpoint at the same step and stops, the job requeues itself (scontrol requeue), stays PENDING (BeginTime, about
two minutes on Slurm 22.05), resumes from the checkpoint and ends COMPLETED with the final loss of an uninterrupted run
of the same training, bit for bit.

Every scenario starts with the module, in the background, and the tests read what each one saw: the uninterrupted
run and the one that reaches its limit share the partition 'multinode'; the preemption and the node loss run beside
them on nodes of their own (the partitions 'preempt' and 'nodeloss'), so that their faults reach no other job; the
controller restart comes last, once every other scenario has ended. The lost node comes back when the module ends
(the cluster is started afresh). Every test of the multi-node cluster runs on one worker, one after the other
(tests/services.py). Runs as root, like the other multi-node tests.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest
import yaml

# the first test waits for every scenario (the time-limit run requeues once to three times): 434-550 s measured
pytestmark = pytest.mark.timeout(1800)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
EXAMPLE = os.path.join(ROOT, "examples", "pytorch-requeue-slurm.yaml")
WORKLOAD = (os.path.join(ROOT, "benchmarks", "workload", "mnist_cnn.py"),
            os.path.join(ROOT, "plugins", "module_utils", "perf", "hardware.py"))
TORCH_VENV = "/var/tmp/modak-ddp-venv"
RUN_DIR = "/run/slurm-multinode"           # start-multinode.sh: the pid files
LOSS = re.compile(r"^ddp rank=(\d+) world_size=2 .* final_loss=(\S+)$", re.M)
ENDED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE")
# 50 steps of about 2 s: longer than the first segment (Slurm checks the limits every 30 s and sends the signal 30 s
# before the 2-minute limit, up to 30 s earlier still: 60 to 90 s after the start), short enough that the second
# segment ends it
TRAINING = "--ddp --steps 50 --warmup 1 --batch-size 16 --data synthetic --seed 5 --step-delay 2"
LEAD_S = 30
MAX_RESTARTS = 5
# the controller's time away: well past a client's own retries (a query that starts in the first 20 s or so of it
# fails: with 20 s, a query could wait until the controller was back, and the wait saw no failure), well within
# batch_job's STATUS_RETRY_S (180 s)
CONTROLLER_DOWN_S = 45


def _run(argv, env=None, timeout=600, cwd=None):
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, "%s failed (rc %d):\n%s\n%s" % (argv[:3], proc.returncode, proc.stdout[-4000:],
                                                                 proc.stderr[-4000:])
    return proc.stdout


def torch_python():
    python = os.environ.get("MODAK_TORCH_PYTHON") or os.path.join(TORCH_VENV, "bin", "python")
    if not os.path.exists(python):
        _run([sys.executable, "-m", "venv", TORCH_VENV])
        _run([python, "-m", "pip", "install", "--quiet", "torch==2.13.0"], timeout=1800)
    return python


def write_job(cluster, name, wall, lead, every=0, partition=None):
    """modak writes the example's job, shortened, into its own directory (for ``partition``, else the cluster's
    default one); returns the script's path."""
    directory = os.path.join(cluster.workdir, name)
    os.makedirs(directory)
    doc = yaml.safe_load(open(EXAMPLE))
    job = doc["job"]
    job["job_options"].update({"job_name": name, "wall_time_limit": wall, "partition": partition or cluster.partition,
                               "standard_output_file": name + "-%j.out"})
    arguments = TRAINING + (" --checkpoint-every %d" % every if every else "")
    job["application"].update({"executable": "%s mnist_cnn.py" % torch_python(), "arguments": arguments,
                               "container_runtime": ""})
    # up to 5 restarts: the time-limit run needs one on a quiet machine, two or three while every scenario and the
    # rest of the suite share the cores
    job["resilience"] = {"signal_lead_time": lead, "max_restarts": MAX_RESTARTS, "checkpoint_dir": "checkpoints"}
    job["optimisation"]["app_type-ai_training"]["config"]["processes_per_node"] = 1
    dsl = os.path.join(directory, name + ".yaml")
    with open(dsl, "w") as handle:
        yaml.safe_dump(doc, handle)
    _run([os.path.join(ROOT, ".venv", "bin", "python"), os.path.join(ROOT, "bin", "modak"), "optimise", dsl,
          "-o", directory])
    for path in WORKLOAD:
        shutil.copy(path, directory)
    return os.path.join(directory, name + ".sbatch")


def submit(cluster, script):
    out = _run(["sbatch", "--parsable", script], env=cluster, cwd=os.path.dirname(script), timeout=60)
    return out.strip().split(";")[0]


def show(cluster, job_id):
    out = cluster.run(["scontrol", "show", "job", "-o", job_id], timeout=30).stdout
    return dict(token.split("=", 1) for token in out.split() if "=" in token)


def wait_ended(cluster, job_id, timeout):
    """The job's fields once it has ended for good: a requeued job goes back to PENDING, which is not an end. The
    controller forgets a job MinJobAge (300 s) after its end: the scenarios read it as it ends."""
    deadline, fields, seen = time.monotonic() + timeout, {}, []
    while time.monotonic() < deadline:
        fields = show(cluster, job_id)
        state = fields.get("JobState", "")
        assert fields, "job %s is no longer known to the controller" % job_id
        if not seen or seen[-1] != state:
            seen.append(state)
        if state in ENDED:
            break
        time.sleep(3)
    fields["seen"] = seen
    return fields


def losses(output):
    found = dict(LOSS.findall(output))
    assert sorted(found) == ["0", "1"], output[-4000:]
    assert len(set(found.values())) == 1, found
    return found["0"]


@pytest.fixture(scope="module")
def cluster(multinode):
    return multinode


class Scenario(threading.Thread):
    """One scenario, run in the background from the module's start: what it returned, or what it raised."""

    def __init__(self, name, target):
        super().__init__(name=name, daemon=True)
        self.target_fn, self.result, self.error = target, None, None

    def run(self):
        try:
            self.result = self.target_fn()
        except BaseException as exc:  # pylint: disable=broad-except  # raised again in the test that reads it
            self.error = exc

    def outcome(self, timeout):
        self.join(timeout)
        assert not self.is_alive(), "%s has not ended after %d s" % (self.name, timeout)
        if self.error is not None:
            raise self.error
        return self.result


def wait_checkpoint(cluster, job_id, script):
    """The job's fields once its rank 0 has written a checkpoint (it runs, mid-training)."""
    checkpoint = os.path.join(os.path.dirname(script), "checkpoints", "rank-0.pt")
    deadline = time.monotonic() + 300
    while not os.path.exists(checkpoint) and time.monotonic() < deadline:
        time.sleep(2)
    fields = show(cluster, job_id)
    assert fields.get("JobState") == "RUNNING" and os.path.exists(checkpoint), fields
    return fields


def job_output(script, name, job_id):
    with open(os.path.join(os.path.dirname(script), "%s-%s.out" % (name, job_id))) as handle:
        return handle.read()


def preemption(cluster, script):
    """The job of the partition 'preempt' is preempted mid-training by one of 'urgent' that wants its nodes whole."""
    started = time.monotonic()
    job_id = submit(cluster, script)
    fields = wait_checkpoint(cluster, job_id, script)
    urgent = _run(["sbatch", "--parsable", "--partition=urgent", "--nodelist=%s" % fields["NodeList"], "--nodes=2",
                   "--exclusive", "--time=1", "--output=/dev/null", "--wrap", "sleep 10"], env=cluster,
                  cwd=cluster.workdir, timeout=60).strip()
    fields = wait_ended(cluster, job_id, 900)
    return {"fields": fields, "output": job_output(script, "preempted", job_id), "urgent": urgent,
            "took": int(time.monotonic() - started)}


def node_loss(cluster, script):
    """The node of the job's batch script, in the partition 'nodeloss', is lost mid-training."""
    started = time.monotonic()
    job_id = submit(cluster, script)
    fields = wait_checkpoint(cluster, job_id, script)
    lost = fields["BatchHost"]
    assert kill_node(lost)
    fields = wait_ended(cluster, job_id, 900)
    return {"fields": fields, "output": job_output(script, "lostnode", job_id), "lost": lost,
            "took": int(time.monotonic() - started)}


@pytest.fixture(scope="module")
def jobs(cluster):
    """Every scenario but the controller restart, started at once: the uninterrupted run (a 10-minute limit) and the
    one that reaches its 2-minute limit share the partition 'multinode' (one core per rank), batch_job's wait follows
    the limited one from its submission; the preemption and the node loss run on nodes of their own. When the module
    ends, the cluster is started afresh (the lost node comes back)."""
    started = time.monotonic()
    scripts = {"whole": write_job(cluster, "whole", "00:10:00", LEAD_S),
               "limited": write_job(cluster, "limited", "00:02:00", LEAD_S),
               "preempted": write_job(cluster, "preempted", "00:10:00", LEAD_S, every=5,
                                      partition=cluster.preempt_partition),
               "lostnode": write_job(cluster, "lostnode", "00:10:00", LEAD_S, every=5,
                                     partition=cluster.nodeloss_partition)}
    ids = {"whole": submit(cluster, scripts["whole"]), "limited": submit(cluster, scripts["limited"])}
    scenarios = {"whole": Scenario("the uninterrupted run", lambda: wait_ended(cluster, ids["whole"], 600)),
                 "limited": Scenario("the run that reaches its limit", lambda: wait_ended(cluster, ids["limited"], 900)),
                 "followed": Scenario("batch_job's wait on the limited run", lambda: follow(cluster, ids["limited"])),
                 "preempted": Scenario("the preemption", lambda: preemption(cluster, scripts["preempted"])),
                 "lostnode": Scenario("the node loss", lambda: node_loss(cluster, scripts["lostnode"]))}
    for scenario in scenarios.values():
        scenario.start()
    yield {"ids": ids, "scripts": scripts, "started": started, "scenarios": scenarios}
    for scenario in scenarios.values():
        scenario.join(1200)
    env = dict(os.environ, MULTINODE_NODES=str(len(cluster.nodes)), MULTINODE_CPUS=str(cluster.cpus))
    restart = subprocess.run(["bash", os.path.join(HERE, "start-multinode.sh")], env=env, capture_output=True,
                             text=True, timeout=900, check=False)
    assert restart.returncode == 0, restart.stderr


def reference_loss(jobs):
    """The final loss of the uninterrupted run, once it has COMPLETED."""
    whole = jobs["scenarios"]["whole"].outcome(700)
    assert whole["JobState"] == "COMPLETED", output_of(jobs, "whole")[-4000:]
    return losses(output_of(jobs, "whole"))


def output_of(jobs, name):
    directory = os.path.dirname(jobs["scripts"][name])
    with open(os.path.join(directory, "%s-%s.out" % (name, jobs["ids"][name]))) as handle:
        return handle.read()


def follow(cluster, job_id):
    """batch_job's wait on a job (job_control.Job, the module's code): its result once the job has ended for good,
    and the scontrol fields of its end."""
    from ansible_collections.sodalite.modak.plugins.module_utils import job_control  # pylint: disable=import-outside-toplevel
    from ansible_collections.sodalite.modak.plugins.module_utils.commands import ProcessRunner  # pylint: disable=import-outside-toplevel
    request = job_control.Request(scheduler="slurm", state="query", job_id=job_id, wait=True, wait_timeout=900,
                                  poll_interval=5, chdir=cluster.workdir)
    job = job_control.Job(request, ProcessRunner(timeout=30, env=dict(cluster)))
    try:
        result = job.watched()
    except job_control.JobFailed as exc:
        result = exc.result
    return result


def test_the_time_limit_signals_checkpoints_requeues_and_resumes_to_the_same_loss(jobs):
    """The limited job is followed by batch_job's wait from its submission, which reports the restart and each run
    between requeues."""
    reference = reference_loss(jobs)
    followed = jobs["scenarios"]["followed"].outcome(1000)
    fields = jobs["scenarios"]["limited"].outcome(1000)
    output = output_of(jobs, "limited")
    print("batch_job's wait: %s, restarts %s (%s), runs %s"
          % (followed.get("state"), followed.get("restarts"), followed.get("restarts_from"), followed.get("segments")))
    assert (followed.get("restarts") or 0) >= 1, followed
    assert (followed.get("restarts_from") or "").startswith("scontrol"), followed
    # the runs it saw: the first one, cut by the limit, and the restart that completed
    runs = followed.get("segments") or []
    assert followed.get("state") == "COMPLETED" and runs and runs[-1]["restart"] == followed["restarts"], followed
    took = int(time.monotonic() - jobs["started"])
    print("limited job: states %s, %s s in all" % (" -> ".join(fields["seen"]), took))
    assert fields["JobState"] == "COMPLETED", (fields, output[-6000:])
    assert int(fields.get("Restarts", "0")) >= 1, fields
    assert "modak: limit signal: forwarding USR1 to the ranks" in output
    assert re.search(r"^checkpoint rank=0 step=\d+ signal=SIGUSR1$", output, re.M), output[-4000:]
    assert "modak: requeued after the time limit: restart 1 of %d" % MAX_RESTARTS in output
    assert re.search(r"^resume rank=1 step=\d+$", output, re.M), output[-4000:]
    assert losses(output) == reference
    script = open(jobs["scripts"]["limited"]).read()
    assert "#SBATCH --signal=B:USR1@30\n#SBATCH --requeue\n#SBATCH --open-mode=append\n" in script


def test_a_preempted_job_is_requeued_and_resumes_to_the_same_loss(jobs):
    """A job of the partition preempt (PriorityTier=1, GraceTime=30) is preempted by one of the partition urgent
    (PriorityTier=2) that wants its nodes whole: Slurm sends TERM to the job's steps (not to the batch shell) and the
    ranks checkpoint; the job would end within the grace time, which PreemptMode=REQUEUE does not requeue, so the
    script requeues itself (scontrol shows PreemptTime); it resumes from the checkpoint and ends with the
    uninterrupted run's loss. Its nodes are its own, so that only it is preempted."""
    reference = reference_loss(jobs)
    seen = jobs["scenarios"]["preempted"].outcome(1300)
    fields, output = seen["fields"], seen["output"]
    print("preempted job: states %s, %s s; urgent job %s" % (" -> ".join(fields["seen"]), seen["took"], seen["urgent"]))
    assert fields["JobState"] == "COMPLETED", (fields, output[-6000:])
    assert int(fields.get("Restarts", "0")) >= 1, fields
    assert re.search(r"^resume rank=0 step=\d+$", output, re.M), output[-4000:]
    # Slurm sends TERM to the steps (not the batch shell) and does not requeue a job that ends within its GraceTime:
    # the ranks checkpoint on TERM, the script sees PreemptTime and requeues the job itself
    assert re.search(r"^checkpoint rank=0 step=\d+ signal=SIGTERM$", output, re.M), output[-4000:]
    assert "modak: requeued after a preemption: restart 1 of %d" % MAX_RESTARTS in output
    assert losses(output) == reference


def kill_node(node):
    """Lose a node: SIGKILL every process of its namespace (its slurmd, the job's steps and ranks on it), as when the
    node goes down; the controller notices after SlurmdTimeout (30 s on this cluster)."""
    with open("/run/slurm-multinode/slurmd-%s.pid" % node) as handle:
        namespace = os.readlink("/proc/%d/ns/uts" % int(handle.read().strip()))
    killed = []
    for pid in (int(name) for name in os.listdir("/proc") if name.isdigit()):
        try:
            if os.readlink("/proc/%d/ns/uts" % pid) == namespace:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        except OSError:
            continue
    return killed


def test_a_job_that_loses_its_node_is_requeued_and_resumes_to_the_same_loss(jobs):
    """The node of the job's batch script is lost mid-training: Slurm marks it DOWN after SlurmdTimeout, ends the
    job NODE_FAIL and requeues it (--requeue); it starts on the two nodes left, resumes from the last checkpoint of
    every 5 steps and ends with the uninterrupted run's loss."""
    reference = reference_loss(jobs)
    seen = jobs["scenarios"]["lostnode"].outcome(1300)
    fields, output, lost = seen["fields"], seen["output"], seen["lost"]
    print("job that lost %s: states %s, %s s" % (lost, " -> ".join(fields["seen"]), seen["took"]))
    assert fields["JobState"] == "COMPLETED", (fields, output[-6000:])
    assert int(fields.get("Restarts", "0")) >= 1 and lost not in fields.get("NodeList", ""), fields
    assert re.search(r"^resume rank=0 step=\d+$", output, re.M), output[-4000:]
    assert losses(output) == reference


def restart_controller(cluster, down_s):
    """slurmctld stopped with TERM (it saves its state) and started again on that state after ``down_s`` (neither
    -c nor -i), as an administrator restarts it: the jobs it knew go on."""
    with open(os.path.join(RUN_DIR, "slurmctld.pid")) as handle:
        pid = int(handle.read().strip())
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while os.path.exists("/proc/%d" % pid) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not os.path.exists("/proc/%d" % pid), "slurmctld %d did not stop" % pid
    time.sleep(down_s)
    _run(["slurmctld", "-f", cluster.conf], env=cluster, timeout=60)


def test_the_wait_goes_on_while_the_controller_restarts(cluster, jobs):
    """batch_job's wait (job_control.Job, the module's code) follows a training while slurmctld is stopped for 45 s
    and started again on its saved state: the status queries that fail meanwhile are asked again (status_errors),
    the wait does not end, and the job ends COMPLETED with the uninterrupted run's loss. It starts once every other
    scenario has ended: a requeue asked of a stopped controller would fail."""
    from ansible_collections.sodalite.modak.plugins.module_utils import job_control  # pylint: disable=import-outside-toplevel
    from ansible_collections.sodalite.modak.plugins.module_utils.commands import ProcessRunner  # pylint: disable=import-outside-toplevel
    reference = reference_loss(jobs)
    for scenario in jobs["scenarios"].values():
        scenario.join(1300)
    script = write_job(cluster, "steady", "00:10:00", LEAD_S)
    request = job_control.Request(script=script, scheduler="slurm", wait=True, wait_timeout=900, poll_interval=5)
    job = job_control.Job(request, ProcessRunner(timeout=30, env=dict(cluster)))
    outcome = {}

    def wait():
        try:
            outcome["result"] = job.execute()
        except Exception as exc:  # pylint: disable=broad-except
            outcome["error"] = exc

    waiting = threading.Thread(target=wait, daemon=True)
    waiting.start()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (job.result.get("job_id") and
                                               show(cluster, job.result["job_id"]).get("JobState") == "RUNNING"):
        time.sleep(2)
    job_id = job.result.get("job_id")
    assert job_id and show(cluster, job_id).get("JobState") == "RUNNING", job.result
    time.sleep(10)                     # a step or two of training
    restart_controller(cluster, CONTROLLER_DOWN_S)
    waiting.join(900)
    assert "error" not in outcome, outcome
    result = outcome["result"]
    with open(os.path.join(os.path.dirname(script), "steady-%s.out" % job_id)) as handle:
        output = handle.read()
    print("wait across a controller restart: %s, %d status queries unanswered"
          % (result["state"], result.get("status_errors", 0)))
    assert result["state"] == "COMPLETED", (result, output[-4000:])
    assert result.get("status_errors", 0) >= 1, result
    assert losses(output) == reference
