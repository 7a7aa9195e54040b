"""MPI launch lines: the PMI srun names per MPI library and site setting, the host list mpirun/mpiexec read
per scheduler and MPI family; exact lines, and the scripts lint."""

from __future__ import annotations

import copy

import pytest
from test_render import lint

from ansible_collections.sodalite.modak.plugins.module_utils import mpi, pipeline
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog


def doc(scheduler="slurm", library=None, app_library=None, mpi_type=None, launcher=None, ranks=4):
    job = {"application": {"app_type": "mpi", "executable": "./prog", "mpi_ranks": ranks},
           "target": {"job_scheduler_type": scheduler}}
    if library:
        job["optimisation"] = {"app_type": "hpc", "opt_build": {"cpu_type": "x86"},
                               "app_type-hpc": {"config": {"parallelisation": "mpi"},
                                                "parallelisation-mpi": {"library": library}}}
    if app_library:
        job["application"]["mpi_library"] = app_library
    if mpi_type:
        job["target"]["mpi_type"] = mpi_type
    if launcher:
        job["application"]["launcher"] = launcher
    return {"job": job}


@pytest.fixture
def catalog():
    """No image: every run is bare (the MPI library comes from the DSL)."""
    return ImageCatalog.from_data({"images": []}, "empty")


def run_line(result):
    return result.script.body[-1]


@pytest.mark.parametrize("library,pmi", [("openmpi", "pmix"), ("hpcx", "pmix"), ("mpich", "pmi2"),
                                         ("mvapich2", "pmi2"), ("intel-mpi", "pmi2")])
def test_srun_names_the_pmi_of_the_library(library, pmi, catalog):
    result = pipeline.optimise(doc(library=library), catalog)
    assert run_line(result) == "srun --mpi=%s --ntasks=4 ./prog" % pmi
    assert result.settings.pmi == pmi and result.settings.mpi_library == library
    assert result.settings.as_dict()["pmi"] == pmi
    assert any(note.startswith("srun --mpi=%s: " % pmi) for note in result.explanation)


def test_intel_mpi_is_told_about_its_pmi_library(catalog):
    result = pipeline.optimise(doc(library="intel-mpi"), catalog)
    assert any("I_MPI_PMI_LIBRARY" in note for note in result.explanation)


def test_cray_mpich_leaves_the_pmi_to_the_site(catalog):
    result = pipeline.optimise(doc(library="cray-mpich"), catalog)
    assert run_line(result) == "srun --ntasks=4 ./prog"
    assert result.settings.pmi is None
    assert any("cray_shasta" in note for note in result.explanation)
    assert not any("names no PMI" in w for w in result.warnings)


def test_a_bare_run_states_its_library(catalog):
    result = pipeline.optimise(doc(app_library="mpich"), catalog)
    assert run_line(result) == "srun --mpi=pmi2 --ntasks=4 ./prog"
    assert any("application.mpi_library: mpich" in note for note in result.explanation)


def test_the_optimisation_library_wins_over_the_application_one_with_a_warning(catalog):
    result = pipeline.optimise(doc(library="openmpi", app_library="mpich"), catalog)
    assert run_line(result) == "srun --mpi=pmix --ntasks=4 ./prog"
    assert any("application.mpi_library mpich differs from openmpi" in w for w in result.warnings)


def test_the_site_setting_wins_and_says_what_the_library_needs(catalog):
    result = pipeline.optimise(doc(library="mpich", mpi_type="pmix_v4"), catalog)
    assert run_line(result) == "srun --mpi=pmix_v4 --ntasks=4 ./prog"
    assert any("target.mpi_type" in note and "MPICH usually needs pmi2" in note for note in result.explanation)
    same = pipeline.optimise(doc(library="openmpi", mpi_type="pmix_v4"), catalog)
    assert not any("usually" in note for note in same.explanation)


def test_site_none_writes_no_mpi_flag(catalog):
    result = pipeline.optimise(doc(library="openmpi", mpi_type="none"), catalog)
    assert run_line(result) == "srun --ntasks=4 ./prog"
    assert any("MpiDefault decides" in note for note in result.explanation)
    assert not any("names no PMI" in w for w in result.warnings)


def test_an_unknown_library_keeps_no_flag_and_warns(catalog):
    result = pipeline.optimise(doc(), catalog)
    assert run_line(result) == "srun --ntasks=4 ./prog"
    assert result.settings.pmi is None and result.settings.mpi_library is None
    assert any("srun names no PMI" in w and "MpiDefault" in w for w in result.warnings)


def test_a_serial_run_gets_neither_flag_nor_warning(catalog):
    result = pipeline.optimise({"job": {"application": {"executable": "./s"},
                                        "target": {"job_scheduler_type": "slurm"}}}, catalog)
    assert run_line(result) == "./s"
    assert not any("PMI" in w for w in result.warnings)


