"""A GPUJob's kept output, read through the apiserver: what ``kubectl gpujob results`` downloads
and ``kubectl logs gpujob/NAME`` prints (shared by both verbs).

The GPUJob controller keeps stdout, stderr and the result files in the ConfigMap named by
``status.resultsConfigMap`` (owned by the GPUJob); while the job runs, ``status.stdoutTail``
and ``status.stderrTail`` hold the latest lines.
"""

from __future__ import annotations

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.gpujobs import API_VERSION, STDERR_KEY, STDOUT_KEY, config_map_files
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.session import GlobalOptions, Session


async def get_gpujob(s: Session, name: str) -> Obj:
    return await s.get_object(API_VERSION, "GPUJob", name)


async def results_files(s: Session, job: Obj) -> dict[str, bytes]:
    """The keys of the GPUJob's results ConfigMap as bytes (KubectlError while there is none)."""
    status = job.get("status") or {}
    name = status.get("resultsConfigMap")
    if not name:
        phase = status.get("phase") or "Pending"
        raise KubectlError(f'GPUJob "{job["metadata"]["name"]}" has no results yet (phase {phase})')
    rt = s.registry.by_kind("v1", "ConfigMap")
    if rt is None:
        raise KubectlError('the server doesn\'t have a resource type "configmaps"')
    try:
        config_map = await s.client.get(rt, name, s.namespace)
    except errors.NotFound:
        raise KubectlError(f'the results ConfigMap "{name}" is gone') from None
    try:
        return config_map_files(config_map)
    except ValueError as exc:
        raise KubectlError(f'the results ConfigMap "{name}" has bad binaryData: {exc}') from None


async def gpujob_output(opts: GlobalOptions, name: str, stream: str) -> str:
    """The job's whole kept stdout (``stream`` ``stdout``) or stderr; while it runs, the tail
    the status holds."""
    if stream not in (STDOUT_KEY, STDERR_KEY):
        raise KubectlError(f'a GPUJob has the streams "stdout" and "stderr", not "{stream}"')
    async with Session(opts) as s:
        job = await get_gpujob(s, name)
        status = job.get("status") or {}
        if status.get("resultsConfigMap"):
            return (await results_files(s, job)).get(stream, b"").decode("utf-8", errors="replace")
        tail = status.get(f"{stream}Tail")
        if tail is None:
            raise KubectlError(f'GPUJob "{name}" has no output yet (phase {status.get("phase") or "Pending"})')
        return str(tail) + "\n"
