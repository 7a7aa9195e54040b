# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run the robustness suite and regenerate docs/robustness.md from what it counted (the tests write only
tests/output/robustness.json; this script is the only writer of the page).

    .venv/bin/python scripts/robustness_report.py [extra pytest arguments]

Exit status: pytest's, or 1 when a figure shows a crash, an escape, an outside write or a lost result.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv):
    rc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                         os.path.join(ROOT, "tests", "robustness")] + argv, cwd=ROOT, check=False).returncode
    path = os.path.join(ROOT, "tests", "output", "robustness.json")
    if not os.path.exists(path):
        print("no figures were written (%s)" % path, file=sys.stderr)
        return rc or 1
    with open(path, encoding="utf-8") as handle:
        report = json.load(handle)
    if report["complete"]:
        sys.path.insert(0, os.path.join(ROOT, "tests", "robustness"))
        import figures  # pylint: disable=import-outside-toplevel
        figures.write_doc(report["figures"])
    for area, tried, bad, count in report["rows"]:
        print("%-38s %-90s %s=%d" % (area, tried, bad, count))
    bad_total = sum(row[3] for row in report["rows"])
    print("docs/robustness.md %s; bad outcomes: %d" % ("regenerated" if report["complete"] else "NOT regenerated "
                                                       "(part of the suite was deselected)", bad_total))
    return rc or int(bad_total > 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
