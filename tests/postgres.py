"""A throwaway PostgreSQL server for tests: Debian's binaries (installed by `make test`), a new cluster in a
temporary folder, listening on 127.0.0.1 only, stopped and removed afterwards. Skips, saying how to install it,
where PostgreSQL or psycopg is missing."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _bindir() -> Path | None:
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    return Path(versions[-1]).parent if versions else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Postgres:
    """One cluster: ``url`` to reach it, ``restart()`` to stop and start it again (its data kept)."""

    def __init__(self, bindir: Path, folder: Path):
        self.bindir, self.folder = bindir, folder
        self.data = folder / "data"
        self.port = _free_port()
        self.url = f"postgresql://debatrix@127.0.0.1:{self.port}/postgres"
        # PostgreSQL refuses to run as root: as root, the cluster belongs to Debian's postgres user
        self._as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self._as:
            shutil.chown(folder, "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "debatrix", "--auth=trust", "-E", "UTF8", "--no-sync")

    def _run(self, tool: str, *args: str) -> None:
        done = subprocess.run([*self._as, str(self.bindir / tool), *args], capture_output=True, text=True,
                              timeout=120)
        if done.returncode:
            raise RuntimeError(f"{tool} failed: {done.stdout}{done.stderr}")

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "log"), "-w", "-o",
                  f"-k {self.folder} -p {self.port} -c listen_addresses=127.0.0.1 -c fsync=off "
                  "-c max_connections=200", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self) -> None:
        self.stop()
        self.start()


@contextmanager
def postgres_server() -> Iterator[Postgres]:
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'debatrix[postgres]' (make test does)")
    bindir = _bindir()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed: apt-get install postgresql (make test does, as root on Debian)")
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        pytest.skip("running as root without runuser: PostgreSQL cannot be started")
    folder = Path(tempfile.mkdtemp(prefix="debatrix-pg-"))
    server = None
    try:
        server = Postgres(bindir, folder)
        server.start()
        yield server
    finally:
        if server is not None:
            try:
                server.stop("immediate")
            except (RuntimeError, subprocess.TimeoutExpired):
                pass
        shutil.rmtree(folder, ignore_errors=True)