def test_mpirun_under_slurm_needs_no_pmi_nor_host_file(catalog):
    result = pipeline.optimise(doc(library="openmpi", launcher="mpirun"), catalog)
    assert run_line(result) == "mpirun -np 4 ./prog"
    assert result.settings.pmi is None


MPI_IMAGE = {"name": "site-mpich", "uri": "docker://site/mpich:4", "framework": "mpich", "version": "4.0",
             "kind": "mpi", "mpi": {"library": "mpich", "version": "4.0.2"}}


def image_catalog(**mpi_fields):
    entry = copy.deepcopy(MPI_IMAGE)
    entry["mpi"].update(mpi_fields)
    return ImageCatalog.from_data({"images": [entry]}, "test")


def test_the_image_mpi_gives_the_pmi_in_its_container():
    result = pipeline.optimise(doc(library="mpich"), image_catalog())
    assert result.choice.image.name == "site-mpich"
    assert run_line(result) == 'srun --mpi=pmi2 --ntasks=4 apptainer exec "$IMAGE" ./prog'
    assert any("the image's MPI: mpich" in note for note in result.explanation)


def test_the_image_label_names_the_pmi():
    result = pipeline.optimise(doc(library="mpich"), image_catalog(pmi="pmix"))
    assert result.choice.image.mpi_pmi == "pmix"
    assert run_line(result) == 'srun --mpi=pmix --ntasks=4 apptainer exec "$IMAGE" ./prog'
    assert any("(the image's label)" in note for note in result.explanation)


@pytest.mark.parametrize("scheduler,library,launcher,line", [
    ("pbspro", "openmpi", None, 'mpirun --hostfile "$PBS_NODEFILE" -np 4 ./prog'),
    ("pbspro", "mpich", None, 'mpirun -f "$PBS_NODEFILE" -np 4 ./prog'),
    ("pbspro", "mpich", "mpiexec", 'mpiexec -f "$PBS_NODEFILE" -n 4 ./prog'),
    ("torque", "hpcx", None, 'mpirun --hostfile "$PBS_NODEFILE" -np 4 ./prog'),
    ("torque", "intel-mpi", "mpiexec", 'mpiexec -f "$PBS_NODEFILE" -n 4 ./prog'),
    ("torque", None, None, 'mpirun -machinefile "$PBS_NODEFILE" -np 4 ./prog'),
    ("local", "openmpi", None, "mpirun -np 4 ./prog"),
    ("local", "mpich", "mpiexec", "mpiexec -n 4 ./prog"),
])
def test_mpirun_reads_the_scheduler_host_file(scheduler, library, launcher, line, catalog, tmp_path):
    result = pipeline.optimise(doc(scheduler, library=library, launcher=launcher), catalog)
    assert run_line(result) == line
    assert "MODAK_HOSTFILE" not in result.script.text
    lint(result.script.text, tmp_path, result.script.filename)


@pytest.mark.parametrize("library,awk,flag", [
    ("openmpi", '{print $1" slots="$2}', "--hostfile"),
    ("mpich", '{print $1":"$2}', "-f"),
    (None, "{for (i = 0; i < $2; i++) print $1}", "-machinefile"),
])
def test_grid_engine_host_file_is_converted_for_the_library(library, awk, flag, catalog, tmp_path):
    result = pipeline.optimise(doc("gridengine", library=library), catalog)
    body = list(result.script.body)
    at = body.index('MODAK_HOSTFILE="$(mktemp)"')
    assert body[at + 1:] == [
        "# shellcheck disable=SC2016,SC1003  # user values are quoted to stay literal",
        "awk '%s' \"$PE_HOSTFILE\" > \"$MODAK_HOSTFILE\"" % awk,
        'mpirun %s "$MODAK_HOSTFILE" -np 4 ./prog' % flag]
    lint(result.script.text, tmp_path, result.script.filename)


def test_every_library_has_a_pmi_entry_and_the_schema_lists_them():
    from ansible_collections.sodalite.modak.plugins.module_utils import schema
    assert set(mpi.NAMES) == set(mpi.LIBRARIES)
    assert schema.MPI_LIBRARIES == mpi.NAMES
    assert schema.APPLICATION["properties"]["mpi_library"]["enum"] == list(mpi.NAMES)
    assert schema.TARGET["properties"]["mpi_type"]["enum"] == list(mpi.PMI_TYPES)
    assert all(lib.pmi in mpi.PMI_TYPES or lib.pmi is None for lib in mpi.LIBRARIES.values())


def test_an_unknown_pmi_type_is_refused(catalog):
    from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid
    with pytest.raises(DslInvalid) as err:
        pipeline.optimise(doc(library="openmpi", mpi_type="pmi3"), catalog)
    assert "mpi_type" in str(err.value)
