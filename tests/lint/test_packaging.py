"""Packaging metadata the ecosystem reads: changelog fragments (antsibull-changelog), galaxy.yml, dependencies."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib

import yaml
from helpers import ROOT
from packaging.version import Version

BIN = os.path.dirname(sys.executable)


def _run(*argv):
    return subprocess.run([os.path.join(BIN, argv[0])] + list(argv[1:]), cwd=ROOT, capture_output=True, text=True,
                          check=False, timeout=300)


def test_changelog_and_fragments_pass_antsibull_changelog_lint():
    done = _run("antsibull-changelog", "lint")
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout + done.stderr
    done = _run("antsibull-changelog", "lint-changelog-yaml", "changelogs/changelog.yaml")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_fragment_with_an_unknown_section_fails_the_lint(tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text("---\nnew_stuff:\n  - something\n")
    done = _run("antsibull-changelog", "lint", str(bad))
    assert done.returncode != 0 and "invalid section" in done.stdout


def test_galaxy_metadata_is_real():
    """No address modak does not have: the repository is the docs' placeholder (tests/unit/test_version_pins.py)
    until the collection is published, and no template's example address is left."""
    with open(os.path.join(ROOT, "galaxy.yml"), encoding="utf-8") as handle:
        galaxy = yaml.safe_load(handle)
    assert galaxy["repository"] == "<repository>"
    for key in ("documentation", "issues", "homepage"):
        assert key not in galaxy or "example" not in galaxy[key], key
    assert "hpc" in galaxy["tags"] and len(galaxy["tags"]) <= 20
    for leftover in (".hypothesis", "tosca/.opera", "*.sqlite", "out", "tests/output"):
        assert leftover in galaxy["build_ignore"]


def test_requirements_list_what_modules_need_and_the_lock_lives_apart():
    with open(os.path.join(ROOT, "requirements.txt"), encoding="utf-8") as handle:
        names = [re.split(r"[<>=!~ ]", line.strip())[0].lower() for line in handle
                 if line.strip() and not line.startswith("#")]
    assert {"pyyaml", "jsonschema", "requests"} <= set(names)
    assert not {"pytest", "ansible-lint", "ansible-core", "hypothesis"} & set(names)
    with open(os.path.join(ROOT, "requirements-dev.lock"), encoding="utf-8") as handle:
        lock = handle.read()
    assert "ansible-core==" in lock and "antsibull-changelog==" in lock and "pytest==" in lock
    with open(os.path.join(ROOT, "scripts", "bootstrap"), encoding="utf-8") as handle:
        assert "requirements-dev.lock" in handle.read()


