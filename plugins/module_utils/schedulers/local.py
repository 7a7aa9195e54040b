# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Local backend: a plain bash script that redirects its own output and enforces the wall time."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import stat
import subprocess
import time

from ansible_collections.sodalite.modak.plugins.module_utils import files, ledger, path_trust, shell
from ansible_collections.sodalite.modak.plugins.module_utils.errors import OutputError, SubmitError
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.base import Scheduler
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.submission import JobStatus


def _target(name):
    """A redirection target; a name starting with a digit gets './' so that it cannot read as a descriptor."""
    return shell.quote("./" + name if name[:1].isdigit() else name)


def _signal_at(wall, lead_s):
    """The second of a run at which the program gets job.resilience's signal: ``lead_s`` before the wall time, and
    not before the first second."""
    return wall - min(lead_s or 0, wall - 1)


# -- submission: bash in the background, in its own session; the job id is the process id --------------------------
STATE_DIR = ".modak"
# fixed text; values arrive as positional parameters: $0 script, $1 the number of the descriptor of the state
# directory that this bash holds (opened and checked by modak), $2 'opened' when modak opened the script's own
# output files. It waits for a line on its standard input (a pipe from modak, sent once the output files have their
# names; without it, it ends). $$ is this bash's pid, which is the job id (the process leads its own session:
# start_new_session). Its standard output and error are the job's output files, opened by modak without following a
# link. The state files are written through /proc/$$/fd/$1, the very directory modak checked: a .modak renamed
# away and replaced since (a work directory others may write) is never written into. The script does not get the
# descriptor.
# MODAK_JOB_STATE: the job's files in the state directory, without their suffix (a resilient job's restart count).
# MODAK_OUTPUT_OPENED: the job id when modak opened the script's own output files (redirect_lines): the script, whose
# parent this bash is, then leaves its output where it is instead of opening the files by their names again.
WRAPPER = ('read -r _ || exit 1; state=$1; d="/proc/$$/fd/$1"; '
           'MODAK_JOB_STATE="$d/$$" MODAK_OUTPUT_OPENED="${2:+$$}" bash "$0" </dev/null {state}<&-; rc=$?; '
           'cd "$d" && printf "%s\\n" "$rc" >"$$.rc.tmp" && mv -f -- "$$.rc.tmp" "$$.rc"')
# the guard of a local script's own redirection: true when batch_job opened those files for it
_OPENED_GUARD = '[ "${MODAK_OUTPUT_OPENED:-}" = "$PPID" ] || '

# a modak local script redirects its own output: exec >job.out 2>&1 (or 2>job.err; or only exec 2>job.err)
_REDIRECT = re.compile(r"^(%s)?exec (?:>(\S+) )?2>(&1|\S+)$" % re.escape(_OPENED_GUARD), re.M)


def declared_outputs(script):
    """The files a local script sends its standard output and error to (relative to the directory it runs in), each
    None when it names none; (None, None) when it names no file."""
    return _redirection(script)[:2]


def _redirection(script):
    """(output, error, guarded) of the script's own redirection, as declared_outputs; ``guarded``: the line carries
    batch_job's guard (a script modak wrote, which leaves its files to batch_job), not a redirection that a script
    written by hand runs itself."""
    try:
        with open(script) as handle:
            match = _REDIRECT.search(handle.read(65536))
    except (IOError, OSError, UnicodeDecodeError):
        return None, None, False
    if not match or (match.group(2) is None and match.group(3) == "&1"):
        return None, None, False
    try:
        out = shlex.split(match.group(2))[0] if match.group(2) else None
        err = out if match.group(3) == "&1" else shlex.split(match.group(3))[0]
    except (ValueError, IndexError):
        return None, None, False
    return out, err, bool(match.group(1))


def _inside(path):
    """True when the output file ``path`` lies below the directory the job runs in (relative, no '..'): batch_job
    opens such a file for the script; the script opens any other itself."""
    parts = path.split("/")
    return not path.startswith("/") and ".." not in parts and parts[-1] not in ("", ".")


def submit_argv(script, state_fd, opened=False):
    """Started in a new session (setsid), in the background, with stdin from modak (see WRAPPER)."""
    return ["bash", "-c", WRAPPER, script, str(state_fd), "opened" if opened else ""]


def syntax_argv(script):
    return ["bash", "-n", script]


