"""Print the centres' corpus figures (docs/scheduler.md): facts compared and matched per centre, and every
difference. With a checkout of another commit as argument (git worktree add /tmp/old COMMIT), its modak renders
the same DSL documents; fields that modak did not know yet are taken out (the figures "before")."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..")
sys.path.insert(0, os.path.join(CHECKOUT, "collections"))

# pylint: disable=wrong-import-position
from ansible_collections.sodalite.modak.plugins.module_utils import pipeline  # noqa: E402
from ansible_collections.sodalite.modak.plugins.module_utils.catalog import ImageCatalog  # noqa: E402
from ansible_collections.sodalite.modak.plugins.module_utils.errors import DslInvalid  # noqa: E402

sys.path.insert(1, os.path.join(HERE, "..", "tests"))
import centres  # noqa: E402

CATALOG = ImageCatalog.from_file(os.path.join(CHECKOUT, "catalog", "images.yaml"))


def render(entry):
    doc = centres.document(entry)
    while True:
        try:
            return pipeline.optimise(doc, CATALOG).script.text
        except DslInvalid as exc:
            fields = [p.path.split(".")[-1] for p in exc.problems if p.path.startswith("job.job_options.")]
            if not fields or not any(doc["job"]["job_options"].pop(f, None) is not None for f in fields):
                raise
            sys.stderr.write("%s: %s taken out (%s)\n" % (entry["name"], ", ".join(fields), exc.problems[0].message))


def main():
    table, total = centres.figures(render)
    print("| centre | scripts | facts compared | facts that match | share |")
    print("| --- | --- | --- | --- | --- |")
    for centre, scripts, compared, matched in table + [total]:
        print("| %s | %d | %d | %d | %.0f %% |" % (centre, scripts, compared, matched, 100.0 * matched / compared))
    for entry in centres.SCRIPTS:
        with open(centres.path(entry)) as handle:
            theirs = centres.facts(centres.scheduler_of(entry), handle.read())
        differs = centres.compare(theirs, centres.facts(centres.scheduler_of(entry), render(entry)))
        if differs:
            print("%s: %s" % (entry["name"], differs))


main()
