"""The TOSCA types and examples with real tools: tosca-parser, then xOpera 0.7.0 on localhost with a real Slurm."""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import zipfile

import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
TOSCA = os.path.join(ROOT, "tosca")

# every service template at tosca/ root and the inputs it is deployed with
INPUTS = {"service.yaml": "inputs/local.yaml", "service-hpc.yaml": "inputs/hpc.yaml"}
PARSE = os.path.join(HERE, "parse_template.py")


def test_every_service_template_has_inputs():
    templates = sorted(os.path.basename(p) for p in glob.glob(os.path.join(TOSCA, "*.yaml")))
    assert templates == sorted(INPUTS)


def parse(opera, template, inputs):
    return subprocess.run([opera.python, PARSE, template, inputs], cwd=TOSCA, capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.mark.parametrize("template", sorted(INPUTS))
def test_tosca_parser_accepts_template_with_its_inputs(opera, template):
    proc = parse(opera, template, INPUTS[template])
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr


def _local_inputs():
    with open(os.path.join(TOSCA, "inputs", "local.yaml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


BAD_VALUES = [
    ("optimisation app_type", lambda d: d["optimisation"].update(app_type="quantum"),
     'The value "quantum" of property "app_type" is not valid'),
    ("missing ai_framework", lambda d: d["optimisation"]["app_type-ai_training"]["config"].pop("ai_framework"),
     'is missing required field "[\'ai_framework\']"'),
    ("unknown application field", lambda d: d["application"].update(colour="red"),
     'contains unknown field "colour"'),
    ("the DSL's config.type is config_type", lambda d: d["optimisation"]["app_type-ai_training"]["config"]
     .update(type="cnn"), 'contains unknown field "type"'),
    ("node_count below 1", lambda d: d["job_options"].update(node_count=0),
     'must be greater than or equal to "1"'),
    ("unknown scheduler", lambda d: d.update(scheduler="lsf"), 'The value "lsf" of property "scheduler"'),
    # tosca-parser crashes on this one instead of reporting it; the check still fails, with the crash
    ("threads not a number", lambda d: d["application"].update(threads="four"),
     "not supported between instances of 'str' and 'int'"),
]


@pytest.mark.parametrize("change,expected", [(c, e) for _n, c, e in BAD_VALUES], ids=[n for n, _c, _e in BAD_VALUES])
def test_tosca_parser_rejects_bad_data_values(opera, tmp_path, change, expected):
    """opera validate accepts all of these (it checks no data values); the typed data types let tosca-parser
    refuse them."""
    inputs = _local_inputs()
    change(inputs)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(inputs))
    proc = parse(opera, "service.yaml", str(path))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert expected in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("template", sorted(INPUTS))
def test_opera_validate(opera, template):
    proc = opera("validate", "-i", INPUTS[template], template)
    assert proc.returncode == 0, opera.failure(proc)
    assert "Done." in proc.stdout


def test_csar_is_built_by_opera_package_and_validates(opera, tmp_path):
    """The documented command: cd tosca && opera package -t service.yaml -o ../dist/modak ."""
    out = tmp_path / "modak"
    proc = opera("package", "-t", "service.yaml", "-o", str(out), ".")
    assert proc.returncode == 0, opera.failure(proc)
    csar = tmp_path / "modak.zip"
    with zipfile.ZipFile(str(csar)) as archive:
        names = set(archive.namelist())
        meta = archive.read("TOSCA-Metadata/TOSCA.meta").decode()
    assert "Entry-Definitions: service.yaml" in meta
    for rel in ["service.yaml", "inputs/local.yaml", "library/modak/types.yaml",
                "library/modak/playbooks/optimise.yml", "library/modak/playbooks/submit.yml"]:
        assert rel in names, sorted(names)
    proc = opera("validate", "-i", os.path.join(TOSCA, "inputs", "local.yaml"), str(csar))
    assert proc.returncode == 0, opera.failure(proc)


def test_deploy_outputs_undeploy_on_localhost_with_slurm(opera, slurm, pytorch_image, tmp_path):
    """service.yaml with inputs/local.yaml (its directories moved under tmp_path, its image the demo's, built
    here): the optimiser chooses the image and writes the script, the job is submitted to the running Slurm,
    trains in the image with Charliecloud and COMPLETES, outputs give the image and the script, and undeploy
    removes what deploy made."""
    inputs = _local_inputs()
    inputs["output_dir"] = str(tmp_path / "out")
    inputs["work_dir"] = str(tmp_path / "jobs")
    inputs["poll_interval"] = 0.5
    inputs["catalog"] = pytorch_image["catalog"]
    inputs["image_dir"] = pytorch_image["image_dir"]
    workload = inputs["application"]["arguments"][0]
    inputs["application"]["arguments"][0] = os.path.join(pytorch_image["workload"], os.path.basename(workload))
    inputs["application"]["bind_paths"] = [pytorch_image["workload"]]
    # ch-run refuses to start without $USER and sbatch passes the submitter's environment to the job: an orchestrator
    # without USER (a service, cron, CI) still gets a job that runs, because the job script sets it
    opera.env.pop("USER", None)
    inputs_file = tmp_path / "inputs.yaml"
    inputs_file.write_text(yaml.safe_dump(inputs))
    state = tmp_path / "state"
    state.mkdir()

    proc = opera("deploy", "-p", str(state), "-i", str(inputs_file), "service.yaml", timeout=600)
    assert proc.returncode == 0, opera.failure(proc)

    proc = opera("outputs", "-p", str(state), "-f", "json")
    assert proc.returncode == 0, opera.failure(proc)
    outputs = {name: entry["value"] for name, entry in json.loads(proc.stdout).items()}

    # the optimiser: the DSL it was given, and the image and script are what the optimiser core gives for it
    from ansible_collections.sodalite.modak.plugins.module_utils import dsl, pipeline
    from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog
    dsl_file = tmp_path / "out" / "tosca-demo.dsl.yaml"
    document = dsl.load_file(str(dsl_file))
    assert document["job"]["optimisation"]["app_type-ai_training"]["config"] == {"ai_framework": "pytorch",
                                                                                 "type": "cnn"}
    assert document["job"]["target"]["job_scheduler_type"] == "slurm"
    assert document["job"]["target"]["partition"] == "debug"
    expected = pipeline.optimise(document, ImageCatalog.from_file(pytorch_image["catalog"]))
    assert outputs["image"] == expected.choice.uri
    assert outputs["image"].startswith("docker://") and "pytorch-2.13.0-cpu" in outputs["image"]
    assert outputs["job_script"] == str(tmp_path / "out" / "tosca-demo.sbatch")
    with open(outputs["job_script"], encoding="utf-8") as handle:
        assert handle.read() == expected.script.text
    assert outputs["scheduler"] == "slurm"
    assert outputs["explanation"] == expected.explanation

    # the batch job: submitted to Slurm from its own directory, followed until it left the queue
    assert re.match(r"^\d+$", outputs["job_id"]), outputs
    job_dir = tmp_path / "jobs" / "tosca-demo"
    assert outputs["job_dir"] == str(job_dir)
    assert (job_dir / "tosca-demo.sbatch").read_text() == expected.script.text
    shown = subprocess.run(["scontrol", "show", "job", "-o", outputs["job_id"]], capture_output=True, text=True,
                           check=False).stdout
    assert "JobName=tosca-demo" in shown and "WorkDir=%s " % job_dir in shown, shown
    slurm_state = re.search(r"JobState=(\S+)", shown).group(1)
    slurm_exit = int(re.search(r"ExitCode=(\d+):", shown).group(1))
    assert outputs["job_state"] == slurm_state == "COMPLETED", (outputs, shown)
    assert outputs["job_exit_code"] == slurm_exit == 0
    # the workload trained inside the image: its record shows the image's torch and the loss
    lines = (job_dir / ("tosca-demo-%s.out" % outputs["job_id"])).read_text().splitlines()
    record = json.loads([line for line in lines if line.startswith("{")][-1])
    assert record["versions"]["torch"] == "2.13.0+cpu"
    assert record["loss"]["first"] > 0 and record["loss"]["last"] > 0

    proc = opera("undeploy", "-p", str(state), timeout=300)
    assert proc.returncode == 0, opera.failure(proc)
    assert not (tmp_path / "out").exists(), "the output directory that deploy created is removed"
    assert not job_dir.exists(), "the job directory is removed"
    assert (tmp_path / "jobs").exists(), "the target's work directory itself is kept"
    queued = subprocess.run(["squeue", "-h", "-n", "tosca-demo", "-o", "%i"], capture_output=True, text=True,
                            check=False).stdout
    assert outputs["job_id"] not in queued.split()
