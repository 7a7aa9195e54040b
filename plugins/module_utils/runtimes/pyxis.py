# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pyxis and enroot: the container form of many GPU clusters (NVIDIA's Slurm SPANK plugin).

The container is entered through srun's own options (github.com/NVIDIA/pyxis, README "Usage"):
``srun --container-image=IMAGE --container-mounts=SRC:DST[,...] --container-workdir=DIR prog``. Each task runs in
the container, so a launch line keeps its form (one srun task per rank, or one launcher per node) and only gains
these options; a job that starts no srun gets one task (``srun --nodes=1 --ntasks=1``). The image is a squashfs
file, imported once from the registry with ``enroot import --output FILE docker://[REGISTRY#]IMAGE[:TAG]`` (enroot's
reference form: the registry separated by '#'), as sites stage images for their users, or the user's own ``.sqsh``
file. Pyxis passes the task's environment into the container and enroot's NVIDIA hook makes the job's GPUs visible
(no flag). Neither installs here: the argv is tested exactly.
"""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.runtimes.apptainer import Apptainer
from ansible_collections.sodalite.modak.plugins.module_utils.shell import Raw


def enroot_reference(uri):
    """``docker://registry.example:5000/team/img:tag`` -> ``docker://registry.example:5000#team/img:tag``; Docker
    Hub names stay as they are (``docker://pytorch/pytorch:2.5.1``)."""
    if not uri.startswith("docker://"):
        return uri
    rest = uri[len("docker://"):]
    first, sep, tail = rest.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return "docker://%s#%s" % (first, tail)
    return uri


class Pyxis(Apptainer):
    name = "pyxis"
    binary = "enroot"
    image_dir_vars = ("MODAK_IMAGE_DIR", "ENROOT_DATA_PATH")
    image_suffix = ".sqsh"

    def gpu_flags(self, vendor):
        del vendor
        return []

    def pull_argv(self, dest, uri):
        return [self.binary, "import", "--output", dest, enroot_reference(uri)]

    def exec_argv(self, image, argv, gpu_vendor="none", binds=(), workdir=None, env=(), cwd=None, mpi=None,
                  host_env=()):
        """The program's words as they are: the task enters the container through srun's options
        (``srun_options``); the environment passes."""
        del image, gpu_vendor, binds, workdir, env, cwd, mpi, host_env
        return list(argv)

    def srun_options(self, image, binds=(), workdir=None):
        """srun's options that run each task in the image: ``image`` a shell word (Raw('"$IMAGE"')); ``binds``
        'SRC[:DST[:FLAGS]]' (a bare path is mounted at the same place); ``workdir`` the directory the task starts in
        (default: the job's)."""
        mounts = [path if ":" in path else "%s:%s" % (path, path) for path in binds if path != workdir]
        if workdir:
            mounts.append("%s:%s" % (workdir, workdir))
            where = "--container-workdir=%s" % workdir
        else:      # the job's directory (the submit directory), where its files are
            mounts.append('"$PWD:$PWD"')
            where = Raw('--container-workdir="$PWD"')
        return [Raw("--container-image=%s" % image), Raw("--container-mounts=%s" % ",".join(mounts)), where]
