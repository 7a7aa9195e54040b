"""job.resilience: the DSL's rules by path, what each scheduler writes, the forwarding trap of the Slurm script
(bash -n, shellcheck, and run for real with a fake scontrol), the example."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest
from helpers import ROOT, ai_doc, load, with_
from test_render import lint

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, pipeline, resilience
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid

EXAMPLE = os.path.join(ROOT, "examples", "pytorch-requeue-slurm.yaml")


def training(scheduler="slurm", resilience=None, wall="01:00:00", **app):
    doc = with_(ai_doc("pytorch", "2.13.0", scheduler=scheduler), "job.job_options.wall_time_limit", wall)
    doc = with_(doc, "job.resilience", resilience if resilience is not None else {})
    for key, value in app.items():
        doc = with_(doc, "job.application.%s" % key, value)
    return doc


def problems(doc):
    with pytest.raises(DslInvalid) as err:
        dsl.parse(doc)
    return {p.path: p for p in err.value.problems}


def test_slurm_writes_the_signal_the_requeue_and_one_output_file(catalog):
    result = pipeline.optimise(training(resilience={"signal_lead_time": 120}), catalog)
    assert result.script.directives[-3:] == ("#SBATCH --signal=B:USR1@120", "#SBATCH --requeue",
                                             "#SBATCH --open-mode=append")
    env = dict(result.settings.env)
    assert env["MODAK_RESTART_COUNT"] == '"${SLURM_RESTART_COUNT:-0}"'
    assert env["MODAK_CHECKPOINT_DIR"] == '"$PWD"/checkpoints/t'
    assert env["MODAK_MAX_RESTARTS"] == "3"
    text = result.script.text
    assert "trap 'modak_stop limit' USR1\ntrap 'modak_stop term' TERM\n" in text
    assert '  kill -s USR1 "$MODAK_LAUNCH" 2>/dev/null || true\n' in text    # one process, no srun step
    assert '[ "$MODAK_STOP" = limit ] && MODAK_WHY="the time limit" || true\n' in text
    assert ('[ "$MODAK_STOP" != limit ] && [[ "$(scontrol show job -o "$SLURM_JOB_ID" 2>/dev/null)" == '
            '*" PreemptTime="[0-9]* ]] && MODAK_WHY="a preemption" || true\n') in text
    assert '[ -z "$MODAK_STOP" ] && [ "$MODAK_RC" -eq 99 ] && MODAK_WHY="exit status 99" || true\n' in text
    assert ('if [ -n "$MODAK_WHY" ] && [ "$MODAK_RC" -ne 0 ] && [ "$MODAK_RESTART_COUNT" -lt "$MODAK_MAX_RESTARTS" ]; '
            'then\n' in text)
    assert ('  scontrol requeue "$SLURM_JOB_ID"\nelif [ -n "$MODAK_WHY" ] && [ "$MODAK_RC" -ne 0 ]; then\n'
            '  echo "modak: not run again after $MODAK_WHY: max_restarts ($MODAK_MAX_RESTARTS) reached" >&2\nfi\n'
            'exit "$MODAK_RC"\n') in text
    assert any("resilience: requeued on time_limit, preemption, node_failure, 3 restart(s) at most" in line
               for line in result.explanation)


def test_the_default_lead_time_is_five_minutes_and_at_most_half_the_wall_time(catalog):
    assert "#SBATCH --signal=B:USR1@300" in pipeline.optimise(training(), catalog).script.directives
    short = pipeline.optimise(training(wall="00:04:00"), catalog)
    assert "#SBATCH --signal=B:USR1@120" in short.script.directives


@pytest.mark.parametrize("scheduler, line", [("pbspro", "#PBS -r y"), ("torque", "#PBS -r y"),
                                             ("gridengine", "#$ -r y")])
def test_pbs_and_grid_engine_mark_the_job_rerunnable(scheduler, line, catalog, tmp_path):
    result = pipeline.optimise(training(scheduler), catalog)
    assert result.script.directives[-1] == line
    assert result.request.resilience.requeue_on == ("preemption", "node_failure")
    text = result.script.text
    # no restart variable there: the job counts its starts in the checkpoint directory
    assert 'MODAK_RESTART_COUNT="%s"' % resilience.counted(".modak-starts") in text
    assert resilience.kept_lines('"$((MODAK_RESTART_COUNT + 1))"', ".modak-starts")[0] in text
    assert "requeue" not in text.split("trap 'modak_stop term' TERM", 1)[1]
    lint(text, tmp_path, result.script.filename)


def test_a_per_node_launcher_gets_term_and_srun_per_rank_usr1(catalog):
    doc = with_(training(launcher="torchrun"), "job.job_options.node_count", 2)
    doc = with_(doc, "job.optimisation.app_type-ai_training.config.distributed_training", True)
    text = pipeline.optimise(doc, catalog).script.text
    assert 'scancel --signal=TERM "$SLURM_JOB_ID"' in text
    srun = with_(doc, "job.application.launcher", "srun")
    assert 'scancel --signal=USR1 "$SLURM_JOB_ID"' in pipeline.optimise(srun, catalog).script.text


def test_a_run_without_srun_is_signalled_itself(catalog):
    text = pipeline.optimise(training(launcher="none"), catalog).script.text
    assert '  kill -s USR1 "$MODAK_LAUNCH" 2>/dev/null || true\n' in text


def test_total_training_time_sets_the_restarts_and_bounds_the_requeue(catalog):
    result = pipeline.optimise(training(resilience={"total_training_time": "03:30:00"}), catalog)
    assert result.request.resilience.max_restarts == 3          # ceil(3.5 h / 1 h) - 1
    assert '[ "$MODAK_TRAINED" -lt 12600 ]; then' in result.script.text
    assert any("the training may take 12600 s in all, 3600 s per job" in line for line in result.explanation)


@pytest.mark.parametrize("scheduler, resilience, path, words", [
    ("slurm", {"signal_lead_time": 3600}, "job.resilience.signal_lead_time", "shorter than wall_time_limit"),
    ("flux", {}, "job.resilience", "flux cannot requeue a job"),
    ("pbspro", {"requeue_on": ["preemption", "time_limit"]}, "job.resilience.requeue_on[1]",
     "pbspro cannot requeue a job on time_limit"),
    ("gridengine", {"signal_lead_time": 60}, "job.resilience.signal_lead_time", "signals no job before its limit"),
    ("torque", {"total_training_time": "10:00:00"}, "job.resilience.total_training_time",
     "torque requeues no job at its limit"),
    ("slurm", {"total_training_time": "10:00:00", "max_restarts": 2}, "job.resilience.max_restarts",
     "cannot reach total_training_time"),
    ("slurm", {"total_training_time": "10:00:00", "requeue_on": ["preemption", "node_failure"]},
     "job.resilience.requeue_on", "leaves out time_limit"),
])
def test_rules_by_path(scheduler, resilience, path, words):
    found = problems(training(scheduler, resilience))
    assert path in found and words in found[path].message, found


def test_a_total_needs_a_wall_time():
    doc = with_(training(resilience={"total_training_time": "10:00:00"}), "job.job_options.wall_time_limit", None)
    assert "needs job.job_options.wall_time_limit" in problems(doc)["job.resilience.total_training_time"].message


def test_torchrun_is_not_sent_usr1():
    doc = training(resilience={"signal": "USR1"}, launcher="torchrun")
    assert "torchrun dies on USR1" in problems(doc)["job.resilience.signal"].message


def test_raw_directives_the_section_writes_are_refused():
    doc = with_(training(), "job.job_options.extra_directives", ["--reservation=x", "--signal=B:USR2@60"])
    assert "is written by job.resilience" in problems(doc)["job.job_options.extra_directives[1]"].message


def test_the_schema_refuses_unknown_signals_and_events():
    found = problems(training(resilience={"signal": "KILL", "requeue_on": ["always"]}))
    assert "job.resilience.signal" in found and "job.resilience.requeue_on[0]" in found


def test_the_example_shows_the_section_and_its_script_lints(catalog, tmp_path):
    result = pipeline.optimise(load(EXAMPLE), catalog)
    text = result.script.text
    for line in ("#SBATCH --signal=B:USR1@300", "#SBATCH --requeue", "#SBATCH --open-mode=append",
                 "trap 'modak_stop limit' USR1", 'scancel --signal=USR1 "$SLURM_JOB_ID"',
                 'scontrol requeue "$SLURM_JOB_ID"', '[ "$MODAK_TRAINED" -lt 43200 ]'):
        assert line in text, line
    assert result.request.resilience.max_restarts == 2
    lint(text, tmp_path, result.script.filename)


# the program's sleep ends with it: left running, it would hold the job's output open for 30 s
CHECKPOINTS = """\
#!/bin/bash
sleep 30 & nap=$!
trap 'echo "checkpoint written in $MODAK_CHECKPOINT_DIR at restart $MODAK_RESTART_COUNT"; kill "$nap"; exit 138' \\
    USR1 TERM
