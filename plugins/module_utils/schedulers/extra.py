# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a raw scheduler option of ``job_options.extra_directives`` is accepted: an allow-list that fails closed.

Each scheduler declares the options it allows in its own class (``allowed_options`` and ``typed_options``);
this module asks the registry for that one class, so validating a DSL loads only the backend it names. sbatch
and qsub accept abbreviated long options and options that name files, change who runs the job or what runs it,
so a deny-list could not be complete. An option with a typed field is refused with
the field to use, so that it passes that field's checks. An unknown scheduler, or a batch scheduler that declares
no option, lets no raw option through. The comment prefix ``modak:`` is reserved: it carries the idempotence key
of batch_job.
"""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry

RESERVED_COMMENT = "modak:"


def split(directive):
    """'--name=value', '--name value', '-x value' or '-x' -> (dashes, name, value or None, separator)."""
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


def problem(scheduler, directive, launch=False):
    """Why ``directive`` is not accepted for ``scheduler`` (a message and a hint), or None when it is; ``launch``:
    an option of the launch (srun's), checked against the scheduler's ``launch_options``.

    A declared option maps to None (one value word, or none), a tuple (the values allowed, before any '='), or 2
    (two value words, as Grid Engine's '-pe <environment> <slots>')."""
    name = registry.ALIASES.get(scheduler, scheduler)
    if name not in registry.NAMES:
        return ("is for an unknown scheduler %r: no raw option is accepted" % (scheduler,),
                "job.target.job_scheduler_type is one of %s" % ", ".join(registry.ALL_NAMES))
    if forges_comment(directive):
        return ("sets a comment with the reserved prefix '%s' (batch_job's idempotence key)" % RESERVED_COMMENT,
                "choose a comment that does not start with '%s'" % RESERVED_COMMENT)
    if not registry.capable(name, registry.BATCH):
        return None                     # a run without a scheduler writes no directive (a warning says so)
    backend = registry.scheduler_class(name)
    allowed, typed = backend.allowed_options, backend.typed_options
    if launch:
        allowed, typed = backend.launch_options, backend.launch_typed_options
    if not allowed:
        return ("%s declares no raw option: extra_directives are refused" % name, "use the job_options fields")
    dashes, option, value, separator = split(directive)
    key = dashes + option
    if key in typed:
        field = typed[key] if launch else "job_options.%s" % typed[key]
        return ("sets %s, which %s sets (and checks)" % (key, field), "use %s" % field)
    if key not in allowed or (dashes == "-" and value is not None and separator != " "):
        return ("is not an accepted %s option (it may name a file, change the user or what runs the job)" % name,
                "write short options as '-x value'; accepted: %s (see docs/robustness.md)" % ", ".join(sorted(allowed)))
    values = allowed[key]
    if value is not None and len(value.split(" ")) > (2 if values == 2 else 1):
        return ("%s takes %s" % (key, "two words" if values == 2 else "one value"), "one option per item")
    names = [item.split("=")[0] for item in (value or "").split(",")]
    if getattr(values, "all_but", False):     # schedulers.base.Except: any name but these
        taken = [name for name in names if name in values]
        if taken:
            return ("%s %s is written by a job_options field, whose line it would override" % (key, taken[0]),
                    "use the job_options field (wall_time_limit, memory_limit, request_gpus, local_scratch)")
        return None
    refused = [name for name in names if isinstance(values, tuple) and name not in values]
    if refused:
        # qsub applies every name=value of a comma list (-W umask=077,stageout=..., -l epilogue=...): each is checked
        return ("%s accepts only %s here, not %s" % (key, ", ".join(v or "no value" for v in values),
                                                     refused[0] or "no value"),
                "name only these; what a job_options field sets (nodes, wall time, memory) comes from that field "
                "(docs/robustness.md)")
    return None


# typed options a submission by hand may not carry either: they name files or set the job's environment
NOT_BY_HAND = ("standard_output_file", "standard_error_file", "copy_environment_variable")


def submit_arg_problem(scheduler, word):
    """Why ``word``, one argument of a submission by hand (``modak submit --extra-arg``), is refused (a message and a
    hint), or None: the allow-list of ``extra_directives``, and the options a typed field writes (--qos, --time: a
    script written by hand has no DSL) except those that name files or set the environment; one option per word,
    its value after '='."""
    if not word.startswith("-"):
        return ("is not an option", "one option per --extra-arg, its value after '=': --extra-arg=--qos=high")
    name = registry.ALIASES.get(scheduler, scheduler)
    if name in registry.NAMES and registry.capable(name, registry.BATCH) and not forges_comment(word):
        dashes, option, value, separator = split(word)
        field = registry.scheduler_class(name).typed_options.get(dashes + option)
        if field and field not in NOT_BY_HAND and (dashes == "--" or value is None or separator == " "):
            return None
    return problem(scheduler, word)
