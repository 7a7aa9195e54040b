# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``modak submit``, ``status``, ``cancel`` and ``logs``: one job, on the batch_job module's job control.

Every command runs ``job_control.Job`` (the scheduler's class from the registry, the ledger, the wait's backoff),
as the module does. A job is submitted from ``--chdir`` (default: the current directory, as sbatch and qsub do),
which holds the ledger ``.modak/jobs.json``; status, cancel and logs run from the same directory find the job's
scheduler there, or are told it with ``--scheduler``.
"""

from __future__ import annotations

import os
import time

from ansible_collections.sodalite.modak.plugins.module_utils import job_control, ledger, tail
from ansible_collections.sodalite.modak.plugins.module_utils.errors import ModakError, SubmitError, printable
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import extra, registry
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.local import STATE_DIR

DSL_SUFFIXES = (".yaml", ".yml", ".json")
LOG_LINES = 10
LOG_BYTES = 65536          # logs reads at most this much of the end of the output file


class JobEnded(ModakError):
    """The job ended in a state other than COMPLETED, or the wait ran out: ``report`` and ``lines`` say its state."""

    def __init__(self, message, report, lines):
        super(JobEnded, self).__init__(message)
        self.report, self.lines = report, lines


def _job_options(parser, wait=True, submit=False):
    parser.add_argument("--scheduler", choices=registry.NAMES, metavar="NAME",
                        help="the scheduler (%s); default: %s" % (", ".join(registry.NAMES), (
                            "read from the script's directives (a DSL's: its target)" if submit else
                            "the one that ran the job, from the ledger of --chdir")))
    parser.add_argument("--chdir", metavar="DIR", default=None,
                        help="the directory the job is submitted from: its output files and the ledger .modak/ "
                             "are there (default: the current directory)" if submit else
                        "the directory the job was submitted from (default: the current directory)")
    if wait:
        parser.add_argument("--wait", action="store_true",
                            help="follow the job until it leaves the queue, one line per poll on standard error")
        _wait_options(parser)


def _wait_options(parser):
    parser.add_argument("--wait-timeout", type=int, default=3600, metavar="SECONDS",
                        help="give up waiting after this long, exit 4 (default: 3600)")
    parser.add_argument("--poll-interval", type=float, default=5.0, metavar="SECONDS",
                        help="the longest pause between two polls; the pause starts at 1 s and doubles (default: 5)")


def add_commands(command, dsl_script):
    """The job commands, on the parser factory ``command(name, help)`` of cli.py; ``dsl_script(args)`` writes the
    DSL ``args.file``'s job script and returns (its path, its scheduler)."""
    submit = command("submit", "submit a job script (or optimise a DSL, then submit its script) and print the job id")
    submit.add_argument("file", metavar="FILE",
                        help="a job script, or a DSL document (%s) whose job script is written first"
                        % ", ".join(DSL_SUFFIXES))
    _job_options(submit, submit=True)
    submit.add_argument("-o", "--output-dir", metavar="DIR", default=".",
                        help="a DSL's job script is written here (default: the current directory)")
    submit.add_argument("--catalog", metavar="FILE", help="a DSL's image catalog (default: the embedded one)")
    submit.add_argument("--extra-arg", action="append", default=[], metavar="ARG",
                        help="one argument for the submit command, before the script, written --extra-arg=--qos=high "
                             "(repeatable; the scheduler's allow-list applies)")
    submit.add_argument("--force", action="store_true",
                        help="submit even when the same job (name and content) is queued or running")
    submit.set_defaults(dsl_script=dsl_script)
    status = command("status", "print the state of a job (Slurm's words: PENDING, RUNNING, COMPLETED, FAILED...)")
    status.add_argument("job_id", metavar="JOB_ID", help="the job id the submission printed")
    _job_options(status)
    cancel = command("cancel", "cancel a job that is queued or running")
    cancel.add_argument("job_id", metavar="JOB_ID", help="the job id the submission printed")
    _job_options(cancel)
    logs = command("logs", "print the last lines of a job's output file")
    logs.add_argument("job_id", metavar="JOB_ID", help="the job id the submission printed")
    _job_options(logs, wait=False)
    logs.add_argument("-n", "--lines", type=int, default=LOG_LINES, metavar="N",
                      help="how many last lines (default: %d)" % LOG_LINES)
    logs.add_argument("--stderr", action="store_true", help="the job's error file instead of its output file")
    logs.add_argument("-f", "--follow", action="store_true",
                      help="then print what the job writes until it leaves the queue")
    _wait_options(logs)


def _chdir(args):
    return os.path.abspath(args.chdir or os.getcwd())


def _scheduler(args, chdir):
    """--scheduler, else the scheduler whose ledger entry in ``chdir`` has this job id."""
    if args.scheduler:
        return args.scheduler
    entries = ledger.read(os.path.join(chdir, STATE_DIR, job_control.LEDGER))
    for key, entry in sorted(entries.items()):
        if isinstance(entry, dict) and str(entry.get("job_id")) == args.job_id and "/" in key:
            return key.split("/", 1)[0]
    raise SubmitError("job %s was not submitted from %s (no entry in %s/%s): give --scheduler, or --chdir"
                      % (args.job_id, chdir, STATE_DIR, job_control.LEDGER))