wait
"""


def run_script(text, tmp_path, restart_count, sig=signal.SIGUSR1, preempt_time="None", signal_after=1.0,
               program_text=CHECKPOINTS):
    """Run the rendered script (a bare run, the program's process signalled by the script) with a fake scontrol
    (``scontrol show job`` says PreemptTime=``preempt_time``); ``sig`` is sent to the batch shell: USR1 as Slurm's
    --signal=B:USR1 sends it, TERM as a preemption or scancel does. The program checkpoints on the signal and exits
    138, unless ``program_text`` says otherwise."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "scontrol").write_text('#!/bin/bash\nif [ "$1" = show ]; then echo "JobId=42 JobState=RUNNING '
                                      'PreemptTime=%s Partition=p"; exit 0; fi\necho "scontrol $*" >>"$CALLS"\n'
                                      % preempt_time)
    (bin_dir / "scontrol").chmod(0o755)
    program = tmp_path / "program.sh"
    program.write_text(program_text)
    program.chmod(0o755)
    script = tmp_path / "job.sh"
    script.write_text(text.replace("python3 train.py", str(program)))
    calls = tmp_path / "calls"
    env = dict(os.environ, PATH="%s:%s" % (bin_dir, os.environ["PATH"]), CALLS=str(calls), SLURM_JOB_ID="42",
               SLURM_SUBMIT_DIR=str(tmp_path), SLURM_RESTART_COUNT=str(restart_count))
    proc = subprocess.Popen(["bash", str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=str(tmp_path))
    if signal_after is not None:        # None: no signal
        time.sleep(signal_after)
        proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    return proc.returncode, out, err, calls.read_text() if calls.exists() else ""


@pytest.mark.parametrize("restarts, requeued", [(0, True), (3, False)])
def test_the_trap_forwards_waits_for_the_checkpoint_and_requeues_while_restarts_remain(
        restarts, requeued, catalog, tmp_path):
    doc = training(launcher="none", container_runtime="")
    text = pipeline.optimise(doc, catalog).script.text
    rc, out, err, calls = run_script(text, tmp_path, restarts)
    assert "checkpoint written in %s/checkpoints/t at restart %d" % (tmp_path, restarts) in out, (out, err)
    assert rc == 138      # the program's status: the job ended on the signal
    assert ("scontrol requeue 42" in calls) is requeued
    assert ("modak: requeued after the time limit: restart %d of 3" % (restarts + 1) in err) is requeued


@pytest.mark.parametrize("preempt_time, requeued", [("2026-11-27T04:14:50", True), ("None", False)])
def test_after_term_the_job_requeues_itself_only_when_preempted(preempt_time, requeued, catalog, tmp_path):
    """A job that ends within the preemption's grace time is not requeued by Slurm (PreemptMode=REQUEUE): it requeues
    itself when scontrol shows a PreemptTime; a TERM of scancel (PreemptTime=None) ends it. (Slurm 22.05 signals
    the steps alone in the grace time: the check does not need the batch shell's TERM.)"""
    text = pipeline.optimise(training(launcher="none", container_runtime=""), catalog).script.text
    rc, out, err, calls = run_script(text, tmp_path, 0, signal.SIGTERM, preempt_time)
    assert "checkpoint written in" in out and rc == 138, (out, err)
    assert "modak: term signal: forwarding USR1 to the ranks" in err
    assert ("scontrol requeue 42" in calls) is requeued
    assert ("modak: requeued after a preemption: restart 1 of 3" in err) is requeued


def test_a_run_that_ended_well_as_the_limit_signal_came_is_not_requeued(catalog, tmp_path):
    """The signal arrives as the program ends with status 0: the training is done, the job is not requeued."""
    text = pipeline.optimise(training(launcher="none", container_runtime=""), catalog).script.text
    rc, _out, err, calls = run_script(text, tmp_path, 0, program_text="#!/bin/bash\nsleep 30 & nap=$!\n"
                                                                      "trap 'kill \"$nap\"; exit 0' USR1\nwait\n")
    assert rc == 0 and "modak: limit signal: forwarding USR1" in err, err
    assert "scontrol requeue" not in calls and "requeued" not in err


def test_a_program_exiting_99_asks_for_a_new_run(catalog, tmp_path):
    """MODAK_REQUEUE_EXIT (99) without a signal requeues the job while restarts remain."""
    text = pipeline.optimise(training(launcher="none", container_runtime=""), catalog).script.text
    rc, _out, err, calls = run_script(text, tmp_path, 0, signal_after=None,
                                      program_text='#!/bin/bash\nexit "$MODAK_REQUEUE_EXIT"\n')
    assert rc == 99 and "scontrol requeue 42" in calls, err
    assert "modak: requeued after exit status 99: restart 1 of 3" in err


@pytest.mark.parametrize("scheduler, events", [("slurm", ["time_limit"]), ("slurm", ["time_limit", "preemption"]),
                                               ("slurm", ["node_failure"]), ("pbspro", ["preemption"]),
                                               ("gridengine", ["node_failure"])])
def test_requeue_on_cannot_part_what_the_rerunnable_mark_joins(scheduler, events):
    """The rerunnable mark (--requeue, which scontrol requeue needs too; -r y) makes the scheduler requeue after a
    preemption and after a lost node alike: a list without both is refused, not silently widened."""
    found = problems(training(scheduler, {"requeue_on": events}))
    assert "requeues a job marked rerunnable after preemption and node_failure alike" in \
        found["job.resilience.requeue_on"].message, found


def test_requeue_on_without_time_limit_writes_no_requeue_at_the_limit(catalog):
    result = pipeline.optimise(training(resilience={"requeue_on": ["preemption", "node_failure"]}), catalog)
    assert "#SBATCH --requeue" in result.script.directives
    assert 'MODAK_WHY="the time limit"' not in result.script.text and "exit status 99" not in result.script.text
    assert "MODAK_REQUEUE_EXIT" not in dict(result.settings.env)


@pytest.mark.parametrize("held, count", [("3", 3), ("0099", 99), ("", 0), ("abc", 0), ("-1", 0), ("1e3", 0),
                                         ("x[$(touch pwned; echo 0)]", 0), ("$(touch pwned)", 0),
                                         ("1" * 16, 0), ("9" * 15, 10 ** 15 - 1)])
def test_a_count_file_is_read_as_digits_only_and_never_evaluated(held, count, tmp_path):
    """Hardening, round five, item 1: the counts kept in the checkpoint directory (.modak-starts, .modak-trained-s)
    reach $(( )) as digits only. Before, `$(( $(cat file) + 1 ))` ran the command in a subscript as the job's user."""
    (tmp_path / ".modak-starts").write_text(held + "\n")
    script = ('set -euo pipefail\nMODAK_CHECKPOINT_DIR=%s\nMODAK_RESTART_COUNT="%s"\necho "$((MODAK_RESTART_COUNT + 1))"'
              % (tmp_path, resilience.counted(".modak-starts")))
    done = subprocess.run(["bash", "-c", script], cwd=str(tmp_path), capture_output=True, text=True, check=False,
                          timeout=30)
    assert done.returncode == 0 and done.stdout == "%d\n" % (count + 1), done.stdout + done.stderr
    assert not (tmp_path / "pwned").exists()


def test_a_missing_count_file_reads_as_nought(tmp_path):
    script = 'set -euo pipefail\nMODAK_CHECKPOINT_DIR=%s\necho "%s"' % (tmp_path, resilience.counted(".modak-trained-s"))
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=False, timeout=30)
    assert done.returncode == 0 and done.stdout == "0\n", done.stderr


