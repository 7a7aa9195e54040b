# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Charliecloud: unprivileged ``ch-run`` of an image directory (argv lists; Raw words are shell expressions).

A registry image is pulled once with ``ch-image pull`` and converted to a directory in the image directory
(``ch-convert -i ch-image -o dir``) under a name that cannot collide (``names.cache_name``); NVIDIA
libraries are injected there with ``ch-fromhost --nvidia``. A local directory or SquashFS file is run in
place. ``ch-run`` gets the image's environment (``--set-env``), then the job's variables on top, a private
/tmp, the binds and the submit directory as working directory. ``ch-run`` 0.31 cannot create a bind's mount
point in a read-only image, so the script creates them in an image directory it may write (``bind_lines``).

A rank of an MPI launch (one ``ch-run`` per rank, started by ``srun --mpi=...``) reaches Slurm's PMIx server
over TCP and Slurm's PMI-2 through the inherited ``PMI_FD``; each ``ch-run`` has its own user namespace, so
what crosses it is switched off: PMIx's shared-memory data store, which lives in slurmd's spool directory
(``PMIX_MCA_gds=hash``), Open MPI's cross-process copy CMA (``OMPI_MCA_btl_vader_single_copy_mechanism=none``)
and UCX's access to a peer's /proc (``UCX_POSIX_USE_PROC_LINK=n``, MPICH's shared memory).

The job's variables never appear in ch-run's argv (which every user on the node can read with ``ps``) and are
never expanded: the script writes them, from the variables it exported, with bash's builtin ``printf`` into a
file only the user can read (``mktemp``: 0600) in the working directory (shared, so ch-run on every node reads
it), as ``NAME='value'`` lines (ch-run strips the outer quotes), read with ``--env-no-expand``; the file is
removed when the script ends (an EXIT trap of the site's ``target.setup`` runs too, after it). Podman passes them by
name (``--env NAME``) and Apptainer inherits them.
"""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils import shell
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, DslProblem
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import names, oci, staging, trust
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes.apptainer import Apptainer
from ansible_collections.sodalite.modak.plugins.module_utils.shell import Raw

PWD = Raw('"$PWD"')
ENV_FILE = Raw('--set-env="$MODAK_ENV_FILE"')
# ch-image and ch-run name their storage after $USER and refuse to start without it; a batch job started by an
# orchestrator or a cron job may not have it
USER_LINE = 'export USER="${USER:-$(id -un)}"'
# what an MPI rank in its own user namespace must not try (see the module's text)
MPI_ENV = (("PMIX_MCA_gds", "hash"), ("OMPI_MCA_btl_vader_single_copy_mechanism", "none"),
           ("UCX_POSIX_USE_PROC_LINK", "n"))
# makes the directories of the path $1 inside $IMAGE one at a time; stops at a link, '.' or '..' (left to ch-run)
MOUNT_POINT_FUNCTION = [
    "modak_mount_point() {",
    '  local at="$IMAGE" part parts',
    '  IFS=/ read -r -a parts <<<"$1"',
    '  for part in "${parts[@]}"; do',
    '    case "$part" in "" | .) continue ;; ..) return 0 ;; esac',
    '    at="$at/$part"',
    '    if [ -L "$at" ]; then return 0; fi',
    '    if [ ! -d "$at" ]; then mkdir -- "$at" || return 0; fi',
    "  done",
    "}",
]


class Charliecloud(object):
    name = "charliecloud"
    binary = "ch-run"
    image_dir_vars = ("MODAK_IMAGE_DIR", "CH_IMAGE_DIR")

    def gpu_flags(self, vendor):
        """ch-run has no GPU flag: NVIDIA libraries go into the image (``prepare_argv``), /dev is the host's."""
        del vendor
        return []

    def prepare_argv(self, image, gpu_vendor):
        """argv run once on a freshly converted image directory, or None."""
        return ["ch-fromhost", "--nvidia", image] if gpu_vendor == "nvidia" else None

    def pull_argv(self, ref):
        return ["ch-image", "pull", ref]

    def convert_argv(self, ref, dest):
        return ["ch-convert", "-i", "ch-image", "-o", "dir", ref, dest]

    def env_lines(self, env):
        """Lines that write the job's variables (already exported) into the file ch-run reads (see above)."""
        if not env:
            return []
        pairs = " ".join('%s "$%s"' % (name, name) for name, _value in env)
        # an EXIT trap of the site's (target.setup) runs too, after the file is removed, with the status
        # the file is read by its name (ch-run --set-env=FILE, on every node): nobody else may rename it
        return (trust.workdir_lines("the container's variables") + ['MODAK_ENV_FILE="$(mktemp "$MODAK_WORKDIR/.modak-env.XXXXXX")"']
                + shell.exit_trap_lines('rm -f "$MODAK_ENV_FILE"')
                + ["printf \"%%s='%%s'\\n\" %s >\"$MODAK_ENV_FILE\"" % pairs])

    def exec_argv(self, image, argv, gpu_vendor="none", binds=(), workdir=None, env=(), cwd=None, mpi=None,
                  host_env=()):
        """``ch-run``; the current directory is bound and entered: ``cwd`` (already among ``binds``) or $PWD.

        ``mpi`` (not None: a rank of an MPI launch) adds MPI_ENV (fixed words, no user value) before the job's
        variables, which may override it. ``host_env`` (names set on the host, such as a training rank) needs no
        flag: ch-run passes the environment.
        """
        del host_env
        if not argv:
            raise DslInvalid([DslProblem("job.application.executable", "is required with charliecloud: "
                                         "ch-run has no runscript", hint="name the program to run in the image")])
        words = [self.binary, "--env-no-expand", "--set-env"]
        if mpi is not None:
            words.extend("--set-env=%s=%s" % pair for pair in MPI_ENV)
        if env:
            words.append(ENV_FILE)      # the job's variables, on top of the image's (env_lines wrote the file)
        words.extend(self.gpu_flags(gpu_vendor))
        words.append("--private-tmp")
        for bind in binds:
            src, dst, _opts = oci.split_bind(bind)   # ch-run binds are read-write; options are dropped
            words.extend(["-b", src if dst == src else "%s:%s" % (src, dst)])
        if not cwd:
            words.extend(["-b", PWD])
        words.extend(["-c", workdir or cwd or PWD, image, "--"])
        words.extend(argv)
        return words

    def bind_lines(self, binds=(), cwd=None):
        """Create the binds' mount points (and $PWD's) in an image directory the job may write, one directory at a
        time and never through a link: an image's absolute link (/scratch -> /host/x) points outside it, where
        ``mkdir -p`` would create directories on the host. The image is the user's (its trust check) or the DSL's
        own path, so nobody else adds a link meanwhile."""
        points = [shell.quote(oci.split_bind(bind)[1]) for bind in binds]
        if not cwd:
            points.append('"$PWD"')
        if not points:
            return []
        return MOUNT_POINT_FUNCTION + [
            'if [ -d "$IMAGE" ] && [ -w "$IMAGE" ]; then  # ch-run cannot create mount points in a read-only image',
        ] + ["  modak_mount_point %s" % point for point in points] + ["fi"]

    image_dir_expr = Apptainer.image_dir_expr

    def check_lines(self, uri, image_dir=None, gpu_vendor="none", absent=None):
        """Lines that make $IMAGE name the staged image directory and stop the job when it is not there (or run the
        lines ``absent``), then check it: the trust check is the last test before the launch."""
        if "://" not in uri:
            return self.fetch_lines(uri, image_dir, gpu_vendor)
        oci.reference(uri, self.name)
        return [
            USER_LINE,
            "MODAK_IMAGE_DIR=%s" % (image_dir or self.image_dir_expr()),
            'IMAGE="$MODAK_IMAGE_DIR/%s"' % names.cache_name(uri),
        ] + trust.resolve_lines() + staging.missing_lines('[ -d "$IMAGE" ]', absent) + trust.before_launch_lines()

    def stage_lines(self, uri, image_dir=None, gpu_vendor="none"):
        """Lines that pull and convert the image into the image directory once (the deployment runs them)."""
        return self.fetch_lines(uri, image_dir, gpu_vendor)

    def fetch_lines(self, uri, image_dir=None, gpu_vendor="none"):
        if "://" not in uri:
            if uri.endswith(".sif"):
                raise DslInvalid([DslProblem("job.target.container_engine",
                                             "charliecloud cannot run the SIF file %s" % uri, self.name,
                                             hint="give an image directory or a .sqfs file, or choose apptainer")])
            return [USER_LINE, "IMAGE=%s" % shell.quote(uri)]
        ref = oci.reference(uri, self.name)
        part = Raw('"$IMAGE.part.$$"')
        steps = [self.pull_argv(ref), self.convert_argv(ref, part), self.prepare_argv(part, gpu_vendor),
                 ["mv", "-T", part, Raw('"$IMAGE"')]]
        return [
            USER_LINE,
            "MODAK_IMAGE_DIR=%s" % (image_dir or self.image_dir_expr()),
            'mkdir -p "$MODAK_IMAGE_DIR"',
            'IMAGE="$MODAK_IMAGE_DIR/%s"' % names.cache_name(uri),
        ] + trust.resolve_lines() + trust.before_fetch_lines() + [
            'if [ ! -d "$IMAGE" ]; then',
            "  %s" % " && ".join(shell.command(step) for step in steps if step),
            "fi",
        ] + trust.before_launch_lines()