def _request(args, **fields):
    return job_control.Request(wait=getattr(args, "wait", False), wait_timeout=args.wait_timeout,
                               poll_interval=args.poll_interval, **fields)


def _progress(args, job, started):
    """One line per poll on standard error: 'job 42 (train) RUNNING, ran 0:00:03, waited 0:00:05: <last line>'."""
    def report(status):
        last = tail.last_lines(status.stdout_path, 1) if status.stdout_path else []
        line = "job %s (%s) %s" % (status.job_id, status.name or job.name or "?", status.state)
        if status.elapsed is not None:
            line += ", ran %s" % _clock(status.elapsed)
        line += ", waited %s" % _clock(time.time() - started)
        args.progress.write(printable(line + (": %s" % last[-1] if last else "")) + "\n")
        args.progress.flush()
    return report


def _clock(seconds):
    seconds = max(0, int(seconds))
    return "%d:%02d:%02d" % (seconds // 3600, seconds % 3600 // 60, seconds % 60)


def _run(args, job, step, line):
    """``step()`` of ``job``; a job that ended badly (or a wait that ran out) becomes JobEnded with its state."""
    job.report = _progress(args, job, time.time()) if getattr(args, "wait", False) else None
    try:
        result = step()
    except job_control.JobFailed as exc:
        report = dict(exc.result, command=args.command, error=str(exc))
        raise JobEnded(str(exc), report, [line(exc.result)])
    return dict(result, command=args.command), [line(result)]


def _done(report_lines):
    return (0,) + tuple(report_lines)


def _script(args):
    """The script to submit: FILE itself, or the job script of the DSL FILE written into --output-dir by
    ``args.dsl_script`` (cli.py's optimise, set as the submit parser's default)."""
    if not args.file.endswith(DSL_SUFFIXES):
        return args.file, args.scheduler
    target, scheduler = args.dsl_script(args)
    return target, args.scheduler or scheduler


def cmd_submit(args):
    script, scheduler = _script(args)
    job = job_control.Job(_request(args, script=script, scheduler=scheduler, chdir=_chdir(args),
                                   extra_args=list(args.extra_arg), force=args.force))
    for word in args.extra_arg:       # the scheduler's allow-list, as for extra_directives (schedulers/extra.py)
        why = extra.submit_arg_problem(job.scheduler, word)
        if why:
            raise SubmitError("--extra-arg=%s %s; %s" % (word, why[0], why[1]))
    return _done(_run(args, job, job.submitted, lambda r: str(r.get("job_id"))))


def cmd_status(args):
    chdir = _chdir(args)
    job = job_control.Job(_request(args, state="query", job_id=args.job_id, scheduler=_scheduler(args, chdir),
                                   chdir=chdir))
    return _done(_run(args, job, job.watched, lambda r: str(r.get("state"))))


def cmd_cancel(args):
    chdir = _chdir(args)
    job = job_control.Job(_request(args, state="absent", job_id=args.job_id, scheduler=_scheduler(args, chdir),
                                   chdir=chdir))
    return _done(_run(args, job, job.absent, lambda r: str(r.get("msg"))))


def cmd_logs(args):
    if args.follow and args.format == "json":
        raise SubmitError("--follow prints the output as it comes: it takes no --format json")
    chdir = _chdir(args)
    job = job_control.Job(_request(args, state="query", job_id=args.job_id, scheduler=_scheduler(args, chdir),
                                   chdir=chdir, fail_on_job_error=False))
    result = job.watched()
    path = result.get("stderr_path" if args.stderr else "stdout_path")
    if not path:
        raise SubmitError("the scheduler does not say where job %s's %s file is"
                          % (args.job_id, "error" if args.stderr else "output"))
    lines = tail.last_lines(path, args.lines, LOG_BYTES)
    report = dict(result, command="logs", path=path, lines=lines)
    if not args.follow or not result.get("active"):
        return 0, report, lines
    return 0, report, _follow(args, job, path)


def _follow(args, job, path):
    """Print the job's output as it grows (each poll of follow's backoff) until the job leaves the queue."""
    out = args.output
    for line in tail.last_lines(path, args.lines, LOG_BYTES):
        out.write(line + "\n")
    offset = [os.path.getsize(path) if os.path.isfile(path) else 0]

    def more(_status, final=False):
        lines, offset[0] = tail.new_lines(path, offset[0], final=final)
        out.write("".join(line + "\n" for line in lines))
        out.flush()

    job.report = more
    job.req.wait = True
    job.watched()
    more(None, final=True)
    return []


COMMANDS = {"submit": cmd_submit, "status": cmd_status, "cancel": cmd_cancel, "logs": cmd_logs}