def test_a_restart_count_derived_from_a_long_total_is_capped_as_a_given_one_is(catalog):
    """Hardening, round five, item 14: total_training_time P99999D over a one-hour job gave 2,399,975 restarts, past
    the 1000 the schema allows max_restarts; the derived count is capped there, and the explanation says so."""
    result = pipeline.optimise(training(resilience={"total_training_time": "P99999D"}), catalog)
    assert result.request.resilience.max_restarts == resilience.MAX_RESTARTS == 1000
    assert 'MODAK_MAX_RESTARTS=1000' in result.script.text
    assert any("would take 2399975 restarts of 3600 s; at most 1000" in line for line in result.explanation)


def _checkpoint_dir_check(directory):
    script = "set -euo pipefail\nMODAK_CHECKPOINT_DIR=%s\n%s\necho \"ok $MODAK_CHECKPOINT_DIR\"\n" % (
        directory, "\n".join(resilience.private_dir_lines("MODAK_CHECKPOINT_DIR")))
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=False, timeout=60)


def test_the_checkpoint_directory_is_made_private(tmp_path):
    done = _checkpoint_dir_check(tmp_path / "checkpoints" / "job")
    assert done.returncode == 0 and done.stdout == "ok %s\n" % (tmp_path / "checkpoints" / "job"), done.stderr
    assert oct((tmp_path / "checkpoints" / "job").stat().st_mode & 0o777) == "0o700"