def _proc_stat(pid):
    """The fields of /proc/<pid>/stat after the command name (state first); None when there is no such process."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _session_groups(session):
    """The process groups of the processes still in the job's ``session`` (proc(5): pgrp and session, fields 5
    and 6). A session id names its leader's pid, and no new session can take it while one of these runs."""
    groups = set()
    for name in os.listdir("/proc"):
        fields = _proc_stat(int(name)) if name.isdigit() else None
        if fields and len(fields) > 3 and fields[0] != "Z" and fields[3] == str(session):
            groups.add(int(fields[2]))
    return sorted(groups)


def start_time(pid):
    """When the process ``pid`` started (clock ticks after boot, proc(5) field 22), as text; '' when it is gone.
    A pid with another start time is another process: the pid was reused (as psutil and systemd tell them apart)."""
    fields = _proc_stat(pid)
    return fields[19] if fields and len(fields) > 19 else ""


def _alive(pid, started=None):
    """True when ``pid`` runs (not a zombie) and, with ``started`` (start_time at submission), is still the same
    process; without a recorded start time a process is never taken for the job."""
    fields = _proc_stat(pid)
    if not fields or fields[0] == "Z":
        return False
    return started is not None and len(fields) > 19 and fields[19] == started


class Local(Scheduler):
    """The script runs with bash in its own session in the background; the job id is the process id.

    Files in ``<chdir>/.modak/``: ``<id>.pid`` (the id, the name, the declared outputs and the process's start
    time, so that a reused pid is never taken for the job), ``<id>.rc`` (written when the script ends),
    ``<id>.cancelled``
    (written by a cancel); output goes to ``<chdir>/<name>.o<id>`` and ``<chdir>/<name>.e<id>``.
    """

    name = "local"
    prefix = None                       # no directive: a script nobody claims is run as it is
    extension = ".sh"
    default_launcher = "mpirun"

    def directives(self, options, settings):
        warnings = []
        ignored = [name for name, value in (
            ("queue", options.queue), ("account", options.account), ("qos", options.qos),
            ("job_array", options.array), ("job_dependency", options.dependency),
            ("memory_limit", options.mem_mb), ("request_event_notification", options.mail_events),
            ("extra_directives", options.extra_directives)) if value]
        if settings.nodes > 1:
            ignored.append("node_count")
        if ignored:
            warnings.append("a local run has no scheduler: %s ignored" % ", ".join(ignored))
        return [], warnings

    def preamble(self, options, settings):
        _lines, warnings = self.directives(options, settings)
        return ["# modak: local run of job %s" % options.job_name], warnings

    # job.resilience: no queue puts a local job back, so the job's script runs the program again (resilience.py);
    # the lead-time signal comes from the script's own timeout(1)
    reruns_itself = True

    def run_prefix(self, options, signal=None, lead_s=None):
        """timeout(1) enforces the wall time: TERM at the limit, KILL 30 s later. With job.resilience, the program's
        ``signal`` comes ``lead_s`` before the limit and KILL at it, and the program's own exit status is kept
        (``--preserve-status``: a run that ends well as the signal comes is not taken for one stopped by it).
        timeout signals its process group: every process of the launch."""
        wall = options.walltime_s
        if not wall:
            return []
        if signal:
            at = _signal_at(wall, lead_s)
            return ["timeout", "--preserve-status", "--signal=%s" % signal, "--kill-after=%d" % max(wall - at, 1),
                    "%ds" % at]
        return ["timeout", "--signal=TERM", "--kill-after=30", "%ds" % wall]

    @staticmethod
    def restart_record_lines(variable):
        """The restart count, written aside and renamed into the job's state files (``status`` reads it)."""
        return ['[ -z "${MODAK_JOB_STATE:-}" ] || { echo "$%s" >"$MODAK_JOB_STATE.restarts.tmp" '
                '&& mv -f "$MODAK_JOB_STATE.restarts.tmp" "$MODAK_JOB_STATE.restarts"; }' % variable]

    def limit_lines(self, options, lead_s):
        """A run still going when timeout(1) sent the signal ran that long (the script's SECONDS counts each run
        from zero): the limit stopped it, though the batch shell saw no signal."""
        if not options.walltime_s:
            return []
        return ['[ -n "$MODAK_STOP" ] || [ "$SECONDS" -lt %d ] || MODAK_STOP=limit'
                % _signal_at(options.walltime_s, lead_s)]

    def redirect_lines(self, options):
        """The script's own output files, opened by the script only when batch_job did not open them for it (the
        guard: batch_job opens them without following a link, a shell's '>' follows one)."""
        if not options.stdout:
            # no file named: the output stays with whoever runs the script (batch_job writes <name>.o<pid>,
            # unique per run); standard error joins it unless a file is named for it
            return [_OPENED_GUARD + "exec 2>%s" % _target(options.stderr) if options.stderr else "exec 2>&1"]
        if options.stderr:
            return [_OPENED_GUARD + "exec >%s 2>%s" % (_target(options.stdout), _target(options.stderr))]
        return [_OPENED_GUARD + "exec >%s 2>&1" % _target(options.stdout)]

    def __init__(self, runner=None, chdir=None, script=None, job_name=None):
        super(Local, self).__init__(runner, chdir, script, job_name or "job")
        self.state_dir = os.path.join(chdir, STATE_DIR) if chdir else None   # None: only the script is written

    @classmethod
    def claims(cls, text):
        return False

    @classmethod
    def name_of(cls, script_text, script_path, extra_args=()):
        base = os.path.basename(script_path)
        return base.rsplit(".", 1)[0] if "." in base[1:] else base

    @classmethod
    def state_files(cls, job_id):
        return ["%s.%s" % (job_id, suffix) for suffix in ("pid", "rc", "cancelled")]

    def _file(self, job_id, suffix):
        return os.path.join(self.state_dir, "%s.%s" % (job_id, suffix))

    def test_only(self, script, extra_args=()):
        self.runner.run(syntax_argv(script))
        return "bash -n %s: syntax ok" % script

    @contextlib.contextmanager
    def _state(self, job_id=None, create=False):
        """The state directory's descriptor, opened and checked once (ledger.open_state_directory), for the block:
        every file of the job is read and written through it, never by a path. ``job_id``: a job's files are
        wanted (SubmitError when it cannot be one)."""
        if job_id is not None and not str(job_id).isdigit():
            raise SubmitError("no local job %s in %s" % (job_id, self.state_dir))
        try:
            fd = ledger.open_state_directory(self.state_dir, create)
        except OutputError as exc:
            raise SubmitError(str(exc))
        if fd is None:
            raise SubmitError("no local job %s in %s" % (job_id, self.state_dir) if job_id is not None
                              else "cannot make the state directory %s" % self.state_dir)
        try:
            yield fd
        finally:
            os.close(fd)

    def submit(self, script, extra_args=(), digest=None):
        if extra_args:
            raise SubmitError("the local scheduler takes no extra_args")
        out, err, guarded = _redirection(script)
        # batch_job opens the files only for a script that leaves them to it (modak's guard): a script written by
        # hand opens its own, and one that changes directory first must not have a file of the job's directory
        # replaced by an empty one
        opened = guarded and bool(out or err) and all(_inside(path) for path in (out, err) if path)
        if not opened:
            _ready_for_own_redirection(self.chdir, [path for path in (out, err) if path and _inside(path)])
        with self._state(create=True) as state_fd:
            argv = submit_argv(script, state_fd, opened)
            self.runner.record(argv)
            outputs = _Outputs(self.chdir, self.job_name, out if opened else None, err if opened else None)
            try:
                proc = subprocess.Popen(argv, cwd=self.chdir, stdin=subprocess.PIPE, stdout=outputs.out,
                                        stderr=outputs.err, pass_fds=(state_fd,), start_new_session=True,
                                        close_fds=True, bufsize=0)
            except OSError as exc:
                outputs.discard()
                raise SubmitError("cannot start bash: %s" % exc, cmd=argv)
            finally:
                outputs.close()
            job_id = str(proc.pid)
            try:
                outputs.name(job_id)
                for suffix in ("rc", "cancelled", "restarts"):   # a former job's of this pid: the job has not begun
                    _remove(state_fd, "%s.%s" % (job_id, suffix))
                files.place_in(state_fd, "%s.pid" % job_id, "%s\n%s\n%s\n%s\n%s\n" % (
                    job_id, self.job_name, out or "", err or "", start_time(proc.pid)), 0o644)
                proc.stdin.write(b"go\n")      # the job begins
            except (OutputError, OSError) as exc:
                outputs.discard()
                proc.stdin.close()              # without its line, the wrapper ends before the script begins
                proc.wait()
                raise SubmitError("local job not started: %s" % exc, cmd=argv)
            proc.stdin.close()
        return job_id

    def _record(self, fd, job_id):
        """(the lines of the job's pid record, its fstat); SubmitError when there is none."""
        data, info = ledger.read_file(fd, "%s.pid" % job_id)
        if data is None:
            raise SubmitError("no local job %s in %s" % (job_id, self.state_dir))
        return data.decode("utf-8", "replace").splitlines(), info

    @staticmethod
    def _started(lines):
        """The start time recorded at submission (None for a record without one: never taken for the job)."""
        return lines[4] if len(lines) > 4 and lines[4] else None

    def cancel(self, job_id):
        with self._state(job_id) as fd:
            lines, _info = self._record(fd, job_id)
            pid = int(job_id)
            self.runner.record(["kill", "-TERM", "--", "-%d" % pid])
            try:
                os.close(os.open("%s.cancelled" % job_id, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                                 | os.O_CLOEXEC, 0o644, dir_fd=fd))
            except FileExistsError:
                pass                            # cancelled before
        started = self._started(lines)
        if not _alive(pid, started):  # a reused pid is another user's process group: not signalled
            return
        try:
            os.killpg(pid, signal.SIGTERM)
        except OSError:
            return
        # timeout(1) runs the launch in a process group of its own, in the job's session. A script with a
        # forwarding trap (job.resilience) stays until the program has stopped; a script without one dies at once and
        # leaves that group running: once the script is gone, every group still in its session is signalled.
        deadline = time.monotonic() + 2
        while _alive(pid, started) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not _alive(pid, started):
            for group in _session_groups(pid):
                try:
                    os.killpg(group, signal.SIGTERM)
                except OSError:
                    pass

    def status(self, job_id):
        with self._state(job_id) as fd:
            lines, info = self._record(fd, job_id)
            # whether the job lives is asked before its status file is read: a job that writes the file and ends
            # between the two reads is then seen with its status, never as ended without one (FAILED, no code)
            alive = _alive(int(job_id), self._started(lines))
            rc_data, rc_info = ledger.read_file(fd, "%s.rc" % job_id)
            cancelled = _exists(fd, "%s.cancelled" % job_id)
            restarts = self._restart_fields(fd, job_id)
        name = lines[1] if len(lines) > 1 else self.job_name
        stdout = os.path.join(self.chdir, "%s.o%s" % (name, job_id))
        stderr = os.path.join(self.chdir, "%s.e%s" % (name, job_id))
        if len(lines) > 2 and lines[2]:  # the script redirects its own output (a modak local script)
            stdout = stderr = os.path.join(self.chdir, lines[2])
        if len(lines) > 3 and lines[3]:
            stderr = os.path.join(self.chdir, lines[3])
        started = info.st_mtime
        if alive and rc_data is None:
            return JobStatus(job_id=job_id, state="RUNNING", active=True, stdout_path=stdout, stderr_path=stderr,
                             elapsed=int(time.time() - started), name=name, raw={"uid": os.geteuid()}, **restarts)
        code = None
        if rc_data is not None:
            text = rc_data.decode("ascii", "replace").strip()
            code = int(text) if text.lstrip("-").isdigit() else None
            ended = rc_info.st_mtime
        else:
            ended = time.time()
        if cancelled and (code is None or code != 0):
            state = "CANCELLED"
        elif code == 0:
            state = "COMPLETED"
        elif code == 124:
            state = "TIMEOUT"             # the local backend wraps the program in timeout(1)
        else:
            state = "FAILED"
        return JobStatus(job_id=job_id, state=state, active=False, exit_code=code, stdout_path=stdout,
                         stderr_path=stderr, elapsed=int(ended - started), name=name, raw={"uid": os.geteuid()},
                         **restarts)

    def _restart_fields(self, fd, job_id):
        """The restart count a resilient local job recorded, and where it comes from (none recorded: nothing)."""
        data, _info = ledger.read_file(fd, "%s.restarts" % job_id)
        text = (data or b"").decode("ascii", "replace").strip()
        return {"restarts": int(text), "restarts_from": "the job's own count (%s)" % self._file(job_id, "restarts")} \
            if text.isdigit() else {}


