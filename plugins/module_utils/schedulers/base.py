# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every scheduler backend offers, and the small pure helpers they share."""

from __future__ import annotations


def hms(seconds):
    """Wall time as HH:MM:SS; hours keep counting past 24 (30 h -> '30:00:00')."""
    seconds = int(seconds)
    return "%02d:%02d:%02d" % (seconds // 3600, seconds % 3600 // 60, seconds % 60)


def pbs_events(events):
    """Canonical (Slurm) mail events -> PBS letters 'abe' ('n' for none)."""
    letters = set()
    for event in events:
        if event == "ALL":
            letters.update("abe")
        elif event == "BEGIN":
            letters.add("b")
        elif event == "END":
            letters.add("e")
        elif event in ("FAIL", "REQUEUE", "INVALID_DEPEND", "TIME_LIMIT", "TIME_LIMIT_90", "TIME_LIMIT_80",
                       "TIME_LIMIT_50", "STAGE_OUT", "ARRAY_TASKS"):
            letters.add("a")
    return "".join(c for c in "abe" if c in letters) or "n"


def pbs_job_name(name):
    """PBS wants a job name that starts with a letter."""
    return name if name[:1].isalpha() else "j" + name


def pbs_begin(begin):
    """'2026-01-02T03:04:05' -> PBS -a '202601020304.05'."""
    date, _sep, time = begin.partition("T")
    hh, mm, ss = (time.split(":") + ["00", "00", "00"])[:3] if time else ("00", "00", "00")
    return "%s%s%s.%s" % (date.replace("-", ""), hh, mm, ss or "00")


def opt(fmt, value):
    """A directive for a value that may be missing: returns '' for None/False (filtered later)."""
    if value is None or value is False:
        return ""
    return fmt.format(value)


class Scheduler(object):
    """A scheduler backend: directive lines, working directory, launcher default."""

    name = ""
    prefix = ""
    extension = ".sh"
    submit_dir_var = None
    default_launcher = "mpirun"

    def directives(self, options, settings):
        """Return (directive lines without prefix, warnings)."""
        raise NotImplementedError

    def preamble(self, options, settings):
        """Directive lines with the prefix, and warnings."""
        lines, warnings = self.directives(options, settings)
        return ["%s %s" % (self.prefix, line) for line in lines if line], list(warnings)

    def workdir_lines(self):
        if self.submit_dir_var:
            return ['cd "${%s:-$PWD}"' % self.submit_dir_var]
        return []

    def run_prefix(self, options):
        """Words put before the launcher (the local backend enforces the wall time)."""
        return []

    def redirect_lines(self, options):
        """Output redirection done by the script itself (batch schedulers do it for us)."""
        return []
