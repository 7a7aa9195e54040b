"""Charliecloud's script lines that act on paths and traps, run by bash: the binds' mount points made inside the
image only, and the environment file's EXIT trap beside a site's own."""

from __future__ import annotations

import os
import subprocess

from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import registry


def _bash(lines, cwd, **env):
    return subprocess.run(["bash", "-c", "\n".join(lines)], cwd=str(cwd), capture_output=True, text=True,
                          check=False, timeout=30, env=dict(os.environ, **env))


def test_mount_points_are_never_made_through_a_link_of_the_image(tmp_path):
    """The image's absolute link /data -> a host directory: before, `mkdir -p "$IMAGE"/data/sub` created sub on the
    host; now nothing is made through the link (ch-run resolves it inside the image), nor above the image ('..'),
    and the other mount points, the working directory's too, are made in the image."""
    image, host, work = tmp_path / "img", tmp_path / "host", tmp_path / "work"
    for path in (image, host, work):
        path.mkdir()
    (image / "data").symlink_to(host)
    lines = registry.get("charliecloud").bind_lines(("/scratch/in:/data/sub:ro", "/x:/in/deep", "/y:/a/../../up"),
                                                    None)
    done = _bash(lines, work, IMAGE=str(image))
    assert done.returncode == 0, done.stderr
    assert os.listdir(str(host)) == [] and not (tmp_path / "up").exists()
    assert (image / "in" / "deep").is_dir() and (image / str(work).lstrip("/")).is_dir()


def test_a_sites_exit_trap_still_runs_with_the_jobs_status(tmp_path):
    """target.setup set an EXIT trap: before, the environment file's trap replaced it; now both run, the site's
    after the file is removed and with the script's exit status."""
    setup = ["trap 'echo \"site cleanup $? $(ls -A)\"' EXIT"]
    lines = setup + registry.get("charliecloud").env_lines((("OMP_NUM_THREADS", "4"),)) + ["exit 3"]
    done = _bash(lines, tmp_path, OMP_NUM_THREADS="4")
    assert done.returncode == 3 and done.stdout == "site cleanup 3 \n", done
    done = _bash(registry.get("charliecloud").env_lines((("X", "1"),)), tmp_path, X="1")
    assert done.returncode == 0 and os.listdir(str(tmp_path)) == [], done
