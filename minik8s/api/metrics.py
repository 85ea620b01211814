"""``metrics.k8s.io/v1beta1``: PodMetrics and NodeMetrics, the resource metrics API.

What metrics-server serves in Kubernetes and what ``kubectl top`` and the
HorizontalPodAutoscaler read; in minik8s the apiserver serves it itself
(:mod:`minik8s.apiserver.metrics`) from the kubelets' ``/stats/summary``.  Read-only
(get, list), never stored::

    {"kind": "PodMetrics", "apiVersion": "metrics.k8s.io/v1beta1",
     "metadata": {"name": "web-1", "namespace": "default", "labels": {...}, "creationTimestamp": "..."},
     "timestamp": "2026-11-21T10:00:00Z", "window": "15s",
     "containers": [{"name": "app", "usage": {"cpu": "12345678n", "memory": "2048Ki"}}]}

``usage.cpu`` is a CPU rate in cores (nanocores, canonical decimal form: ``"12345678n"``,
``"250m"``, ``"1"``), averaged over ``window``; ``usage.memory`` the working set in bytes
(canonical binary form: ``"2048Ki"``, ``"12Mi"``).  NodeMetrics has ``usage`` of the whole
node instead of ``containers``.

The number formats of ``usage`` are :mod:`minik8s.api.quantity`'s (``format_nanocores``,
``milli_value``); Go durations (``window``) are :mod:`minik8s.api.durations`'.
"""

from __future__ import annotations

from minik8s.api.meta import TypedObject
from minik8s.api.model import Model

GROUP = "metrics.k8s.io"
VERSION = "v1beta1"
API_VERSION = f"{GROUP}/{VERSION}"


class ContainerMetrics(Model):
    """One container's ``usage`` (``{"cpu": quantity, "memory": quantity}``)."""

    name: str
    usage: dict[str, str]


class PodMetrics(TypedObject):
    timestamp: str | None = None
    window: str | None = None
    containers: list[ContainerMetrics] | None = None


class NodeMetrics(TypedObject):
    timestamp: str | None = None
    window: str | None = None
    usage: dict[str, str] | None = None
