# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which raw scheduler options ``job_options.extra_directives`` may carry, per scheduler.

An allow-list, not a deny-list: sbatch and qsub accept abbreviated long options (``--out`` is ``--output``)
and options that name files (``--output``, ``--chdir``, ``--export-file``, ``-o``, ``-e``, ``-d``, ``-w``),
change who runs the job (``--uid``, ``-u``, ``-P`` in Torque) or what runs it (``--wrap``, ``-S``, ``-C``).
Options that name no file and have no typed field are listed here; an option with a typed field is refused
with the field to use, so that it passes that field's checks. The comment prefix ``modak:`` is reserved: it
carries the idempotence key of batch_job.
"""

from __future__ import annotations

RESERVED_COMMENT = "modak:"

SLURM_LONG = frozenset((
    "acctg-freq", "cluster-constraint", "clusters", "comment", "contiguous", "core-spec", "cores-per-socket",
    "cpu-freq", "cpus-per-gpu", "deadline", "delay-boot", "distribution", "exclude", "exclusive", "extra",
    "extra-node-info", "gpu-bind", "gpu-freq", "gpus", "gpus-per-node", "gpus-per-socket", "gpus-per-task", "gres",
    "gres-flags", "hint", "hold", "ignore-pbs", "kill-on-invalid-dep", "licenses", "mcs-label", "mem-bind",
    "mem-per-gpu", "mincpus", "network", "nice", "no-kill", "no-requeue", "ntasks-per-core", "ntasks-per-gpu",
    "ntasks-per-socket", "open-mode", "overcommit", "oversubscribe", "power", "prefer", "priority", "profile",
    "propagate", "reboot", "requeue", "reservation", "segment", "signal", "sockets-per-node", "spread-job",
    "switches", "thread-spec", "threads-per-core", "time-min", "tmp", "tres-per-task", "use-min-nodes", "wckey"))
SLURM_SHORT = {"B": "extra-node-info", "G": "gpus", "H": "hold", "L": "licenses", "M": "clusters",
               "O": "overcommit", "S": "core-spec", "k": "no-kill", "m": "distribution", "s": "oversubscribe",
               "x": "exclude"}
# options with a typed field: the field is checked (paths relative, no '..'), the raw option is not
SLURM_TYPED = {
    "output": "standard_output_file", "o": "standard_output_file", "error": "standard_error_file",
    "e": "standard_error_file", "job-name": "job_name", "J": "job_name", "partition": "partition",
    "p": "partition", "account": "account", "A": "account", "qos": "qos", "q": "qos", "time": "wall_time_limit",
    "t": "wall_time_limit", "nodes": "node_count", "N": "node_count", "ntasks": "core_count", "n": "core_count",
    "ntasks-per-node": "process_count_per_node", "cpus-per-task": "core_count_per_process",
    "c": "core_count_per_process", "mem": "memory_limit", "mem-per-cpu": "minimum_memory_per_processor",
    "array": "job_array", "a": "job_array", "dependency": "job_dependency", "d": "job_dependency",
    "begin": "defer_job", "b": "defer_job", "mail-type": "request_event_notification",
    "mail-user": "email_address", "export": "copy_environment_variable", "nodelist": "request_specific_nodes",
    "w": "request_specific_nodes", "constraint": "architecture_constraint", "C": "architecture_constraint"}

PBS_COMMON = {"l": None, "p": None, "r": None, "h": None}
PBSPRO_SHORT = dict(PBS_COMMON, P=None, W=("umask", "sandbox", "block", "run_count", "max_run_subjobs"))
TORQUE_SHORT = dict(PBS_COMMON, f=None, L=None, W=("umask", "block"))
PBS_TYPED = {"N": "job_name", "q": "queue", "A": "account", "a": "defer_job", "m": "request_event_notification",
             "M": "email_address", "V": "copy_environment", "v": "copy_environment_variable",
             "o": "standard_output_file", "e": "standard_error_file", "j": "combine_stdout_stderr",
             "J": "job_array", "t": "job_array", "n": "node_exclusive"}

ALLOWED = {"slurm": (SLURM_LONG, SLURM_SHORT, SLURM_TYPED), "pbspro": ((), PBSPRO_SHORT, PBS_TYPED),
           "torque": ((), TORQUE_SHORT, PBS_TYPED)}


def split(directive):
    """'--name=value', '--name value', '-x value' or '-x' -> (dashes, name, value or None)."""
    dashes = "--" if directive.startswith("--") else "-"
    rest = directive[len(dashes):]
    cut = min([i for i in (rest.find("="), rest.find(" ")) if i >= 0] or [len(rest)])
    separator = rest[cut:cut + 1]
    value = rest[cut + 1:] if separator else None
    return dashes, rest[:cut], value, separator


def forges_comment(directive):
    """True when the directive sets a comment that starts with the reserved 'modak:' prefix."""
    dashes, name, value, _sep = split(directive)
    return dashes == "--" and name == "comment" and (value or "").lower().startswith(RESERVED_COMMENT)


def problem(scheduler, directive):
    """Why ``directive`` is not accepted for ``scheduler`` (a message and a hint), or None when it is."""
    if forges_comment(directive):
        return ("sets a comment with the reserved prefix '%s' (batch_job's idempotence key)" % RESERVED_COMMENT,
                "choose a comment that does not start with '%s'" % RESERVED_COMMENT)
    if scheduler not in ALLOWED:
        return None                     # a local run ignores extra directives (with a warning)
    long_names, short_names, typed = ALLOWED[scheduler]
    dashes, name, value, separator = split(directive)
    if name in typed and (dashes == "-") == (len(name) == 1):
        return ("sets %s, which job_options.%s sets (and checks)" % (directive.split("=")[0].split(" ")[0],
                                                                     typed[name]),
                "use job_options.%s" % typed[name])
    if dashes == "-":
        allowed = short_names.get(name, False) if len(name) == 1 else False
        if allowed is False or (value is not None and separator != " "):
            return ("is not an accepted %s option" % scheduler,
                    "write short options as '-x value'; accepted: %s (see docs/robustness.md)"
                    % ", ".join("-" + k for k in sorted(short_names)))
        if isinstance(allowed, tuple) and (value or "").split("=")[0] not in allowed:
            return ("-%s accepts only %s here" % (name, ", ".join(allowed)), "see docs/robustness.md")
        return None
    if name not in long_names:
        return ("is not an accepted %s option (it may name a file, change the user or have a typed field)"
                % scheduler, "accepted options are listed in docs/robustness.md")
    return None
