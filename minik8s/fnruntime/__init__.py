"""The function runtime that runs inside function pods (:mod:`minik8s.fnruntime.server`).

The server is one standard-library-only file; the function controller ships its text in
every Function's ConfigMap (key :data:`RUNTIME_FILE`), so the runtime always matches the
controller that deployed it and the ``minik8s/python`` image needs nothing of minik8s.
"""

from __future__ import annotations

from pathlib import Path

#: ConfigMap key (and file name in the pod) of the runtime server.
RUNTIME_FILE = ".minik8s-runtime.py"
#: Port the runtime listens on in the pod.
PORT = 8080
#: Exit status of a runtime whose handler could not be loaded.
EXIT_LOAD_FAILED = 3


def runtime_source() -> str:
    """The text of :mod:`minik8s.fnruntime.server` (what the pod runs)."""
    return (Path(__file__).parent / "server.py").read_text()
