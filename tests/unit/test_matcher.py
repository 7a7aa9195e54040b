"""Image matching: constraints, version semantics, scores, deterministic ties, fallbacks."""

from __future__ import annotations

import random

import pytest
from helpers import ORIGINAL, SITE_IMAGES, ai_doc, load, with_

from ansible_collections.sodalite.modak.plugins.module_utils import dsl, matcher, recipe_images
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog, embedded


def choose(doc, catalog):
    return matcher.choose(dsl.parse(doc), catalog)


def entry(name, version, **kw):
    out = {"name": name, "uri": "docker://r/%s:%s" % (name, version), "framework": kw.pop("framework", "tensorflow"),
           "version": version}
    out.update(kw)
    return out


SMALL = [
    entry("tf-2.1.0", "2.1.0"), entry("tf-2.1.2", "2.1.2"), entry("tf-2.10.1", "2.10.1"),
    entry("tf-2.15.0", "2.15.0"), entry("tf-2.15.1", "2.15.1"), entry("tf-2.14.0", "2.14.0"),
    entry("tf-2.1.0-opt", "2.1.0", build="optimised-source"),
]


@pytest.mark.parametrize("request_text,chosen", [
    ("2.1", "tf-2.1.0-opt"),      # optimised 2.1.0 beats official 2.1.2: build kind ranks above patch
    ("2.10", "tf-2.10.1"),        # never 2.1
    ("2", "tf-2.15.1"),           # newest 2.x line, newest patch in it
    ("2.15.0", "tf-2.15.0"),
    (">=2.2,<2.15", "tf-2.14.0"),
    (None, "tf-2.15.1"),
])
def test_version_semantics(request_text, chosen):
    catalog = ImageCatalog.from_data(SMALL)
    choice = choose(ai_doc("tensorflow", request_text), catalog)
    assert choice.image.name == chosen


def test_2_1_never_matches_2_10():
    catalog = ImageCatalog.from_data([entry("tf-2.10.1", "2.10.1")])
    choice = choose(ai_doc("tensorflow", "2.1"), catalog)
    assert choice.source == "recipe" and choice.image.version_text == "2.1"
    assert ("tf-2.10.1", "version 2.10.1 does not match the request 2.1") in choice.rejected


def test_older_lines_are_rejected_with_a_reason():
    choice = choose(ai_doc("tensorflow", "2"), ImageCatalog.from_data(SMALL))
    reasons = dict(choice.rejected)
    assert "older than 2.15" in reasons["tf-2.14.0"]


def test_ties_are_deterministic_whatever_the_catalog_order():
    twins = [entry("b-twin", "2.1.0"), entry("a-twin", "2.1.0"), entry("c-twin", "2.1.0")]
    for seed in range(5):
        random.Random(seed).shuffle(twins)
        choice = choose(ai_doc("tensorflow", "2.1"), ImageCatalog.from_data(list(twins)))
        assert choice.image.name == "a-twin"
        assert any("lost on name order" in r for r in choice.runners_up)


@pytest.mark.parametrize("image_kw,doc_changes,reason", [
    ({"accelerator": "nvidia", "cuda": "12.2"}, {}, "needs a nvidia GPU; the target has no accelerator"),
    ({}, {"job.optimisation.opt_build.acc_type": "nvidia"}, "CPU-only image; the target has nvidia accelerators"),
    ({"accelerator": "amd", "rocm": "6.1"}, {"job.optimisation.opt_build.acc_type": "nvidia"},
     "built for amd GPUs; the target has nvidia accelerators"),
    ({"accelerator": "nvidia", "cuda": "12.4"},
     {"job.optimisation.opt_build.acc_type": "nvidia", "job.optimisation.opt_build.cuda_version": "12.2"},
     "needs CUDA 12.4; the target supports up to 12.2"),
    ({"isa": "x86-64-v4"}, {"job.optimisation.opt_build.cpu_isa": "x86-64-v3"},
     "needs x86-64-v4; the target offers x86-64-v3"),
    ({"isa": "x86-64-v4", "cpu_features": ["amx_bf16"]}, {"job.optimisation.opt_build.cpu_microarch": "icelake"},
     "needs CPU features the target lacks: amx_bf16"),
    ({"arch": "aarch64", "isa": "armv8.2-a"}, {}, "built for aarch64, the target is x86_64"),
    ({"build": "optimised-pip"}, {"job.optimisation.enable_opt_build": False},
     "optimised-pip build, but enable_opt_build is false"),
])
def test_hard_constraints(image_kw, doc_changes, reason):
    catalog = ImageCatalog.from_data([entry("only", "2.1.0", **image_kw)])
    doc = ai_doc("tensorflow", "2.1")
    for path, value in doc_changes.items():
        doc = with_(doc, path, value)
    choice = choose(doc, catalog)
    assert choice.source != "catalog"   # an official GPU image may still be the CPU target's fallback
    assert choice.rejected == (("only", reason),)
    assert any(reason in line for line in choice.explanation)


