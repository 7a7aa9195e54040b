#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: batch_job
short_description: Submit, follow and cancel batch jobs on Slurm, PBS Pro, Torque, Grid Engine, Flux or locally
version_added: "0.1.0"
description:
  - Submits a job script to a batch scheduler (C(sbatch --parsable) on Slurm, C(qsub) on PBS Pro, Torque and
    Grid Engine, C(flux batch) on Flux) or runs it with bash in the background (O(scheduler=local)), optionally
    waits until it leaves the queue, and reports its state and exit code in Slurm's words.
  - Slurm jobs are followed with C(scontrol show job -o) and, once the controller has forgotten them, with
    C(sacct) or C(sacct -c) (the job-completion log). PBS jobs are followed with C(qstat -f)
    (C(qstat -x -f) on PBS Pro), Grid Engine jobs with C(qstat) and then C(qacct), Flux jobs with C(flux jobs).
  - Idempotent. A job with the same name and the same script content (and O(extra_args)) that is still
    pending or running is not submitted again unless O(force=true). On Slurm the content hash travels
    in the job's comment (C(--comment=modak:<sha256>)); for every scheduler it is also recorded in
    C(<chdir>/.modak/jobs.json).
  - Every scheduler command runs as an argument list, never through a shell, with a timeout
    (O(command_timeout)), so a scheduler that does not answer gives an error instead of a hang.
  - With O(state=submitted) and O(wait=true) the waiting is done on the controller by the action plugin of
    this module. It submits (the module with O(wait=false)), then queries the job (the module with
    O(state=query)) every O(poll_interval) seconds and, after the submission and after each query, prints one
    line at the default verbosity with the host, the job id and name, the scheduler's state, the time the job
    has run when the scheduler tells, the time waited, and the last line of the job's output file when the
    host can read it.
  - "A progress line looks like this one: localhost: job 4242 (train) RUNNING, ran 0:01:23, waited 0:01:30: epoch 3/10"
requirements:
  - The scheduler's command line tools on the host that runs the module (C(sbatch), C(squeue), C(scontrol), C(sacct),
    C(scancel) for Slurm; C(qsub), C(qstat), C(qdel) for PBS Pro and Torque; C(qsub), C(qstat), C(qacct), C(qdel)
    for Grid Engine; C(flux) for Flux); none for O(scheduler=local).
author:
  - modak developers (@sodalite-modak)
extends_documentation_fragment:
  - sodalite.modak.schedulers
  - sodalite.modak.schedulers.names
  - sodalite.modak.examples
attributes:
  action:
    support: full
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    details: The waiting of O(state=submitted) with O(wait=true) runs on the controller and prints the job's progress.
  async:
    support: partial
    description: Supports being used with the C(async) keyword.
    details: With C(async) the module waits by itself, without printing progress.
  check_mode:
    support: full
    description: Can run in check mode and return changed status prediction without modifying target.
    details: On Slurm, check mode runs C(sbatch --test-only), which submits nothing; for local jobs it runs C(bash -n).
  diff_mode:
    support: none
    description: Will return details on what has changed (or possibly needs changing in check mode), when in diff mode.
  platform:
    support: full
    platforms: posix
    description: Target OS/families that can be operated against.
