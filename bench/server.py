"""The managed local Neo4j the benchmark starts for itself, in a throw-away home."""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from service.config import Settings
from service.neo4j_local import NEO4J_VERSION, LocalNeo4j, ensure_jars, free_port

HEAP = "2g"
PAGECACHE_MB = 1024


@dataclass
class BenchNeo4j:
    server: LocalNeo4j
    home: Path
    keep: bool = False

    @classmethod
    def start(cls, keep: bool = False) -> "BenchNeo4j":
        lib_dir = ensure_jars(Settings.from_env().cache_dir)
        home = Path(tempfile.mkdtemp(prefix="ctxdag-bench-"))
        server = LocalNeo4j(home=home, port=free_port(), lib_dir=lib_dir, heap=HEAP,
                            pagecache_mb=PAGECACHE_MB)
        try:
            server.start()
        except BaseException:
            shutil.rmtree(home, ignore_errors=True)
            raise
        return cls(server, home, keep)

    @property
    def uri(self) -> str:
        return self.server.uri

    @property
    def version(self) -> str:
        return NEO4J_VERSION

    @property
    def store_dir(self) -> Path:
        """The default database's store files (records, indexes, counts)."""
        return self.home / "data" / "databases" / "neo4j"

    @property
    def tx_log_dir(self) -> Path:
        return self.home / "data" / "transactions" / "neo4j"

    def store_bytes(self) -> int:
        return dir_bytes(self.store_dir)

    def store_apparent_bytes(self) -> int:
        return dir_bytes(self.store_dir, apparent=True)

    def tx_log_bytes(self) -> int:
        return dir_bytes(self.tx_log_dir)

    def restart(self) -> dict[str, int]:
        """A clean stop (Neo4j checkpoints on shutdown) and a start on the same home and
        port; returns the sizes measured while it was down, everything flushed.

        `CALL db.checkpoint()` is not registered in Neo4j 5.26 Community, so a clean
        shutdown is how the store files are brought up to date before measuring them.
        """
        self.server.stop()
        sizes = {"store": self.store_bytes(), "store_apparent": self.store_apparent_bytes(),
                 "tx_logs": self.tx_log_bytes()}
        self.server.start()
        return sizes

    def stop(self) -> None:
        self.server.stop()
        if not self.keep:
            shutil.rmtree(self.home, ignore_errors=True)


def dir_bytes(path: Path, apparent: bool = False) -> int:
    """Bytes allocated on disk (what `du` counts), or the files' apparent sizes."""
    total = 0
    for p in path.rglob("*"):
        try:
            if p.is_file():
                st = p.stat()
                total += st.st_size if apparent else st.st_blocks * 512
        except FileNotFoundError:
            continue
    return total
