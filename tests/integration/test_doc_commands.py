"""Every command of README.md and docs/ runs as written.

The commands are the lines of the fenced ``sh`` blocks (a block without a language fails the test: say ``sh``
for commands, ``text`` for anything else). Each command is in WHERE: run here from a copy of the checkout
(``checkout``), from a project directory after installing the built tarball (``installed``), or run as written by
another test, named with the words that test uses. A new command that is in none of them fails the test.
The only change made to a command is what the docs leave to the user: ``<repository>`` (modak's git repository)
reads as a local clone of this working tree, and ``<commit>`` (the commit the user tested) as that clone's HEAD.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig

import pytest
import helpers
from helpers import ROOT

BIN = os.path.dirname(sys.executable)
DOCS = ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```", re.S | re.M)
REPOSITORY = "<repository>"
COMMIT = "<commit>"

# command -> "checkout", "installed", or (test file, words in it that show it runs the command)
WHERE = {
    "make run": "checkout",
    'make run ARGS="-e dsl_file=examples/openmpi-2nodes-slurm.yaml"': "checkout",
    "make test": ("scripts/test", "pytest"),
    # docs/quickstart.md: run as one session, in order, by its own test (it builds images and needs root and Slurm)
    'git clone "<repository>" modak': ("tests/integration/demo/test_quickstart.py", "quickstart.md"),
    "cd modak": ("tests/integration/demo/test_quickstart.py", "quickstart.md"),
    "make demo": ("tests/integration/demo/test_quickstart.py", "quickstart.md"),
    ".venv/bin/ansible-playbook playbooks/deploy.yml -e dsl_file=examples/pytorch-mnist-slurm.yaml "
    "-e optimised_job_catalog=/tmp/modak-demo/catalog.yaml -e optimised_job_image_dir=/tmp/modak-demo/images "
    "-e optimised_job_work_dir=/tmp/modak-demo/jobs": ("tests/integration/demo/test_quickstart.py", "quickstart.md"),
    "ansible-galaxy collection build": "installed",
    "ansible-galaxy collection install sodalite-modak-*.tar.gz": "installed",
    "pip install -r ~/.ansible/collections/ansible_collections/sodalite/modak/requirements.txt": "installed",
    "cp ~/.ansible/collections/ansible_collections/sodalite/modak/examples/pytorch-cpu-slurm.yaml job.yaml":
        "installed",
    "ansible-playbook sodalite.modak.optimise -e dsl_file=job.yaml": "installed",
    "cp -r ~/.ansible/collections/ansible_collections/sodalite/modak/examples .": "installed",
    ".venv/bin/ansible-builder create -f extensions/ee/execution-environment.yml -c ee-context": "checkout",
    "bin/modak validate dsl/*.yaml": "checkout",
    "bin/modak optimise dsl/*.yaml -o jobs": "checkout",
    "bin/modak optimise --check dsl/*.yaml -o jobs": "checkout",
    "bin/modak recipe dsl/train.yaml -o recipes": "checkout",
    # docs/cli.md's job commands need a scheduler: run as written, in one shell, on the suite's Slurm
    "id=$(bin/modak submit jobs/hello.sbatch)": ("tests/integration/slurm/test_cli_follow.py", "bin/modak submit"),
    'bin/modak status --wait "$id"': ("tests/integration/slurm/test_cli_follow.py", "bin/modak status --wait"),
    'bin/modak logs "$id"': ("tests/integration/slurm/test_cli_follow.py", "bin/modak logs"),
    "bin/modak --site examples/sites/slingshot-gpu.yaml validate --show examples/sites/slingshot-gpu-pytorch-ddp.yaml":
        "checkout",
    "python3 -m venv ~/.venvs/modak": "checkout",
    '~/.venvs/modak/bin/pip install "git+<repository>@<commit>"': "checkout",
    "~/.venvs/modak/bin/modak --version": "checkout",
    "mkdir -p ~/.local/bin": "checkout",
    'ln -s "$PWD/bin/modak" ~/.local/bin/modak': "checkout",
    "~/.local/bin/modak --version": "checkout",
    # the Python that runs ansible-playbook: the fixture installs the same file the same way (benchmarks/runner.py)
    "pip install -r benchmarks/requirements-bench.txt": ("benchmarks/runner.py", '"-r",'),
    "ansible-playbook playbooks/autotune.yml -e dsl_file=examples/pytorch-mnist-tuning-local.yaml "
    "-e results_store=benchmarks/results/autotune.sqlite -e autotune_max_runs=2 "
    "-e '{\"autotune_extra_args\": [\"--steps\", \"1\", \"--warmup\", \"0\"]}'": "checkout",
    # a cluster with the DSL's partition and Apptainer: the same playbook runs on the tests' Slurm
    ".venv/bin/ansible-playbook playbooks/deploy.yml -e dsl_file=examples/pytorch-cpu-slurm.yaml":
        ("tests/integration/slurm/test_build_on_demand.py", "deploy.yml"),
    "scripts/opera-venv": ("tests/integration/tosca/conftest.py", "opera-venv"),
    "export PATH=$PWD/.venv-opera/bin:$PATH": ("tests/integration/tosca/conftest.py", "opera-venv"),
    "export ANSIBLE_COLLECTIONS_PATH=$PWD/collections": ("tests/integration/tosca/conftest.py", "ANSIBLE_COLLECTIONS_PATH"),
    "cd tosca": ("tests/integration/tosca/test_opera.py", "tosca"),
    "../.venv-opera/bin/python ../tests/integration/tosca/parse_template.py service.yaml inputs/local.yaml":
        ("tests/integration/tosca/test_opera.py", "parse_template.py"),
    "opera validate -i inputs/local.yaml service.yaml": ("tests/integration/tosca/test_opera.py", '"validate"'),
    "opera deploy -i inputs/local.yaml service.yaml": ("tests/integration/tosca/test_opera.py", '"deploy"'),
    "opera outputs": ("tests/integration/tosca/test_opera.py", '"outputs"'),
    "opera undeploy": ("tests/integration/tosca/test_opera.py", '"undeploy"'),
    "make csar": ("tests/integration/tosca/test_opera.py", '"package"'),
    # docs/performance.md: the whole benchmark takes half an hour alone on the machine; its smoke form runs the same
    # script in the suite
    "benchmarks/containers": ("tests/integration/containers/test_benchmark_containers.py", '"containers"'),
    "benchmarks/containers --smoke": ("tests/integration/containers/test_benchmark_containers.py", '"--smoke"'),
    ".venv/bin/python benchmarks/containers.py --markdown benchmarks/results/containers.json":
        ("tests/integration/perf/test_benchmarks_smoke.py", '"--markdown"'),
    # docs/performance.md: the GPU benchmark needs a GPU node; its CPU smoke form runs the same script in the suite
    "python3 benchmarks/gpu/run.py --out out/gpu": ("tests/integration/perf/test_benchmarks_smoke.py", '"gpu"'),
    ".venv/bin/python benchmarks/gpu/run.py --smoke --no-compile --out out/gpu-smoke":
        ("tests/integration/perf/test_benchmarks_smoke.py", '"--no-compile"'),
    ".venv/bin/python benchmarks/gpu/cpu_arms.py --smoke --out out/cpu-arms":
        ("tests/integration/perf/test_benchmarks_smoke.py", '"cpu_arms.py"'),
    ".venv/bin/python benchmarks/gpu/run.py --markdown benchmarks/results/gpu-h100.json "
    "benchmarks/results/gpu-h200.json": ("tests/integration/perf/test_benchmarks_smoke.py", '"gpu-h200.json"'),
}
WHERE.update({"ansible-doc sodalite.modak.%s" % name: "checkout" for name in (
    "optimise", "batch_job", "container_recipe", "container_build_plan", "async_wait", "perf_model", "autotune",
    "output_file", "created_files")})


def commands(path):
    """(block language, command) of every fenced block of a document; comments and continuations joined."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as handle:
        text = handle.read()
    found = []
    for match in FENCE.finditer(text):
        language, body = match.group(1).strip(), match.group(2).replace("\\\n", " ")
        if language != "sh":
            found.append((language, None))
            continue
        for line in body.splitlines():
            line = re.sub(r"\s+# .*$", "", line).strip()
            if line and not line.startswith("#"):
                found.append(("sh", line))
    return found


