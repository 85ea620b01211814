"""Pod volumes: ``emptyDir`` directories under the kubelet's root and ``hostPath`` binds.

Layout: ``ROOT/pods/<uid>/volumes/<name>`` for each emptyDir (a tmpfs when
``medium: Memory``), shared by the pod's containers and removed with the pod.
``hostPath`` volumes bind the host path, checked or created per ``type`` as in
Kubernetes (``DirectoryOrCreate`` makes a 0755 directory, ``FileOrCreate`` an empty
0644 file, ``Directory``/``File``/``Socket``/``CharDevice``/``BlockDevice`` must exist
with that kind, ``""`` checks nothing).  Each ``volumeMount`` becomes one Docker bind
``host:container[:ro]``; ``subPath`` binds a path inside the volume.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

log = logging.getLogger("kubelet.volumes")


class VolumeError(Exception):
    """A volume cannot be set up; the message is what the ``FailedMount`` event says."""


class VolumeManager:
    """Creates, resolves and removes the volumes of the pods on this node."""

    def __init__(self, root_dir: Path) -> None:
        self.root = Path(root_dir)

    def pod_dir(self, uid: str) -> Path:
        """``ROOT/pods/<uid>``."""
        return self.root / "pods" / uid

    def volume_dir(self, uid: str, name: str) -> Path:
        """``ROOT/pods/<uid>/volumes/<name>`` (an emptyDir)."""
        return self.pod_dir(uid) / "volumes" / name

    def known_uids(self) -> list[str]:
        """UIDs that have a directory under ``ROOT/pods``."""
        base = self.root / "pods"
        try:
            return [p.name for p in base.iterdir() if p.is_dir()]
        except FileNotFoundError:
            return []

    async def setup(self, pod: dict[str, Any]) -> dict[str, str]:
        """Make every volume of ``pod`` ready; returns volume name → host path.

        Raises VolumeError (unsupported kind, hostPath of the wrong type, I/O errors).
        """
        return await asyncio.to_thread(self._setup, pod)

    def _setup(self, pod: dict[str, Any]) -> dict[str, str]:
        uid = pod["metadata"]["uid"]
        paths: dict[str, str] = {}
        for vol in (pod.get("spec") or {}).get("volumes") or []:
            name = vol.get("name", "")
            try:
                if vol.get("hostPath") is not None:
                    paths[name] = self._host_path(vol["hostPath"])
                elif vol.get("emptyDir") is not None:
                    paths[name] = self._empty_dir(uid, name, vol["emptyDir"] or {})
                else:
                    kinds = [k for k in vol if k != "name"]
                    raise VolumeError(f"volume {name!r}: unsupported volume type {', '.join(kinds) or '(none)'}")
            except OSError as exc:
                raise VolumeError(f"volume {name!r}: {exc}") from exc
        return paths

    def _empty_dir(self, uid: str, name: str, source: dict[str, Any]) -> str:
        path = self.volume_dir(uid, name)
        fresh = not path.exists()
        path.mkdir(parents=True, exist_ok=True)
        if fresh:
            os.chmod(path, 0o777)  # Kubernetes: emptyDir is world-writable
            if source.get("medium") == "Memory":
                self._mount_tmpfs(path, source.get("sizeLimit"))
        return str(path)

    @staticmethod
    def _mount_tmpfs(path: Path, size: str | None) -> None:
        opts = "mode=0777"
        if size:
            from minik8s.api.quantity import parse_memory
            with contextlib.suppress(ValueError):
                opts += f",size={parse_memory(size)}"
        try:
            subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(path)], check=True,
                           capture_output=True, timeout=10)
        except (OSError, subprocess.SubprocessError) as exc:
            log.warning("kubelet emptyDir %s: tmpfs mount failed (%s); using the disk", path, exc)

    @staticmethod
    def _host_path(source: dict[str, Any]) -> str:
        path = Path(source.get("path") or "")
        kind = source.get("type") or ""
        if not path.is_absolute():
            raise VolumeError(f"hostPath {path} must be an absolute path")
        if kind == "DirectoryOrCreate":
            if not path.exists():
                path.mkdir(parents=True, mode=0o755)
            elif not path.is_dir():
                raise VolumeError(f"hostPath type check failed: {path} is not a directory")
        elif kind == "FileOrCreate":
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.touch(mode=0o644)
            elif not path.is_file():
                raise VolumeError(f"hostPath type check failed: {path} is not a file")
        elif kind:
            checks = {"Directory": stat.S_ISDIR, "File": stat.S_ISREG, "Socket": stat.S_ISSOCK,
                      "CharDevice": stat.S_ISCHR, "BlockDevice": stat.S_ISBLK}
            check = checks.get(kind)
            if check is None:
                raise VolumeError(f"hostPath type {kind!r} is not supported")
            try:
                mode = path.stat().st_mode
            except FileNotFoundError:
                raise VolumeError(f"hostPath type check failed: {path} does not exist") from None
            if not check(mode):
                raise VolumeError(f"hostPath type check failed: {path} is not a {kind}")
        return str(path)

    @staticmethod
    def binds(container: dict[str, Any], paths: dict[str, str]) -> list[str]:
        """Docker binds (``host:container[:ro]``) for the container's ``volumeMounts``.

        Raises VolumeError for a mount naming an unknown volume or a subPath escaping it.
        """
        out = []
        for mount in container.get("volumeMounts") or []:
            source = paths.get(mount.get("name", ""))
            if source is None:
                raise VolumeError(f"volumeMount {mount.get('name')!r} names no volume of the pod")
            sub = mount.get("subPath") or ""
            if sub:
                if sub.startswith("/") or ".." in Path(sub).parts:
                    raise VolumeError(f"subPath {sub!r} must be a relative path inside the volume")
                target = Path(source) / sub
                if not target.exists():
                    target.mkdir(parents=True, exist_ok=True)
                source = str(target)
            mode = "ro" if mount.get("readOnly") else "rw"
            out.append(f"{source}:{mount['mountPath']}:{mode}")
        return out

    async def cleanup(self, uid: str) -> None:
        """Remove ``ROOT/pods/<uid>`` (unmounting tmpfs emptyDirs first)."""
        await asyncio.to_thread(self._cleanup, uid)

    def _cleanup(self, uid: str) -> None:
        pod_dir = self.pod_dir(uid)
        if not pod_dir.exists():
            return
        volumes = pod_dir / "volumes"
        if volumes.exists():
            for vol in volumes.iterdir():
                if os.path.ismount(vol):
                    subprocess.run(["umount", str(vol)], capture_output=True, timeout=10, check=False)
        shutil.rmtree(pod_dir, ignore_errors=True)