@pytest.mark.parametrize("owner, group, mode", [(4242, 4242, 0o777), (4242, 4242, 0o700), (None, None, 0o777),
                                                (None, 4242, 0o770)])
def test_a_checkpoint_directory_that_others_made_or_may_change_stops_the_job(owner, group, mode, tmp_path):
    """Hardening, round five, item 2: `mkdir -p checkpoints/<job>` took a directory another user had made first in a
    shared work directory (the job wrote its model there; a planted checkpoint is code for torch.load)."""
    if group is not None and os.geteuid() != 0:
        pytest.skip("giving a directory to another uid or gid needs root")
    directory = tmp_path / "checkpoints" / "job"
    directory.mkdir(parents=True)
    directory.chmod(mode)
    if group is not None:
        os.chown(str(directory), -1 if owner is None else owner, group)
    done = _checkpoint_dir_check(directory)
    assert done.returncode == 1 and "not run" in done.stderr and "ok" not in done.stdout, done.stderr


def test_a_link_planted_at_the_checkpoint_directory_stops_the_job(tmp_path):
    (tmp_path / "theirs").mkdir()
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "job").symlink_to(tmp_path / "theirs")
    os.chmod(str(tmp_path / "theirs"), 0o777)
    done = _checkpoint_dir_check(tmp_path / "checkpoints" / "job")
    assert done.returncode == 1 and "not run" in done.stderr, done.stderr


