"""xOpera 0.7.0 for the TOSCA tests (the real Slurm is the session fixture ``slurm`` of tests/integration/conftest.py).

The session fixture ``opera`` runs scripts/opera-venv, which creates .venv-opera (gitignored, reused on the
next run) when it is missing or out of date, and gives the environment opera needs: its bin/ on PATH (opera
runs ``ansible-playbook`` from PATH) and this checkout's collections/ as ANSIBLE_COLLECTIONS_PATH (opera
writes its own ansible.cfg, so the project's is never read).
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import services
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
TOSCA = os.path.join(ROOT, "tosca")
VENV = os.path.join(ROOT, ".venv-opera")

# the demo's Charliecloud storage (scripts/demo): the build cache there makes an unchanged recipe quick to rebuild
CH_STORAGE = "/var/tmp/modak-demo.ch"


@pytest.fixture(scope="session")
def pytorch_image(tmp_path_factory):
    """The demo's PyTorch CPU image, built from modak's recipe with Charliecloud on the mmdebstrap base
    (scripts/base-image, then playbooks/demo.yml with no push and no job), converted into an image directory
    under the name the job script looks for: the job finds it pulled. Returns the catalog naming it, that
    image directory and the directory holding the workload (benchmarks/workload/mnist_cnn.py)."""
    if os.geteuid() != 0:
        pytest.fail("building the image needs root (mmdebstrap, Charliecloud)", pytrace=False)
    work = tmp_path_factory.mktemp("pytorch-image")
    env = dict(os.environ, PATH="/usr/bin:/bin:/usr/sbin:/sbin:" + os.path.join(ROOT, ".venv", "bin"),
               USER="root", CH_IMAGE_STORAGE=CH_STORAGE, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="0")

    def run(argv, timeout):
        proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False)
        if proc.returncode != 0:
            message = "%s failed (rc %d):\n%s\n%s" % (argv[0], proc.returncode, proc.stdout[-4000:], proc.stderr[-3000:])
            pytest.fail(message, pytrace=False)
        return proc.stdout

    with services.exclusive("modak-demo.ch"):     # the demo's build storage: one ch-image at a time
        base = run([os.path.join(ROOT, "scripts", "base-image"), "--charliecloud"], 900)
        base = [line[5:] for line in base.splitlines() if line.startswith("name=")][0]
        wheels = services.DEMO_WHEELS     # the demo's own files: its torch layer is found in the build cache
        run([os.path.join(ROOT, ".venv", "bin", "python"), "-m", "pip", "download", "--quiet", "--only-binary=:all:",
             "--dest", wheels, "--find-links", os.environ.get("MODAK_WHEELS", "/opt/wheels"),
             "torch==2.13.0"], 600)
        (work / "jobs").mkdir()
        extra = {"demo_dir": str(work), "demo_registry": "none", "demo_push_to": "", "demo_engines": [],
                 "demo_base_image": base, "demo_wheels": wheels,
                 "ansible_python_interpreter": os.path.join(ROOT, ".venv", "bin", "python")}
        run([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), os.path.join(ROOT, "playbooks", "demo.yml"),
             "-e", json.dumps(extra)], 1800)

        from ansible_collections.sodalite.modak.plugins.module_utils.runtimes import names
        catalog = work / "catalog.yaml"
        uri = yaml.safe_load(catalog.read_text())["images"][0]["uri"]
        images = work / "images"
        images.mkdir()
        run(["ch-convert", "-i", "ch-image", "-o", "dir", uri[len("docker://"):], str(images / names.cache_name(uri))],
            600)
    return {"catalog": str(catalog), "image_dir": str(images), "workload": str(work / "jobs")}


class Opera(object):
    """Runs opera from .venv-opera in tosca/, with a tree callback so that failed tasks can be read."""

    def __init__(self, tree_dir):
        self.bin = os.path.join(VENV, "bin")
        self.python = os.path.join(self.bin, "python")
        self.tree_dir = tree_dir
        self.env = dict(os.environ, PATH=self.bin + os.pathsep + os.environ.get("PATH", ""),
                        ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, "collections"),
                        ANSIBLE_CALLBACKS_ENABLED="ansible.builtin.tree", ANSIBLE_CALLBACK_TREE_DIR=tree_dir,
                        ANSIBLE_DEPRECATION_WARNINGS="0", ANSIBLE_NOCOLOR="1", PYTHONWARNINGS="ignore")
        self.env.pop("ANSIBLE_CONFIG", None)
        self.env.pop("VIRTUAL_ENV", None)

    def __call__(self, *args, timeout=300):
        return subprocess.run([os.path.join(self.bin, "opera")] + list(args), cwd=TOSCA, env=self.env,
                              capture_output=True, text=True, timeout=timeout, check=False)

    def failure(self, proc):
        """opera hides a failed task's message; the tree callback keeps it."""
        notes = []
        if os.path.isdir(self.tree_dir):
            for name in sorted(os.listdir(self.tree_dir)):
                with open(os.path.join(self.tree_dir, name), encoding="utf-8") as handle:
                    notes.append(handle.read()[-3000:])
        return "rc %d\n%s\n%s\n%s" % (proc.returncode, proc.stdout[-4000:], proc.stderr[-4000:], "\n".join(notes))


def _opera_venv():
    proc = subprocess.run([os.path.join(ROOT, "scripts", "opera-venv")], capture_output=True, text=True,
                          timeout=900, check=False)
    if proc.returncode != 0:
        pytest.fail("scripts/opera-venv failed (rc %d):\n%s\n%s" % (proc.returncode, proc.stdout, proc.stderr),
                    pytrace=False)
    return VENV


@pytest.fixture(scope="session")
def opera_venv(tmp_path_factory):
    """.venv-opera, made or checked once per run by whichever worker needs it first (services.shared)."""
    with services.shared(tmp_path_factory, "opera-venv", _opera_venv, lambda _value: None) as venv:
        yield venv


@pytest.fixture
def opera(opera_venv, tmp_path):
    return Opera(str(tmp_path / "tree"))
