# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``modak`` command for pipelines: validate, optimise and recipe, on the same core as the modules; submit,
status, cancel and logs on the same job control as the batch_job module (cli_jobs.py).

Exit status (EXIT_STATUS, printed by ``--help``): 0 everything is valid (and written), 1 a DSL is invalid, 2 the
command cannot run as asked (bad options, unreadable files, a malformed catalog or site profile, an output
directory that cannot be written, a missing library, a scheduler command that failed), 3 a file would change
(``--check``) or a script is not in git as written (``--require-tracked``), 4 a job ended in a state other than
COMPLETED (or is still queued when ``--wait-timeout`` runs out). Output is deterministic: inputs keep their order,
JSON keys are sorted, nothing carries a time, except job.placement's choice, which asks the scheduler now.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys

from ansible_collections.sodalite.modak.plugins.module_utils import (
    cli_jobs, completion, dsl, files, gitops, pipeline, secrets, site_profile)
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog, embedded
from ansible_collections.sodalite.modak.plugins.module_utils.commands import ProcessRunner
from ansible_collections.sodalite.modak.plugins.module_utils.errors import (
    DslInvalid, DslProblem, ModakError, SiteInvalid, printable)

OK, INVALID, USAGE, CHANGED, JOB_FAILED = 0, 1, 2, 3, 4
EXIT_STATUS = """exit status:
  0  done: every DSL is valid (and its files are written); a job was submitted, is queued, running or COMPLETED
  1  a DSL is invalid (nothing is written)
  2  the command cannot run as asked: a bad option, an unreadable file, a malformed catalog or site profile, an
     output directory that cannot be written, a missing library, a scheduler command that failed
  3  --check: a file would change; --require-tracked: a script was written or is not tracked by git
  4  a job ended in a state other than COMPLETED, or --wait-timeout ran out while it was queued or running"""
STDOUT = "-"     # -o -: the job script goes to standard output, nothing is written
SITE_ENV = "MODAK_SITE"          # the site profile when --site names none
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # the collection's root
GIT_TIMEOUT = 60


class UsageError(Exception):
    """The command cannot run as asked (exit status 2)."""


def version():
    """The collection's version: MANIFEST.json of an installed copy, galaxy.yml of a checkout, else the package's."""
    try:
        with open(os.path.join(ROOT, "MANIFEST.json"), encoding="utf-8") as handle:
            return json.load(handle)["collection_info"]["version"]
    except (IOError, OSError, ValueError, KeyError):
        pass
    try:
        with open(os.path.join(ROOT, "galaxy.yml"), encoding="utf-8") as handle:
            return str(dsl.yaml.safe_load(handle)["version"])
    except (IOError, OSError, AttributeError, KeyError, TypeError, ValueError):
        pass
    try:
        from importlib import metadata
        return metadata.version("sodalite-modak")
    except Exception:   # no metadata: not installed with pip
        return "unknown"


