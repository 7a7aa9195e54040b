# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Podman: ``podman run`` with the flags HPC users expect (argv lists; Raw words are shell expressions).

Host network and IPC (MPI, shared memory), the caller's uid inside the container (``--userns=keep-id``,
which rootful Podman refuses, so root keeps ``--userns=host``), the job's environment by name, the binds
and the submit directory as working directory, GPUs through CDI. Podman keeps pulled images in its own
storage, so there is no image file: ``$IMAGE`` is the fully qualified reference.

A rank of an MPI launch (one container per rank, started by ``srun --mpi=...`` or mpirun) gets the host's PID
namespace (Open MPI's shared memory tells its own segment from a peer's by the creator's PID, which is 1 in
every container of its own), the launcher's variables (PMIX_*, PMI_*, OMPI_*, SLURM*) and PMIx's data in
the process (``PMIX_MCA_gds=hash``: its shared-memory store lives in slurmd's spool directory). PMI-2 talks
over the descriptor ``PMI_FD`` that the rank inherits from srun's step: a shell moves it to descriptor 3,
which ``--preserve-fds=1`` hands into the container.
"""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils import shell
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, DslProblem
from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import oci, staging
from ansible_collections.sodalite.modak.plugins.module_utils.shell import Raw

USERNS = Raw('"$MODAK_PODMAN_USERNS"')
PWD = Raw('"$PWD"')
MPI_VARS = ("PMIX_*", "PMI_*", "OMPI_*", "SLURM*")
# PMI-2's descriptor moved to 3 for --preserve-fds=1 (run by each rank, before podman)
PMI_FD_SHELL = ["bash", "-c", 'exec 3>&"$PMI_FD" && PMI_FD=3 exec "$@"', "bash"]


class Podman(object):
    name = "podman"
    binary = "podman"

    def gpu_flags(self, vendor):
        if vendor == "nvidia":
            return ["--device", "nvidia.com/gpu=all"]
        if vendor == "amd":
            return ["--device", "/dev/kfd", "--device", "/dev/dri"]
        return []

    def exec_argv(self, image, argv, gpu_vendor="none", binds=(), workdir=None, env=(), cwd=None, mpi=None,
                  host_env=()):
        """``podman run``; ``env`` (name, value) pairs are passed by name (their values are exported before).

        The current directory is bound and entered: ``cwd`` when the script changed to a known directory
        (already among ``binds``), else ``$PWD``. ``mpi`` (not None: a rank of an MPI launch) is the PMI srun
        names ("" when none is named); "pmi2" hands PMI_FD into the container. ``host_env`` names (set on the host,
        such as a training rank) are passed by name too: podman passes no variable unless named.
        """
        words = [self.binary, "run", "--rm", "--network=host", "--ipc=host", USERNS]
        if mpi is not None:
            words.append("--pid=host")
            if mpi == "pmi2":
                words.append("--preserve-fds=1")
            for pattern in MPI_VARS:
                words.extend(["--env", pattern])
            words.extend(["--env", "PMIX_MCA_gds=hash"])
        for name, _value in env:
            words.extend(["--env", name])
        for name in host_env:
            words.extend(["--env", name])
        words.extend(self.gpu_flags(gpu_vendor))
        for bind in binds:
            src, dst, opts = oci.split_bind(bind)
            words.extend(["--volume", ":".join([src, dst] + ([opts] if opts else []))])
        if not cwd:
            words.extend(["--volume", Raw('"$PWD:$PWD"')])
        words.extend(["--workdir", workdir or cwd or PWD, image])
        words.extend(argv)
        return PMI_FD_SHELL + words if mpi == "pmi2" else words

    def check_lines(self, uri, image_dir=None, gpu_vendor="none", absent=None):
        """``fetch_lines``, then stop the job when the image is not in podman's storage (or run the lines ``absent``)."""
        return self.fetch_lines(uri, image_dir, gpu_vendor) + staging.missing_lines('podman image exists "$IMAGE"', absent)

    def stage_lines(self, uri, image_dir=None, gpu_vendor="none"):
        """Lines that pull the image into podman's storage once (the deployment runs them)."""
        return self.fetch_lines(uri, image_dir, gpu_vendor) + [
            'if ! podman image exists "$IMAGE"; then podman pull "$IMAGE"; fi']

    def fetch_lines(self, uri, image_dir=None, gpu_vendor="none"):
        """``$IMAGE`` (the reference; podman pulls it once into its storage) and the user-namespace flag."""
        del image_dir, gpu_vendor
        if "://" not in uri and uri.endswith(".sif"):
            raise DslInvalid([DslProblem("job.target.container_engine", "podman cannot run the SIF file %s" % uri,
                                         self.name, hint="choose apptainer or singularity for SIF files")])
        return [
            "MODAK_PODMAN_USERNS=--userns=keep-id",
            'if [ "$(id -u)" = 0 ]; then MODAK_PODMAN_USERNS=--userns=host; fi  # keep-id is rootless only',
            "IMAGE=%s" % shell.quote(oci.reference(uri, self.name)),
        ]
