"""Fixtures for end-to-end tests: a whole virtual table (board process + link + world)."""

import pytest

from host_tools.sim.virtual_table import VirtualTable


class Recorder:
    def __init__(self):
        self.events = []

    def __call__(self, kind, body):
        self.events.append((kind, body))

    def of(self, kind):
        return [b for k, b in self.events if k == kind]


@pytest.fixture
def table(tmp_path):
    rec = Recorder()
    with VirtualTable(str(tmp_path / "state"), on_event=rec, event_timeout=20.0) as t:
        t.recorder = rec
        yield t
