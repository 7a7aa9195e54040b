"""Injection corpus: every string field of the DSL that can reach a script, a command line or a path, with
every hostile value, on every backend. Each is rejected with a path or quoted; accepted scripts are executed
with stub programs that record their argv: no injected command runs, values arrive literally."""

from __future__ import annotations

import concurrent.futures
import copy
import os
import re
import shutil

from robustkit import (ROOT, SCHEDULERS, bash_n, calls, install_stubs, payloads, record, run_script,
                       shellcheck_many)

from ansible_collections.sodalite.modak.plugins.module_utils import build_commands, pipeline, resilience, schema, shell
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, ModakError

CATALOG = ImageCatalog.from_file(os.path.join(ROOT, "catalog", "images.yaml"))
PREFIXES = ("#SBATCH", "#PBS", "#$")
EXTRA = ["x\n", "job\r", "a\u2028", "0\n#SBATCH --wrap=id"]   # trailing breaks: Python's '$' let 'x\n' through
# user shell by design (run as given, documented): their own tests check that they cannot break the script
SHELL_FIELDS = ("job.application.pre-execution", "job.application.post-execution", "job.target.setup")
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def string_fields(sub=None, path="job"):
    """(dotted path, kind) of every string the schema accepts; kind: string, array, env_value, env_name."""
    sub = schema.SCHEMA["properties"]["job"] if sub is None else sub
    for key, prop in sorted(sub.get("properties", {}).items()):
        where = "%s.%s" % (path, key)
        if where in SHELL_FIELDS:
            continue
        kinds = prop.get("type")
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if "propertyNames" in prop:
            yield where + ".MODAK_PROBE", "env_value"
            yield where, "env_name"
        elif "properties" in prop:
            yield from string_fields(prop, where)
        else:
            if "string" in kinds:
                yield where, "string"
            if "array" in kinds and prop.get("items", {}).get("type") == "string":
                yield where, "array"


def base_doc(field, scheduler, program):
    """A valid document exercising every part of the script, prepared so that ``field`` is reachable."""
    app_type, section = "ai_training", {"config": {"ai_framework": "tensorflow"}}
    if ".app_type-hpc." in field:
        model = field.split("parallelisation-")[1].split(".")[0] if "parallelisation-" in field else "mpi"
        app_type, section = "hpc", {"config": {"parallelisation": model}}
    elif ".app_type-ai_inference." in field:
        app_type = "ai_inference"
    if "ai_framework-" in field:
        section["config"]["ai_framework"] = field.split("ai_framework-")[1].split(".")[0]
    return {"job": {
        "job_options": {"job_name": "inj", "request_event_notification": "END", "email_address": "a@example.org",
                        "standard_output_file": "job.out"},
        "application": {"executable": program, "arguments": ["--flag", "value"], "mpi_ranks": 2,
                        "environment": {"MODAK_PROBE": "plain"}, "modules": ["gcc/12"],
                        "build": {"src": "https://example.org/src.tar.gz", "build_command": "make -j2"}},
        "target": {"job_scheduler_type": scheduler, "image_fetch": "job"},   # the stubbed runtime pulls, then runs
        "optimisation": {"app_type": app_type, "opt_build": {"cpu_type": "x86"},
                         "autotuning": {"tuner": "t", "input": "i"},
                         "app_type-%s" % app_type: section}}}


def put(doc, field, kind, value):
    out = copy.deepcopy(doc)
    keys = field.split(".")
    node = out
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    if kind == "env_name":
        node[keys[-1]] = {value: "v"}
    elif kind == "array":
        node[keys[-1]] = [value]
    else:
        node[keys[-1]] = value
    return out


def owns(problem_path, field, kind):
    base = field.rsplit(".", 1)[0] if kind == "env_value" else field
    return problem_path == field or problem_path.startswith((base + "[", base + ".", field + "["))


def expected_words(field, kind, value, env):
    """The argv words the value must arrive as, or None when it does not reach an argv as such.

    In a command string, $NAME and ${NAME} expand (to ``env``'s value, '' when unset); nothing else does.
    """
    def expand(words):
        return [_VARIABLE.sub(lambda m: env.get(m.group(1) or m.group(2), ""), word) for word in words]
    if field == "job.application.arguments":
        return [value] if kind == "array" else expand(shell.split_words(value))
    if field == "job.application.executable":
        return expand(shell.split_words(value))
    if field == "job.application.build.build_command":
        return ["bash", "-c", value]
    return None


def contains(seq, words):
    return any(seq[i:i + len(words)] == words for i in range(len(seq) - len(words) + 1))


