"""``kubectl gpujob ...``: GPU jobs on Slurm from the command line, through the apiserver only.

* ``kubectl gpujob create -f job.yaml --sources DIR`` — create a GPUJob whose
  ``spec.sources.files`` are the text files under ``DIR`` (relative paths kept);
* ``kubectl gpujob script NAME`` — print the ``#SBATCH`` script the controller generated;
* ``kubectl gpujob results NAME -o DIR`` — download the result files, stdout and stderr
  (from the results ConfigMap the controller filled) into ``DIR``;
* ``kubectl logs gpujob/NAME [-c stderr]`` prints the job's stdout (or stderr): see
  :func:`gpujob_output`.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from minik8s.api.gpujobs import API_VERSION, STDERR_KEY, STDOUT_KEY, relative_path_errors
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.gpujoboutput import get_gpujob, results_files
from minik8s.kubectl.manifests import load
from minik8s.kubectl.session import GlobalOptions, Session

app = typer.Typer(help="GPU jobs on Slurm: create from a directory, show the batch script, download results.",
                  no_args_is_help=True)

#: Largest source directory uploaded inline (the apiserver refuses more than 1 MiB of files).
MAX_SOURCES_BYTES = 1024 * 1024


def read_sources(directory: str) -> dict[str, str]:
    """Every regular file under ``directory`` as relative path → text (hidden entries skipped).

    Raises KubectlError for a missing directory, a binary file or more than 1 MiB in all.
    """
    root = Path(directory)
    if not root.is_dir():
        raise KubectlError(f"{directory} is not a directory")
    files: dict[str, str] = {}
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fname in sorted(filenames):
            if fname.startswith("."):
                continue
            path = Path(dirpath) / fname
            if not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            data = path.read_bytes()
            try:
                files[rel] = data.decode("utf-8")
            except UnicodeDecodeError:
                raise KubectlError(f"{path} is not a text file; put binary inputs in a ConfigMap (binaryData) "
                                   f"and use spec.sources.configMapRef") from None
            total += len(data)
    if not files:
        raise KubectlError(f"{directory} has no files")
    if total > MAX_SOURCES_BYTES:
        raise KubectlError(f"{directory} holds {total} bytes; inline sources are limited to {MAX_SOURCES_BYTES} bytes")
    return files


async def _create(opts: GlobalOptions, filename: str, sources: str | None) -> str:
    jobs = [m.obj for m in load([filename], verb="create") if m.obj.get("kind") == "GPUJob"]
    if len(jobs) != 1:
        raise KubectlError(f"{filename} must hold exactly one GPUJob (found {len(jobs)})")
    job = jobs[0]
    if sources:
        files = read_sources(sources)
        size = sum(len(v.encode()) for v in files.values())
        print(f"uploading {len(files)} source file(s), {size} bytes, from {sources}", file=sys.stderr)
        job.setdefault("spec", {})["sources"] = {"files": files}
    async with Session(opts) as s:
        rt = s.registry.by_kind(API_VERSION, "GPUJob")
        if rt is None:
            raise KubectlError('the server doesn\'t have a resource type "gpujobs"')
        ns = (job.get("metadata") or {}).get("namespace") or s.namespace
        created = await s.client.create(rt, job, ns)
    return f"gpujob.minik8s.io/{created['metadata']['name']} created"


async def _script(opts: GlobalOptions, name: str) -> str:
    async with Session(opts) as s:
        job = await get_gpujob(s, name)
    script = (job.get("status") or {}).get("batchScript")
    if not script:
        phase = (job.get("status") or {}).get("phase") or "Pending"
        raise KubectlError(f'GPUJob "{name}" has no batch script yet (phase {phase}; the controller writes it '
                           f'when it uploads the sources)')
    return str(script)


async def _results(opts: GlobalOptions, name: str, out_dir: str) -> list[str]:
    async with Session(opts) as s:
        job = await get_gpujob(s, name)
        files = await results_files(s, job)
    status = job.get("status") or {}
    root = Path(out_dir)
    root.mkdir(parents=True, exist_ok=True)
    job_id = status.get("jobID") or "job"
    wanted: list[tuple[str, str]] = [(STDOUT_KEY, f"slurm-{job_id}.out"), (STDERR_KEY, f"slurm-{job_id}.err")]
    lines = []
    for entry in status.get("results") or []:
        if entry.get("key"):
            wanted.append((entry["key"], entry["path"]))
        else:
            lines.append(f"skipped {entry.get('path')}: {entry.get('message') or 'not kept'}")
    for key, rel in wanted:
        if key not in files:
            continue
        if relative_path_errors(rel):
            lines.append(f"skipped {rel!r}: not a safe relative path")
            continue
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(files[key])
        lines.append(f"wrote {target} ({len(files[key])} bytes)")
    return lines


@app.command("create")
def create(
    ctx: typer.Context,
    filename: Annotated[str, typer.Option("-f", "--filename", help="the GPUJob manifest")],
    sources: Annotated[str | None, typer.Option("--sources", help="directory whose files become "
                                                                  "spec.sources.files")] = None,
) -> None:
    """Create a GPUJob from a manifest, its sources taken from a local directory."""
    print(asyncio.run(_create(ctx.obj, filename, sources)))


@app.command("script")
def script(ctx: typer.Context, name: Annotated[str, typer.Argument(help="GPUJob name")]) -> None:
    """Print the #SBATCH script generated for a GPUJob."""
    sys.stdout.write(asyncio.run(_script(ctx.obj, name)))


@app.command("results")
def results(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="GPUJob name")],
    output: Annotated[str, typer.Option("-o", "--output", help="directory to write the files to")] = ".",
) -> None:
    """Download a finished GPUJob's result files, stdout and stderr into a directory."""
    for line in asyncio.run(_results(ctx.obj, name, output)):
        print(line)
