# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Step 4 of the pipeline: the job script.

No template engine: lines are built in Python and every value that came from the DSL is
either pattern-checked by the schema or shell-quoted here.
"""

from __future__ import annotations

import re

from ansible_collections.sodalite.modak.plugins.module_utils import distributed, launchers, shell
from ansible_collections.sodalite.modak.plugins.module_utils.model import JobScript
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import names
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import registry as runtimes
from ansible_collections.sodalite.modak.plugins.module_utils.schedulers import registry as schedulers
from ansible_collections.sodalite.modak.plugins.module_utils.shell import Raw

IMAGE = Raw('"$IMAGE"')
# a single-quoted word holding $, ` or \ : literal on purpose, which shellcheck flags as SC2016/SC1003
_LITERAL_SPECIALS = re.compile(r"'[^']*[$`\\][^']*'")
SHELLCHECK_LITERALS = "# shellcheck disable=SC2016,SC1003  # user values are quoted to stay literal"


def annotate(lines):
    """Put a shellcheck note before lines that hold deliberately literal quoted values."""
    out = []
    for line in lines:
        if _LITERAL_SPECIALS.search(line):
            out.append(SHELLCHECK_LITERALS)
        out.append(line)
    return out


def run_notes(argv):
    """A shellcheck note for the run line: $NAME from the DSL is set outside the script (SC2154), and a program
    name ending in punctuation is what the user named (SC2287/SC2288)."""
    codes = []
    if any(isinstance(word, shell.Expanding) for word in argv):
        codes.append("SC2154")
    if argv and re.search(r"[^A-Za-z0-9_]\Z", shell.expanded(argv[0], {})):
        codes.extend(["SC2287", "SC2288"])
    return ["# shellcheck disable=%s  # the program and its words are the DSL's" % ",".join(codes)] if codes else []


def sif_name(uri):
    """docker://ethcscs/openmpi:3.1.3 -> openmpi_3.1.3-<digest of the whole reference>.sif (never shared)."""
    return names.cache_name(uri, ".sif")


def mpi_rank(settings):
    """What a container the launcher starts must pass on to an MPI rank: None when it starts no MPI ranks,
    else the PMI srun names ('' when none)."""
    if settings.launcher == "none" or not (settings.ranks > 1 or settings.mpi_library or settings.pmi):
        return None
    return settings.pmi or ""


def launcher_words(settings, backend=None):
    return launchers.words(settings, backend)


def image_lines(req, uri, runtime, gpu_vendor="none"):
    """Lines that make $IMAGE name the image for the runtime, pulling it once if missing."""
    image_dir = shell.quote(req.target.image_dir) if req.target.image_dir else None
    return runtime.fetch_lines(uri, image_dir, gpu_vendor)


_PARALLELISM = re.compile(r"\{\{\s*BUILD_PARALLELISM\s*\}\}")


def clone_dir(src):
    """The directory git itself clones into: the last path part without '.git' (https://h/x/solver.git -> solver)."""
    path = re.sub(r"(/\.git)?/*\Z", "", src.split("?", 1)[0].split("#", 1)[0])
    name = re.split(r"[/:]", path)[-1]
    name = name[:-4] if name.endswith(".git") else name
    name = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    return name if name.strip(".") else "source"


def shell_lines(what, texts):
    """User shell (pre-/post-execution, target setup), run as given in the job's shell.

    Each text is one quoted word for ``eval``: it runs exactly as a script body would (same shell, same
    variables, ``set -e`` applies), and no quote or here-document in it can reach the lines that follow.
    """
    if not texts:
        return []
    return ["# %s (your shell, run as given)" % what] + ["eval %s" % shell.quote(text) for text in texts]


def build_lines(build, wrap):
    """Fetch the sources and run the build command once, inside the container when there is one."""
    lines = ["# build step (application.build)"]
    if build.src.endswith(".git") or build.src.startswith(("git://", "ssh://")):
        folder = shell.quote(clone_dir(build.src))
        lines.append("if [ ! -d %s ]; then git clone --depth 1 -- %s %s; fi" % (folder, shell.quote(build.src), folder))
    else:
        name = re.sub(r"[^A-Za-z0-9._-]", "_", build.src.split("?")[0].rstrip("/").split("/")[-1]) or "source"
        lines.append("curl --fail --location --retry 3 --proto '=https,http' -o %s -- %s"
                     % (shell.quote(name), shell.quote(build.src)))
    command = _PARALLELISM.sub(str(build.parallelism), build.command)
    lines.append(shell.command(wrap(["bash", "-c", command])))
    return lines


def render(req, choice, settings):
    """Return (JobScript, warnings)."""
    options, app = req.options, req.app
    backend = schedulers.get(req.target.scheduler)
    directives, warnings = backend.preamble(options, settings)
    runtime = runtimes.get(settings.engine)
    body = ["# generated by sodalite.modak; image: %s" % (choice.uri or "none (bare run)")]
    body.append("set -eo pipefail")
    body.extend(backend.redirect_lines(options))
    if app.working_directory:
        body.append("cd %s" % shell.quote(app.working_directory))
    else:
        body.extend(backend.workdir_lines())
    if req.target.modules:
        body.append("module load %s" % shell.join(req.target.modules))
    body.extend(shell_lines("target.setup", req.target.setup))
    if app.modules:
        body.append("module load %s" % shell.join(app.modules))
    body.extend("export %s=%s" % (name, shell.quote(value)) for name, value in settings.env)
    body.extend(shell_lines("application.pre-execution", app.pre_execution))

    binds = list(app.bind_paths)
    if app.working_directory and app.working_directory not in binds:
        binds.append(app.working_directory)
    if choice.uri:
        body.extend(image_lines(req, choice.uri, runtime, settings.gpu_vendor))
        body.extend(getattr(runtime, "bind_lines", lambda *_: [])(binds, app.working_directory))
        # a runtime that reads the job's variables from a file writes it here (Charliecloud); values stay out of argv
        body.extend(getattr(runtime, "env_lines", lambda env: [])(settings.env))

        def wrap(argv, mpi=None, host_env=()):
            return runtime.exec_argv(IMAGE, argv, settings.gpu_vendor, binds, env=settings.env,
                                     cwd=app.working_directory, mpi=mpi, host_env=host_env)
    else:
        def wrap(argv, mpi=None, host_env=()):
            del mpi, host_env
            return list(argv)
    if app.build:
        body.extend(build_lines(app.build, wrap))
    program = list(app.argv) + list(settings.extra_args)
    if settings.distributed:
        body.extend(distributed.setup_lines(settings.distributed))
        run = backend.run_prefix(options) + distributed.run_words(settings, program, wrap)
    else:
        body.extend(launchers.lines(settings, backend))
        run = backend.run_prefix(options) + launcher_words(settings, backend) + wrap(program, mpi=mpi_rank(settings))
    if app.post_execution:
        body.append("MODAK_RC=0")
        body.extend(run_notes(run))
        body.append("%s || MODAK_RC=$?" % shell.program_command(run))
        body.extend(shell_lines("application.post-execution", app.post_execution))
        body.append('exit "$MODAK_RC"')
    else:
        body.extend(run_notes(run))
        body.append(shell.program_command(run))
    script = JobScript(scheduler=backend.name, filename=options.job_name + backend.extension,
                       directives=tuple(directives), body=tuple(annotate(body)))
    return script, warnings
