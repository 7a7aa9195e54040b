"""job.resilience on the local scheduler: no queue to requeue a job in, so the job's script runs the program again
itself (the wall time, the signal before it from the script's own timeout(1), the restart count, the exit status
that asks for a new run). The lines are exact text, they pass bash -n and shellcheck, and real local jobs (bash on
this host, no service) restart a program that checkpoints a counter and end as an uninterrupted run does."""

from __future__ import annotations

import os
import subprocess
import textwrap
import time

import pytest
from helpers import ai_doc, with_
from test_render import lint

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, pipeline, resilience
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.commands import ProcessRunner
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import local, registry

EMPTY = ImageCatalog([])


def local_job(resilience=None, wall="01:00:00", program="python3 train.py"):
    doc = ai_doc("pytorch", "2.13.0", scheduler="local")
    for path, value in (("job.job_options.wall_time_limit", wall), ("job.resilience", resilience or {}),
                        ("job.application.executable", program), ("job.application.container_runtime", ""),
                        ("job.application.launcher", "none")):
        doc = with_(doc, path, value)
    return doc


def problems(doc):
    with pytest.raises(DslInvalid) as err:
        dsl.parse(doc)
    return {p.path: p for p in err.value.problems}


def test_local_signals_before_its_limit_and_requeues_on_nothing():
    """The registry says what local takes: the limit signal (its own timer), not a scheduler's requeue."""
    assert registry.capable("local", registry.LIMIT_SIGNAL) and not registry.capable("local", registry.REQUEUE)


def test_the_script_runs_the_program_again_in_a_loop_with_the_signal_before_the_limit(tmp_path):
    result = pipeline.optimise(local_job({"signal_lead_time": 60, "max_restarts": 2}), EMPTY)
    text = result.script.text
    env = dict(result.settings.env)
    assert (env["MODAK_RESTART_COUNT"], env["MODAK_MAX_RESTARTS"], env["MODAK_REQUEUE_EXIT"]) == ("0", "2", "99")
    assert ".modak-starts" not in text          # the loop counts the runs itself
    assert "trap 'modak_stop term' TERM\n" in text
    assert text.index("trap 'modak_stop term' TERM\n") < text.index("chmod 0700 -- \"$MODAK_CHECKPOINT_DIR\"") < \
        text.index("\nwhile :; do  # local has no queue: the job runs the program again itself\n")
    assert "trap 'modak_stop limit'" not in text    # the batch shell gets no signal: timeout(1) signals the program
    body = text.split("while :; do  # local has no queue: the job runs the program again itself\n", 1)[1]
    assert body == textwrap.dedent("""\
          [ "$MODAK_STOP" != term ] || break  # cancelled between two runs
          SECONDS=0  # this run's time, as a job's
          timeout --preserve-status --signal=USR1 --kill-after=60 3540s python3 train.py &
          MODAK_LAUNCH=$!
          # a trapped signal ends a wait early: wait again until the launch has ended, then take its status
          while kill -0 "$MODAK_LAUNCH" 2>/dev/null; do wait "$MODAK_LAUNCH" || true; done
          wait "$MODAK_LAUNCH" && MODAK_RC=0 || MODAK_RC=$?
          [ -n "$MODAK_STOP" ] || [ "$SECONDS" -lt 3540 ] || MODAK_STOP=limit
          [ -z "$MODAK_STOP" ] || echo "modak: the launch ended with status $MODAK_RC after the $MODAK_STOP signal" >&2
          MODAK_WHY=
          [ "$MODAK_STOP" = limit ] && MODAK_WHY="the time limit" || true
          [ -z "$MODAK_STOP" ] && [ "$MODAK_RC" -eq 99 ] && MODAK_WHY="exit status 99" || true
          if [ "$MODAK_RC" -ne 0 ] && [ -e "$MODAK_CHECKPOINT_DIR/.modak-done" ]; then
            echo "modak: the program wrote its completion marker ($MODAK_DONE_FILE): the training is done, not run \
again (the launch ended with status $MODAK_RC)" >&2
            MODAK_RC=0
          fi
          if [ -n "$MODAK_WHY" ] && [ "$MODAK_RC" -ne 0 ] && [ "$MODAK_RESTART_COUNT" -lt "$MODAK_MAX_RESTARTS" ]; then
            echo "modak: running the program again after $MODAK_WHY: restart $((MODAK_RESTART_COUNT + 1)) of \
$MODAK_MAX_RESTARTS" >&2
            MODAK_RESTART_COUNT=$((MODAK_RESTART_COUNT + 1))
            [ -z "${MODAK_JOB_STATE:-}" ] || { echo "$MODAK_RESTART_COUNT" >"$MODAK_JOB_STATE.restarts.tmp" \
&& mv -f "$MODAK_JOB_STATE.restarts.tmp" "$MODAK_JOB_STATE.restarts"; }
            MODAK_STOP=
            continue
          elif [ -n "$MODAK_WHY" ] && [ "$MODAK_RC" -ne 0 ]; then
            echo "modak: not run again after $MODAK_WHY: max_restarts ($MODAK_MAX_RESTARTS) reached" >&2
          fi
          break
        done
        exit "$MODAK_RC"
        """)
    assert any("the job's script runs the program again (no queue to requeue it in) on time_limit or its exit "
               "status 99, 2 restart(s) at most" in line for line in result.explanation)
    lint(text, tmp_path, result.script.filename)