def test_a_checkpoint_directory_the_user_made_for_a_trusted_group_keeps_its_mode(tmp_path, monkeypatch):
    """A review of the fix: chmod 0700 took a shared checkpoint directory (2770, a group the site trusts) away
    from the user's team. A directory the job makes is private; one the user made is left as it is."""
    if os.geteuid() != 0:
        pytest.skip("giving a directory to another gid needs root")
    import grp
    try:
        team = grp.getgrnam("users").gr_gid          # a group the site lists as trusted (MODAK_TRUSTED_GROUPS)
    except KeyError:
        pytest.skip("no group 'users' here")
    directory = tmp_path / "shared"
    directory.mkdir()
    os.chown(str(directory), -1, team)
    directory.chmod(0o2770)
    monkeypatch.setenv("MODAK_TRUSTED_GROUPS", "users")
    done = _checkpoint_dir_check(directory)
    assert done.returncode == 0, done.stderr
    assert oct(directory.stat().st_mode & 0o7777) == "0o2770"


def test_a_fifo_planted_as_a_count_file_reads_as_nought_without_blocking(tmp_path):
    os.mkfifo(str(tmp_path / ".modak-starts"))
    script = 'set -euo pipefail\nMODAK_CHECKPOINT_DIR=%s\necho "%s"' % (tmp_path, resilience.counted(".modak-starts"))
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=False, timeout=30)
    assert done.returncode == 0 and done.stdout == "0\n", done.stderr
