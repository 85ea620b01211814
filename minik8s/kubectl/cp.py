"""``kubectl cp SRC DEST [-c CONTAINER] [--no-preserve]``: files and directories into and out of a
container, as kubectl copies them: ``tar`` through ``exec`` (the container needs a ``tar``).

A remote side is ``[NAMESPACE/]POD:PATH``, a local one a path (a glob, going into a pod).

* Into a pod: when ``PATH`` is a directory there (``test -d``), the source goes inside it under its
  own name; a tar of the source, its entries named as the destination, is unpacked by
  ``tar -xmf - -C <the destination's directory>`` in the container (``--no-preserve``: also
  ``--no-same-permissions --no-same-owner``).
* Out of a pod: ``tar cf - PATH`` in the container; each entry, its name less ``PATH`` (without
  leading ``/``, ``./`` and ``../``), is written under the local destination. Entries that would land
  outside it are skipped, as are symbolic links, each with kubectl's warning; what the remote
  ``tar`` says on stderr (``Removing leading '/'``) is passed through.

Errors as kubectl's: ``filespec must match the canonical format: [[namespace/]pod:]file/path``,
``one of src or dest must be a local file specification`` (and ``remote``), ``filepath can not be
empty``, ``SRC doesn't exist in local filesystem``, ``tar contents corrupted``; a remote ``tar``
that fails ends the command with its exit code.
"""

from __future__ import annotations

import asyncio
import glob
import io
import os
import posixpath
import sys
import tarfile
from dataclasses import dataclass
from typing import Annotated

import typer

from minik8s.kubectl.attaching import exec_container
from minik8s.kubectl.channels import exec_url, run_stream
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.session import GlobalOptions, Session

SPEC_FORMAT = "filespec must match the canonical format: [[namespace/]pod:]file/path"


@dataclass(frozen=True)
class FileSpec:
    """One side of a copy: a pod's file (``pod`` set; ``namespace`` None for the default) or a local one."""

    path: str
    pod: str | None = None
    namespace: str | None = None


def file_spec(arg: str) -> FileSpec:
    """``[[NAMESPACE/]POD:]PATH`` → :class:`FileSpec`; KubectlError for another shape."""
    pod, colon, path = arg.partition(":")
    if not colon:
        return FileSpec(arg)
    if not pod:
        raise KubectlError(SPEC_FORMAT)
    pieces = pod.split("/")
    if len(pieces) > 2:
        raise KubectlError(SPEC_FORMAT)
    return FileSpec(path, pieces[-1], pieces[0] if len(pieces) == 2 else None)


def strip_shortcuts(path: str) -> str:
    """A remote path as ``tar`` names its entries: no leading ``/``, cleaned, no leading ``../`` or
    ``./`` (``/tmp/../x/`` → ``x``; ``..`` → empty)."""
    cleaned = posixpath.normpath(path.lstrip("/")) if path.lstrip("/") else ""
    while cleaned.startswith("../"):
        cleaned = cleaned[3:]
    return "" if cleaned in (".", "..") else cleaned