def _parser():
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--format", choices=("text", "json"), default="text",
                        help="output format (default: text)")
    site_help = "site profile: the site's defaults and fabric presets (default: $%s)" % SITE_ENV
    common.add_argument("--site", metavar="FILE", default=argparse.SUPPRESS, help=site_help)
    parser = argparse.ArgumentParser(
        prog="modak", description="Validate MODAK optimisation DSLs, write their job scripts and container recipes, "
                                  "submit and follow the jobs.",
        epilog=EXIT_STATUS, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version="modak %s" % version(),
                        help="print the collection's version and exit")
    parser.add_argument("--site", metavar="FILE", help=site_help)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    def command(name, text):
        return commands.add_parser(name, parents=[common], help=text, description=text, epilog=EXIT_STATUS,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)

    validate = command("validate", "check DSL files and list every problem")
    validate.add_argument("files", nargs="+", metavar="FILE", help="a DSL document (YAML or JSON)")
    validate.add_argument("--show", action="store_true",
                          help="print each valid file's canonical document, laid over the site profile")
    optimise = command("optimise", "choose the image and write each DSL's job script into DIR")
    optimise.add_argument("files", nargs="*", metavar="FILE",
                          help="DSL files; a script of DIR (or none) renders its DSL again from DIR's manifest")
    optimise.add_argument("-o", "--output-dir", required=True, metavar="DIR",
                          help="directory of the job scripts; '-' prints the one FILE's script to standard output "
                               "and writes nothing")
    optimise.add_argument("--catalog", metavar="FILE", help="image catalog (default: the embedded one)")
    optimise.add_argument("--results-store", metavar="FILE", help="benchmark results for the performance model")
    optimise.add_argument("--check", action="store_true",
                          help="write nothing; report what would change, exit 3 when something would")
    optimise.add_argument("--require-tracked", action="store_true",
                          help="exit 3 when a script was written or is not tracked by git, naming what to add "
                               "(the pre-commit hook)")
    optimise.add_argument("--prune", action="store_true",
                          help="remove the scripts of DIR that no DSL writes and that modak wrote (its manifest)")
    recipe = command("recipe", "write the Singularity definition file and Dockerfile of one DSL into DIR")
    recipe.add_argument("file", metavar="FILE", help="a DSL document (YAML or JSON)")
    recipe.add_argument("-o", "--output-dir", required=True, metavar="DIR",
                        help="directory of the recipes; '-' prints the one --recipe-format's recipe to standard "
                             "output and writes nothing")
    recipe.add_argument("--recipe-format", action="append", choices=("singularity", "docker"),
                        help="only this recipe format (repeatable; default both)")
    recipe.add_argument("--base-image", metavar="URI", help="base image instead of the one the DSL implies")
    recipe.add_argument("--check", action="store_true",
                        help="write nothing; report what would change, exit 3 when something would")
    cli_jobs.add_commands(command, _dsl_script)
    shell = commands.add_parser("completion", help="print the shell completion script of modak",
                                description="print the shell completion script of modak: "
                                            "eval \"$(modak completion bash)\"")
    shell.add_argument("shell", choices=completion.SHELLS, help="the shell (bash)")
    return parser


def _libraries():
    missing = [name for name, absent in (("PyYAML", dsl.yaml is None), ("jsonschema", dsl.jsonschema is None),
                                         ("archspec", importlib.util.find_spec("archspec") is None)) if absent]
    if missing:
        raise UsageError("modak needs the Python libraries %s (pip install -r requirements.txt of the collection)"
                         % ", ".join(missing))


def _load(path):
    """Parse one DSL file; DslInvalid for a document that cannot be parsed, UsageError if unreadable."""
    try:
        return dsl.load_file(path)
    except (IOError, OSError) as exc:
        raise UsageError("cannot read %s: %s" % (path, exc.strerror or exc))


def _site(args):
    """The Site of --site, else of $MODAK_SITE, else None; UsageError for a profile that cannot be used."""
    path = getattr(args, "site", None) or os.environ.get(SITE_ENV) or None
    if path is None:
        return None
    try:
        return site_profile.load_file(path)
    except (IOError, OSError) as exc:
        raise UsageError("cannot read the site profile %s: %s" % (path, exc.strerror or exc))


def _check(path, site=None):
    """(its JobRequest or None, problems) of one file laid over the Site ``site``, parsed once."""
    try:
        return dsl.parse(_load(path), site), []
    except DslInvalid as exc:
        return None, exc.problems


def _problem_lines(path, problems):
    """One line per problem: its file:line:column when it has one (the file's name leads it), else the file's."""
    return [str(problem) if problem.location else "%s: %s" % (path, problem) for problem in problems]


