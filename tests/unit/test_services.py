"""The suite's own machinery for running beside other workers: a service shared by a run's workers starts once and
stops after its last user; tests that use a one-at-a-time resource share an xdist group."""

from __future__ import annotations

import pytest
import services


class Factory(object):
    """tmp_path_factory of one xdist worker: its base lies in the run's directory."""

    def __init__(self, run, worker):
        self.base = run / ("popen-" + worker)
        self.base.mkdir(parents=True, exist_ok=True)

    def getbasetemp(self):
        return self.base


def test_a_service_starts_once_for_the_run_and_stops_after_its_last_user(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    calls = []

    def start():
        calls.append("start")
        return {"port": 6817}

    def stop(value):
        calls.append(("stop", value["port"]))

    first, second = Factory(tmp_path, "gw0"), Factory(tmp_path, "gw1")
    with services.shared(first, "slurm", start, stop) as one:
        with services.shared(second, "slurm", start, stop) as two:
            assert one == two == {"port": 6817}
            assert calls == ["start"]
        assert calls == ["start"]           # the first user still runs tests
    assert calls == ["start", ("stop", 6817)]
    with services.shared(second, "slurm", start, stop):
        assert calls == ["start", ("stop", 6817), "start"]    # a later user of the run starts it again


def test_a_failed_start_leaves_no_user_behind(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")

    def broken():
        raise RuntimeError("no controller")

    with pytest.raises(RuntimeError):
        with services.shared(Factory(tmp_path, "gw0"), "slurm", broken, lambda value: None):
            pass
    started = []
    with services.shared(Factory(tmp_path, "gw1"), "slurm", lambda: started.append(1) or 1, lambda value: None):
        assert started == [1]


def test_without_xdist_the_run_directory_is_the_base(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    assert services.run_dir(Factory(tmp_path, "master")) == tmp_path / "popen-master"


def test_podman_settings_are_written_whole_and_only_when_missing(tmp_path):
    conf = tmp_path / "containers" / "containers.conf"
    services.podman_settings(str(conf))
    assert conf.read_text() == services.CONTAINERS_CONF
    conf.write_text(services.CONTAINERS_CONF + "# kept\n")
    services.podman_settings(str(conf))
    assert conf.read_text().endswith("# kept\n")
    assert [p.name for p in conf.parent.iterdir()] == ["containers.conf"]


@pytest.mark.parametrize("fixtures, group", [
    (("quickstart", "slurm"), "modak-demo.ch"), (("ddp_image", "multinode"), "multinode"), (("multinode",), "multinode"),
    (("mpi_images",), "mpi-images"), (("busybox_base", "registry"), "busybox-base"),
    (("slurm", "play", "tmp_path"), None), ((), None)])
def test_tests_that_use_a_one_at_a_time_resource_share_a_group(fixtures, group):
    assert services.group_of(fixtures) == group