def pack(src: str, dest_name: str) -> bytes:
    """A tar of the local ``src`` (each path its glob matches; directories whole, symbolic links as
    links) with the entries named as ``dest_name`` and the paths below it."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for path in sorted(glob.glob(src)) or [src]:
            _add(tar, path, dest_name)
    return buffer.getvalue()


def _add(tar: tarfile.TarFile, path: str, name: str) -> None:
    info = tar.gettarinfo(path, arcname=name)
    if info.isdir():
        children = sorted(os.listdir(path))
        if not children:
            tar.addfile(info)
        for child in children:
            _add(tar, os.path.join(path, child), posixpath.join(name, child))
    elif info.isfile():
        with open(path, "rb") as fh:
            tar.addfile(info, fh)
    else:
        tar.addfile(info)


def unpack(data: bytes, prefix: str, dest: str, namespace: str, pod: str, src: str) -> None:
    """Write the entries of the tar ``data`` under the local ``dest``, each name less ``prefix``.
    Raises KubectlError (``tar contents corrupted``) for an entry outside ``prefix``."""
    root = os.path.abspath(dest)
    warned = False
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        for member in tar:
            if not member.name.startswith(prefix):
                raise KubectlError("tar contents corrupted")
            rest = strip_shortcuts(member.name[len(prefix):]) if member.name[len(prefix):].strip("/") else ""
            target = os.path.join(dest, rest) if rest else dest
            if os.path.commonpath([root, os.path.abspath(target)]) != root:
                print(f'warning: file "{target}" is outside target destination, skipping', file=sys.stderr)
                continue
            os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
            if member.isdir():
                os.makedirs(target, exist_ok=True)
                continue
            if member.issym():
                if not warned:
                    print(f'warning: skipping symlink: "{target}" -> "{member.linkname}" (consider using '
                          f'"kubectl exec -n "{namespace}" "{pod}" -- tar cf - "{src}" | tar xf -")', file=sys.stderr)
                    warned = True
                else:
                    print(f'warning: skipping symlink: "{target}" -> "{member.linkname}"', file=sys.stderr)
                continue
            source = tar.extractfile(member)
            with open(target, "wb") as out:
                if source is not None:
                    out.write(source.read())


async def _target(opts: GlobalOptions, spec: FileSpec, container: str | None) -> tuple[str, str, str]:
    """``(namespace, pod, container)`` of the remote side: the pod must exist; without ``-c`` its
    default container (announced on stderr as ``exec`` announces it)."""
    async with Session(opts) as s:
        namespace = spec.namespace or s.namespace
        pod = await s.client.get(s.resource("pods"), str(spec.pod), namespace)
    return namespace, str(spec.pod), exec_container(pod, container)


def _run(opts: GlobalOptions, target: tuple[str, str, str], command: list[str], stdin: bytes | None = None,
         stdout: io.BytesIO | None = None, quiet: bool = False) -> int:
    config = opts.config()
    namespace, pod, container = target
    url = exec_url(config.server, namespace, pod, command, container, stdin=stdin is not None)
    return asyncio.run(run_stream(config, url, stdin if stdin is not None else False, False,
                                  stdout=stdout if stdout is not None else io.BytesIO(),
                                  stderr=io.BytesIO() if quiet else None))


def _fail(code: int) -> None:
    if code:
        print(f"command terminated with exit code {code}", file=sys.stderr)
        raise typer.Exit(code)


def copy_to_pod(opts: GlobalOptions, src: FileSpec, dest: FileSpec, container: str | None,
                no_preserve: bool) -> None:
    if not glob.glob(src.path) and not os.path.lexists(src.path):
        raise KubectlError(f"{src.path} doesn't exist in local filesystem")
    target = asyncio.run(_target(opts, dest, container))
    dest_path = dest.path
    if _run(opts, target, ["test", "-d", dest_path], quiet=True) == 0:
        dest_path = posixpath.join(dest_path, os.path.basename(os.path.normpath(src.path)))
    dest_path = posixpath.normpath(dest_path)
    command = ["tar", "--no-same-permissions", "--no-same-owner", "-xmf", "-"] if no_preserve else ["tar", "-xmf", "-"]
    directory = posixpath.dirname(dest_path) or "."
    command += ["-C", directory]
    _fail(_run(opts, target, command, stdin=pack(src.path, posixpath.basename(dest_path)), stdout=None))


def copy_from_pod(opts: GlobalOptions, src: FileSpec, dest: FileSpec, container: str | None) -> None:
    target = asyncio.run(_target(opts, src, container))
    out = io.BytesIO()
    _fail(_run(opts, target, ["tar", "cf", "-", src.path], stdout=out))
    unpack(out.getvalue(), strip_shortcuts(src.path), dest.path, target[0], target[1], src.path)


def cp(
    ctx: typer.Context,
    src: Annotated[str, typer.Argument(metavar="SRC", help="[[NAMESPACE/]POD:]PATH")],
    dest: Annotated[str, typer.Argument(metavar="DEST", help="[[NAMESPACE/]POD:]PATH")],
    container: Annotated[str | None, typer.Option("-c", "--container", help="container name")] = None,
    no_preserve: Annotated[bool, typer.Option("--no-preserve", help="the copied files' owner and "
                                                                    "permissions are not kept in the container")]
    = False,
) -> None:
    """Copy files and directories to and from containers."""
    opts: GlobalOptions = ctx.obj
    source, destination = file_spec(src), file_spec(dest)
    if source.pod and destination.pod:
        raise KubectlError("one of src or dest must be a local file specification")
    if not source.path or not destination.path:
        raise KubectlError("filepath can not be empty")
    if source.pod:
        copy_from_pod(opts, source, destination, container)
    elif destination.pod:
        copy_to_pod(opts, source, destination, container, no_preserve)
    else:
        raise KubectlError("one of src or dest must be a remote file specification")