def cmd_validate(args):
    report, lines, site = [], [], _site(args)
    for path in args.files:
        try:
            document, problems = dsl.canonical(_load(path), site)
        except DslInvalid as exc:
            document, problems = None, exc.problems
        report.append({"file": path, "valid": not problems, "problems": [p.as_dict() for p in problems]})
        lines.append("%s: %s" % (path, "valid" if not problems else "invalid, %d problem(s)" % len(problems)))
        lines.extend("  " + line for line in _problem_lines(path, problems))
        if args.show and not problems:
            document = secrets.redact(document, secrets.document_values(document))
            report[-1]["document"] = document
            lines.extend("  " + line for line in dsl.yaml.safe_dump(document, sort_keys=False).splitlines())
    status = INVALID if any(not r["valid"] for r in report) else OK
    return status, {"command": "validate", "valid": status == OK, "files": report}, lines


def _catalog(path):
    try:
        return ImageCatalog.from_file(path) if path else embedded()
    except ModakError as exc:
        raise UsageError(str(exc))


def _located(path, problems):
    """``problems`` found after the DSL was parsed (a scheduler that cannot express a field, a job name taken)
    placed in ``path`` as the parser's own are; the file is read again only on this failing path."""
    if all(p.location for p in problems):
        return problems
    try:
        locations = getattr(dsl.load_file(path), "locations", None)
    except (ModakError, IOError, OSError):
        return problems
    return [locations.locate(p) for p in problems] if locations is not None else problems


def _invalid(command, report, problems_by_file):
    lines = []
    for path, problems in problems_by_file:
        problems = _located(path, problems)
        report.append({"file": path, "valid": False, "problems": [p.as_dict() for p in problems]})
        lines.append("%s: invalid, %d problem(s)" % (path, len(problems)))
        lines.extend("  " + line for line in _problem_lines(path, problems))
    lines.append("nothing was written")
    return INVALID, {"command": command, "valid": False, "files": report}, lines


def _target(output_dir, filename):
    try:
        return files.target_path(output_dir, filename)
    except ModakError as exc:
        raise UsageError(str(exc))


def _place(path, text, check):
    """The job script ``path`` (inside the output directory, _target) placed; True when it changed or would."""
    try:
        return files.place(os.path.dirname(path), os.path.basename(path), text, 0o700, check) != files.SAME
    except (ModakError, IOError, OSError) as exc:
        raise UsageError("cannot write %s: %s" % (path, exc))


def _dsl_script(args):
    """modak submit of the DSL ``args.file`` (laid over the site profile): its job script written into
    ``args.output_dir``; (the script's path, its scheduler)."""
    request, problems = _check(args.file, _site(args))
    if problems:
        raise DslInvalid(problems)
    result = pipeline.optimise_request(request, _catalog(args.catalog), runner=_scheduler(request))
    target = _target(args.output_dir, result.script.filename)
    try:
        manifest = gitops.load(args.output_dir)
    except ModakError as exc:
        raise UsageError(str(exc))
    there = files.read_regular(args.output_dir, result.script.filename)
    theirs = there is files.NOT_REGULAR or (
        there is not None and gitops.digest(there) != gitops.digest(result.script.text)
        and gitops.digest(there) != manifest.get(result.script.filename, {}).get("sha256"))
    if theirs:      # a file modak did not write (or one edited since): never overwritten
        raise UsageError("%s is there and modak did not write it: move it, or give another output directory (-o)"
                         % target)
    _place(target, result.script.text, False)
    try:
        gitops.save(args.output_dir, gitops.updated(manifest, args.output_dir,
                                                    [(args.file, result.script.filename, result.script.text)]))
    except (ModakError, IOError, OSError) as exc:
        raise UsageError("cannot record %s in the output directory's manifest: %s" % (target, exc))
    return target, result.script.scheduler


