"""The pins the docs show resolve in a plain clone of this repository, and the version is one everywhere.

modak has no public address of its own: README.md and docs/ name its repository ``<repository>`` and the pin
``<commit>``, the commit the user tested (the repository keeps no release tags). Every pin form they show (pip's
``git+URL@REV``, ansible-galaxy's ``git+URL,REV``, pre-commit's ``repo:``/``rev:``) is resolved here in a
``file://`` clone of this checkout's HEAD: ``<repository>`` is that clone and ``<commit>`` its HEAD; any other
rev must be a commit of the clone. At that commit the file each tool reads must be there (pyproject.toml,
galaxy.yml, .pre-commit-hooks.yaml with the hooks the configuration names), carrying one version.
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
import tomllib

import pytest
import yaml
from helpers import ROOT
from packaging.version import Version

REPOSITORY = "<repository>"
COMMIT = "<commit>"
PAGES = ["README.md", "pyproject.toml"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(
    os.path.join(ROOT, "docs", "*.md")))
# what each installer reads at the pinned commit
TOOL_FILE = {"pip": "pyproject.toml", "ansible-galaxy": "galaxy.yml", "pre-commit": ".pre-commit-hooks.yaml"}
NOT_IN_A_URL = r"[^\s\"'`,@<>]+|<repository>"
PIN = {"pip": re.compile(r"git\+(%s)@([^\s\"'`]+)" % NOT_IN_A_URL),
       "ansible-galaxy": re.compile(r"git\+(%s),([^\s\"'`]+)" % NOT_IN_A_URL)}
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```", re.S | re.M)
# the version as the docs write it: what `modak --version` prints, the tarball's name (a pin names a commit)
VERSION_MENTIONS = re.compile(r"`modak (\d[^\s`]*)`|sodalite-modak-(\d[^\s`]*?)\.tar\.gz")


def _read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as handle:
        return handle.read()


def _pre_commit_pins(page, text):
    """(repo, rev, hook ids) of every repository a `.pre-commit-config.yaml` block of the page names, and of every
    `rev: X` its prose shows (the repository then is the placeholder)."""
    found = []
    for language, body in FENCE.findall(text):
        if language.strip() == "yaml" and re.search(r"^repos:", body, re.M):
            for repo in yaml.safe_load(body)["repos"]:
                found.append((page, "pre-commit", repo["repo"], str(repo["rev"]),
                              tuple(hook["id"] for hook in repo["hooks"])))
    prose = FENCE.sub("", text)
    found += [(page, "pre-commit", REPOSITORY, rev, ()) for rev in re.findall(r"`rev: ([^`\s]+)`", prose)]
    return found


def documented_pins():
    """(page, tool, repository, rev, pre-commit hook ids) of every pin README.md, docs/ and pyproject.toml show."""
    pins = []
    for page in PAGES:
        text = _read(page)
        for tool, pattern in PIN.items():
            pins += [(page, tool, url, rev, ()) for url, rev in pattern.findall(text)]
        pins += _pre_commit_pins(page, text)
    return pins


PINS = documented_pins()


def _git(*argv, cwd=ROOT):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git"] + list(argv), cwd=str(cwd), env=env, capture_output=True, text=True, check=False,
                          timeout=120)


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """A plain clone of this checkout's HEAD over file://, as a user's clone of the repository has it (no tags
    made elsewhere, no working-tree files)."""
    if _git("rev-parse", "--is-inside-work-tree").returncode != 0:
        pytest.skip("not a git checkout")
    dest = tmp_path_factory.mktemp("pins") / "modak"
    done = _git("clone", "-q", "--no-local", "file://%s" % ROOT, str(dest))
    assert done.returncode == 0, done.stderr
    return dest


def resolve(clone, url, rev):
    """The commit a documented pin reaches in the clone, or None: the URL must answer and the rev be a commit."""
    if url not in (REPOSITORY, "file://%s" % clone):        # another project's address: never fetched from here
        return None
    if url not in (REPOSITORY, "file://%s" % clone):        # another project's address: never fetched from here
        return None
    url = url.replace(REPOSITORY, "file://%s" % clone)
    if _git("ls-remote", "-q", url, "HEAD").returncode != 0:
        return None
    if rev == COMMIT:
        rev = _git("rev-parse", "HEAD", cwd=clone).stdout.strip()
    done = _git("rev-parse", "--verify", "--quiet", "%s^{commit}" % rev, cwd=clone)
    return done.stdout.strip() if done.returncode == 0 else None


def _galaxy_version(text=None):
    return str(yaml.safe_load(text if text is not None else _read("galaxy.yml"))["version"])


def test_the_docs_show_each_pin_form():
    assert sorted(set(tool for _page, tool, _url, _rev, _hooks in PINS)) == sorted(TOOL_FILE)


def test_the_docs_name_one_repository_the_placeholder_galaxy_yml_has_too():
    assert [(page, url) for page, _tool, url, _rev, _hooks in PINS if url != REPOSITORY] == []
    assert yaml.safe_load(_read("galaxy.yml"))["repository"] == REPOSITORY
    for path in PAGES + ["galaxy.yml"]:
        assert "sodalite-eu/modak" not in _read(path).lower(), path


def test_the_docs_pin_a_commit_that_a_clone_has():
    """A pin by tag or branch names what a plain clone lacks (the tags made once were never in the repository)."""
    assert [(page, rev) for page, _tool, _url, rev, _hooks in PINS if rev != COMMIT
            and not re.fullmatch(r"[0-9a-f]{40}", rev)] == []


@pytest.mark.parametrize("page,tool,url,rev,hooks", PINS,
                         ids=["%s:%s:%s" % (pin[0], pin[1], pin[3]) for pin in PINS])
def test_every_documented_pin_resolves_in_a_clone(clone, page, tool, url, rev, hooks):
    commit = resolve(clone, url, rev)
    assert commit, "%s: %s pin %s@%s does not resolve in a clone of the repository" % (page, tool, url, rev)
    shown = _git("show", "%s:%s" % (commit, TOOL_FILE[tool]), cwd=clone)
    assert shown.returncode == 0, "%s: %s at %s" % (page, TOOL_FILE[tool], commit)
    if tool == "pre-commit":
        offered = set(hook["id"] for hook in yaml.safe_load(shown.stdout))
        assert set(hooks) <= offered, set(hooks) - offered
    galaxy = _galaxy_version(_git("show", "%s:galaxy.yml" % commit, cwd=clone).stdout)
    package = tomllib.loads(_git("show", "%s:pyproject.toml" % commit, cwd=clone).stdout)["project"]["version"]
    assert str(Version(galaxy)) == package, (commit, galaxy, package)


def test_a_tag_the_repository_never_had_does_not_resolve(clone):
    assert resolve(clone, REPOSITORY, "v0.2.0-dev0") is None
    assert resolve(clone, "https://github.com/SODALITE-EU/modak", COMMIT) is None
    assert resolve(clone, REPOSITORY, COMMIT)


def test_galaxy_yml_the_python_package_and_the_docs_carry_one_version():
    galaxy = _galaxy_version()
    assert tomllib.loads(_read("pyproject.toml"))["project"]["version"] == str(Version(galaxy))
    mentions = [(page, next(filter(None, match))) for page in PAGES
                for match in VERSION_MENTIONS.findall(_read(page))]
    assert mentions, "the docs say which version `modak --version` prints"
    assert [(page, version) for page, version in mentions if version != galaxy] == []