def all_commands():
    return [(doc, command) for doc in DOCS for language, command in commands(doc) if language == "sh"]


def test_every_fenced_block_says_what_it_is():
    unmarked = ["%s: a ``` block without a language" % doc for doc in DOCS for language, _command in commands(doc)
                if not language]
    assert unmarked == []


def test_every_documented_command_is_run_somewhere():
    known = set(" ".join(command.split()) for command in WHERE)
    missing = ["%s: %s" % (doc, command) for doc, command in all_commands() if " ".join(command.split()) not in known]
    assert missing == [], "commands no test runs (add them to WHERE):\n" + "\n".join(missing)
    for command, where in WHERE.items():
        if isinstance(where, tuple):
            with open(os.path.join(ROOT, where[0]), encoding="utf-8") as handle:
                assert where[1] in handle.read(), (command, where)


def _copy_tree(dest):
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        source = os.path.join(ROOT, rel)
        if not os.path.lexists(source) or (os.path.isdir(source) and not os.path.islink(source)):
            continue
        os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
        if os.path.islink(source):
            os.symlink(os.readlink(source), os.path.join(dest, rel))
        else:
            shutil.copy2(source, os.path.join(dest, rel))
    os.symlink(os.path.join(ROOT, ".venv"), os.path.join(dest, ".venv"))
    helpers.collection_link(dest)     # what `make` makes beside .venv