def test_cpu_features_from_microarchitecture_admit_amx_images(catalog):
    doc = with_(ai_doc("pytorch", "2.5"), "job.optimisation.opt_build.cpu_microarch", "sapphirerapids")
    assert choose(doc, catalog).image.name == "modak-pytorch-2.5-cpu-amx"
    doc = with_(ai_doc("pytorch", "2.5"), "job.optimisation.opt_build.cpu_isa", "x86-64-v3")
    assert choose(doc, catalog).image.name == "modak-pytorch-2.5-cpu-v3"
    choice = choose(ai_doc("pytorch", "2.5"), catalog)  # nothing declared: x86-64-v3 assumed, said out loud
    assert choice.image.name == "modak-pytorch-2.5-cpu-v3"
    assert any("assumed" in w for w in choice.warnings)


def test_requested_compiler_outranks_build_kind():
    catalog = ImageCatalog.from_data([entry("opt-noxla", "2.1.0", build="optimised-source"),
                                      entry("off-xla", "2.1.0", compilers=["xla"])])
    assert choose(ai_doc("tensorflow", "2.1", xla=True), catalog).image.name == "off-xla"
    assert choose(ai_doc("tensorflow", "2.1", xla=False), catalog).image.name == "opt-noxla"


def test_explanation_names_choice_runners_up_and_rejections(catalog):
    choice = choose(ai_doc("tensorflow", "2.1", acc="nvidia", xla=True), catalog)
    assert choice.image.name == "modak-tensorflow-2.1-gpu-src"
    text = "\n".join(choice.explanation)
    assert "chosen modak-tensorflow-2.1-gpu-src" in text
    assert "runner-up tensorflow-2.1.0-gpu: lost on build kind (official < optimised-source)" in text
    assert "rejected modak-tensorflow-2.1-cpu-src: CPU-only image" in text
    assert "rejected tensorflow-2.10.0-gpu: version 2.10.0 does not match the request 2.1" in text


def test_fallback_user_container_then_official_then_recipe(catalog):
    doc = ai_doc("tensorflow", "2.10")
    choice = choose(with_(with_(doc, "job.optimisation.opt_build.cpu_isa", "x86-64"),
                          "job.application.container_runtime", "docker://mine:1"), catalog)
    assert (choice.source, choice.uri) == ("user", "docker://mine:1")
    assert "no catalog image fits tensorflow 2.10" in choice.warnings[0]
    choice = choose(ai_doc("jax", "9"), catalog)
    assert choice.source == "recipe"
    assert choice.uri.startswith("docker://localhost:5000/modak/modak-jax-9-cpu-")
    assert "build the optimised image %s from its recipe" % choice.uri in choice.explanation[-1]
    no_opt = choose(with_(ai_doc("jax", "9"), "job.optimisation.enable_opt_build", False), catalog)
    assert (no_opt.source, no_opt.uri) == ("bare", None)
    assert "runs without a container" in no_opt.warnings[0]
    fpga = choose(ai_doc("tensorflow", "2.1", acc="fpga"), catalog)
    assert fpga.image is None and fpga.warnings


def test_official_fallback_is_a_published_catalog_image_with_its_fields(catalog):
    """Issue 10, defect 12: no invented tags (pytorch/pytorch:2.1.0 does not exist), no null fields."""
    doc = with_(ai_doc("pytorch", "2.1"), "job.optimisation.enable_opt_build", False)
    choice = choose(doc, catalog)
    assert (choice.source, choice.uri) == ("official", "docker://pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime")
    assert choice.image.framework == "pytorch" and choice.image.version_text == "2.1.2"
    assert "runs on the CPU here" in choice.warnings[0]
    # a CPU image of the same line is preferred to a GPU one
    tf = choose(with_(ai_doc("tensorflow", "2.10"), "job.optimisation.enable_opt_build", False), catalog)
    assert tf.uri == "docker://tensorflow/tensorflow:2.10.0"
    # nothing published fits: no official reference is made up
    none = choose(with_(ai_doc("tensorflow", "3.0"), "job.optimisation.enable_opt_build", False), catalog)
    assert none.source == "bare" and none.uri is None
    assert not [w for w in none.warnings if "tensorflow/tensorflow:3" in w]


