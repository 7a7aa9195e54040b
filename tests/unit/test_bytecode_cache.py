"""The collection's module_utils are compiled once per host when Ansible ships them in a zip.

Each test builds a zip laid out like Ansible's module payload (the real bytecode.py and a small module of the
collection) and imports from it in a fresh interpreter, counting what zipimport compiles."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import zipfile

from helpers import ROOT

PACKAGE = "ansible_collections/sodalite/modak/plugins/module_utils"
PROBE = r"""
import builtins, json, sys, zipimport
compiled = []
original, original_compile = zipimport._compile_source, builtins.compile
def counting(pathname, source):
    compiled.append(pathname.rsplit("/", 1)[-1])
    return original(pathname, source)
def counting_compile(source, filename, *args, **kwargs):
    compiled.append(str(filename).rsplit("/", 1)[-1])
    return original_compile(source, filename, *args, **kwargs)
zipimport._compile_source, builtins.compile = counting, counting_compile
sys.path.insert(0, sys.argv[1])
from ansible_collections.sodalite.modak.plugins.module_utils import bytecode
from ansible_collections.sodalite.modak.plugins.module_utils import sample
print(json.dumps({"installed": bytecode.INSTALLED, "answer": sample.ANSWER, "file": sample.__file__,
                  "compiled": sorted(set(compiled))}))
"""


def payload(tmp_path, answer):
    path = tmp_path / ("payload-%s.zip" % answer)
    with zipfile.ZipFile(str(path), "w") as archive:
        for package in ("ansible_collections", "ansible_collections/sodalite", "ansible_collections/sodalite/modak",
                        "ansible_collections/sodalite/modak/plugins", PACKAGE):
            archive.writestr(package + "/__init__.py", "")
        with open(os.path.join(ROOT, "plugins", "module_utils", "bytecode.py"), encoding="utf-8") as handle:
            archive.writestr(PACKAGE + "/bytecode.py", handle.read())
        archive.writestr(PACKAGE + "/sample.py", "ANSWER = %d\n" % answer)
    return str(path)


def run(zip_path, cache_home, **env):
    env = dict(os.environ, XDG_CACHE_HOME=str(cache_home), **env)
    done = subprocess.run([sys.executable, "-c", PROBE, zip_path], env=env, capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


def test_the_second_import_from_a_zip_compiles_nothing_of_the_collection(tmp_path):
    zipped = payload(tmp_path, 42)
    first = run(zipped, tmp_path / "cache")
    assert first["installed"] and first["answer"] == 42 and first["compiled"].count("sample.py") == 1
    assert first["file"] == zipped + "/" + PACKAGE + "/sample.py"
    assert len(os.listdir(str(tmp_path / "cache" / "modak" / "bytecode"))) == 1
    second = run(zipped, tmp_path / "cache")
    assert second["answer"] == 42 and "sample.py" not in second["compiled"]


def test_a_changed_source_is_never_served_stale_bytecode(tmp_path):
    run(payload(tmp_path, 1), tmp_path / "cache")
    assert run(payload(tmp_path, 2), tmp_path / "cache")["answer"] == 2
    assert len(os.listdir(str(tmp_path / "cache" / "modak" / "bytecode"))) == 2


def test_a_damaged_entry_is_compiled_again(tmp_path):
    zipped = payload(tmp_path, 7)
    run(zipped, tmp_path / "cache")
    directory = tmp_path / "cache" / "modak" / "bytecode"
    for name in os.listdir(str(directory)):
        (directory / name).write_bytes(b"\x00not marshal data")
    assert run(zipped, tmp_path / "cache")["answer"] == 7


def test_a_cache_others_can_write_is_not_used(tmp_path):
    directory = tmp_path / "cache" / "modak" / "bytecode"
    directory.mkdir(parents=True)
    os.chmod(str(directory), 0o777)
    result = run(payload(tmp_path, 5), tmp_path / "cache")
    assert not result["installed"] and result["answer"] == 5 and os.listdir(str(directory)) == []
    assert stat.S_IMODE(os.stat(str(directory)).st_mode) == 0o777


def test_outside_a_zip_nothing_is_installed():
    from ansible_collections.sodalite.modak.plugins.module_utils import bytecode
    assert bytecode.INSTALLED is False


def test_the_cache_can_be_turned_off(tmp_path):
    result = run(payload(tmp_path, 3), tmp_path / "cache", MODAK_BYTECODE_CACHE="off")
    assert not result["installed"] and result["answer"] == 3 and not (tmp_path / "cache").exists()


def test_a_cache_below_a_directory_of_another_user_is_not_used(tmp_path):
    """Someone who owns a directory above the cache could swap the cache for their own between check and use."""
    other = tmp_path / "theirs"
    other.mkdir()
    os.chown(str(other), 65534, 65534)
    result = run(payload(tmp_path, 8), other)
    assert not result["installed"] and result["answer"] == 8


def test_a_cache_below_a_writable_directory_is_used_only_when_that_directory_is_sticky(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(str(shared), 0o777)
    assert not run(payload(tmp_path, 9), shared / "me")["installed"]
    os.chmod(str(shared), 0o1777)
    assert run(payload(tmp_path, 9), shared / "me2")["installed"]


def test_an_entry_others_may_write_is_compiled_again_not_loaded(tmp_path):
    zipped = payload(tmp_path, 11)
    run(zipped, tmp_path / "cache")
    directory = tmp_path / "cache" / "modak" / "bytecode"
    planted = payload(tmp_path, 12)
    run(planted, tmp_path / "planted")          # bytecode of ANSWER = 12 ...
    (name,) = os.listdir(str(directory))
    (other,) = os.listdir(str(tmp_path / "planted" / "modak" / "bytecode"))
    os.replace(str(tmp_path / "planted" / "modak" / "bytecode" / other), str(directory / name))
    os.chmod(str(directory / name), 0o666)       # ... put where the entry of ANSWER = 11 is, writable by all
    result = run(zipped, tmp_path / "cache")
    assert result["answer"] == 11 and result["compiled"].count("sample.py") == 1


def test_nothing_is_created_in_a_home_that_is_not_ours(tmp_path, monkeypatch):
    """root running with another user's HOME (become without -H) leaves no root-owned ~/.cache there: the
    directories are created only below a directory of this user that passes the trust check."""
    from ansible_collections.sodalite.modak.plugins.module_utils import bytecode
    home = tmp_path / "alice"
    home.mkdir()
    os.chown(str(home), 65534, 65534)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("MODAK_BYTECODE_CACHE", raising=False)
    assert bytecode.cache_dir() is None
    assert os.listdir(str(home)) == []
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    monkeypatch.setenv("HOME", str(mine))
    assert bytecode.cache_dir() == str(mine / ".cache" / "modak" / "bytecode")
