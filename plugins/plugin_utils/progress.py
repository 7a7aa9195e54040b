# -*- coding: utf-8 -*-
# Copyright: modak developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Waiting on the controller while something runs on a host, with one progress line per poll.

Used by the action plugins of batch_job (a batch job) and async_wait (an asynchronous task, such as an
image build): they give a ``query`` (runs a module on the host and returns its result), a ``done`` test and
a ``report`` (prints the line); ``follow`` sleeps, queries and reports until done or until the time is up.
"""

from __future__ import annotations

import time


def to_stderr(stdout_callback):
    """Whether progress lines go to stderr: when the stdout callback writes JSON, which a program parses
    (ansible.posix.json, ansible.posix.jsonl, xOpera's json_ansible_callback); people read stdout otherwise."""
    return "json" in (stdout_callback or "").lower()


def show(display, text):
    """Print one progress line at the default verbosity, on stdout unless the stdout callback writes JSON."""
    from ansible import constants  # pylint: disable=import-outside-toplevel
    display.display(text, stderr=to_stderr(constants.config.get_config_value("DEFAULT_STDOUT_CALLBACK")))


def clock(seconds):
    """Seconds as H:MM:SS (hours keep counting past 24)."""
    seconds = max(0, int(seconds))
    return "%d:%02d:%02d" % (seconds // 3600, seconds % 3600 // 60, seconds % 60)


def line(host, subject, state, ran=None, waited=None, last=None, reason=None, expected_start=None, restarts=None):
    """'localhost: job 42 (train) RUNNING, ran 0:00:03, waited 0:00:05: <last output line>'; a waiting job says the
    scheduler's reason and expected start: 'job 42 (train) PENDING (Resources, expected start 2026-11-25T15:00:00)';
    a requeued job its restarts: 'job 42 (train) PENDING, restart 1 (BeginTime)'."""
    text = "%s: %s %s" % (host, subject, state)
    if restarts:
        text += ", restart %d" % restarts
    why = [word for word in (reason, "expected start %s" % expected_start if expected_start else None) if word]
    if why:
        text += " (%s)" % ", ".join(why)
    if ran is not None:
        text += ", ran %s" % clock(ran)
    if waited is not None:
        text += ", waited %s" % clock(waited)
    if last:
        text += ": %s" % last
    return text


def follow(query, done, report, interval, timeout, started, first=None, sleep=time.sleep, now=time.monotonic,
           start=None, transient=None, retry_for=0.0):
    """Query until ``done(result)``, a failed result, or ``timeout`` s after ``started``.

    The wait between queries is ``interval`` s; with ``start`` it begins at ``start`` s and doubles after each
    query up to ``interval`` (a short job is seen ending soon, a long one costs few queries). A failed result that
    ``transient(result)`` calls transient (the scheduler did not answer) is queried again, the wait doubling as
    above, for at most ``retry_for`` s in a row; only then does it end the wait. ``report(result,
    waited)`` runs after each query. Returns (last result, True when the time ran out). ``started`` is a ``now()``
    reading (the submission's); the last sleep is cut short at the deadline.
    """
    deadline = started + timeout
    result = first
    wait = start or interval
    failing_since = None
    while result is None or failing_since is not None or not (result.get("failed") or done(result)):
        left = deadline - now()
        if left <= 0:
            return result, True
        sleep(min(wait, max(0.05, left)))
        result = query()
        report(result, now() - started)
        if result.get("failed") and transient is not None and transient(result):
            failing_since = now() if failing_since is None else failing_since
            if now() - failing_since >= retry_for:
                return result, False
            wait = min(wait * 2, interval)
            continue
        if result.get("failed"):
            return result, False
        failing_since = None
        wait = min(wait * 2, interval)
    return result, False