def test_official_fallback_never_takes_a_recipe_backed_or_optimised_image():
    catalog = ImageCatalog.from_data([
        entry("opt", "2.1.0", build="optimised-pip"),
        {"name": "built", "recipe": {"framework": "tensorflow", "version": "2.15.1"}}])
    doc = with_(ai_doc("tensorflow", "2"), "job.optimisation.enable_opt_build", False)
    assert choose(doc, catalog).source == "bare"


def test_no_optimisation_runs_user_container_or_bare(catalog):
    bare = {"job": {"application": {"executable": "./a"}}}
    assert choose(bare, catalog).source == "bare"
    mine = with_(bare, "job.application.container_runtime", "docker://mine:1")
    assert choose(mine, catalog).uri == "docker://mine:1"


def test_enable_opt_build_false_keeps_the_users_container(catalog):
    doc = with_(ai_doc("tensorflow", "2.1"), "job.application.container_runtime", "library://mine")
    assert choose(doc, catalog).source == "catalog"          # replaced, with a warning
    assert "replaced by the optimised image" in choose(doc, catalog).warnings[0]
    doc = with_(doc, "job.optimisation.enable_opt_build", False)
    assert choose(doc, catalog).uri == "library://mine"


@pytest.mark.parametrize("name,uri", [
    ("mpi_test.json", "docker://ethcscs/mpich:ub1804_cuda101_mpi314_gnugprof"),
    ("mpi_test_egi.json", "docker://ethcscs/openmpi:3.1.3"),
    ("tf_resnet.json", "docker://modakopt/modak:tensorflow-2.1-gpu-src"),
    ("mpi_solver.json", "docker://ethcscs/mpich:ub1804_cuda101_mpi314_gnugprof"),
    ("tf_snow.json", "docker://modakopt/modak:tensorflow-2.1-gpu-src"),
    ("get_optimisation_non_existent.json", "docker://some-container"),
])
def test_original_conformance_inputs_choose_the_originals_images(name, uri, catalog):
    path = [p for p in ORIGINAL if p.endswith("/" + name)][0]
    assert choose(load(path), catalog).uri == uri


def test_hpc_application_images_by_app_tag(catalog):
    doc = {"job": {"application": {"app_tag": "code_aster", "executable": "as_run"}, "optimisation": {
        "app_type": "hpc", "enable_opt_build": False, "opt_build": {"cpu_type": "x86", "cpu_isa": "x86-64-v3"},
        "app_type-hpc": {"config": {"parallelisation": "mpi"}, "parallelisation-mpi": {"library": "openmpi"}}}}}
    assert choose(doc, catalog).image.name == "code-aster-14.4-openmpi-avx2"


@pytest.mark.parametrize("library,version,name", [
    ("mpich", "3.3.1", "code-aster-14.4-mpich-avx2"),
    ("openmpi", "3.1.3", "code-aster-14.4-openmpi-avx2"),
])
@pytest.mark.parametrize("app_tag", ["code-aster", "code_aster"])
def test_code_aster_rows_keep_the_originals_keys(catalog, library, version, name, app_tag):
    """Issue 10, defect 10: the original's rows are app code-aster with mpich 3.3.1 / openmpi 3.1.3."""
    doc = {"job": {"application": {"app_tag": app_tag, "executable": "as_run"}, "optimisation": {
        "app_type": "hpc", "enable_opt_build": False, "opt_build": {"cpu_type": "x86", "acc_type": "none"},
        "app_type-hpc": {"config": {"parallelisation": "mpi"},
                         "parallelisation-mpi": {"library": library, "version": version}}}}}
    image = choose(doc, catalog).image
    assert image.name == name and image.app == "code-aster"
    assert (image.mpi, image.mpi_version) == (library, version)


def test_embedded_catalog_is_large_and_varied(catalog):
    assert len(catalog) >= 40
    frameworks = {i.framework for i in catalog}
    assert {"tensorflow", "pytorch", "mxnet", "jax", "openmpi", "mpich"} <= frameworks
    assert {i.accelerator for i in catalog} == {"none", "nvidia", "amd"}
    assert {i.uri.split("://")[0] for i in catalog} == {"docker"}
    assert {i.arch for i in catalog} == {"x86_64", "aarch64"}


def test_oras_and_local_sif_references():
    catalog = ImageCatalog.from_data(SITE_IMAGES)
    doc = {"job": {"application": {"executable": "./m", "mpi_ranks": 4}, "target": {"job_scheduler_type": "slurm"},
                   "optimisation": {"app_type": "hpc", "opt_build": {"cpu_type": "x86", "cpu_isa": "x86-64-v4"},
                                    "app_type-hpc": {"config": {"parallelisation": "mpi"},
                                                     "parallelisation-mpi": {"library": "openmpi", "version": "4.1"}}}}}
    assert choose(doc, catalog).uri == "oras://ghcr.io/example/modak-sif:openmpi-4.1.6-x86-64-v4"
    lammps = with_(with_(doc, "job.application.app_tag", "lammps"), "job.optimisation.opt_build.cpu_isa", "x86-64-v3")
    assert choose(lammps, catalog).uri == "/apps/containers/lammps_openmpi.sif"