def _inputs(args):
    """(the DSL files to render, the manifest of the output directory): a job script or the manifest of the output
    directory is not a DSL (the pre-commit hook passes the files it covers); a script the manifest lists that was edited by hand,
    removed or passed gets its DSL rendered again, which restores it."""
    try:
        manifest = gitops.load(args.output_dir)
    except ModakError as exc:
        raise UsageError(str(exc))
    out_dir = os.path.realpath(args.output_dir)
    paths, scripts = [], []
    for path in args.files:
        in_out = os.path.dirname(os.path.realpath(path)) == out_dir
        ours = path.endswith(gitops.script_suffixes()) or os.path.basename(path) == gitops.MANIFEST
        (scripts if in_out and ours else paths).append(path)
    seen = set(os.path.realpath(p) for p in paths)
    for name, entry in sorted(manifest.items()):
        again = os.path.basename(name) in [os.path.basename(s) for s in scripts] or gitops.edited(
            args.output_dir, manifest, name)
        dsl_path = gitops.dsl_of(args.output_dir, entry)
        if again and os.path.isfile(dsl_path) and os.path.realpath(dsl_path) not in seen:
            seen.add(os.path.realpath(dsl_path))
            paths.append(dsl_path)
    return paths, manifest


def _audit(args, manifest, results, lines):
    """The manifest after this run, the strays (pruned with --prune: only those modak wrote) and their lines."""
    written = {result.script.filename: path for path, result in results}
    found = gitops.strays(args.output_dir, manifest, written)
    pruned = gitops.prune(args.output_dir, manifest, found, args.check) if args.prune else []
    verb = "would remove" if args.check else "removed"
    for name, why, _ours in found:
        shown = _shown(os.path.join(args.output_dir, name))
        lines.append("%s: %s %s" % (shown, verb, why) if name in pruned else "stray: %s: %s" % (shown, why))
    after = gitops.updated(manifest, args.output_dir, [(path, r.script.filename, r.script.text) for path, r in results])
    for name in pruned:
        after.pop(name, None)
    left = [{"script": name, "why": why, "modak_wrote": ours} for name, why, ours in found if name not in pruned]
    return after, left, pruned


def cmd_optimise(args):
    printing = args.output_dir == STDOUT
    if printing and (len(args.files) != 1 or args.check or args.require_tracked or args.prune):
        raise UsageError("-o - prints one job script: give one FILE, without --check, --require-tracked or --prune")
    requests, bad, site = [], [], _site(args)
    args.files, manifest = (args.files, {}) if printing else _inputs(args)
    for path in args.files:                       # validate everything before writing anything
        request, problems = _check(path, site)
        if problems:
            bad.append((path, problems))
        requests.append((path, request))
    if bad:
        return _invalid("optimise", [], bad)
    catalog = _catalog(args.catalog)
    records = host = None
    if args.results_store:
        from ansible_collections.sodalite.modak.plugins.module_utils.perf import predictor
        from ansible_collections.sodalite.modak.plugins.module_utils.perf import store as perf_store
        if not predictor.HAS_SKLEARN:
            raise UsageError("--results-store needs the performance model's libraries numpy and scikit-learn: "
                             "pip install -r requirements-perf.txt of the collection (or 'sodalite-modak[perf]')")
        records, host = perf_store.load(args.results_store), perf_store.local_hardware()
    results, owners = [], {}
    for path, request in requests:
        try:
            result = pipeline.optimise_request(request, catalog, records, host, _scheduler(request))
        except DslInvalid as exc:
            bad.append((path, exc.problems))
            continue
        name = result.script.filename
        if name in owners:
            bad.append((path, [DslProblem("job.job_options.job_name", "writes %s, as %s does" % (name, owners[name]),
                                          hint="give each DSL its own job name")]))
            continue
        owners[name] = path
        results.append((path, result))
    if bad:
        return _invalid("optimise", [], bad)
    if args.output_dir == STDOUT:
        return _printed(results[0])
    report, lines, to_add = [], [], []
    for path, result in results:
        target = _target(args.output_dir, result.script.filename)
        text = result.script.text
        changed = _place(target, text, args.check)
        report.append(dict(_result_report(path, result), changed=changed, job_script=target))
        verb = ("would write" if args.check else "wrote") if changed else "unchanged"
        lines.append("%s: %s %s (%s, image %s)" % (path, verb, target, result.script.scheduler,
                                                   result.choice.uri or "none: bare run"))
        lines.extend("  warning: %s" % w for w in result.warnings)
        if args.require_tracked and (changed or not _tracked(target)):
            to_add.append(_shown(target))
    after, strays, pruned = _audit(args, manifest, results, lines)
    try:
        manifest_changed = gitops.save(args.output_dir, after, args.check) if (after or manifest) else False
    except (ModakError, IOError, OSError) as exc:
        raise UsageError("cannot write %s: %s" % (gitops.MANIFEST, exc))
    if args.require_tracked and (after or manifest):
        shown = os.path.join(args.output_dir, gitops.MANIFEST)
        if manifest_changed or not _tracked(shown):
            to_add.append(_shown(shown))
    status = CHANGED if args.check and (any(r["changed"] for r in report) or manifest_changed or pruned) else OK
    if strays and (args.check or args.require_tracked):
        lines.append("scripts no DSL writes: remove them (modak optimise --prune removes those modak wrote)")
        status = CHANGED
    if to_add:
        lines.append("job scripts to add to git: git add %s" % " ".join(to_add))
        status = CHANGED
    return status, {"command": "optimise", "valid": True, "files": report, "to_add": to_add, "strays": strays,
                    "pruned": pruned}, lines