def _git(cwd, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org"] + list(args), cwd=str(cwd),
                   check=True, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A copy of the checkout (a git repository: the docs' <repository>, its HEAD their <commit>), a home, a
    project directory."""
    base = tmp_path_factory.mktemp("docs")
    checkout = base / "checkout"
    _copy_tree(str(checkout))
    _git(checkout, "init", "-q")
    _git(checkout, "add", "-A")
    _git(checkout, "commit", "-qm", "docs")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=str(checkout), capture_output=True, text=True,
                            check=True).stdout.strip()
    (checkout / "dsl").mkdir()
    shutil.copy(os.path.join(ROOT, "examples", "pytorch-cpu-slurm.yaml"), checkout / "dsl" / "train.yaml")
    home = base / "home"
    home.mkdir()
    project = base / "project"
    project.mkdir()
    return {"checkout": checkout, "home": home, "project": project, "base": base, "commit": commit}


def _env(world, collections=False):
    env = dict(os.environ, HOME=str(world["home"]), ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="False",
               ANSIBLE_INVENTORY_UNPARSED_WARNING="False", LC_ALL="C.UTF-8",
               PATH=os.path.join(str(world["base"]), "user", "bin") + os.pathsep + BIN + os.pathsep
               + os.environ.get("PATH", ""))
    for name in ("ANSIBLE_CONFIG", "VIRTUAL_ENV", "PYTHONPATH", "ANSIBLE_COLLECTIONS_PATH"):
        env.pop(name, None)
    return env


def run(world, command, cwd):
    command = command.replace(REPOSITORY, "file://%s" % world["checkout"]).replace(COMMIT, world["commit"])
    done = subprocess.run(["bash", "-c", command], cwd=str(cwd), env=dict(_env(world), PWD=str(cwd)),
                          capture_output=True, text=True, check=False, timeout=1500)
    assert done.returncode == 0, "%s\n%s\n%s" % (command, done.stdout[-3000:], done.stderr[-3000:])
    return done


def _user_python(world):
    """python3 and pip on the PATH: a virtual environment that sees the project's packages (pip installs nothing
    already there, and never into the shared one)."""
    user = world["base"] / "user"
    if not user.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(user)], check=True)
        mine = next(iter(glob.glob(str(user / "lib" / "python*" / "site-packages"))))
        with open(os.path.join(mine, "project.pth"), "w", encoding="utf-8") as handle:
            handle.write(sysconfig.get_paths()["purelib"] + "\n")
        with open(user / "bin" / "pip", "w", encoding="utf-8") as handle:
            handle.write("#!%s\nimport sys\nfrom pip._internal.cli.main import main\nsys.exit(main())\n"
                         % (user / "bin" / "python3"))
        os.chmod(user / "bin" / "pip", 0o755)


CHECKOUT = [c for c, w in WHERE.items() if w == "checkout"]
INSTALLED = [c for c, w in WHERE.items() if w == "installed"]


@pytest.mark.usefixtures("torch_installed")     # what the documented pip install does, in ansible-playbook's Python
def test_the_checkout_commands_run_as_written(world):
    _user_python(world)
    for command in CHECKOUT:
        run(world, command, world["checkout"])
    assert (world["checkout"] / "out" / "mnist-train.sbatch").is_file()
    assert (world["checkout"] / "jobs" / "mnist-train.sbatch").is_file()
    assert (world["checkout"] / "recipes" / "Dockerfile").is_file()


def test_the_install_commands_run_as_written_in_a_project(world):
    _user_python(world)
    commands_here = [c for c in INSTALLED if c.startswith("ansible-galaxy collection build")]
    for command in commands_here:
        run(world, command, world["checkout"])
    for tarball in glob.glob(str(world["checkout"] / "sodalite-modak-*.tar.gz")):
        shutil.copy(tarball, world["project"])
    for command in INSTALLED:
        if command not in commands_here:
            run(world, command, world["project"])
    assert (world["project"] / "out" / "mnist-train.sbatch").is_file()
    assert (world["project"] / "examples" / "pytorch-cpu-slurm.yaml").is_file()
