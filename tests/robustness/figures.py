"""The figures of docs/robustness.md, from the counters the robustness tests record while they run."""

from __future__ import annotations

import datetime
import json
import os
import shutil

from robustkit import COUNTERS, OUTPUT, ROOT

AREAS = ("fuzz", "injection", "templates", "paths", "documents", "atomicity", "concurrency", "faults", "linear",
         "hostile", "ledger")
JSON_PATH = os.path.join(OUTPUT, "robustness.json")
DOC_PATH = os.path.join(ROOT, "docs", "robustness.md")
COMMAND = ".venv/bin/python scripts/robustness_report.py"


def reset():
    shutil.rmtree(COUNTERS, ignore_errors=True)


def collect():
    """{area: {counter: total}}; counters named max_* keep the largest value."""
    out = {}
    if not os.path.isdir(COUNTERS):
        return out
    for name in sorted(os.listdir(COUNTERS)):
        with open(os.path.join(COUNTERS, name), encoding="utf-8") as handle:
            for line in handle:
                item = json.loads(line)
                area = out.setdefault(item["area"], {})
                for key, value in item["counters"].items():
                    area[key] = max(area.get(key, 0), value) if key.startswith("max_") else area.get(key, 0) + value
    return out


def rows(fig):
    def f(area, key):
        return fig.get(area, {}).get(key, 0)

    return [
        ("Fuzzing (Hypothesis, derandomized, one test per property)",
         "%d DSL documents (schema %d, mutated %d, random %d, text %d; %d scripts, %d rejected), %d recipes, "
         "%d directive texts"
         % (f("fuzz", "documents"), f("fuzz", "documents_schema"), f("fuzz", "documents_mutated"),
            f("fuzz", "documents_random"), f("fuzz", "documents_text"), f("fuzz", "documents_valid"),
            f("fuzz", "documents_rejected"), f("fuzz", "recipes"), f("fuzz", "directive_texts")),
         "crashes", f("fuzz", "crashes")),
        ("Rejections without a path", "%d rejected documents" % f("fuzz", "documents_rejected"),
         "pathless", f("fuzz", "pathless")),
        ("Scripts linted (bash -n, shellcheck)",
         "%d fuzzed + %d injection scripts" % (f("fuzz", "scripts_linted"), f("injection", "scripts_executed")),
         "failures", f("fuzz", "lint_failures") + f("injection", "lint_failures")),
        ("Injections", "%d attempts (%d fields x %d payloads x 4 backends) + %d build-plan parameters"
         % (f("injection", "attempts"), f("injection", "fields"), f("injection", "payloads"),
            f("injection", "build_plan_attempts")),
         "escaped", f("injection", "escaped")),
        ("Injections: outcome", "%d rejected with their path, %d quoted and executed with stubs"
         % (f("injection", "rejected") + f("injection", "build_plan_rejected"),
            f("injection", "quoted") + f("injection", "build_plan_quoted")),
         "not literal", f("injection", "not_literal") + f("injection", "misattributed")),
        ("Template evaluation", "%d ansible-playbook runs with {{ }} in the DSL" % f("templates", "attempts"),
         "evaluated", f("templates", "evaluated")),
        ("Paths", "%d hostile names, planted links" % f("paths", "attempts"),
         "files outside", f("paths", "outside_writes")),
        ("Hostile documents", "%d DSL documents (alias bombs, nesting, huge files, a FIFO) and %d catalogs (the same, "
         "a key given twice, 4 MiB); bounds: 2 s, 64 MiB traced, 128 MiB RSS"
         % (f("documents", "hostile"), f("documents", "hostile_catalogs")),
         "not refused fast", f("documents", "hostile") - f("documents", "refused_fast")
         + f("documents", "hostile_catalogs") - f("documents", "catalogs_refused_fast")),
        ("Kill during write", "%d SIGKILLs" % f("atomicity", "kills"),
         "partial scripts", f("atomicity", "partial_scripts")),
        ("Concurrency", "%d runs into one directory; %d store writers, %d records"
         % (f("concurrency", "runs"), f("concurrency", "store_writers"), f("concurrency", "store_records")),
         "lost", f("concurrency", "lost_or_corrupt") + f("concurrency", "store_lost")),
        ("Linear-time validation",
         "%d string fields (%d pattern-checked) x %d values of 1 MiB, and x %d at each field's own bound; "
         "slowest %d ms / %d ms" % (f("linear", "fields_1MiB"), f("linear", "checked_1MiB"),
                                    f("linear", "inputs_1MiB") // max(1, f("linear", "fields_1MiB")),
                                    f("linear", "inputs_at_bound") // max(1, f("linear", "fields_at_bound")),
                                    f("linear", "max_ms_1MiB"), f("linear", "max_ms_at_bound")),
         "over 2 s / no path", f("linear", "slow") + f("linear", "misattributed")),
        ("Hostile names, directives, values",
         "%d environment keys, %d raw directives, %d values (dates, duplicate keys, NaN, huge integers): "
         "%d refused with their path; %d command words run literally"
         % (f("hostile", "tried_env"), f("hostile", "tried_directives"), f("hostile", "tried_values"),
            f("hostile", "rejected_with_path"), f("hostile", "command_words_literal")),
         "escaped / pathless", f("hostile", "escaped") + f("hostile", "pathless")
         + f("hostile", "command_words") - f("hostile", "command_words_literal")),
        ("batch_job ledger", "%d concurrent local submissions into one directory (%d at once, twice), %d entries"
         % (f("ledger", "submissions"), f("ledger", "submissions") // 2, f("ledger", "entries")),
         "lost / submitted again", f("ledger", "lost") + f("ledger", "submitted_again")),
        ("Faults", "%d injected" % f("faults", "tried"),
         "unhandled / lost", (f("faults", "tried") - f("faults", "handled")) + f("faults", "lost")),
    ]


def complete(fig):
    return all(area in fig for area in AREAS)


def render(fig):
    lines = [
        "# Robustness figures",
        "",
        "Generated by `%s`, which runs the whole `tests/robustness` suite and writes this page" % COMMAND,
        "from the figures the tests counted while they ran (tests themselves write only `tests/output/`).",
        "Do not edit by hand. What the playbooks, the TOSCA operations, the results store, the registry client",
        "and `batch_job` do against hostile input, item by item with its own figures, is in `docs/hardening.md`.",
        "",
        "| Area | Tried | Bad outcome | Count |",
        "|---|---|---|---:|",
    ]
    lines.extend("| %s | %s | %s | %d |" % row for row in rows(fig))
    bad = sum(row[3] for row in rows(fig))
    lines += ["", "Status: **%s** (sum of bad outcomes: %d)." % ("all clear" if bad == 0 else "FAILURES", bad), ""]
    lines += [
        "## What is tried",
        "",
        "- Fuzzing: documents built from the DSL's own JSON Schema, mutations of `examples/` and",
        "  `tests/data/original/` (schema-valid values, random values, hostile strings, deletions, unknown keys,",
        "  changed types), random JSON and random text; each through `dsl.loads` as JSON and YAML text,",
        "  validation, matching and rendering for slurm, pbspro, torque and local. Only `DslInvalid`/`ModakError`",
        "  may come out, every problem has a path (document-level problems say `(document)`), every",
        "  accepted script keeps its directives as its first lines and has no line break inside a line.",
        "- Injection: every string field of the schema (walked, not listed by hand) with newlines, CR, U+2028,",
        "  U+0085, NUL, `$(...)`, backticks, `;`, quotes, `#SBATCH`/`#PBS` lines, `{{ }}` and very long values.",
        "  Accepted scripts are executed with stub `apptainer`, `singularity`, `srun`, `mpirun`, `mpiexec`,",
        "  `timeout`, `curl`, `git`, `module`, `bash` that record their argv: a canary file is never created",
        "  and values arrive as the exact words given.",
        "- Templates: `{{ }}` in `dsl_file` documents, documents read with a file lookup and vars marked",
        "  `!unsafe` reach the script literally through `ansible-playbook`. A DSL written inline in a play or",
        "  in plain vars is templated by Ansible itself before the module runs: use `dsl_file` for documents",
        "  you did not write.",
        "- Faults: sbatch/qsub missing, controller down, scheduler hanging, garbage answers, registry on a",
        "  closed port, corrupt catalogs, corrupt results stores, no container runtime.",
        "- Linear time: every string field of the schema gets 17 kinds of 1 MiB values (runs of spaces,",
        "  digits, `1,`, `a.`, `>= 1 ` ... ending in a character no pattern accepts) and the same at the field's",
        "  own length bound, validated in a child process; each document must be judged within 2 s.",
        "- Hostile values: `!!binary`, integer, float, null and tuple keys in `application.environment`;",
        "  bash's read-only and self-set variables; raw directives that name files (`--output=/etc/passwd`,",
        "  `--chdir`, abbreviations such as `--out`, `-o`, `-e`, `-d`, `-w`, `-D`), change the user or the",
        "  interpreter (`--uid`, `-u`, `-P`, `-S`), stage files (`-W stagein`) or forge the idempotence",
        "  comment (`--comment=modak:...`); Grid Engine's (and its alias `sge`) `-o /etc/cron.d/x`, `-S /tmp/sh`,",
        "  `-wd /root`, `-u root`, `-b y`, `-ac modak=...`, `-jsv`, `-@`, `-clear`, `-sync y`, `-w v`; raw",
        "  directives under an unknown scheduler name; impossible dates; duplicate keys in YAML and JSON; NaN and",
        "  infinities; integers too long to read; command words bash reads as syntax (`done`, `if`, `A=1`).",
        "",
        "## Choices",
        "",
        "- `extra_directives` is an allow-list per scheduler that fails closed, as sbatch and qsub accept",
        "  abbreviated options and options that name files: a deny-list cannot be complete. Each scheduler",
        "  declares its list on its own class (`allowed_options`, `typed_options`); validating a DSL loads",
        "  only the backend it names, and",
        "  `schedulers/extra.py` checks. A batch scheduler that declares no option, or a scheduler name the",
        "  registry does not know, lets no raw option through. An option with a typed field (`--output`, `-o`,",
        "  `--job-name`...) is refused with the field to use, so that it passes that field's checks (relative",
        "  path, no `..`). Slurm: options that name no file, e.g. `--reservation`, `--comment`, `--hold`,",
        "  `--signal`, `--gpus-per-task`, `--exclude`, `--nice`. PBS Pro: `-p`, `-r`, `-h`, `-P`,",
        "  `-W umask|sandbox|block|run_count|max_run_subjobs`, `-l` with the job-wide resources `place`, `site`,",
        "  `preempt_targets`, `min_walltime`, `max_walltime`, `soft_walltime` and the limits `software`, `cput`,",
        "  `pcput`, `pmem`, `pvmem`, `vmem`, `file`, `nice`. Torque: `-p`, `-r`, `-h`, `-f`, `-L`, `-W umask|block`,",
        "  `-l` with `feature`, `gres`, `naccesspolicy`, `arch`, `opsys`, `partition`, `minwclimit` and those limits.",
        "  Each item of a comma list (`-W`, `-l`) is checked: not Torque's `prologue` or `epilogue` (scripts run with",
        "  the job), nor Moab's `trig`, nor a resource a typed field writes (`walltime`, `select`, `nodes`, `mem`).",
        "  Grid Engine (as `qsub(1)` of Son of Grid Engine 8.1.9 documents them): `-l`,",
        "  `-pe <environment> <slots>`, `-P`, `-p`, `-ar`, `-binding`, `-ckpt`, `-c`, `-dl`, `-h`, `-hard`,",
        "  `-soft`, `-hold_jid_ad`, `-js`, `-masterq`, `-notify`, `-R y|n`, `-r y|n`, `-now y|n`, `-w e|w|n`;",
        "  not `-o`/`-e`/`-i`/`-wd`/`-jsv`/`-@` (files), `-u`, `-S`/`-shell`/`-b`/`-noshell`, `-C`, `-clear`,",
        "  `-ac`/`-sc`/`-dc` (the context holds batch_job's key), `-sync`, `-terse`, `-pty`, `-w v|p`. Flux",
        "  (flux batch's options): `--urgency`, `--signal`, `--rlimit`, `--add-brokers`; not `--output`/`--error`/",
        "  `--input`/`--add-file`/`--env-file`/`--conf`/`--dump` (files), `--wrap`, `--cwd`, `--setattr`/`-S`,",
        "  `--setopt`/`-o`, `--broker-opts`, `--flags`. Short",
        "  options are written `-x value`. The comment prefix `modak:` (Slurm) and the context variable `modak`",
        "  (Grid Engine) are reserved for batch_job's idempotence key. A local run writes no directive and",
        "  ignores the list (with a warning).",
        "- Catalog files are read with the DSL's strict loader (no aliases, a key given twice refused), within",
        "  their own limits: 2 MiB (about 12,000 images of seven attributes) checked before reading, 32 levels,",
        "  400,000 elements.",
        "- Environment keys are text matching `[A-Za-z_][A-Za-z0-9_]*`, as bash and Apptainer's `--env` take",
        "  them; bash's read-only variables (`readonly -p`: BASHOPTS, BASH_VERSINFO, EUID, PPID, SHELLOPTS,",
        "  UID) and the variables bash computes itself (RANDOM, SECONDS, GROUPS, BASH_ARGV0...) are refused.",
        "- YAML is read as YAML 1.2 and JSON read it: dates stay text (the field's own check names an impossible",
        "  date), a key given twice is an error (Ansible core warns and keeps the last; a DSL from someone else",
        "  must not hide a value), NaN and infinities are refused wherever they appear.",
        "- Every pattern-checked string has a length bound (4096 characters unless the schema says less) that is",
        "  checked before the pattern runs, and no pattern lets two quantifiers match the same characters.",
        "- The command word of a bare run is taken literally: a reserved word or an assignment is written as",
        "  `command -- word`; a word starting with `%` is refused, as bash runs it as `fg` however it is quoted.",
        "",
    ]
    return "\n".join(lines)


def write(fig):
    """tests/output/robustness.json: the only file the test session writes."""
    os.makedirs(OUTPUT, exist_ok=True)
    with open(JSON_PATH, "w", encoding="utf-8") as handle:
        json.dump({"generated": datetime.datetime.utcnow().isoformat() + "Z", "figures": fig,
                   "rows": [list(r) for r in rows(fig)], "complete": complete(fig)}, handle, indent=1, sort_keys=True)
    return complete(fig)


def write_doc(fig, path=DOC_PATH):
    """docs/robustness.md, written by scripts/robustness_report.py after a complete run (never by a test)."""
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(render(fig))