def test_the_default_lead_time_and_a_total_training_time_count_each_run(tmp_path):
    result = pipeline.optimise(local_job({"total_training_time": "02:30:00"}), EMPTY)
    text = result.script.text
    assert result.request.resilience.max_restarts == 2
    assert "  timeout --preserve-status --signal=USR1 --kill-after=300 3300s python3 train.py &\n" in text
    assert ('  MODAK_TRAINED="%s"\n  MODAK_TRAINED=$((MODAK_TRAINED + SECONDS))\n' % resilience.counted(".modak-trained-s")
            in text)
    assert '[ "$MODAK_TRAINED" -lt 9000 ]; then\n' in text
    lint(text, tmp_path, result.script.filename)


def test_without_a_wall_time_only_the_programs_exit_status_restarts_it(tmp_path):
    text = pipeline.optimise(local_job(wall=None), EMPTY).script.text
    assert "timeout" not in text and "SECONDS\" -lt" not in text
    assert '  python3 train.py &\n' in text
    assert '[ "$MODAK_RC" -eq 99 ] && MODAK_WHY="exit status 99"' in text
    lint(text, tmp_path, "t.sh")


@pytest.mark.parametrize("resilience, path, words", [
    ({"requeue_on": ["time_limit", "preemption"]}, "job.resilience.requeue_on[1]",
     "local cannot requeue a job on preemption"),
    ({"requeue_on": ["node_failure"]}, "job.resilience.requeue_on[0]", "local cannot requeue a job on node_failure"),
    ({"signal_lead_time": 7200}, "job.resilience.signal_lead_time", "shorter than wall_time_limit"),
])
def test_what_local_cannot_do_is_refused_by_path(resilience, path, words):
    found = problems(local_job(resilience))
    assert path in found and words in found[path].message, found
    assert "nothing puts a local job back" in problems(local_job({"requeue_on": ["preemption"]}))[
        "job.resilience.requeue_on[0]"].hint


def test_a_lead_time_needs_the_wall_time_it_comes_before():
    found = problems(local_job({"signal_lead_time": 60}, wall=None))
    assert "needs job.job_options.wall_time_limit" in found["job.resilience.signal_lead_time"].message


# -- real local jobs: bash on this host, no service ----------------------------------------------------------------

COUNTER = """\
#!/bin/bash
# five steps; each adds the step to a sum; the state (step, sum) is checkpointed after every step, atomically
set -e
state="$MODAK_CHECKPOINT_DIR/state"
read -r step sum 2>/dev/null <"$state" || { step=0; sum=0; }
trap 'echo "signal at step $step" >>runs; exit 138' USR1
echo "run $MODAK_RESTART_COUNT from step $step" >>runs
while [ "$step" -lt 5 ]; do
  %(pause)s
  step=$((step + 1)); sum=$((sum * 3 + step))
  echo "$step $sum" >"$state.tmp" && mv -f "$state.tmp" "$state"
  %(stop)s
done
echo "$sum after restart $MODAK_RESTART_COUNT of $MODAK_MAX_RESTARTS" >result
"""


def counter(tmp_path, pause=":", stop=":"):
    program = tmp_path / "counter.sh"
    program.write_text(COUNTER % {"pause": pause, "stop": stop})
    program.chmod(0o755)
    return str(program)


def submit(doc, tmp_path):
    """The job's script written and submitted with the local backend; its final status once it has ended."""
    result = pipeline.optimise(doc, EMPTY)
    script = tmp_path / result.script.filename
    script.write_text(result.script.text)
    backend = local.Local(ProcessRunner(), chdir=str(tmp_path), job_name="t")
    job_id = backend.submit(str(script))
    for _attempt in range(300):
        status = backend.status(job_id)
        if not status.active:
            return status
        time.sleep(0.05)
    raise AssertionError("the local job %s did not end" % job_id)


