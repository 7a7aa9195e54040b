# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Apptainer: pull, exec and run command lines (argv lists; Raw words are shell expressions)."""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils import shell
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import names, staging, trust
from ansible_collections.sodalite.modak.plugins.module_utils.shell import Raw


class Apptainer(object):
    name = "apptainer"
    binary = "apptainer"
    image_dir_vars = ("MODAK_IMAGE_DIR", "SINGULARITY_DIR")
    image_suffix = ".sif"     # the image file a registry image is pulled into

    def gpu_flags(self, vendor):
        return {"nvidia": ["--nv"], "amd": ["--rocm"]}.get(vendor, [])

    def pull_argv(self, dest, uri):
        return [self.binary, "pull", "--force", dest, uri]

    def exec_argv(self, image, argv, gpu_vendor="none", binds=(), workdir=None, env=(), cwd=None, mpi=None,
                  host_env=()):
        """``image`` is a word (often Raw('"$IMAGE"')); an empty argv runs the image's runscript.

        ``env`` (name, value) pairs need no flag: Apptainer passes the job's environment to the container,
        and it binds and enters the current directory itself (``cwd``, the script's working directory).
        ``mpi`` (a rank of an MPI launch) needs nothing either: the rank keeps the host's PID namespace, /tmp,
        environment (PMIX_*, PMI_*) and inherited descriptors (PMI_FD). Nor do ``host_env`` names (set on the
        host, such as a training rank): the environment passes.
        """
        del env, cwd, mpi, host_env
        words = [self.binary, "exec" if argv else "run"]
        words.extend(self.gpu_flags(gpu_vendor))
        if binds:
            words.extend(["--bind", ",".join(binds)])
        if workdir:
            words.extend(["--pwd", workdir])
        words.append(image)
        words.extend(argv)
        return words

    def image_dir_expr(self):
        """Shell expression of the image directory: the first variable set, else ~/.modak/images."""
        expr = "$HOME/.modak/images"
        for var in reversed(self.image_dir_vars):
            expr = "${%s:-%s}" % (var, expr)
        return Raw('"%s"' % expr)

    def is_local(self, uri):
        return "://" not in uri and uri.endswith(self.image_suffix)

    def check_lines(self, uri, image_dir=None, gpu_vendor="none", absent=None):
        """Lines that make $IMAGE point at the staged SIF file and stop the job when it is not there (or run the
        lines ``absent``), then check it: the trust check is the last test before the launch."""
        if self.is_local(uri):
            return self.fetch_lines(uri, image_dir, gpu_vendor)
        return [
            "MODAK_IMAGE_DIR=%s" % (image_dir or self.image_dir_expr()),
            'IMAGE="$MODAK_IMAGE_DIR/%s"' % names.cache_name(uri, self.image_suffix),
        ] + trust.resolve_lines() + staging.missing_lines('[ -s "$IMAGE" ]', absent) + trust.before_launch_lines()

    def stage_lines(self, uri, image_dir=None, gpu_vendor="none"):
        """Lines that pull the SIF file into the image directory once (the deployment runs them)."""
        return self.fetch_lines(uri, image_dir, gpu_vendor)

    def fetch_lines(self, uri, image_dir=None, gpu_vendor="none"):
        """Lines that make $IMAGE point at a local SIF file, pulling it once if missing, then check it (the trust
        check is the last test before the launch; the image's directory is checked before the pull writes there).

        ``image_dir`` is a shell word (quoted path); None: the runtime's default expression.
        """
        del gpu_vendor
        if self.is_local(uri):
            return ["IMAGE=%s" % shell.quote(uri)]
        pull = shell.command(self.pull_argv(Raw('"$IMAGE.part.$$"'), uri))
        return [
            "MODAK_IMAGE_DIR=%s" % (image_dir or self.image_dir_expr()),
            'mkdir -p "$MODAK_IMAGE_DIR"',
            'IMAGE="$MODAK_IMAGE_DIR/%s"' % names.cache_name(uri, self.image_suffix),
        ] + trust.resolve_lines() + trust.before_fetch_lines() + [
            'if [ ! -s "$IMAGE" ]; then',
            '  %s && mv -f "$IMAGE.part.$$" "$IMAGE" || exit $?' % pull,   # a failed pull ends the job with its status
            "fi",
        ] + trust.before_launch_lines()
