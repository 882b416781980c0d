"""An embedded PostgreSQL 16 (the pinned `pgserver` wheel) for tests, the bench and laptops.

EmbeddedPostgres(dir).start() -> "postgresql://..."   a stand-in: a floor runs its own server.
"""

from pathlib import Path

from host_tools.errors import ShoeError


class EmbeddedPostgres:
    """PostgreSQL 16 from the pinned `pgserver` wheel, data in `directory` (kept across runs), or
    in a fresh temporary directory removed at stop() when None. (Run as root, pgserver starts
    PostgreSQL as its own user `pgserver`, which must be able to reach the directory: a pytest
    tmp_path under /tmp/pytest-of-root is not reachable, a mkdtemp directory is.)"""

    def __init__(self, directory=None):
        import tempfile

        self.temporary = directory is None
        self.directory = Path(directory or tempfile.mkdtemp(prefix="shoe-floor-pg-"))
        self._srv = None

    def start(self):
        try:
            import pgserver
        except ImportError:
            raise ShoeError(
                "the embedded PostgreSQL (pgserver) is not installed for this Python; "
                "give --db postgresql://... of a server"
            ) from None
        self.directory.mkdir(parents=True, exist_ok=True)
        self._srv = pgserver.get_server(
            str(self.directory), cleanup_mode="delete" if self.temporary else "stop"
        )
        return self._srv.get_uri()

    @property
    def url(self):
        return self._srv.get_uri()

    def stop(self):
        if self._srv is not None:
            self._srv.cleanup()
            self._srv = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