def uninterrupted(tmp_path, program):
    """The counter run once to its end, in a directory of its own."""
    alone = tmp_path / "alone"
    (alone / "ck").mkdir(parents=True)
    subprocess.run([program], cwd=str(alone), check=True, env=dict(
        os.environ, MODAK_CHECKPOINT_DIR=str(alone / "ck"), MODAK_RESTART_COUNT="1", MODAK_MAX_RESTARTS="1"))
    return (alone / "result").read_text().split()[0]


def test_a_program_exiting_with_the_requeue_status_runs_again_and_completes(tmp_path):
    """The counter exits 99 after its second step on the first run: the job runs it again with
    MODAK_RESTART_COUNT=1, it resumes from its checkpoint, and the job ends COMPLETED with the uninterrupted sum."""
    program = counter(tmp_path, stop='[ "$step" -ne 2 ] || [ "$MODAK_RESTART_COUNT" -ne 0 ] || '
                                     'exit "$MODAK_REQUEUE_EXIT"')
    status = submit(local_job(program=program, wall="00:01:00"), tmp_path)
    assert status.state == "COMPLETED" and status.exit_code == 0, open(status.stdout_path).read()
    assert (tmp_path / "runs").read_text() == "run 0 from step 0\nrun 1 from step 2\n"
    assert (tmp_path / "result").read_text() == "%s after restart 1 of 3\n" % uninterrupted(tmp_path, program)
    assert "modak: running the program again after exit status 99: restart 1 of 3" in open(status.stdout_path).read()
    assert status.restarts == 1 and "the job's own count" in status.restarts_from     # batch_job reports it


def test_the_limit_signal_stops_a_run_that_checkpoints_and_the_next_run_completes(tmp_path):
    """A 2-second wall time with the signal 1 s before it: the first run (1.5 s of steps) gets USR1 from timeout(1)
    after a second, checkpoints and exits 138; the job runs it again (its steps without a pause now) and it
    completes with the uninterrupted sum."""
    program = counter(tmp_path, pause='[ "$MODAK_RESTART_COUNT" -ne 0 ] || { sleep 0.3 & wait $!; }')
    status = submit(local_job({"signal_lead_time": 1}, program=program, wall=2), tmp_path)
    output = open(status.stdout_path).read()
    assert status.state == "COMPLETED", output
    runs = (tmp_path / "runs").read_text().splitlines()
    assert runs[0] == "run 0 from step 0" and runs[1].startswith("signal at step ") and runs[2].startswith("run 1")
    assert (tmp_path / "result").read_text() == "%s after restart 1 of 3\n" % uninterrupted(tmp_path, program)
    assert "modak: the launch ended with status 138 after the limit signal" in output


def test_a_run_that_ends_well_as_the_signal_comes_is_not_run_again(tmp_path):
    """The program ends with status 0 on the signal (it was done): the job does not run it again."""
    program = tmp_path / "done.sh"
    program.write_text("#!/bin/bash\necho run >>runs\nsleep 5 & nap=$!\ntrap 'kill \"$nap\"; exit 0' USR1\nwait\n")
    program.chmod(0o755)
    status = submit(local_job({"signal_lead_time": 1}, program=str(program), wall=2), tmp_path)
    assert status.state == "COMPLETED"
    assert (tmp_path / "runs").read_text() == "run\n"
    assert "running the program again" not in open(status.stdout_path).read()


def test_a_cancelled_job_checkpoints_and_runs_nothing_again(tmp_path):
    """A cancel (SIGTERM to the job's process group) reaches the script's trap, which forwards the program's signal
    through timeout(1): the run checkpoints and stops, and the job does not run the program again."""
    program = counter(tmp_path, pause="sleep 0.3 & wait $!")
    result = pipeline.optimise(local_job(program=program, wall=60), EMPTY)
    script = tmp_path / result.script.filename
    script.write_text(result.script.text)
    backend = local.Local(ProcessRunner(), chdir=str(tmp_path), job_name="t")
    job_id = backend.submit(str(script))
    runs = tmp_path / "runs"
    for _attempt in range(100):
        if runs.exists():
            break
        time.sleep(0.05)
    backend.cancel(job_id)
    for _attempt in range(100):
        if "signal at step" in runs.read_text():
            break
        time.sleep(0.05)
    time.sleep(0.5)
    assert runs.read_text().splitlines()[1].startswith("signal at step"), runs.read_text()
    assert len(runs.read_text().splitlines()) == 2 and not (tmp_path / "result").exists()
    assert backend.status(job_id).state == "CANCELLED"


