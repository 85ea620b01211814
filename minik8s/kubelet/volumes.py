"""Pod volumes: ``emptyDir`` directories under the kubelet's root, ``hostPath`` binds, and the
volumes that project API data: ``configMap``, ``secret``, ``downwardAPI`` and ``projected``.

Layout: ``ROOT/pods/<uid>/volumes/<name>`` for each emptyDir (a tmpfs when
``medium: Memory``), shared by the pod's containers and removed with the pod.
``configMap`` volumes live in ``ROOT/pods/<uid>/volumes/kubernetes.io~configmap/<name>`` and
``secret`` volumes in ``ROOT/pods/<uid>/volumes/kubernetes.io~secret/<name>`` (a tmpfs, so
Secrets stay off the disk where mounting works; the ``kubernetes.io~secret`` directory is
0700, so no other host user can reach them); ``downwardAPI`` volumes in
``.../kubernetes.io~downward-api/<name>`` and ``projected`` volumes (one directory for all
their ``configMap``/``secret``/``downwardAPI``/``serviceAccountToken`` sources) in
``.../kubernetes.io~projected/<name>`` (a tmpfs, as they may hold Secrets and tokens).  Their files are written by the
:class:`~minik8s.kubelet.atomic_writer.AtomicWriter` and rewritten by :meth:`VolumeManager.refresh`
on every pod sync (a changed object or label reaches them within seconds), and containers
always mount them read-only.
``hostPath`` volumes bind the host path, checked or created per ``type`` as in
Kubernetes (``DirectoryOrCreate`` makes a 0755 directory, ``FileOrCreate`` an empty
0644 file, ``Directory``/``File``/``Socket``/``CharDevice``/``BlockDevice`` must exist
with that kind, ``""`` checks nothing).  Each ``volumeMount`` becomes one Docker bind
``host:container:ro|rw[,propagation]``; ``subPath`` (or ``subPathExpr``, expanded from the
container's environment) binds a path inside the volume; ``mountPropagation`` is Docker's bind
propagation (``HostToContainer``: ``rslave``, ``Bidirectional``: ``rshared``).
``persistentVolumeClaim`` volumes use the PersistentVolume bound to the claim (looked up in the
kubelet's informers, :mod:`minik8s.kubelet.storage`): its ``hostPath`` or ``local`` directory is
bound as a hostPath volume would be (a local-path volume's directory is first made world-writable,
0777, as Rancher's local-path-provisioner makes it: :func:`~minik8s.kubelet.storage.make_local_path_dir`),
an ``nfs`` export is mounted.  A claim that is missing or not
bound yet fails the mount (``FailedMount``, retried at the next pod sync).  ``nfs`` volumes (in the
pod or in the volume) are mounted with ``mount -t nfs server:path`` on
``ROOT/pods/<uid>/volumes/kubernetes.io~nfs/<name>`` when the kernel has the NFS client, and refused
with a clear message when it has not; they are unmounted when the pod goes (a pod directory whose
NFS mount cannot be unmounted is left in place, never deleted through the mount).
``readOnly`` of a claim or nfs volume makes every mount of it read-only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from minik8s.api.base import Obj
from minik8s.kubelet.atomic_writer import AtomicWriter, FileProjection, PayloadError
from minik8s.kubelet.configsources import (
    DEFAULT_MODE,
    ConfigError,
    ContainerConfigError,
    Lookup,
    object_payload,
    projection_reference,
    volume_payload,
    volume_reference,
)
from minik8s.kubelet.downwardapi import downward_api_payload
from minik8s.kubelet.storage import make_local_path_dir, nfs_supported
from minik8s.kubelet.tokens import TokenManager, TokenUnavailable

log = logging.getLogger("kubelet.volumes")


class VolumeError(Exception):
    """A volume cannot be set up; the message is what the ``FailedMount`` event says."""


class VolumeManager:
    """Creates, resolves and removes the volumes of the pods on this node."""

    #: directories of the volume plugins that project API data, per volume kind
    PLUGIN_DIRS = {"ConfigMap": "kubernetes.io~configmap", "Secret": "kubernetes.io~secret",
                   "DownwardAPI": "kubernetes.io~downward-api", "Projected": "kubernetes.io~projected",
                   "NFS": "kubernetes.io~nfs"}
    #: the kinds whose directory is a tmpfs under a 0700 plugin directory (they may hold Secrets)
    IN_MEMORY = ("Secret", "Projected")

    def __init__(self, root_dir: Path, lookup: Lookup | None = None,
                 allocatable: Callable[[], dict[str, str]] | None = None,
                 tokens: TokenManager | None = None,
                 claims: Callable[[str, str], Obj | None] | None = None,
                 volumes: Callable[[str], Obj | None] | None = None,
                 nfs_check: Callable[[], bool] = nfs_supported,
                 local_path: Callable[[Obj], Path | None] | None = None) -> None:
        self.root = Path(root_dir)
        #: the cached PersistentVolumeClaim ``(namespace, name)`` and PersistentVolume ``name``
        self.claims: Callable[[str, str], Obj | None] = claims or (lambda namespace, name: None)
        self.volumes: Callable[[str], Obj | None] = volumes or (lambda name: None)
        #: the directory of a PersistentVolume when it is a local-path volume of this node, else None
        #: (:meth:`minik8s.kubelet.storage.StorageSources.local_path`)
        self.local_path: Callable[[Obj], Path | None] = local_path or (lambda pv: None)
        #: whether this host can mount NFS (:func:`minik8s.kubelet.storage.nfs_supported`)
        self.nfs_check = nfs_check
        #: finds the ConfigMaps and Secrets that volumes name (none: they count as missing)
        self.lookup: Lookup = lookup or (lambda kind, namespace, name: None)
        #: the node's allocatable resources (``{"cpu": "4", "memory": "16318480Ki", ...}``):
        #: what ``resourceFieldRef`` reports for a container without that limit
        self.allocatable: Callable[[], dict[str, str]] = allocatable or dict
        #: the service-account tokens of projected ``serviceAccountToken`` sources
        self.tokens = tokens or TokenManager(None)

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
        await self.tokens.prepare(pod)
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
                    paths[name] = self._empty_dir(uid, name, vol["emptyDir"] or {}, fs_group(pod))
                elif api_volume_kind(vol) is not None:
                    paths[name] = self._api_volume(pod, vol)
                elif vol.get("persistentVolumeClaim") is not None:
                    paths[name] = self._claim(pod, name, vol["persistentVolumeClaim"])
                elif vol.get("nfs") is not None:
                    paths[name] = self._nfs(uid, name, vol["nfs"])
                else:
                    kinds = [k for k in vol if k != "name"]
                    raise VolumeError(f"volume {name!r}: unsupported volume type {', '.join(kinds) or '(none)'}")
            except (OSError, ConfigError, PayloadError) as exc:
                raise VolumeError(f"volume {name!r}: {exc}") from exc
        return paths

    async def refresh(self, pod: dict[str, Any]) -> list[str]:
        """Rewrite the pod's ``configMap``/``secret``/``downwardAPI``/``projected`` volumes from
        the current objects and the pod itself (files change only when the data did).  Returns
        one message per volume that could not be updated (its files stay as they were).
        Service-account tokens due for refresh are asked for first."""
        await self.tokens.prepare(pod)
        return await asyncio.to_thread(self._refresh, pod)

    def _refresh(self, pod: dict[str, Any]) -> list[str]:
        failures = []
        for vol in (pod.get("spec") or {}).get("volumes") or []:
            if api_volume_kind(vol) is None:
                continue
            try:
                self._api_volume(pod, vol)
            except (OSError, ConfigError, PayloadError) as exc:
                failures.append(f"volume {vol.get('name')!r}: {exc}")
        return failures

    @staticmethod
    def read_only_volumes(pod: dict[str, Any]) -> set[str]:
        """Names of the pod's volumes that containers mount read-only whatever they ask
        (``configMap``, ``secret``, ``downwardAPI`` and ``projected``, as Kubernetes does)."""
        return {vol.get("name", "") for vol in (pod.get("spec") or {}).get("volumes") or []
                if api_volume_kind(vol) is not None
                or ((vol.get("persistentVolumeClaim") or {}).get("readOnly"))
                or ((vol.get("nfs") or {}).get("readOnly"))}

    def projected_dir(self, uid: str, kind: str, name: str) -> Path:
        """``ROOT/pods/<uid>/volumes/kubernetes.io~configmap/<name>`` (``~secret``, ``~downward-api``,
        ``~projected``) for ``kind`` ``ConfigMap``/``Secret``/``DownwardAPI``/``Projected``."""
        return self.pod_dir(uid) / "volumes" / self.PLUGIN_DIRS[kind] / name

    def _api_volume(self, pod: dict[str, Any], vol: dict[str, Any]) -> str:
        meta = pod["metadata"]
        kind = api_volume_kind(vol)
        assert kind is not None
        payload = self.payload(pod, vol)
        path = self.projected_dir(meta["uid"], kind, vol.get("name", ""))
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            os.chmod(path.parent, 0o700 if kind in self.IN_MEMORY else 0o755)
            path.mkdir(mode=0o755)
            os.chmod(path, 0o755)
            if kind in self.IN_MEMORY:
                self._mount_tmpfs(path, None, mode="0755")
        group = fs_group(pod)
        if AtomicWriter(path).write(payload) and group is not None:
            set_volume_ownership(path, group, read_only=True)
        return str(path)

    def payload(self, pod: dict[str, Any], vol: dict[str, Any]) -> dict[str, FileProjection]:
        """Path → file of a ``configMap``/``secret``/``downwardAPI``/``projected`` volume of ``pod``.

        A projected volume gathers its sources in order (a later source's file replaces an
        earlier one at the same path, as in Kubernetes); each file's mode is its item's
        ``mode``, else the volume's ``defaultMode`` (0644).  Raises ConfigError for a missing
        ConfigMap/Secret/key (unless optional) or an unsupported source.
        """
        namespace = (pod.get("metadata") or {}).get("namespace") or ""
        if volume_reference(vol) is not None:
            return volume_payload(namespace, vol, self.lookup)
        if vol.get("downwardAPI") is not None:
            source = vol["downwardAPI"] or {}
            return downward_api_payload(pod, source.get("items") or [], _mode(source), self._allocatable(source))
        projected = vol.get("projected") or {}
        default_mode = _mode(projected)
        payload: dict[str, FileProjection] = {}
        for source in projected.get("sources") or []:
            ref = projection_reference(source)
            if ref is not None:
                selection = source["configMap" if ref[0] == "ConfigMap" else "secret"]
                payload.update(object_payload(namespace, ref, selection, default_mode, self.lookup))
            elif source.get("downwardAPI") is not None:
                items = (source["downwardAPI"] or {}).get("items") or []
                payload.update(downward_api_payload(pod, items, default_mode, self._allocatable(source["downwardAPI"])))
            elif source.get("serviceAccountToken") is not None:
                payload.update(self.service_account_token(pod, source["serviceAccountToken"], default_mode))
        return payload

    def service_account_token(self, pod: dict[str, Any], source: dict[str, Any],
                              mode: int) -> dict[str, FileProjection]:
        """The file of a projected ``serviceAccountToken`` source (``audience``,
        ``expirationSeconds``, ``path``): a token of the pod's service account bound to the pod,
        from :class:`~minik8s.kubelet.tokens.TokenManager` (asked for before set-up and refresh).
        Raises ConfigError with the apiserver's reason while there is none."""
        try:
            token = self.tokens.token(pod, source)
        except TokenUnavailable as exc:
            raise ConfigError(str(exc)) from None
        return {str(source.get("path") or "token"): FileProjection(token.encode(), mode)}

    def _allocatable(self, source: dict[str, Any] | None) -> dict[str, str] | None:
        """The node's allocatable resources, read only when ``source`` has a ``resourceFieldRef``."""
        if any(item.get("resourceFieldRef") for item in (source or {}).get("items") or []):
            return self.allocatable()
        return None

    def _empty_dir(self, uid: str, name: str, source: dict[str, Any], group: int | None = None) -> str:
        path = self.volume_dir(uid, name)
        fresh = not path.exists()
        path.mkdir(parents=True, exist_ok=True)
        if fresh:
            os.chmod(path, 0o777)  # Kubernetes: emptyDir is world-writable
            if source.get("medium") == "Memory":
                self._mount_tmpfs(path, source.get("sizeLimit"))
            if group is not None:
                set_volume_ownership(path, group, read_only=False)
        return str(path)

    @staticmethod
    def _mount_tmpfs(path: Path, size: str | None, mode: str = "0777") -> None:
        opts = f"mode={mode}"
        if size:
            from minik8s.api.quantity import parse_memory
            with contextlib.suppress(ValueError):
                opts += f",size={parse_memory(size)}"
        try:
            subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(path)], check=True,
                           capture_output=True, timeout=10)
        except (OSError, subprocess.SubprocessError) as exc:
            log.warning("kubelet emptyDir %s: tmpfs mount failed (%s); using the disk", path, exc)

    def _claim(self, pod: dict[str, Any], name: str, source: dict[str, Any]) -> str:
        """The host path of the volume bound to the claim ``source["claimName"]``."""
        namespace = (pod.get("metadata") or {}).get("namespace") or ""
        claim_name = str(source.get("claimName") or "")
        pvc = self.claims(namespace, claim_name)
        what = f"error processing PVC {namespace}/{claim_name}"
        if pvc is None:
            raise VolumeError(f'{what}: persistentvolumeclaim "{claim_name}" not found')
        volume_name = (pvc.get("spec") or {}).get("volumeName")
        if not volume_name or (pvc.get("status") or {}).get("phase") != "Bound":
            raise VolumeError(f"{what}: PVC is not bound")
        pv = self.volumes(str(volume_name))
        if pv is None:
            raise VolumeError(f'{what}: persistentvolume "{volume_name}" not found')
        ref = (pv.get("spec") or {}).get("claimRef") or {}
        if ref.get("uid") and ref.get("uid") != (pvc.get("metadata") or {}).get("uid"):
            raise VolumeError(f"{what}: the volume {volume_name} is bound to another claim")
        spec = pv.get("spec") or {}
        if spec.get("hostPath") is not None:
            directory = self.local_path(pv)
            if directory is not None:
                make_local_path_dir(directory)
            return self._host_path(spec["hostPath"])
        if spec.get("local") is not None:
            path = Path(str(spec["local"].get("path") or ""))
            if not path.is_dir():
                raise VolumeError(f"local volume {volume_name}: {path} is not a directory on this node")
            return str(path)
        if spec.get("nfs") is not None:
            uid = pod["metadata"]["uid"]
            return self._nfs(uid, name, spec["nfs"])
        raise VolumeError(f"volume {volume_name}: unsupported volume source")

    def _nfs(self, uid: str, name: str, source: dict[str, Any]) -> str:
        """Mount ``server:path`` on ``ROOT/pods/<uid>/volumes/kubernetes.io~nfs/<name>`` (once)."""
        target = self.pod_dir(uid) / "volumes" / self.PLUGIN_DIRS["NFS"] / name
        if os.path.ismount(target):
            return str(target)
        if not self.nfs_check():
            raise VolumeError("nfs: this node's kernel has no NFS client (no nfs in /proc/filesystems and "
                              "modprobe nfs failed): install nfs-common / load the nfs module")
        target.mkdir(parents=True, exist_ok=True)
        options = ["-o", "ro"] if source.get("readOnly") else []
        export = f"{source.get('server')}:{source.get('path')}"
        try:
            done = subprocess.run(["mount", "-t", "nfs", *options, export, str(target)], capture_output=True,
                                  text=True, timeout=120, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise VolumeError(f"nfs: mount {export} failed: {exc}") from exc
        if done.returncode != 0:
            raise VolumeError(f"nfs: mount {export} failed: {(done.stderr or done.stdout).strip()}")
        return str(target)

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
    def binds(container: dict[str, Any], paths: dict[str, str], read_only: set[str] | None = None,
              env: dict[str, str] | None = None) -> list[str]:
        """Docker binds (``host:container:ro|rw[,propagation]``) for the container's ``volumeMounts``;
        volumes named in ``read_only`` are always mounted read-only.

        ``subPathExpr`` is expanded from the container's environment ``env`` (Kubernetes'
        ``ExpandContainerVolumeMounts``: every ``$(VAR)`` must have a non-empty value, else
        ContainerConfigError "missing value for VAR"). ``mountPropagation`` maps to Docker's bind
        propagation (:data:`PROPAGATION`); Docker refuses ``rslave``/``rshared`` on a source that is
        not on a shared (or slave) mount, which the pod then shows as a CreateContainerError.
        Raises VolumeError for a mount naming an unknown volume or a subPath escaping it.
        A subPath of a ``configMap``/``secret``/``downwardAPI``/``projected`` volume binds the
        file as it is now: later updates do not reach it (as in Kubernetes).
        """
        read_only = read_only or set()
        out = []
        for mount in container.get("volumeMounts") or []:
            source = paths.get(mount.get("name", ""))
            if source is None:
                raise VolumeError(f"volumeMount {mount.get('name')!r} names no volume of the pod")
            sub = mount.get("subPath") or ""
            if mount.get("subPathExpr"):
                sub = expand_sub_path(mount["subPathExpr"], env or {})
            if sub:
                if sub.startswith("/") or ".." in Path(sub).parts:
                    raise VolumeError(f"subPath {sub!r} must be a relative path inside the volume")
                source = str(make_sub_path(Path(source), sub))
            mode = "ro" if mount.get("readOnly") or mount.get("name") in read_only else "rw"
            propagation = PROPAGATION.get(mount.get("mountPropagation") or "None", "")
            out.append(f"{source}:{mount['mountPath']}:{mode}" + (f",{propagation}" if propagation else ""))
        return out

    async def cleanup(self, uid: str) -> None:
        """Remove ``ROOT/pods/<uid>`` (unmounting tmpfs emptyDirs first) and forget its tokens."""
        self.tokens.forget(uid)
        await asyncio.to_thread(self._cleanup, uid)

    def _cleanup(self, uid: str) -> None:
        pod_dir = self.pod_dir(uid)
        if not pod_dir.exists():
            return
        volumes = pod_dir / "volumes"
        if volumes.exists():
            mounts = [vol for vol in volumes.iterdir()]
            mounts += [vol for plugin in self.PLUGIN_DIRS.values() if (volumes / plugin).is_dir()
                       for vol in (volumes / plugin).iterdir()]
            for vol in mounts:
                if os.path.ismount(vol):
                    subprocess.run(["umount", str(vol)], capture_output=True, timeout=10, check=False)
            if any(os.path.ismount(vol) for vol in mounts):
                log.warning("pod directory %s keeps a mount that cannot be unmounted: left in place", pod_dir)
                return
        shutil.rmtree(pod_dir, ignore_errors=True)


#: ``mountPropagation`` → Docker's bind propagation (None: Docker's default, ``rprivate``)
PROPAGATION = {"None": "", "HostToContainer": "rslave", "Bidirectional": "rshared"}
_SUB_PATH_REF = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_.\-]*)\)|\$\$")


