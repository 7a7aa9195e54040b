# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The scheduler class every backend derives from (one class per scheduler), and the small pure helpers they
share."""

from __future__ import annotations

import os
import re
import string

from ansible_collections.sodalite.modak.plugins.module_utils import shell
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, DslProblem, SubmitError
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers.submission import directive_words

_PERCENT_FORMAT = re.compile(r"%[-#0 +]*\d*(\.\d+)?[sdifrx]")
_JOB_ID = re.compile("^[0-9A-Za-z\u0192][0-9A-Za-z._\\[\\]-]{0,63}\\Z")   # Flux's F58 ids start with U+0192


def hms(seconds):
    """Wall time as HH:MM:SS; hours keep counting past 24 (30 h -> '30:00:00')."""
    seconds = int(seconds)
    return "%02d:%02d:%02d" % (seconds // 3600, seconds % 3600 // 60, seconds % 60)


def pbs_events(events):
    """Canonical (Slurm) mail events -> PBS letters 'abe' ('n' for none)."""
    letters = set()
    for event in events:
        if event == "ALL":
            letters.update("abe")
        elif event == "BEGIN":
            letters.add("b")
        elif event == "END":
            letters.add("e")
        elif event in ("FAIL", "REQUEUE", "INVALID_DEPEND", "TIME_LIMIT", "TIME_LIMIT_90", "TIME_LIMIT_80",
                       "TIME_LIMIT_50", "STAGE_OUT", "ARRAY_TASKS"):
            letters.add("a")
    return "".join(c for c in "abe" if c in letters) or "n"


def pbs_job_name(name):
    """PBS wants a job name that starts with a letter."""
    return name if name[:1].isalpha() else "j" + name


def pbs_begin(begin):
    """'2026-01-02T03:04:05' -> PBS -a '202601020304.05'."""
    date, _sep, time = begin.partition("T")
    hh, mm, ss = (time.split(":") + ["00", "00", "00"])[:3] if time else ("00", "00", "00")
    return "%s%s%s.%s" % (date.replace("-", ""), hh, mm, ss or "00")


def opt(fmt, value):
    """A directive for a value that may be missing: returns '' for None/False (filtered later).

    ``fmt`` is a str.format pattern with exactly one ``{0}`` field; any other pattern (a %-format, no
    field, several fields) raises ValueError, missing value or not, so a wrong pattern never reaches a script.
    """
    fields = [name for _text, name, _spec, _conv in string.Formatter().parse(fmt) if name is not None]
    if fields != ["0"] or _PERCENT_FORMAT.search(fmt):
        raise ValueError("directive pattern %r must hold exactly one {0} field" % fmt)
    if value is None or value is False:
        return ""
    return fmt.format(value)


OPTIONS_PATH = "job.job_options."
# what a job waits for, as the DSL's dependency forms: the other job ended with exit status 0 (ok), at all (any), or
# otherwise (notok)
AFTER_KINDS = {"ok": "afterok", "any": "afterany", "notok": "afternotok"}


def cannot(problems, field, scheduler, what, value, hint=None):
    """Note that ``scheduler`` cannot express ``job_options.<field>``: the request is refused, never dropped."""
    problems.append(DslProblem(OPTIONS_PATH + field, "%s cannot express %s" % (scheduler, what), value, hint))


def refuse(problems):
    """Raise DslInvalid naming every field the scheduler cannot express (nothing is dropped with a warning)."""
    if problems:
        raise DslInvalid(problems)


def task_chunks(options, settings, warnings):
    """The tasks each node gets, as [(node count, tasks per node)], for schedulers that count per node.

    core_count (``settings.tasks``: the DSL's, raised to the ranks the launcher starts) is the total number of tasks, like Slurm's --ntasks: it is spread over
    the nodes as evenly as possible (21 + 20 for 41 on 2 nodes), with process_count_per_node as an upper
    bound. Without core_count every node gets ``settings.tasks_per_node`` tasks (1 when unset).
    """
    nodes, tpn = settings.nodes, settings.tasks_per_node
    total = settings.tasks
    if not total:
        return [(nodes, tpn or 1)]
    if total < nodes:
        warnings.append("core_count %d is less than the %d nodes: asking for %d node(s) with one task each "
                        "(as Slurm does)" % (total, nodes, total))
        return [(total, 1)]
    low, extra = divmod(total, nodes)
    if tpn and low + (1 if extra else 0) > tpn:
        warnings.append("core_count %d does not fit in %d node(s) x %d task(s) (process_count_per_node); "
                        "core_count wins, as with Slurm's --ntasks: %s task(s) per node"
                        % (total, nodes, tpn, "%d-%d" % (low, low + 1) if extra else low))
    chunks = [(extra, low + 1)] if extra else []
    chunks.append((nodes - extra, low))
    return chunks


class Except(tuple):
    """An ``allowed_options`` value: any name but these (Grid Engine's -l takes the site's complexes, except those a
    typed field writes, which would win over that field after its line)."""
    all_but = True


class Scheduler(object):
    """One scheduler: the directives of its batch scripts (pure, used by render.py) and the submission of a
    script (argv, parsing and states, used by job_control.py through a Runner).

    Class attributes: ``name`` (the registry's name), ``prefix`` (the directive prefix, which ``claims`` looks
    for; None: the scheduler writes none), ``extension`` (of the scripts modak writes), ``submit_dir_var`` (the
    variable holding the submission directory), ``default_launcher``, ``host_file`` and ``host_file_form`` (the
    file of the job's hosts that mpirun/mpiexec read: None when the launcher finds them itself, or one host;
    "slots": one host per slot, as it is; "pe": Grid Engine's 'host slots queue range' lines, converted first),
    ``allowed_options`` (the raw options ``extra_directives`` may carry: option with its dashes -> None for any
    value, or the values allowed, or 2 for two value words; a batch scheduler that declares none refuses every raw
    option) and ``typed_options`` (option -> the job_options field to use instead), ``node_cpus_var`` and
    ``task_cpus_var`` (the variables holding a node's and a task's allocated CPUs at run time; None: the node's
    ``nproc``; ``node_cpus_total``: the variable counts the whole job's CPUs, so it is shared by every rank),
    ``launch_options`` and ``launch_typed_options`` (the options of its task launcher, srun's, that
    ``application.launch_options`` may carry, as ``allowed_options``), ``ping_argv`` (a command that succeeds
    only while the scheduler answers, and ``down_words``: words of its output that say it does not; none: a run on
    the host, always there).
    Names, aliases and
    capabilities are the registry's descriptor (schedulers/registry.py), so that the DSL reads them without
    loading a backend. Optional method: ``test_only(script, extra_args)``, a check without submitting.
    """

    name = ""
    prefix = None
    extension = ".sh"
    submit_dir_var = None
    default_launcher = "mpirun"
    host_file = None
    host_file_form = "slots"
    allowed_options = {}
    typed_options = {}
    ping_argv = ()
    down_words = ()
    # an array of ``size`` elements: the job_array form the class writes, and shell expressions (run in each
    # element) of its index from 0 and of the id every element shares; the registry's ARRAYS capability says
    # which classes have them
    exclusive_nodes = True     # the class writes node_exclusive (a JobSpec's exclusive warns where it cannot)
    array_first = 0
    array_min_size = 1
    array_index_expr = None
    array_job_expr = None
    node_cpus_var = None
    task_cpus_var = None
    node_cpus_total = False
    launch_options = {}          # the launch's own options (srun's), as allowed_options; none: refused
    launch_typed_options = {}
    # a distributed training's rendezvous, read from the allocation when the job runs (shell text): the first
    # node's name, a number of the job (the port follows it), the node count, the hosts one per line, and the
    # variable holding a node's index in a process the node step started (the NODE_STEPS capability)
    first_node_expr = None
    job_number_expr = "$$"
    node_count_expr = None
    hosts_command = None
    node_rank_var = None

    @classmethod
    def step_words(cls, settings):
        """The words that start the job's tasks on the nodes of the allocation as the settings place them
        (``settings.nodes`` x ``tasks_per_node``, each task holding ``cpus_per_task`` CPUs), exactly those the
        directives allocate: a class with the NODE_STEPS capability says them."""
        raise NotImplementedError("%s starts no process on the other nodes" % cls.name)

    # job.resilience (resilience.py): the variable counting the job's restarts (None: the job counts them in its
    # checkpoint directory), the signal the scheduler sends the batch shell before the limit, and the line by
    # which the job requeues itself (None: it cannot; the registry's LIMIT_SIGNAL capability says which can)
    restart_count_var = None
    limit_signal = None
    requeue_line = None
    preempted_test = None        # a shell test that succeeds while the scheduler preempts the job
    reruns_itself = False        # no queue to put the job back in: the job's script runs the program again itself

    @staticmethod
    def restart_record_lines(variable):
        """Where a job that runs its program again itself (``reruns_itself``) records its restart count
        (``$variable``) for ``status``; none by default."""
        return []
    resilience_options = ()      # the raw options job.resilience writes itself (refused in extra_directives then)

    def resilience_directives(self, res):
        """Directive lines (without prefix) that make the job rerunnable and signal it before its limit."""
        return []

    def limit_lines(self, options, lead_s):
        """Lines after the launch has ended that set MODAK_STOP=limit when the lead-time signal stopped it and the
        batch shell saw no signal (the job's own timer); none where the scheduler signals the batch shell."""
        del options, lead_s
        return []

    def forward_line(self, signal):
        """A shell line that sends ``signal`` to every task of the job's launch, or None: the script signals the
        launch's process itself."""
        return None

    def __init__(self, runner=None, chdir=None, script=None, job_name=None):
        self.runner = runner
        self.chdir = chdir
        self.script_path = script
        self.job_name = job_name

    @classmethod
    def array_range(cls, size):
        """The job_array value of an array of ``size`` elements, numbered from the scheduler's first index."""
        return "%d-%d" % (cls.array_first, cls.array_first + size - 1)

    def answers(self):
        """(whether the scheduler answers, what it said): ``ping_argv`` succeeded and said none of ``down_words``."""
        if not self.ping_argv:
            return True, "%s runs jobs on this host" % self.name
        rc, out, err = self.runner.run(list(self.ping_argv), check=False)
        said = " ".join((out + " " + err).split())
        return rc == 0 and self.up(out), said or "%s exited %d" % (" ".join(self.ping_argv), rc)

    def up(self, out):
        """Whether the answer of ``ping_argv`` (exit status 0) says the scheduler takes jobs: no line says one of
        ``down_words``, or a class's own reading."""
        return not any(word in line.split() for line in out.splitlines() for word in self.down_words)

    # -- the script: directives ---------------------------------------------------------------------------------

    def directives(self, options, settings):
        """Return (directive lines without prefix, warnings)."""
        raise NotImplementedError

    def preamble(self, options, settings):
        """Directive lines with the prefix, and warnings."""
        lines, warnings = self.directives(options, settings)
        warnings = list(warnings)
        return ["%s %s" % (self.prefix, line) for line in lines if line], warnings

    @classmethod
    def rank_cpus(cls, ranks_per_node, ranks=1, one_rank_per_task=True):
        """A double-quoted shell word, expanded when the job runs: the CPUs each rank has (at least 1). The
        task's CPUs where the scheduler says them and each task is one rank, else the node's CPUs (the job's, for a
        scheduler that counts them for the whole job) shared by the ranks on it."""
        share = max(1, int(ranks if cls.node_cpus_total else ranks_per_node))
        node = "${%s:-%d}" % (cls.node_cpus_var, share) if cls.node_cpus_var else "$(nproc)"
        word = node if share == 1 else "$(( %s >= %d ? %s / %d : 1 ))" % (node, share, node, share)
        if cls.task_cpus_var and one_rank_per_task:
            word = "${%s:-%s}" % (cls.task_cpus_var, word)
        return shell.Raw('"%s"' % word)

    def workdir_lines(self):
        if self.submit_dir_var:
            return ['cd "${%s:-$PWD}"' % self.submit_dir_var]
        return []

    def dependency_lines(self, dependency, problems):
        """The directive lines (without prefix) that make the job wait for others: ``dependency`` in the DSL's
        forms ('afterok:ID[:ID]'); what the scheduler cannot express goes to ``problems`` (see ``cannot``)."""
        if dependency:
            cannot(problems, "job_dependency", self.name, "a dependency", ",".join(dependency),
                   "this scheduler starts a job at once: wait for the other job to end first")
        return []

    @classmethod
    def after_args(cls, after):
        """Submission arguments that make a job wait for others: ``after`` is [(job id, kind)], kind one of
        AFTER_KINDS. The words of the scheduler's dependency directives (a directive is the submit command's
        option); SubmitError naming what the scheduler cannot express."""
        for job, kind in after:
            if kind not in AFTER_KINDS:
                raise SubmitError("after: unknown kind %r (one of %s)" % (kind, ", ".join(AFTER_KINDS)))
            if not _JOB_ID.match(job):
                raise SubmitError("after: %r is not a job id (letters, digits, '.', '_', '-', '[]'; 64 at most)"
                                  % (job,))
        problems = []
        lines = cls().dependency_lines(tuple("%s:%s" % (AFTER_KINDS[kind], job) for job, kind in after), problems)
        if problems:
            said = ["%s (%s)" % (p.message, p.hint) if p.hint else p.message for p in problems]
            raise SubmitError("after: %s" % "; ".join(said))
        return [word for line in lines if line for word in line.split(None, 1)]

    def run_prefix(self, options, signal=None, lead_s=None):
        """Words put before the launcher (the local backend enforces the wall time; with job.resilience, ``signal``
        reaches the program ``lead_s`` seconds before it)."""
        del options, signal, lead_s
        return []

    def redirect_lines(self, options):
        """Output redirection done by the script itself (batch schedulers do it for us)."""
        return []

    # -- the job: submit, follow, cancel ------------------------------------------------------------------------

    @classmethod
    def claims(cls, text):
        """True when a script's directives are this scheduler's."""
        return bool(cls.prefix and directive_words(text, cls.prefix))

    @classmethod
    def name_of(cls, script_text, script_path, extra_args=()):
        """The job's name as the scheduler will see it (command line, then directives, then the file name)."""
        return os.path.basename(script_path)

    def start_estimate(self, script_text):
        """A StartEstimate of the job ``script_text`` describes, were it submitted now, without submitting it: a
        class with the registry's START_ESTIMATE capability says it (job.placement asks no other). The runner's
        errors (the command cannot run, or did not answer in time) are raised as they are."""
        raise NotImplementedError("%s cannot tell when a job would start" % self.name)

    def submit(self, script, extra_args=(), digest=None):
        """Submit the script; return the job id."""
        raise NotImplementedError

    def status(self, job_id):
        """Return the JobStatus of a job, queued, running or ended."""
        raise NotImplementedError

    def cancel(self, job_id):
        """Ask the scheduler to end the job."""
        raise NotImplementedError

    def find_active(self, name, digest):
        """A queued or running job with this name and content (digest), or None when the scheduler cannot tell."""
        return None

    @classmethod
    def state_files(cls, job_id):
        """The names of the files this backend keeps for job ``job_id`` in batch_job's state directory
        (``<chdir>/.modak``), beside the ledger; none by default."""
        return []

    def check(self, script_text, extra_args=()):
        """Refuse a script or arguments that would break submission rules (raises SubmitError); none by default."""
