"""A fake of commands.Runner for unit tests: exact argv -> (rc, stdout, stderr), from a table.

An argv may be answered several times in a row (a list of answers, used in order; the last one repeats).
A command that is not in the table fails the test: the backends must run exactly the commands expected.
"""

from __future__ import annotations

from ansible_collections.sodalite.modak.plugins.module_utils.commands import Runner


class FakeRunner(Runner):

    def __init__(self, answers, **kwargs):
        super(FakeRunner, self).__init__(**kwargs)
        self.answers = {}
        for argv, answer in answers:
            self.answers.setdefault(tuple(argv), []).append(answer)

    def execute(self, argv, input_text=None):
        queue = self.answers.get(tuple(argv))
        assert queue, "unexpected command: %r (expected one of %r)" % (argv, sorted(self.answers))
        return queue.pop(0) if len(queue) > 1 else queue[0]