options:
  script:
    description:
      - Path of the job script on the host.
      - Required with O(state=submitted). With O(state=absent) and no O(job_id), the running job with this
        script's name and content is cancelled.
    type: path
  scheduler:
    description:
      - The scheduler to use.
      - Default is read from the script's directives, each scheduler's own prefix (C(#SBATCH), C(#PBS),
        C(#$), C(# flux:)); a C(#PBS) script with C(select=) is V(pbspro)'s, any other C(#PBS) script V(torque)'s,
        and a script without directives V(local)'s.
      - The choices are the scheduler registry's (the generated fragment C(sodalite.modak.schedulers)).
    type: str
  state:
    description:
      - V(submitted) submits the job (unless the same job is already queued or running).
      - V(absent) cancels the job (C(scancel), C(qdel), or a signal to the local process group).
      - V(query) reports the state of job O(job_id) and the last lines of its output file (RV(stdout_tail)),
        and changes nothing; it never submits and never waits. As with V(submitted), the task fails when the
        job has ended in a state other than C(COMPLETED) and O(fail_on_job_error=true). O(scheduler) or
        O(script) is needed to know the scheduler, as for V(absent).
      - V(available) reports whether the scheduler answers (RV(available)) by running its own status command once
        (Slurm C(scontrol ping), PBS C(qstat -B), Grid Engine C(qstat -g c), Flux C(flux uptime); a run on the host
        always answers). It changes nothing and never fails on the answer. O(scheduler) or O(script) names the
        scheduler.
    type: str
    choices: [submitted, absent, query, available]
    default: submitted
  job_id:
    description:
      - The job to cancel with O(state=absent), or to query with O(state=query) (required then).
    type: str
  wait:
    description:
      - Wait until the job has left the queue (ended, failed or was cancelled).
      - With O(state=submitted) the progress is printed after every query (see the description).
      - Ignored with O(state=query).
    type: bool
    default: false
  wait_timeout:
    description:
      - Seconds to wait when O(wait=true); the task fails when the job is still queued or running then.
    type: int
    default: 3600
  poll_interval:
    description:
      - The longest pause, in seconds, between two status queries while waiting; the pause starts at 1 second and
        doubles up to it, so that a short job is seen ending soon.
      - At least 1 second (values below are raised to 1 with a warning), so that a value of 0 does not
        flood the scheduler's controller with queries.
      - A status query the scheduler does not answer is asked again for at most 180 seconds in a row before the
        wait fails, naming the job.
    type: float
    default: 5
  chdir:
    description:
      - Directory the scheduler commands run in (the job's submit directory, where relative output paths
        point). Default is the directory of O(script).
    type: path
  extra_args:
    description:
      - Extra arguments for the submit command (C(sbatch), C(qsub), C(flux batch)), put before the script, one
        list item per argument.
    type: list
    elements: str
    default: []
  after:
    description:
      - Jobs this one waits for, written in the scheduler's words before O(extra_args) (Slurm C(--dependency)
        with C(--kill-on-invalid-dep=yes), PBS C(-W depend=), Grid Engine C(-hold_jid), Flux C(--dependency)).
      - A scheduler that cannot say a kind fails the task with the reason (Grid Engine's C(-hold_jid) waits for
        the end whatever the exit status, so it takes only V(any); a job on the host starts at once, so
        V(local) takes none).
    type: list
    elements: dict
    default: []
    suboptions:
      job_id:
        description: The id of the job to wait for.
        type: str
        required: true
      kind:
        description: Start when that job ended with exit status 0 (V(ok)), at all (V(any)), or otherwise (V(notok)).
        type: str
        choices: [ok, any, notok]
        default: ok
  force:
    description:
      - Submit even when the same job (name and content) is still pending or running.
    type: bool
    default: false
  rerun:
    description:
      - When V(false), a job with the same name and content that was submitted before from O(chdir) is not
        submitted again even when it has ended; its last state is reported instead. Roles use this to make a
        second run change nothing.
    type: bool
    default: true
  fail_on_job_error:
    description:
      - Fail the task when the job ended in any state other than C(COMPLETED) (for example C(FAILED),
        C(TIMEOUT), C(CANCELLED)). With V(false) the state and exit code are only reported.
    type: bool
    default: true
  command_timeout:
    description:
      - Seconds one scheduler command (C(sbatch), C(squeue), C(qstat)...) may take before the task fails with
        a clear error.
    type: int
    default: 30
notes:
  - The PBS wrappers of Slurm (Debian package C(slurm-wlm-torque)) print no exit status in C(qstat -f); jobs
    submitted through them are reported C(COMPLETED) with RV(exit_code=null) once they have left the queue.
  - Local jobs have the process id as job id; their output goes to C(<chdir>/<name>.o<id>) and
    C(<chdir>/<name>.e<id>), or to the files the script names, all opened by batch_job without following a link;
    their exit code to C(<chdir>/.modak/<id>.rc), in the C(.modak) checked when the job was submitted.
seealso:
  - module: sodalite.modak.optimise
"""

EXAMPLES = r"""
# Each needs a host with the scheduler's commands (sbatch, squeue, sacct and scontrol for Slurm; qsub and qstat for
# PBS Pro and Torque) and the job script there, as sodalite.modak.optimise writes it.
- name: Submit a Slurm job and wait for it
  sodalite.modak.batch_job:
    script: /scratch/alice/jobs/train.sbatch
    wait: true
    wait_timeout: 7200
    poll_interval: 30
  register: job

# job is the result the first task registered.
- name: Show where the output went
  ansible.builtin.debug:
    msg: "job {{ job.job_id }} {{ job.state }} (exit {{ job.exit_code }}), output in {{ job.stdout_path }}"

- name: Submit to another partition, keep going when the job fails
  sodalite.modak.batch_job:
    script: /scratch/alice/jobs/train.sbatch
    extra_args: [--partition=gpu, --time=01:00:00]
    wait: true
    fail_on_job_error: false

# build is the registered result of an earlier batch_job task that submitted the image build job.
- name: Submit the training once the image build job has ended well
  sodalite.modak.batch_job:
    script: /scratch/alice/jobs/train.sbatch
    after:
      - job_id: "{{ build.job_id }}"
        kind: ok

- name: Submit a PBS script through qsub
  sodalite.modak.batch_job:
    script: /home/alice/jobs/solver.pbs
    scheduler: torque

# job is the result the first task registered, here and in the next task.
- name: Look at a job submitted earlier (fails when it ended badly)
  sodalite.modak.batch_job:
    job_id: "{{ job.job_id }}"
    scheduler: slurm
    state: query
  register: seen

- name: Cancel a job
  sodalite.modak.batch_job:
    job_id: "{{ job.job_id }}"
    scheduler: slurm
    state: absent
    wait: true
"""

RETURN = r"""
available:
  description: Whether the scheduler answers, with O(state=available); RV(msg) says what it said.
  returned: with O(state=available)
  type: bool
  sample: true
job_id:
  description: The scheduler's job id (the process id for local jobs); null in check mode when nothing ran.
  returned: always
  type: str
  sample: "4242"
active:
  description: Whether the job is still queued or running; null when there is no job (check mode, nothing to cancel).
  returned: always
  type: bool
  sample: false
stdout_tail:
  description:
    - The last lines (at most 3) of the job's output file RV(stdout_path), read from at most its last 4 KiB, each
      line cut to 200 characters, control characters shown as C(?); empty when the file cannot be read yet.
  returned: with O(state=query)
  type: list
  elements: str
  sample: ["epoch 3/10 loss 0.41"]
polls:
  description:
    - The job's state when it was submitted (or found) and after each query while waiting, oldest first.
    - C(waited) is the number of seconds since the submission, C(elapsed) the job's own run time (null when the
      scheduler does not tell).
  returned: with O(state=submitted) and O(wait=true), except in check mode and with C(async)
  type: list
  elements: dict
  sample: [{state: PENDING, elapsed: 0, waited: 0}, {state: RUNNING, elapsed: 4, waited: 5},
           {state: COMPLETED, elapsed: 6, waited: 10}]
segments:
  description:
    - The job's runs between requeues (job.resilience; a preemption or a lost node under C(--requeue)), oldest first,
      read from the polls while waiting; a run ends where the restart count grows. Each gives C(restart) (0 for the
      first run), C(nodes) (the last node list seen), C(state) and C(reason) (the state after the requeue, for
      example C(PENDING) with C(BeginTime), or the final state), C(exit_code) and C(from) (where the restart count
      comes from, Slurm's C(scontrol show job) C(Restarts=)). A run whose requeue no poll saw (the job started
      again in between) ends C(REQUEUED), and runs no poll saw are missing (the restart numbers jump).
  returned: with wait=true, except in check mode and with C(async)
  type: list
  elements: dict
  sample: [{restart: 0, nodes: "mn[1-2]", state: PENDING, reason: BeginTime, exit_code: null,
            from: "scontrol show job: Restarts="},
           {restart: 1, nodes: "mn[1-2]", state: COMPLETED, reason: null, exit_code: 0,
            from: "scontrol show job: Restarts="}]
restarts:
  description: How many times the scheduler requeued the job (Slurm's C(Restarts=) in C(scontrol show job)); null
    when the scheduler does not tell.
  returned: always
  type: int
  sample: 1
restarts_from:
  description: Where RV(restarts) comes from (the scheduler's command and field); null when it does not tell.
  returned: always
  type: str
  sample: "scontrol show job: Restarts="
nodes:
  description: The nodes the job runs or ran on, in the scheduler's words; null when it does not tell.
  returned: always
  type: str
  sample: "mn[1-2]"
state:
  description:
    - The job's state in the scheduler's words, for example C(PENDING), C(RUNNING), C(COMPLETED), C(FAILED),
      C(TIMEOUT), C(CANCELLED), C(OUT_OF_MEMORY); PBS letters are spelled out (C(Q) is C(QUEUED)).
    - Null in check mode when nothing was submitted.
  returned: always
  type: str
  sample: COMPLETED
exit_code:
  description: The job's exit code once it has ended (128 + signal when a signal ended it); null while it runs or when
    the scheduler does not tell.
  returned: always
  type: int
  sample: 0
reason:
  description:
    - Why the job waits or ended as it did, in the scheduler's words (Slurm's C(Reason) from C(scontrol show job),
      for example C(Resources), C(Priority), C(Dependency), C(NonZeroExitCode)); null when the scheduler says
      nothing. A failed job's message also gives it, with the exit code and the last lines of its output.
  returned: always
  type: str
  sample: Resources
expected_start:
  description: When the scheduler expects a pending job to start (Slurm's C(StartTime)); null otherwise.
  returned: always
  type: str
  sample: "2026-11-25T15:00:00"
stdout_path:
  description: Path of the job's standard output file on the host, when known.
  returned: always
  type: str
  sample: /scratch/alice/jobs/train-4242.out
stderr_path:
  description: Path of the job's standard error file on the host, when known (the same as RV(stdout_path) when joined).
  returned: always
  type: str
  sample: /scratch/alice/jobs/train-4242.out
elapsed:
  description: Seconds the job has run, when known.
  returned: always
  type: int
  sample: 93
cmd:
  description: The argument list of the command that changed something (submit or cancel; C(sbatch --test-only) in
    check mode); empty when nothing was run.
  returned: always
  type: list
  elements: str
  sample: [sbatch, --parsable, "--comment=modak:0f3c...", /scratch/alice/jobs/train.sbatch]
scheduler:
  description: The scheduler used (given or read from the script).
  returned: always
  type: str
  sample: slurm
chdir:
  description: The directory the scheduler commands ran in (the job's submit directory).
  returned: always
  type: str
  sample: /scratch/alice/jobs
state_files:
  description:
    - The names of the files batch_job keeps for this job in C(<chdir>/.modak) that are there (the ledger and its
      lock, and a local job's C(<id>.pid), C(<id>.rc) and C(<id>.cancelled)); the TOSCA BatchJob records them as
      modak's (M(sodalite.modak.created_files)) so that its delete removes them and nothing else.
  returned: when a job's state was read
  type: list
  elements: str
  sample: [jobs.json, jobs.json.lock, 4242.pid, 4242.rc]
job_name:
  description: The job's name (from the directives, the extra arguments, or the script's file name).
  returned: always
  type: str
  sample: train
msg:
  description: What happened, in one line.
  returned: always
  type: str
  sample: job 4242 submitted
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sodalite.modak.plugins.module_utils.commands import ModuleRunner
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.registry import NAMES
from ansible_collections.sodalite.modak.plugins.module_utils.job_control import (
    POLL_FLOOR_S, Request, JobFailed, SubmitError, run)

ARGUMENT_SPEC = dict(
    script=dict(type="path"),
    scheduler=dict(type="str", choices=list(NAMES)),
    state=dict(type="str", default="submitted", choices=["submitted", "absent", "query", "available"]),
    job_id=dict(type="str"),
    wait=dict(type="bool", default=False),
    wait_timeout=dict(type="int", default=3600),
    poll_interval=dict(type="float", default=5),
    chdir=dict(type="path"),
    extra_args=dict(type="list", elements="str", default=[]),
    after=dict(type="list", elements="dict", default=[],
               options=dict(job_id=dict(type="str", required=True),
                            kind=dict(type="str", default="ok", choices=["ok", "any", "notok"]))),
    force=dict(type="bool", default=False),
    rerun=dict(type="bool", default=True),
    fail_on_job_error=dict(type="bool", default=True),
    command_timeout=dict(type="int", default=30),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True,
                           required_if=[("state", "submitted", ("script",)), ("state", "query", ("job_id",)),
                                        ("state", "absent", ("script", "job_id"), True),
                                        ("state", "available", ("script", "scheduler"), True)])
    params = dict((key, module.params[key]) for key in ARGUMENT_SPEC)
    if params["wait"] and params["state"] != "query" and params["poll_interval"] < POLL_FLOOR_S:
        module.warn("poll_interval=%s is below the floor of %s s; polling every %s s"
                    % (params["poll_interval"], POLL_FLOOR_S, POLL_FLOOR_S))
    try:
        result = run(Request(check_mode=module.check_mode, **params),
                     ModuleRunner(module, timeout=module.params["command_timeout"]))
    except JobFailed as exc:
        result = dict(exc.result, msg=str(exc))
        module.fail_json(**result)
    except SubmitError as exc:
        # a query the scheduler did not answer (a controller restarting, a slow reply): the job may still run, and
        # the wait of the action plugin asks again (status_unread)
        unread = dict(status_unread=True, job_id=params["job_id"]) if params["state"] == "query" else {}
        module.fail_json(msg=str(exc), cmd=exc.cmd or [], rc=exc.rc, stdout=exc.stdout, stderr=exc.stderr, **unread)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
