"""Kubernetes' AtomicWriter: replace the files of a ConfigMap/Secret volume all at once.

Layout of a volume directory (``pkg/volume/util/atomic_writer.go``)::

    <dir>/..2026_01_02_03_04_05.123456789/   the current files (a fresh directory per write)
    <dir>/..data -> ..2026_01_02_03_04_05.123456789
    <dir>/<key>  -> ..data/<key>              one link per top-level path of the payload

A write creates a new timestamped directory with every file, points a ``..data_tmp`` link at
it and renames that over ``..data`` (``rename(2)`` is atomic), then adds the user-visible
links that are new, removes those that are gone, and deletes the old directory (and any
that an interrupted write left).  A reader in the container (the directory is bind-mounted)
therefore sees either all old or all new files, never a mix.  Paths are relative, never
contain ``..`` and never start with ``..`` (they cannot hide the writer's own entries).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

DATA_DIR = "..data"
DATA_TMP = "..data_tmp"


@dataclass(frozen=True)
class FileProjection:
    """One file of a payload: its bytes and its permission bits (``0o644``)."""

    data: bytes
    mode: int


class PayloadError(ValueError):
    """A payload path that is absolute, escapes the volume or starts with ``..``."""


def check_path(path: str) -> None:
    """Raise PayloadError unless ``path`` is a relative path inside the volume, not starting with ``..``."""
    if not path:
        raise PayloadError("the path of a volume file may not be empty")
    if path.startswith("/"):
        raise PayloadError(f"{path}: must be a relative path")
    if ".." in PurePosixPath(path).parts:
        raise PayloadError(f"{path}: must not contain '..'")
    if path.startswith(".."):
        raise PayloadError(f"{path}: must not start with '..'")


class AtomicWriter:
    """Writes payloads into ``target`` (a directory, created 0755 when missing)."""

    def __init__(self, target: Path) -> None:
        self.target = Path(target)

    def current(self) -> dict[str, FileProjection] | None:
        """The payload the volume holds now (None when nothing was written yet)."""
        data_dir = self.target / DATA_DIR
        if not data_dir.is_symlink():
            return None
        base = self.target / os.readlink(data_dir)
        out: dict[str, FileProjection] = {}
        for root, _, files in os.walk(base):
            for name in files:
                full = Path(root) / name
                out[str(full.relative_to(base))] = FileProjection(full.read_bytes(), full.stat().st_mode & 0o7777)
        return out

    def write(self, payload: dict[str, FileProjection]) -> bool:
        """Make the volume hold exactly ``payload`` (path → file); returns False when it already did.

        Raises PayloadError for a bad path and OSError when the disk fails (the old files
        then stay in place: ``..data`` moves only after every new file is written).
        """
        for path in payload:
            check_path(path)
        self.target.mkdir(parents=True, exist_ok=True)
        if self.current() == payload:
            return False
        stamp = dt.datetime.now(dt.UTC).strftime("..%Y_%m_%d_%H_%M_%S.")
        new_dir = Path(tempfile.mkdtemp(prefix=stamp, dir=self.target))
        try:
            os.chmod(new_dir, 0o755)
            for path, projection in payload.items():
                full = new_dir / path
                full.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
                full.write_bytes(projection.data)
                os.chmod(full, projection.mode & 0o7777)
            tmp_link = self.target / DATA_TMP
            if tmp_link.is_symlink() or tmp_link.exists():
                tmp_link.unlink()
            os.symlink(new_dir.name, tmp_link)
            os.rename(tmp_link, self.target / DATA_DIR)
        except BaseException:
            shutil.rmtree(new_dir, ignore_errors=True)
            raise
        self._update_links(payload)
        for entry in self.target.iterdir():  # the previous directory, and any left by an interrupted write
            if entry.name.startswith("..") and entry.name != new_dir.name and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
        return True

    def _update_links(self, payload: dict[str, FileProjection]) -> None:
        """User-visible ``<top> -> ..data/<top>`` links: add the new ones, drop the ones that went away."""
        wanted = {PurePosixPath(path).parts[0] for path in payload}
        for top in wanted:
            link = self.target / top
            if not link.is_symlink():
                if link.exists():  # a stray file or directory (e.g. made for a subPath) is in the way
                    shutil.rmtree(link) if link.is_dir() else link.unlink()
                os.symlink(f"{DATA_DIR}/{top}", link)
        for entry in self.target.iterdir():
            if entry.name.startswith("..") or entry.name in wanted:
                continue
            if entry.is_symlink() and os.readlink(entry).startswith(f"{DATA_DIR}/"):
                entry.unlink()
