"""The EXAMPLES of every module (what `ansible-doc` shows) run as written, as tasks of a playbook: at the root of a
copy of the checkout (where their relative paths point), and in a separate project directory against the
collection installed from its Galaxy tarball, with no ansible.cfg, the project holding what the examples take as
given (the collection's examples/ folder copied in, as README.md says, job.yml, results/bench.sqlite).
An example that needs a cluster or a site's files is named in ELSEWHERE with the test that runs the same task
for real; a new example in neither list fails the test. Each of them, and each that takes a given file or variable,
says what it needs in a comment above it (tests/unit/test_module_examples_doc.py).
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys

import galaxy_build
import pytest
import yaml
import helpers
from helpers import ROOT

BIN = os.path.dirname(sys.executable)
MODULES = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "plugins", "modules")) if f.endswith(".py"))

# example task name -> why it does not run here, and the test that runs such a task for real
ELSEWHERE = {
    "Build, the output going to a log": "a build in /scratch/alice/src: tests/integration/test_async_wait.py",
    "Wait for the build, showing the log's last line every 10 seconds": "tests/integration/test_async_wait.py",
    "Autotune the benchmark workload's DSL with short runs":
        "a playbook in playbooks/ (chdir: playbook_dir/..): tests/integration/perf/test_autotune_playbook.py",
    "Autotune inside the image the job runs in (Charliecloud), three runs of each configuration":
        "a built image and a job directory in /scratch/mnist: tests/integration/containers/test_benchmark_containers.py "
        "(autotune with the run prefix of ch-run in modak's image)",
    "Submit a Slurm job and wait for it": "a cluster's script: tests/integration/slurm/test_batch_job_slurm.py",
    "Show where the output went": "tests/integration/slurm/test_batch_job_slurm.py",
    "Submit to another partition, keep going when the job fails": "tests/integration/slurm/test_batch_job_slurm.py",
    "Submit a PBS script through qsub": "tests/integration/slurm/test_readback.py (Torque wrappers)",
    "Look at a job submitted earlier (fails when it ended badly)": "tests/integration/slurm/test_batch_job_progress.py",
    "Cancel a job": "tests/integration/slurm/test_batch_job_slurm.py",
    "Submit the training once the image build job has ended well":
        "a build job's id: tests/integration/gridengine/test_job_chain.py (after, under Slurm and Grid Engine)",
    "Optimise an inline DSL against a site catalog, without writing anything":
        "a site catalog at /etc/modak/site-images.yaml: tests/integration/test_optimise_module.py",
}


def examples(module):
    with open(os.path.join(ROOT, "plugins", "modules", module + ".py"), encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    text = next(node.value.value for node in tree.body if isinstance(node, ast.Assign)
                and getattr(node.targets[0], "id", None) == "EXAMPLES")
    return yaml.safe_load(text)


def test_every_example_runs_here_or_elsewhere():
    names = [task["name"] for module in MODULES for task in examples(module)]
    assert len(names) == len(set(names)), "example task names must be unique"
    assert [name for name in ELSEWHERE if name not in names] == [], "ELSEWHERE names examples that are gone"


# the inventory's site profile that optimise's example names (its group_vars, as the example's comment writes them)
SITE_VARS = {"target": {"job_scheduler_type": "slurm", "modules": ["cudatoolkit"],
                        "image_dir": "/scratch/shared/modak/images"},
             "job_options": {"account": "m0000", "partition": "gpu"},
             "fabric": {"slingshot": {"environment": {"NCCL_SOCKET_IFNAME": "hsn0,hsn1,hsn2,hsn3",
                                                      "NCCL_CROSS_NIC": "1"}}}}


def _given(dest):
    """What the examples take as given, put into ``dest``: job.yml next to the playbook, and this host's benchmark
    records in results/bench.sqlite."""
    shutil.copy(os.path.join(ROOT, "examples", "pytorch-cpu-slurm.yaml"), dest / "job.yml")
    sys.path.insert(0, os.path.join(ROOT, "collections"))
    from ansible_collections.sodalite.modak.plugins.module_utils.perf import store
    with open(os.path.join(ROOT, "tests", "data", "perf", "records-grid.jsonl"), encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    facts = store.hardware.facts()
    for record in records:        # the records as if this host had run them
        record["hardware"] = dict(facts)
    (dest / "results").mkdir()
    store.append(str(dest / "results" / "bench.sqlite"), records)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """(project directory, environment): a copy of the checkout, with its ansible.cfg."""
    dest = tmp_path_factory.mktemp("examples") / "checkout"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        source = os.path.join(ROOT, rel)
        if not os.path.lexists(source) or (os.path.isdir(source) and not os.path.islink(source)):
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        if os.path.islink(source):
            os.symlink(os.readlink(source), dest / rel)
        else:
            shutil.copy2(source, dest / rel)
    helpers.collection_link(str(dest))     # as `make` makes it
    _given(dest)
    return dest, dict(os.environ, ANSIBLE_CONFIG=str(dest / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                      ANSIBLE_LOCALHOST_WARNING="False", PWD=str(dest))


@pytest.fixture(scope="module")
def project(installed, tmp_path_factory):
    """(project directory, environment): a directory of the user's own, the collection installed from its
    tarball, the collection's examples/ folder copied in; no ansible.cfg."""
    dest = tmp_path_factory.mktemp("examples") / "project"
    shutil.copytree(os.path.join(installed[2], "examples"), dest / "examples")
    _given(dest)
    return dest, galaxy_build.env(dest, installed[1])


@pytest.mark.parametrize("where", ["checkout", "project"])
@pytest.mark.parametrize("module", MODULES)
def test_the_examples_run_as_written(request, where, module):
    """From a checkout, and from an installed tarball in a separate project directory."""
    tasks = [task for task in examples(module) if task["name"] not in ELSEWHERE]
    if not tasks:
        pytest.skip("every example of %s needs a cluster or a site's files (ELSEWHERE)" % module)
    directory, env = request.getfixturevalue(where)
    book = directory / ("examples-%s.yml" % module)
    book.write_text(yaml.safe_dump([{"name": "EXAMPLES of %s" % module, "hosts": "localhost", "connection": "local",
                                     "gather_facts": False, "vars": {"registry_password": "not-used-here",
                                                                     "modak_site": SITE_VARS},
                                     "tasks": tasks}], sort_keys=False))
    done = subprocess.run([os.path.join(BIN, "ansible-playbook"), str(book), "-e",
                           "ansible_python_interpreter=%s" % sys.executable], cwd=str(directory), env=env,
                          capture_output=True, text=True, check=False, timeout=900)
    assert done.returncode == 0 and "failed=0" in done.stdout, done.stdout[-4000:] + done.stderr[-2000:]
    for task in tasks:
        assert "TASK [%s]" % task["name"] in done.stdout
    if where == "project":
        assert not os.path.exists(os.path.join(str(directory), "ansible.cfg"))