def _exists(dir_fd, name):
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _remove(dir_fd, name):
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass


def _ready_for_own_redirection(chdir, names):
    """A script that opens its own output files (written by hand, without modak's guard) writes through whatever
    is at their names when it starts: each name of ``names`` (relative to ``chdir``) that is missing is made now,
    empty and without following a link, so that nobody can plant one there before the script's redirection; a link
    that another user could have put there, or anything but a regular file of this user's (or root's), stops the
    submission. A file of the user's stays as it is (the script may change directory before its redirection)."""
    for relative in names:
        directory, name = os.path.split(os.path.join(chdir, relative))
        where = os.path.join(directory, name)
        try:
            dir_fd = files.open_directory(directory)
        except OutputError as exc:
            raise SubmitError("local job not started: its output %s: %s" % (where, exc))
        if dir_fd is None:
            continue                                     # the script's own redirection fails, as it would have
        try:
            try:
                os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                                 dir_fd=dir_fd))
                continue
            except FileExistsError:
                pass
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                if not path_trust.link_may_be_followed(os.fstat(dir_fd), lambda: info):
                    raise SubmitError("local job not started: its output %s is a link that another user may have "
                                      "put there, and the script's own redirection would write through it" % where)
            elif not stat.S_ISREG(info.st_mode) or info.st_uid not in (0, os.geteuid()) or info.st_nlink != 1:
                raise SubmitError("local job not started: its output %s is not a regular file of this user's with "
                                  "one name" % where)       # another name: a file elsewhere the redirection empties
        except OSError as exc:
            raise SubmitError("local job not started: its output %s: %s" % (where, exc))
        finally:
            os.close(dir_fd)