def _scheduler(request):
    """The runner that asks the scheduler of this host when the job would start (job.placement), else None."""
    return ProcessRunner(timeout=30) if request.placement else None


def _result_report(path, result):
    image = result.choice.image.as_dict() if result.choice.image is not None else {}
    image.update(uri=result.choice.uri, source=result.choice.source)
    return {"file": path, "valid": True, "scheduler": result.script.scheduler, "image": image,
            "settings": result.settings.as_dict(), "explanation": list(result.explanation),
            "warnings": list(result.warnings), "prediction": result.extra.get("prediction") or {},
            "placement": result.extra.get("placement") or {}}


def _printed(path_result):
    """-o -: the script is the output (its report's warnings go to standard error); JSON carries it as "script"."""
    path, result = path_result
    entry = secrets.redact(dict(_result_report(path, result), changed=False, job_script=STDOUT,
                                script=result.script.text), secrets.values(result.request.app))
    report = {"command": "optimise", "valid": True, "files": [entry], "to_add": []}
    notes = ["%s: %s (%s, image %s)" % (path, result.script.filename, result.script.scheduler,
                                        result.choice.uri or "none: bare run")]
    notes.extend("  warning: %s" % w for w in result.warnings)
    return OK, report, Verbatim(result.script.text, notes)


class Verbatim(object):
    """Text output written as it is (a script, a recipe, a completion script), with notes for standard error."""

    def __init__(self, text, notes):
        self.text, self.notes = text, notes


def _shown(path):
    """``path`` relative to the current directory when it is below it (what the user types to git add)."""
    rel = os.path.relpath(path)
    return path if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel


def _tracked(path):
    """Whether git tracks ``path`` (in the index), asked in the current directory."""
    try:
        done = subprocess.run(["git", "ls-files", "--error-unmatch", "--", path], capture_output=True,
                              timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError("--require-tracked needs git: %s" % exc)
    if done.returncode not in (0, 1):
        raise UsageError("--require-tracked: git ls-files failed: %s" % done.stderr.decode(errors="replace").strip())
    return done.returncode == 0


def cmd_recipe(args):
    from ansible_collections.sodalite.modak.plugins.module_utils.recipe import generate, spec
    request, problems = _check(args.file, _site(args))
    if problems:
        return _invalid("recipe", [], [(args.file, problems)])
    formats = tuple(sorted(set(args.recipe_format), key=generate.FORMATS.index)) if args.recipe_format \
        else generate.FORMATS
    if args.output_dir == STDOUT:
        if len(formats) != 1 or args.check:
            raise UsageError("-o - prints one recipe: give one --recipe-format, without --check")
        try:
            _recipe, texts = generate.render(spec.spec_of(request), formats, args.base_image)
        except DslInvalid as exc:
            return _invalid("recipe", [], [(args.file, exc.problems)])
        except ModakError as exc:
            raise UsageError(str(exc))
        filename, text = texts[formats[0]]
        report = {"command": "recipe", "valid": True,
                  "files": [{"file": args.file, "valid": True, "changed": False, "recipes": {formats[0]: STDOUT},
                             "script": text}]}
        return OK, report, Verbatim(text, ["%s: %s" % (args.file, filename)])
    try:
        _target(args.output_dir, "x")
        out = generate.write(spec.spec_of(request), args.output_dir, formats, args.base_image, check_mode=args.check)
    except DslInvalid as exc:
        return _invalid("recipe", [], [(args.file, exc.problems)])
    except (ModakError, IOError, OSError) as exc:
        raise UsageError("cannot write the recipes into %s: %s" % (args.output_dir, exc))
    out.pop("diff", None)
    report = dict(out, file=args.file, valid=True)
    verb = ("would write" if args.check else "wrote") if out["changed"] else "unchanged"
    lines = ["%s: %s %s" % (args.file, verb, " ".join(out["recipes"][f] for f in formats))]
    status = CHANGED if args.check and out["changed"] else OK
    return status, {"command": "recipe", "valid": True, "files": [report]}, lines


COMMANDS = {"validate": cmd_validate, "optimise": cmd_optimise, "recipe": cmd_recipe,
            "completion": lambda args: (OK, {}, Verbatim(completion.script(args.shell, _parser()), []))}
COMMANDS.update(cli_jobs.COMMANDS)


def _write(stdout, stderr, fmt, report, lines):
    if fmt == "json":
        stdout.write(json.dumps(report, sort_keys=True, indent=2) + "\n")
    elif isinstance(lines, Verbatim):           # a script, a recipe, a completion: as it is; the notes apart
        stdout.write(lines.text)
        stderr.write("".join(printable(line) + "\n" for line in lines.notes))
    else:
        # what a DSL holds (keys, values) and file names reach the terminal escaped, one line each
        stdout.write("".join(printable(line) + "\n" for line in lines))


def main(argv=None, stdout=None, stderr=None):
    """Run the command line ``argv``; returns the exit status."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:                     # argparse: --help (0) or a usage error (2)
        return OK if not exc.code else USAGE
    fmt = getattr(args, "format", "text")
    try:
        if args.command != "completion":
            _libraries()
        args.progress, args.output = stderr, stdout   # a wait's line per poll; logs --follow's output
        status, report, lines = COMMANDS[args.command](args)
    except cli_jobs.JobEnded as exc:           # the job ended badly, or the wait ran out: its state is the output
        _write(stdout, stderr, fmt, exc.report, exc.lines)
        stderr.write("modak %s: %s\n" % (args.command, printable(exc)))
        return JOB_FAILED
    except DslInvalid as exc:                 # submit: the DSL to optimise first is invalid
        status, report, lines = _invalid(args.command, [], [(getattr(args, "file", "-"), exc.problems)])
        _write(stdout, stderr, fmt, report, lines)
        return status
    except (UsageError, ModakError) as exc:   # and any core error a command did not place
        if fmt == "json":
            out = {"command": args.command, "error": str(exc)}
            if isinstance(exc, SiteInvalid):
                out.update(site=exc.source, site_problems=[p.as_dict() for p in exc.problems])
            stdout.write(json.dumps(out, sort_keys=True, indent=2) + "\n")
        said = [str(exc)] if not isinstance(exc, SiteInvalid) else str(exc).splitlines()   # a problem a line
        stderr.write("".join("modak %s: %s\n" % (args.command, printable(line)) for line in said))
        return USAGE
    _write(stdout, stderr, fmt, report, lines)
    return status