def test_a_large_catalog_is_summarised_by_reason_past_the_first_rejections():
    """10,000 images: the explanation names the first few rejections and counts the rest by reason."""
    images = [{"name": "img-%05d" % i, "uri": "docker://r.example.org/img:%05d" % i, "framework": "tensorflow",
               "version": "2.%d.%d" % (i % 40, i // 40 % 5)} for i in range(10000)]
    choice = choose(ai_doc("tensorflow", "2.1"), ImageCatalog.from_data(images))
    assert len(choice.rejected) == 10000 - 250
    rejections = [line for line in choice.explanation if line.startswith("rejected")]
    assert len(rejections) <= matcher.SHOWN_REJECTIONS + matcher.SHOWN_REASONS + 1
    assert "rejected %d more image(s): version … does not match the request 2.1"\
        % (len(choice.rejected) - matcher.SHOWN_REJECTIONS) in rejections


def _asked(doc):
    return with_(doc, "job.optimisation.enable_opt_build", True)


def test_an_optimised_build_asked_for_a_cpu_gets_the_cpu_recipe_not_a_cuda_image():
    """Issue 22, found 3: CPU PyTorch 2.1 with enable_opt_build got the official CUDA image."""
    catalog = embedded()
    for doc in (ai_doc("pytorch", "2.1"), _asked(ai_doc("pytorch", "2.1"))):
        choice = choose(doc, catalog)
        assert choice.source == "recipe", choice.explanation
        assert choice.image.accelerator == "none" and choice.image.version_text == "2.1"
        assert choice.image.build == "optimised-pip" and choice.image.recipe
        assert "cuda" not in choice.uri and choice.uri.startswith("docker://localhost:5000/modak/")


def test_the_recipe_image_uses_the_catalogs_build_prefix():
    catalog = ImageCatalog.from_data([], build_prefix="docker://registry.example:5000/team")
    choice = choose(ai_doc("pytorch", "2.1"), catalog)
    assert choice.uri.startswith("docker://registry.example:5000/team/modak-pytorch-2.1-cpu-")


def test_enable_opt_build_true_prefers_the_recipe_to_a_fitting_official_image():
    """An optimised build asked for in so many words: a generic image that fits is a runner-up, not the answer."""
    catalog = ImageCatalog.from_data([entry("tf-2.10.1", "2.10.1")])
    assert choose(ai_doc("tensorflow", "2.10"), catalog).image.name == "tf-2.10.1"   # the default keeps the catalog
    choice = choose(_asked(ai_doc("tensorflow", "2.10")), catalog)
    assert choice.source == "recipe" and choice.image.version_text == "2.10" and choice.image.build != "official"
    assert any(r.startswith("tf-2.10.1: an official (generic) build") for r in choice.runners_up)
    off = choose(with_(ai_doc("tensorflow", "2.10"), "job.optimisation.enable_opt_build", False), catalog)
    assert off.image.name == "tf-2.10.1"


def test_enable_opt_build_false_keeps_the_official_fallback():
    choice = choose(with_(ai_doc("pytorch", "2.1"), "job.optimisation.enable_opt_build", False), embedded())
    assert choice.source == "official" and choice.image.build == "official"


def test_an_old_gpu_release_asked_optimised_builds_on_its_frameworks_image():
    """Issue 22, found 4: a TensorFlow 2.1 GPU recipe was refused (no CUDA 10.1 base)."""
    choice = choose(_asked(ai_doc("tensorflow", "2.1", acc="nvidia")), ImageCatalog.from_data([]))
    assert choice.source == "recipe" and choice.image.accelerator == "nvidia"
    built = recipe_images.build_request(choice)
    assert built["base_image"] == "tensorflow/tensorflow:2.1.0-gpu-py3"
    assert choice.image.recipe.framework == "tensorflow" and choice.image.recipe.version == "2.1"


def test_the_originals_true_string_asks_for_an_optimised_build_too():
    """enable_opt_build: "true" (the original's unit-test form) asks as the boolean does; absent, it does not."""
    doc = ai_doc("pytorch", "2.1")
    assert not dsl.parse(doc).opt.opt_build_asked
    doc["job"]["optimisation"]["enable_opt_build"] = "true"
    assert dsl.parse(doc).opt.opt_build_asked