def expand_sub_path(expr: str, env: dict[str, str]) -> str:
    """``subPathExpr`` with its ``$(VAR)`` references replaced from ``env`` (``$$`` → ``$``).
    Raises ContainerConfigError "missing value for A, B" when a variable is unset or empty."""
    missing: set[str] = set()

    def repl(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        value = env.get(m.group(1), "")
        if not value:
            missing.add(m.group(1))
        return value
    out = _SUB_PATH_REF.sub(repl, expr)
    if missing:
        raise ContainerConfigError(f"missing value for {', '.join(sorted(missing))}")
    return out


def api_volume_kind(vol: dict[str, Any]) -> str | None:
    """``ConfigMap``/``Secret``/``DownwardAPI``/``Projected`` for a volume that projects API data, else None."""
    ref = volume_reference(vol)
    if ref is not None:
        return ref[0]
    if vol.get("downwardAPI") is not None:
        return "DownwardAPI"
    if vol.get("projected") is not None:
        return "Projected"
    return None


def _mode(source: dict[str, Any]) -> int:
    mode = source.get("defaultMode")
    return DEFAULT_MODE if mode is None else int(mode)


def make_sub_path(volume: Path, sub: str) -> Path:
    """``volume/sub``, its missing directories made as Kubernetes' kubelet makes them (``makeMounts``
    → ``SafeMakeDir`` with ``GetMode`` of the volume): each with the volume root's mode (setgid
    included), set with chmod so that the umask does not narrow it. A subPath of an emptyDir
    (``0777``, with ``fsGroup`` ``2777`` and the group) is thereby writable by a non-root
    container, as bitnami's charts need (``/opt/bitnami/nginx/conf`` on an emptyDir subPath)."""
    mode = stat.S_IMODE(volume.stat().st_mode)
    target = volume
    for part in Path(sub).parts:
        target = target / part
        if not target.exists():
            target.mkdir()
            os.chmod(target, mode)
    return target


def fs_group(pod: dict[str, Any]) -> int | None:
    """The pod's ``securityContext.fsGroup`` (None when unset)."""
    value = ((pod.get("spec") or {}).get("securityContext") or {}).get("fsGroup")
    return int(value) if value is not None else None


def set_volume_ownership(path: Path, group: int, read_only: bool) -> None:
    """Kubernetes' ``SetVolumeOwnership`` for ``fsGroup``: every file and directory under ``path``
    (symlinks skipped) gets group ``group``; files gain ``rw-rw----`` (``r--r-----`` for a
    read-only volume), directories the same plus ``x`` and the setgid bit, so new files
    inherit the group.  Only the pod's own volume directories are passed here, never hostPaths."""
    mask = 0o440 if read_only else 0o660
    entries = [str(path)] + [os.path.join(root, name) for root, dirs, files in os.walk(path) for name in dirs + files]
    for full in entries:
        info = os.lstat(full)
        if stat.S_ISLNK(info.st_mode):
            continue
        os.lchown(full, -1, group)
        extra = mask | (0o110 | stat.S_ISGID if stat.S_ISDIR(info.st_mode) else 0)
        os.chmod(full, stat.S_IMODE(info.st_mode) | extra)