def test_a_cancel_stops_the_launch_that_timeout_runs_in_a_group_of_its_own(tmp_path):
    """Without job.resilience the script has no trap: the cancel's SIGTERM ends it at once, and timeout(1) runs the
    launch in a process group of its own. The cancel still stops the launch (every group left in the job's
    session), so no program outlives a cancelled job."""
    program = tmp_path / "long.sh"
    program.write_text("#!/bin/bash\necho $$ >pid\nsleep 300 & wait $!\n")
    program.chmod(0o755)
    doc = local_job(program=str(program), wall=120)
    doc["job"].pop("resilience")
    result = pipeline.optimise(doc, EMPTY)
    assert "timeout --signal=TERM" in result.script.text
    script = tmp_path / result.script.filename
    script.write_text(result.script.text)
    backend = local.Local(ProcessRunner(), chdir=str(tmp_path), job_name="t")
    job_id = backend.submit(str(script))
    for _attempt in range(200):
        if (tmp_path / "pid").exists() and (tmp_path / "pid").read_text().strip():
            break
        time.sleep(0.05)
    launched = int((tmp_path / "pid").read_text())
    backend.cancel(job_id)
    for _attempt in range(100):
        if not local._alive(launched, local.start_time(launched) or None):
            break
        time.sleep(0.05)
    assert not local._alive(launched, local.start_time(launched) or None), "the launch outlived the cancel"
    assert backend.status(job_id).state == "CANCELLED"


def test_a_total_training_time_with_a_zero_wall_time_is_refused_by_path():
    """A wall time of zero ("P", ISO 8601) leaves no job time to divide the total by: refused, not a crash."""
    found = problems(local_job({"max_restarts": 0, "total_training_time": 1}, wall="P"))
    assert "needs job.job_options.wall_time_limit above zero" in found["job.resilience.total_training_time"].message


def test_a_training_that_wrote_its_completion_marker_is_never_run_again(tmp_path):
    """Hardening, round five, item 16: the limit signal reached the launcher (torchrun's agent) while its ranks were
    shutting down after the last step; it returned 1, and the job ran the whole training again and ended FAILED after
    max_restarts. The program's completion marker ($MODAK_DONE_FILE) now decides: done, COMPLETED, one run."""
    program = tmp_path / "agent.sh"
    program.write_text("#!/bin/bash\necho run >>runs\n: >\"$MODAK_DONE_FILE\"  # the last step is done\n"
                       "sleep 5 & nap=$!\ntrap 'kill \"$nap\"; exit 1' USR1\nwait\n")
    program.chmod(0o755)
    status = submit(local_job({"signal_lead_time": 1}, program=str(program), wall=2), tmp_path)
    output = open(status.stdout_path).read()
    assert status.state == "COMPLETED", output
    assert (tmp_path / "runs").read_text() == "run\n"
    assert "wrote its completion marker" in output and "running the program again" not in output


def test_a_job_that_runs_out_of_restarts_says_so(tmp_path):
    program = tmp_path / "again.sh"
    program.write_text("#!/bin/bash\necho run >>runs\nexit 99\n")
    program.chmod(0o755)
    status = submit(local_job({"max_restarts": 1}, program=str(program), wall=60), tmp_path)
    output = open(status.stdout_path).read()
    assert status.state == "FAILED" and (tmp_path / "runs").read_text() == "run\nrun\n", output
    assert "modak: not run again after exit status 99: max_restarts (1) reached" in output


def test_a_completion_marker_left_by_an_earlier_job_is_removed_at_the_first_start(tmp_path):
    """A marker of an earlier submission in the checkpoint directory would make the next training's first failure
    look done: the job's first start removes it."""
    (tmp_path / "checkpoints" / "t").mkdir(parents=True)
    (tmp_path / "checkpoints" / "t" / ".modak-done").write_text("")
    program = tmp_path / "fails.sh"
    program.write_text("#!/bin/bash\necho run >>runs\nexit 99\n")
    program.chmod(0o755)
    status = submit(local_job({"max_restarts": 0}, program=str(program), wall=60), tmp_path)
    assert status.state == "FAILED", open(status.stdout_path).read()


def test_a_total_training_time_job_runs_its_count_lines_and_completes(tmp_path):
    """A second review: the count read inside `$(( ))` held a case pattern whose ')' made bash read the whole as a
    command substitution: every job with total_training_time ended with status 127 at that line."""
    program = tmp_path / "done.sh"
    program.write_text("#!/bin/bash\necho run >>runs\n")
    program.chmod(0o755)
    status = submit(local_job({"total_training_time": "00:10:00"}, program=str(program), wall=60), tmp_path)
    output = open(status.stdout_path).read()
    assert status.state == "COMPLETED" and "command not found" not in output, output
    assert (tmp_path / "checkpoints" / "t" / ".modak-trained-s").read_text().strip().isdigit()