def _names(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as handle:
        return [re.split(r"[<>=!~ ;\[]", line.strip())[0].lower() for line in handle
                if line.strip() and not line.startswith(("#", "-r"))]


def test_the_core_needs_no_performance_model_and_the_extra_declares_it():
    core, perf = _names("requirements.txt"), _names("requirements-perf.txt")
    assert not {"numpy", "scipy", "scikit-learn", "matplotlib", "torch"} & set(core)
    assert {"numpy", "scipy", "scikit-learn", "matplotlib"} == set(perf)
    with open(os.path.join(ROOT, "requirements-perf.txt"), encoding="utf-8") as handle:
        assert "-r requirements.txt\n" in handle.read()
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as handle:
        project = tomllib.loads(handle.read())["project"]
    assert sorted(re.split(r"[<>=]", d)[0].lower() for d in project["dependencies"]) == sorted(core)
    assert sorted(re.split(r"[<>=]", d)[0].lower() for d in project["optional-dependencies"]["perf"]) == sorted(perf)


def test_the_python_package_has_the_collections_version_and_it_says_unreleased():
    with open(os.path.join(ROOT, "galaxy.yml"), encoding="utf-8") as handle:
        galaxy = yaml.safe_load(handle)["version"]
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as handle:
        package = tomllib.loads(handle.read())["project"]["version"]
    assert str(Version(galaxy)) == package
    with open(os.path.join(ROOT, "changelogs", "changelog.yaml"), encoding="utf-8") as handle:
        released = set(str(v) for v in yaml.safe_load(handle)["releases"])
    fragments = [f for f in os.listdir(os.path.join(ROOT, "changelogs", "fragments")) if f.endswith(".yml")]
    if fragments:                         # unreleased changes: the version is a pre-release, not a released one
        assert galaxy not in released and Version(galaxy).is_prerelease, galaxy


def test_ansible_builder_reads_the_collections_dependencies(tmp_path):
    """ansible-builder introspect on the collection: the Python and system requirements it would install."""
    tree = tmp_path / "ansible_collections" / "sodalite"
    tree.mkdir(parents=True)
    os.symlink(ROOT, tree / "modak")
    done = subprocess.run([os.path.join(BIN, "ansible-builder"), "introspect", str(tmp_path)], capture_output=True,
                          text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    found = yaml.safe_load(done.stdout)
    python = [line for line in found["python"] if line.endswith("from collection sodalite.modak")]
    system = [line for line in found["system"] if line.endswith("from collection sodalite.modak")]
    assert [name for name in ("jsonschema", "requests", "archspec") if not any(name in p for p in python)] == []
    # the performance model and the image build tools are the EE's own choice (docs/ee.md)
    assert [p for p in python if any(name in p for name in ("numpy", "scipy", "scikit-learn", "matplotlib"))] == []
    assert any(line.startswith("openssh-client ") for line in system)
    # podman and buildah only in bindep's build profile, which ansible-builder never selects (install-from-bindep
    # runs bindep without a profile)
    tools = [line for line in system if line.startswith(("podman", "buildah"))]
    assert tools and all(line.split("]")[0].split("[")[1].split()[0] == "build" for line in tools), tools


def test_the_sample_execution_environment_adds_the_optional_parts(tmp_path):
    """ansible-builder create on extensions/ee/execution-environment.yml (docs/ee.md): the build context installs the
    performance model's libraries as requirements-perf.txt pins them, and podman and buildah."""
    done = subprocess.run([os.path.join(BIN, "ansible-builder"), "create", "-f",
                           os.path.join(ROOT, "extensions", "ee", "execution-environment.yml"), "-c", str(tmp_path)],
                          capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    python = (tmp_path / "_build" / "requirements.txt").read_text().split()
    with open(os.path.join(ROOT, "requirements-perf.txt"), encoding="utf-8") as handle:
        perf = [line.strip() for line in handle if line.strip() and not line.startswith(("#", "-r"))]
    assert sorted(python) == sorted(perf)
    system = (tmp_path / "_build" / "bindep.txt").read_text()
    assert "podman [platform:rpm]" in system and "buildah [platform:rpm]" in system
    assert "sodalite.modak" in (tmp_path / "_build" / "requirements.yml").read_text()


def test_the_site_settings_example_names_the_optimised_job_roles_variables():
    with open(os.path.join(ROOT, "docs", "scheduler.md"), encoding="utf-8") as handle:
        text = handle.read()
    block = re.search(r"```yaml\n(# inventory/group_vars/login\.yml.*?)```", text, re.S).group(1)
    settings = yaml.safe_load(block)
    with open(os.path.join(ROOT, "roles", "optimised_job", "meta", "argument_specs.yml"), encoding="utf-8") as handle:
        options = yaml.safe_load(handle)["argument_specs"]["main"]["options"]
    assert set(settings) <= set(options), set(settings) - set(options)
    assert {"optimised_job_image_dir", "optimised_job_build_prefix"} <= set(settings)


def test_the_reported_figures_embed_their_plots_and_every_plot_exists():
    """docs/performance.md reports the benchmark figures: every plot of benchmarks/results is shown, and shown
    from a path that exists."""
    with open(os.path.join(ROOT, "docs", "performance.md"), encoding="utf-8") as handle:
        text = handle.read()
    shown = re.findall(r"!\[[^\]]+\]\(([^)]+\.png)\)", text)
    assert [p for p in shown if not os.path.isfile(os.path.join(ROOT, "docs", p))] == []
    plots = sorted(f for f in os.listdir(os.path.join(ROOT, "benchmarks", "results")) if f.endswith(".png"))
    assert sorted(os.path.basename(p) for p in shown) == plots


def test_changelog_rst_is_what_antsibull_changelog_generates(tmp_path):
    """CHANGELOG.rst is antsibull-changelog's rendering of changelogs/changelog.yaml (regenerate it with
    `antsibull-changelog generate` after a release); unreleased changes wait in changelogs/fragments."""
    out = tmp_path / "CHANGELOG.rst"
    done = _run("antsibull-changelog", "generate", "--output", str(out), "--output-format", "rst")
    assert done.returncode == 0, done.stdout + done.stderr
    with open(os.path.join(ROOT, "CHANGELOG.rst"), encoding="utf-8") as handle:
        assert handle.read() == out.read_text()