def test_injection_corpus(tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    canary = str(tmp_path / "canary")
    bin_dir, _log = install_stubs(str(tmp_path / "stubs"))
    program = os.path.join(bin_dir, "show")
    corpus = payloads(canary) + EXTRA
    fields = list(string_fields())
    tally = {"attempts": 0, "rejected": 0, "quoted": 0, "misattributed": [], "crashes": [], "broken_lines": []}
    runs = {}
    for field, kind in fields:
        for scheduler in SCHEDULERS:
            if field.startswith("job.resilience.") and not resilience.supported(scheduler):
                continue          # the whole section is refused there (at job.resilience), whatever the field holds
            base = base_doc(field, scheduler, program)
            for value in corpus:
                tally["attempts"] += 1
                doc = put(base, field, kind, value)
                try:
                    result = pipeline.optimise(doc, CATALOG)
                except DslInvalid as exc:
                    tally["rejected"] += 1
                    if not any(owns(p.path, field, kind) for p in exc.problems):
                        tally["misattributed"].append((field, kind, value[:40], str(exc)[:300]))
                    continue
                except ModakError as exc:
                    tally["rejected"] += 1
                    assert str(exc)
                    continue
                except Exception as exc:  # pylint: disable=broad-except
                    tally["crashes"].append((field, kind, scheduler, value[:40], repr(exc)))
                    continue
                tally["quoted"] += 1
                text = result.script.text
                head = ["#!/bin/bash"] + list(result.script.directives)
                lines = text.split("\n")
                if (lines[:len(head)] != head or any(line.startswith(PREFIXES) for line in lines[len(head):])
                        or any(c in text for c in "\r\x00\x85\u2028\u2029")):
                    tally["broken_lines"].append((field, scheduler, value[:40]))
                runs.setdefault(text, []).append((field, kind, value))

    # execute every distinct accepted script with the stubs
    def execute(item):
        index, (text, uses) = item
        folder = os.path.join(str(work), "r%05d" % index)
        os.makedirs(os.path.join(folder, "calls"))
        path = os.path.join(folder, "job.sh")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        proc = run_script(path, bin_dir, os.path.join(folder, "calls"), folder)
        recorded = calls(os.path.join(folder, "calls"))
        problems = []
        for field, kind, value in uses:
            words = expected_words(field, kind, value, {"HOME": folder, "IFS": " \t\n"})
            if words is not None and not any(contains([prog] + argv, words) for prog, _p, argv in recorded):
                problems.append(("not literal", field, value[:40], proc.returncode, proc.stderr[-300:]))
            after_export = [probe for prog, probe, _a in recorded if prog != "module"]  # module load comes first
            if field.endswith("MODAK_PROBE") and not (after_export and all(p == value for p in after_export)):
                problems.append(("environment not literal", field, value[:40]))
        ok, err = bash_n(path)
        if not ok:
            problems.append(("bash -n", err))
        return path, problems

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        done = list(pool.map(execute, enumerate(sorted(runs.items()))))
    not_literal = [p for _path, problems in done for p in problems]
    lint = shellcheck_many([path for path, _p in done])
    escaped = os.path.exists(canary)
    planted = [os.path.join(d, f) for d, _s, names in os.walk(str(tmp_path)) for f in names if f == "canary"]
    record("injection", fields=len(fields), payloads=len(corpus), attempts=tally["attempts"],
           rejected=tally["rejected"], quoted=tally["quoted"], scripts_executed=len(runs),
           escaped=int(escaped) + len(planted) - int(escaped) + len(tally["broken_lines"]),
           not_literal=len(not_literal), misattributed=len(tally["misattributed"]), crashes=len(tally["crashes"]),
           lint_failures=len(lint))
    assert not tally["crashes"], tally["crashes"][:5]
    assert not escaped and not planted, planted
    assert not tally["broken_lines"], tally["broken_lines"][:5]
    assert not tally["misattributed"], tally["misattributed"][:5]
    assert not not_literal, not_literal[:5]
    assert not lint, list(lint.values())[:3]
    assert len(fields) >= 60 and tally["quoted"] > 100 and tally["rejected"] > 1000


BUILD_PARAMS = ("image", "recipe", "context", "job_name", "walltime", "push_to", "recipe_sha256")


def test_container_build_plan_parameters(tmp_path):
    """container_build_plan: every string parameter with every hostile value; the build job script runs."""
    canary = str(tmp_path / "canary")
    bin_dir, _log = install_stubs(str(tmp_path / "stubs"))
    for name in ("mv", "skopeo", "podman", "buildah", "ch-image"):
        shutil.copy(os.path.join(bin_dir, "git"), os.path.join(bin_dir, name))
    base = dict(engine="apptainer", recipe="Singularity.def", image="/tmp/img.sif", context=str(tmp_path),
                job_name="b", walltime="01:00:00", push_to="oras://r.example.org/x:1", recipe_sha256=None)
    attempts = rejected = accepted = 0
    bad = []
    for param in BUILD_PARAMS:
        for engine in ("apptainer", "podman"):
            for value in payloads(canary) + EXTRA:
                attempts += 1
                args = dict(base, engine=engine, **{param: value})
                if engine == "podman":
                    args["image"] = args["image"] if param == "image" else "localhost/x:1"
                    args["push_to"] = args["push_to"] if param == "push_to" else "docker://r.example.org/x:1"
                try:
                    plan = build_commands.plan(**args)
                except ModakError as exc:
                    rejected += 1
                    assert str(exc)
                    continue
                accepted += 1
                folder = tmp_path / ("p%05d" % attempts)
                (folder / "calls").mkdir(parents=True)
                script = folder / "build.sbatch"
                script.write_text(plan["job_script"])
                run_script(str(script), bin_dir, str(folder / "calls"), str(folder))
                recorded = calls(str(folder / "calls"))
                lines = plan["job_script"].split("\n")
                if any(c in plan["job_script"] for c in "\r\x00\x85\u2028\u2029") or \
                        sum(1 for line in lines if line.startswith("#SBATCH")) != 6 or not bash_n(str(script))[0]:
                    bad.append((param, value[:40], "script lines"))
                build = [[prog] + argv for prog, _p, argv in recorded if prog == engine]
                # a hostile context is not a directory: 'cd' fails and set -e stops the job before the build
                if param != "context" and plan["build_argv"][1:] not in [argv[1:] for argv in build]:
                    bad.append((param, value[:40], "argv not literal", build[:1]))
    record("injection", build_plan_attempts=attempts, build_plan_rejected=rejected, build_plan_quoted=accepted,
           escaped=int(os.path.exists(canary)) + len(bad))
    assert not os.path.exists(canary)
    assert not bad, bad[:5]
    assert rejected and accepted
