"""Where a GPUJob's output is kept: a ConfigMap ``<gpujob>-results`` owned by the GPUJob.

The apiserver serves it (``kubectl gpujob results`` and ``kubectl logs gpujob/NAME`` read it
through the API, nothing reads the controller-manager's disk), and the garbage collector
removes it with its GPUJob (ownerReference).  Like every ConfigMap it must stay under
Kubernetes' 1 MiB: the controller keeps the last ``output_limit`` bytes of stdout and
stderr and result files up to a ``budget`` (base64 counted for binary files); a file that
does not fit is listed in ``status.results`` with a message instead of a key.

Layout: ``data.stdout`` / ``data.stderr`` (``binaryData`` when not UTF-8), each result file
under ``result.<path with / as _>`` (``data`` for text, ``binaryData`` for the rest); the
path ↔ key mapping is ``status.results``.
"""

from __future__ import annotations

import base64
import re

from minik8s.api.base import Obj
from minik8s.api.gpujobs import API_VERSION, GPUJOB_LABEL, STDERR_KEY, STDOUT_KEY
from minik8s.controllers.gpujob.site import JobOutputs

RESULT_KEY_PREFIX = "result."
_KEY_BAD = re.compile(r"[^-._a-zA-Z0-9]")


def results_config_map_name(gpujob_name: str) -> str:
    """``<name>-results`` (a GPUJob name is a DNS label, so this is a valid ConfigMap name)."""
    return f"{gpujob_name}-results"


def result_key(path: str, taken: set[str]) -> str:
    """A ConfigMap key for ``path`` (``out/a.csv`` → ``result.out_a.csv``), unique among ``taken``."""
    base = RESULT_KEY_PREFIX + _KEY_BAD.sub("_", path.replace("/", "_"))
    base = base[:240]
    key, n = base, 1
    while key in taken:
        n += 1
        key = f"{base}.{n}"
    return key


def _put(data: Obj, binary: Obj, key: str, content: bytes) -> int:
    """Store ``content`` under ``key`` (text in ``data``, else base64 in ``binaryData``); returns
    the bytes it takes in the ConfigMap."""
    try:
        data[key] = content.decode("utf-8")
        return len(content)
    except UnicodeDecodeError:
        encoded = base64.b64encode(content).decode()
        binary[key] = encoded
        return len(encoded)


def build_results(job: Obj, outputs: JobOutputs, budget: int) -> tuple[Obj, list[Obj]]:
    """The results ConfigMap of ``job`` (wire form) and the ``status.results`` entries.

    Files beyond ``budget`` bytes (in the ConfigMap's encoding) get no key and a message.
    """
    meta = job.get("metadata") or {}
    data: Obj = {}
    binary: Obj = {}
    used = _put(data, binary, STDOUT_KEY, outputs.stdout) + _put(data, binary, STDERR_KEY, outputs.stderr)
    taken = {STDOUT_KEY, STDERR_KEY}
    entries: list[Obj] = []
    for path, content in outputs.files.items():
        key = result_key(path, taken)
        probe_data: Obj = {}
        probe_binary: Obj = {}
        size = _put(probe_data, probe_binary, key, content)
        if used + size > budget:
            entries.append({"path": path, "size": len(content),
                            "message": f"not kept: the job's results exceed {budget} bytes"})
            continue
        data.update(probe_data)
        binary.update(probe_binary)
        used += size
        taken.add(key)
        entries.append({"path": path, "size": len(content), "key": key})
    for path, (size, why) in outputs.skipped.items():
        entries.append({"path": path, "size": size, "message": why})
    entries.sort(key=lambda e: e["path"])
    config_map: Obj = {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": results_config_map_name(str(meta.get("name"))), "namespace": meta.get("namespace"),
                     "labels": {GPUJOB_LABEL: str(meta.get("name"))},
                     "ownerReferences": [{"apiVersion": API_VERSION, "kind": "GPUJob", "name": meta.get("name"),
                                          "uid": meta.get("uid"), "controller": True,
                                          "blockOwnerDeletion": True}]},
        "data": data,
    }
    if binary:
        config_map["binaryData"] = binary
    return config_map, entries


def owned_by(obj: Obj, uid: str) -> bool:
    return any(ref.get("uid") == uid for ref in (obj.get("metadata") or {}).get("ownerReferences") or [])
