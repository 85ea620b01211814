"""``node.k8s.io/v1`` RuntimeClass: which container runtime handler runs a pod, its overhead and
where it may be scheduled.

Kubernetes' field names and meanings (``k8s.io/api/node/v1``)::

    apiVersion: node.k8s.io/v1
    kind: RuntimeClass
    metadata: {name: sandboxed}     # cluster-scoped; pods name it in spec.runtimeClassName
    handler: runc                   # the node's runtime handler (here: a Docker runtime, docker info's Runtimes)
    overhead: {podFixed: {cpu: 250m, memory: 64Mi}}    # added to the pods' spec.overhead
    scheduling:                     # merged into the pods' nodeSelector and tolerations
      nodeSelector: {sandbox: "true"}
      tolerations: [{key: sandbox, operator: Exists}]

The RuntimeClass admission plugin (:mod:`minik8s.apiserver.runtimeclass`) copies ``overhead`` and
``scheduling`` into the pods; the kubelet runs the pod's sandbox and containers with the handler's
Docker runtime, and refuses a handler Docker does not have (``FailedCreatePodSandBox``).
"""

from __future__ import annotations

from typing import Any

from minik8s.api.meta import TypedObject
from minik8s.api.model import Model

RUNTIME_CLASS_API_VERSION = "node.k8s.io/v1"
#: The handler Docker's default runtime answers to.
DEFAULT_HANDLER = "runc"


class Overhead(Model):
    pod_fixed: dict[str, Any] | None = None


class Scheduling(Model):
    node_selector: dict[str, str] | None = None
    tolerations: list[dict[str, Any]] | None = None


class RuntimeClass(TypedObject):
    """``node.k8s.io/v1`` RuntimeClass (cluster-scoped, no spec): ``handler`` is required."""

    handler: str
    overhead: Overhead | None = None
    scheduling: Scheduling | None = None
