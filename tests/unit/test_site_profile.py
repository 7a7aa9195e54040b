"""Site profiles: one file of a site's defaults for the DSL's site fields and its fabric presets, laid under a DSL
once in step one (dsl.py: load -> site_merge -> compat -> dsl_check -> dsl_request). The DSL wins field by field;
a problem in a value from the profile names the profile and its field; a preset's variables reach the script as
the application's environment does."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess

import pytest
from helpers import ROOT

from ansible_collections.sodalite.modak.plugins.module_utils import cli, dsl, dsl_check, pipeline, site_profile
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid, SiteInvalid
from ansible_collections.sodalite.modak.plugins.module_utils.tasks import container_recipe, optimise as optimise_task

SITES = os.path.join(ROOT, "examples", "sites")
SHELLCHECK = shutil.which("shellcheck") or os.path.join(ROOT, ".venv", "bin", "shellcheck")
PROFILE = {
    "target": {"job_scheduler_type": "slurm", "modules": ["site/1", "cray-mpich"], "image_dir": "/site/images",
               "mpi_type": "pmix"},
    "job_options": {"account": "proj1", "partition": "gpu", "qos": "normal", "wall_time_limit": "02:00:00"},
    "application": {"launcher": "srun"},
    "fabric": {
        "slingshot": {"environment": {"FI_PROVIDER": "cxi", "NCCL_CROSS_NIC": 1, "NCCL_NET_GDR_LEVEL": "PHB"},
                      "environment_expanded": {"NCCL_SOCKET_IFNAME": "${SITE_HSN}"}},
        "ib": {"environment": {"UCX_TLS": "rc,sm"}},
    },
}


def site(**changes):
    return site_profile.from_data(dict(PROFILE, **changes), "/etc/modak/site.yaml")


def job(**sections):
    doc = {"job": {"application": {"executable": "a.out"}}}
    for name, value in sections.items():
        doc["job"][name] = dict(doc["job"].get(name, {}), **value)
    return doc


def paths(caught):
    return [p.path for p in caught.value.problems]


# -- merge precedence: the profile first, then the DSL field by field ------------------------------------------------

def test_the_profile_fills_what_the_dsl_leaves_out():
    request = dsl.parse(job(), site())
    assert (request.target.scheduler, request.target.modules, request.target.image_dir, request.target.mpi_type) == \
        ("slurm", ("site/1", "cray-mpich"), "/site/images", "pmix")
    assert (request.options.account, request.options.queue, request.options.qos, request.options.walltime_s) == \
        ("proj1", "gpu", "normal", 7200)
    assert request.app.launcher == "srun"


def test_the_dsl_wins_field_by_field_and_a_list_is_replaced_whole():
    doc = job(target={"modules": ["mine"]}, job_options={"account": "other", "qos": "debug"},
              application={"launcher": "mpirun"})
    request = dsl.parse(doc, site())
    assert request.target.modules == ("mine",)                      # replaced, not appended to the site's
    assert request.target.image_dir == "/site/images"               # the section merged key by key
    assert (request.options.account, request.options.qos, request.options.queue) == ("other", "debug", "gpu")
    assert request.app.launcher == "mpirun"
    assert doc["job"]["target"] == {"modules": ["mine"]}             # the caller's document is not changed


def test_mappings_are_merged_deeply():
    merged = dsl.canonical(job(application={"fabric": "slingshot", "environment": {"A": "1"}}), site())[0]
    environment = merged["job"]["application"]["environment"]
    assert environment == {"FI_PROVIDER": "cxi", "NCCL_CROSS_NIC": 1, "NCCL_NET_GDR_LEVEL": "PHB", "A": "1"}
    assert merged["job"]["target"]["job_scheduler_type"] == "slurm"


@pytest.mark.parametrize("section, key, value, read", [
    ("target", "queue_type", "pbspro", lambda r: r.target.scheduler),     # the original's name of the scheduler
    ("job_options", "queue", "debug", lambda r: r.options.queue),         # one partition, three names
    ("target", "partition", "debug", lambda r: r.options.queue),
])
def test_a_setting_the_dsl_gives_under_another_name_takes_the_profiles_away(section, key, value, read):
    assert read(dsl.parse(job(**{section: {key: value}}), site(application={}))) == value


def test_the_old_launcher_field_of_a_training_wins_over_the_profiles_launcher():
    doc = job(application={"app_type": "ai_training"}, optimisation={
        "app_type": "ai_training", "opt_build": {"cpu_type": "x86"},
        "app_type-ai_training": {"config": {"ai_framework": "pytorch", "distributed_training": True,
                                            "distributed_launch": "torchrun"}}})
    assert dsl.parse(doc, site()).app.launcher == "torchrun"


def test_without_a_profile_nothing_changes():
    doc = job(job_options={"account": "a"})
    assert dsl.canonical(doc)[0] == doc and dsl.canonical(doc, None)[1] == []


# -- problems name the profile and its field ----------------------------------------------------------------------

def test_a_problem_in_a_value_from_the_profile_names_the_profile_and_its_field():
    profile = site(job_options={"extra_directives": ["--reservation=r1"]}, application={"launcher": "torchrun"})
    with pytest.raises(DslInvalid) as caught:
        dsl.parse(job(target={"job_scheduler_type": "pbspro"}), profile)
    messages = {p.path: p.message for p in caught.value.problems}
    assert "the site profile /etc/modak/site.yaml, field application.launcher)" in messages["job.application.launcher"]
    assert "field job_options.extra_directives[0])" in messages["job.job_options.extra_directives[0]"]


def test_a_problem_in_the_dsls_own_value_does_not_name_the_profile():
    with pytest.raises(DslInvalid) as caught:
        dsl.parse(job(job_options={"account": "bad account"}), site())
    [problem] = caught.value.problems
    assert problem.path == "job.job_options.account" and "site profile" not in problem.message


def test_a_profile_is_checked_on_its_own_each_problem_at_its_field(tmp_path):
    path = tmp_path / "site.yaml"
    path.write_text("target: {job_scheduler_type: slurmm}\njob_options: {account: 'a b'}\n"
                    "fabric: {x: {envirnment: {}}}\n")
    with pytest.raises(SiteInvalid) as caught:
        site_profile.load_file(str(path))
    assert caught.value.source == str(path)
    found = sorted(p.path for p in caught.value.problems)
    assert found == ["fabric.x.envirnment", "job_options.account", "target.job_scheduler_type"]
    assert "the site profile %s has 3 problem(s)" % path in str(caught.value)
    assert "%s: target.job_scheduler_type: not an accepted value" % path in str(caught.value)


@pytest.mark.parametrize("make, said", [
    (lambda path: path.mkdir(), "must be a regular file"),
    (lambda path: path.write_bytes(b"a" * (2 * 1024 * 1024)), "larger than"),
    (lambda path: path.write_text("target: {a: 1, a: 2}\n"), "more than once"),
    (lambda path: path.write_text("target: [\n"), "not valid YAML"),
])
def test_a_profile_file_is_read_as_strictly_as_a_dsl(tmp_path, make, said):
    path = tmp_path / "site.yaml"
    make(path)
    with pytest.raises(SiteInvalid) as caught:
        site_profile.load_file(str(path))
    assert said in str(caught.value) and str(path) in str(caught.value)


@pytest.mark.parametrize("profile, path", [
    ({"job": {}}, "job"),                                            # a DSL given as a profile
    ({"target": {"queue_type": "slurm"}}, "target.queue_type"),     # canonical names only
    ({"application": {"executable": "x"}}, "application.executable"),   # not a site field
    ({"application": {"fabric": "none"}, "fabric": {"ib": {}}}, "application.fabric"),   # a default of its own
    ([], ""),
])
def test_what_a_profile_may_not_say(profile, path):
    assert path in [p.path for p in site_profile.problems(profile)]


# -- fabric presets -----------------------------------------------------------------------------------------------

def script_of(doc, profile, catalog):
    return pipeline.optimise(doc, catalog, site=profile).script


def test_a_fabric_preset_is_exported_as_the_application_environment_is(catalog, tmp_path):
    doc = job(application={"fabric": "slingshot", "container_runtime": ""})
    script = script_of(doc, site(), catalog)
    body = list(script.body)
    start = body.index("export OMP_NUM_THREADS") + 1
    assert body[start:start + 5] == ["export FI_PROVIDER=cxi", "export NCCL_CROSS_NIC=1",
                                     "export NCCL_NET_GDR_LEVEL=PHB", 'NCCL_SOCKET_IFNAME="${SITE_HSN}"',
                                     "export NCCL_SOCKET_IFNAME"]
    assert script_of(job(application={"container_runtime": "", "environment": {
        "FI_PROVIDER": "cxi", "NCCL_CROSS_NIC": 1, "NCCL_NET_GDR_LEVEL": "PHB"},
        "environment_expanded": {"NCCL_SOCKET_IFNAME": "${SITE_HSN}"}}), site(), catalog).body == script.body
    path = tmp_path / "job.sh"
    path.write_text(script.text)
    subprocess.run(["bash", "-n", str(path)], check=True)
    lint = subprocess.run([SHELLCHECK, "--shell=bash", "--severity=style", str(path)], capture_output=True,
                          text=True, check=False)
    assert lint.returncode == 0, lint.stdout


def test_the_profile_may_choose_the_preset_and_the_dsl_another():
    profile = site(application={"fabric": "slingshot"})
    assert dict(dsl.parse(job(), profile).app.environment)["FI_PROVIDER"] == "cxi"
    assert dict(dsl.parse(job(application={"fabric": "ib"}), profile).app.environment) == {"UCX_TLS": "rc,sm"}


def test_the_dsls_own_variable_wins_over_the_presets():
    doc = job(application={"fabric": "slingshot", "environment": {"FI_PROVIDER": "verbs"},
                           "environment_expanded": {"NCCL_CROSS_NIC": "${MINE}"}})
    environment = dict(dsl.parse(doc, site()).app.environment)
    assert environment["FI_PROVIDER"] == "verbs"                 # the DSL's literal over the preset's
    assert environment["NCCL_CROSS_NIC"] == '"${MINE}"'          # the DSL's expanded form over the preset's literal
    assert environment["NCCL_NET_GDR_LEVEL"] == "PHB"


def test_an_unknown_preset_is_named_at_its_path_with_the_known_ones():
    with pytest.raises(DslInvalid) as caught:
        dsl.parse(job(application={"fabric": "slingshoot"}), site())
    [problem] = caught.value.problems
    assert (problem.path, problem.value, problem.hint) == ("job.application.fabric", "slingshoot",
                                                           "known presets: ib, slingshot")
    with pytest.raises(DslInvalid) as caught:
        dsl.parse(job(application={"fabric": "slingshot"}))
    assert paths(caught) == ["job.application.fabric"] and "site profile" in caught.value.problems[0].hint


def test_a_problem_in_the_dsls_own_variable_beside_a_preset_does_not_name_the_profile():
    with pytest.raises(DslInvalid) as caught:
        dsl.parse(job(application={"fabric": "slingshot", "environment": {"UID": "1"}}), site())
    [problem] = caught.value.problems
    assert problem.path == "job.application.environment.UID" and "site profile" not in problem.message


def test_a_fabric_name_the_schema_refuses_is_one_problem():
    with pytest.raises(DslInvalid) as caught:
        dsl.parse(job(application={"fabric": "no such"}), site())
    assert paths(caught) == ["job.application.fabric"]


@pytest.mark.parametrize("field, name", [("environment", "RANK"), ("environment", "MASTER_ADDR"),
                                         ("environment_expanded", "LOCAL_RANK"), ("environment", "WORLD_SIZE")])
def test_a_preset_may_not_set_what_the_launch_sets_for_each_rank(field, name):
    presets = {"bad": {field: {name: "${X}" if field == "environment_expanded" else "0"}}}
    with pytest.raises(SiteInvalid) as caught:
        site(fabric=presets)
    assert [p.path for p in caught.value.problems] == ["fabric.bad.%s.%s" % (field, name)]


@pytest.mark.parametrize("preset, path", [
    ({"environment": {"UID": "1"}}, "fabric.p.environment.UID"),                     # bash's own
    ({"environment_expanded": {"A": "two words"}}, "fabric.p.environment_expanded.A"),
    ({"environment": {"A": "1"}, "environment_expanded": {"A": "$B"}}, "fabric.p.environment_expanded.A"),
    ({"environment": {"A": "line\nbreak"}}, "fabric.p.environment.A"),
])
def test_a_presets_variables_are_checked_as_the_applications_are(preset, path):
    assert [p.path for p in site_profile.problems({"fabric": {"p": preset}})] == [path]


# -- the examples ---------------------------------------------------------------------------------------------------

def test_every_example_site_profile_and_the_dsls_beside_it_are_valid(catalog):
    names = sorted(os.listdir(SITES))
    profiles = [n for n in names if "job" not in dsl.load_file(os.path.join(SITES, n))]
    assert profiles
    for name in names:
        if name in profiles:
            site_profile.load_file(os.path.join(SITES, name))
            continue
        owner = [p for p in profiles if name.startswith(p[:-len(".yaml")] + "-")]
        assert owner, "%s: an example DSL is named after the site profile it needs" % name
        profile = site_profile.load_file(os.path.join(SITES, owner[0]))
        assert pipeline.optimise(dsl.load_file(os.path.join(SITES, name)), catalog, site=profile).script.text


# -- where the profile comes from: the command line, its environment variable, the tasks' options ------------------

def run_cli(*argv, env=None, monkeypatch=None):
    if monkeypatch is not None:
        if env is None:
            monkeypatch.delenv(cli.SITE_ENV, raising=False)
        else:
            monkeypatch.setenv(cli.SITE_ENV, env)
    out, err = io.StringIO(), io.StringIO()
    return cli.main(list(argv), stdout=out, stderr=err), out.getvalue(), err.getvalue()


@pytest.fixture
def site_file(tmp_path):
    path = tmp_path / "site.yaml"
    path.write_text(json.dumps(PROFILE))
    return str(path)


@pytest.fixture
def dsl_file(tmp_path):
    path = tmp_path / "train.json"
    path.write_text(json.dumps(job(application={"fabric": "ib"})))
    return str(path)


def test_cli_site_option_before_or_after_the_command(site_file, dsl_file, monkeypatch):
    assert run_cli("validate", dsl_file, monkeypatch=monkeypatch)[0] == cli.INVALID     # no profile: unknown preset
    for argv in (["--site", site_file, "validate", dsl_file], ["validate", "--site", site_file, dsl_file]):
        status, out, _err = run_cli(*argv, monkeypatch=monkeypatch)
        assert (status, out) == (cli.OK, "%s: valid\n" % dsl_file)


def test_cli_reads_modak_site_when_no_option_names_one(site_file, dsl_file, tmp_path, monkeypatch):
    status, _out, _err = run_cli("optimise", "-o", str(tmp_path / "out"), dsl_file, env=site_file,
                                 monkeypatch=monkeypatch)
    assert status == cli.OK
    assert "export UCX_TLS=rc,sm\n" in (tmp_path / "out" / "job.sbatch").read_text()
    other = tmp_path / "other.yaml"
    other.write_text("fabric: {}\n")
    assert run_cli("--site", str(other), "validate", dsl_file, env=site_file, monkeypatch=monkeypatch)[0] == \
        cli.INVALID                                                 # the option wins over the variable


def test_cli_show_prints_the_merged_canonical_document(site_file, dsl_file, monkeypatch):
    status, out, _err = run_cli("--site", site_file, "validate", "--show", "--format", "json", dsl_file,
                                monkeypatch=monkeypatch)
    document = json.loads(out)["files"][0]["document"]
    assert status == cli.OK
    assert document["job"]["job_options"]["account"] == "proj1"
    assert document["job"]["application"]["environment"] == {"UCX_TLS": "rc,sm"}
    text = run_cli("--site", site_file, "validate", "--show", dsl_file, monkeypatch=monkeypatch)[1]
    assert "      UCX_TLS: rc,sm\n" in text and "    account: proj1\n" in text


def test_cli_a_bad_profile_is_a_usage_error_listing_its_problems(dsl_file, tmp_path, monkeypatch):
    bad = tmp_path / "bad.yaml"
    bad.write_text("job_options: {account: 'a b', qos: 'c d'}\n")
    status, out, err = run_cli("validate", "--format", "json", "--site", str(bad), dsl_file, monkeypatch=monkeypatch)
    assert status == cli.USAGE
    assert [p["path"] for p in json.loads(out)["site_problems"]] == ["job_options.account", "job_options.qos"]
    assert err.splitlines()[1:] == ["modak validate:   - %s: job_options.%s: has characters or a form that is not "
                                    "accepted (got '%s'); hint: %s" % (bad, key, value, hint) for key, value, hint in (
                                        ("account", "a b", "Account (project) to charge; 'project@partition' as some "
                                                           "sites write it."), ("qos", "c d", "Quality of service."))]
    status, _out, err = run_cli("validate", "--site", str(tmp_path / "none.yaml"), dsl_file, monkeypatch=monkeypatch)
    assert status == cli.USAGE and "cannot read the site profile" in err


def test_cli_with_a_profile_still_validates_each_document_once(site_file, dsl_file, tmp_path, monkeypatch):
    calls = []
    real = dsl_check.problems
    monkeypatch.setattr(dsl_check, "problems", lambda doc: calls.append(doc) or real(doc))
    assert run_cli("--site", site_file, "optimise", "-o", str(tmp_path / "o"), dsl_file, monkeypatch=monkeypatch)[0] \
        == cli.OK
    assert len(calls) == 1


def test_the_tasks_take_a_site_file_or_a_site_profile(catalog):
    read = []

    def load(path):
        read.append(path)
        return site()
    assert "site" in optimise_task.ARGUMENT_SPEC and "site_profile" in container_recipe.ARGUMENT_SPEC
    assert ("site", "site_profile") in optimise_task.MUTUALLY_EXCLUSIVE
    assert site_profile.of_task({"site": "site.yaml"}, load).doc == PROFILE and read == ["site.yaml"]
    inline = site_profile.of_task({"site": None, "site_profile": PROFILE})
    assert inline.source == "site_profile" and inline.doc == PROFILE
    assert site_profile.of_task({"site": None, "site_profile": None}) is None
    with pytest.raises(SiteInvalid) as caught:
        site_profile.of_task({"site_profile": {"job_options": {"qos": "a b"}}})
    assert str(caught.value).startswith("the site profile site_profile has 1 problem(s)")


def test_the_recipe_task_reads_the_dsl_over_the_profile():
    params = {"recipe": None, "dsl": job(application={"fabric": "ib"}, optimisation={
        "app_type": "ai_training", "opt_build": {"cpu_type": "x86"},
        "app_type-ai_training": {"config": {"ai_framework": "pytorch"}}}), "dsl_file": None,
        "site": None, "site_profile": PROFILE}
    assert container_recipe.spec_of(params).framework == "pytorch"
    with pytest.raises(DslInvalid):
        container_recipe.spec_of(dict(params, site_profile=None))    # the preset is the profile's