class _Outputs(object):
    """A local job's standard output and error (``out``, ``err``: the descriptors to hand to its process): fresh
    files of the directories they go to, made without following a link (their directories opened one component at a
    time, as files.open_directory opens them), given their names once the job's pid, its id, is known and before
    the job begins: a link or a file at a name is replaced, never written through; a name this user may not replace
    (another user's, in a sticky directory of someone else) stops the submission. ``out_name`` and ``err_name``: the
    files the script names (relative to ``chdir``), None for the scheduler's own ``<name>.o<id>`` and
    ``<name>.e<id>``; the same name for both: one file."""

    def __init__(self, chdir, job_name, out_name, err_name):
        self.chdir, self.job_name = chdir, job_name
        self.pending = []       # (directory's fd, temporary name, name, the job id appended?, directory's path)
        self.fds = []
        try:
            self.out = self._open(out_name, ".o")
            self.err = self.out if err_name is not None and err_name == out_name else self._open(err_name, ".e")
        except BaseException:
            self.close()
            self.discard()
            raise

    def _open(self, relative, suffix):
        directory, name = os.path.split(os.path.join(self.chdir, relative or self.job_name + suffix))
        where = os.path.join(directory, name if relative else name + "<id>")
        try:
            dir_fd = files.open_directory(directory)
        except OutputError as exc:
            raise SubmitError("local job not started: its output %s: %s" % (where, exc))
        if dir_fd is None:
            raise SubmitError("local job not started: the directory of its output %s is missing" % where)
        try:
            tmp, fd = files.open_fresh(dir_fd, name, where)
        except OutputError as exc:
            os.close(dir_fd)
            raise SubmitError("local job not started: %s" % exc)
        self.pending.append((dir_fd, tmp, name, not relative, directory))
        self.fds.append(fd)
        return fd

    def close(self):
        """Close this process's write descriptors (the job's process has its own)."""
        for fd in self.fds:
            os.close(fd)
        self.fds = []

    def name(self, job_id):
        """Rename each file to its name (OutputError when one cannot have it)."""
        while self.pending:
            dir_fd, tmp, name, with_id, directory = self.pending[0]
            final = name + job_id if with_id else name
            files.rename_into(dir_fd, tmp, final, os.path.join(directory, final))
            self.pending.pop(0)
            os.close(dir_fd)

    def discard(self):
        """Remove the files not renamed yet."""
        for dir_fd, tmp, _name, _with_id, _directory in self.pending:
            _remove(dir_fd, tmp)
            os.close(dir_fd)
        self.pending = []
