"""``Pods``, ``Object`` and ``External`` HPA metrics: how kube-controller-manager answers them when
no ``custom.metrics.k8s.io`` / ``external.metrics.k8s.io`` API is registered — minik8s serves
neither (it has no API aggregation), so these metrics always fail, with Kubernetes' wording.

Kubernetes' custom metrics client first looks the group up in discovery and fails with ``no
custom metrics API (custom.metrics.k8s.io) registered``; its external metrics client asks
``/apis/external.metrics.k8s.io/v1beta1/namespaces/<ns>/<metric>`` and gets the apiserver's
404, ``the server could not find the requested resource (get <metric>.external.metrics.k8s.io)``.
``replica_calculator.go`` and ``horizontal.go`` wrap those errors; :func:`unserved_metric_error`
gives the three layers as they appear in the ``ScalingActive`` condition, the Warning event and
the sync error.
"""

from __future__ import annotations

from typing import Any

from minik8s.api.base import Obj
from minik8s.controllers.podautoscaler.status import MetricFailure

CUSTOM_METRICS_ERROR = ("unable to fetch metrics from custom metrics API: no custom metrics API "
                        "(custom.metrics.k8s.io) registered")


def _external_error(metric: str) -> str:
    return ("unable to fetch metrics from external metrics API: the server could not find the requested "
            f"resource (get {metric}.external.metrics.k8s.io)")


def go_label_selector(selector: Obj | None) -> str:
    """A ``metav1.LabelSelector`` as Go's ``%+v`` prints it (the generated ``String()``):
    ``nil``, or ``&LabelSelector{MatchLabels:map[string]string{app: web,},MatchExpressions:
    []LabelSelectorRequirement{LabelSelectorRequirement{Key:tier,Operator:In,Values:[a b],},},}``
    (labels sorted by key)."""
    if selector is None:
        return "nil"
    labels = selector.get("matchLabels") or {}
    pairs = "".join(f"{k}: {labels[k]}," for k in sorted(labels))
    requirements = "".join(
        f"LabelSelectorRequirement{{Key:{r.get('key', '')},Operator:{r.get('operator', '')},"
        f"Values:[{' '.join(str(v) for v in r.get('values') or [])}],}},"
        for r in selector.get("matchExpressions") or [])
    return (f"&LabelSelector{{MatchLabels:map[string]string{{{pairs}}},"
            f"MatchExpressions:[]LabelSelectorRequirement{{{requirements}}},}}")


def unserved_metric_error(spec: Obj, namespace: str) -> MetricFailure | None:
    """The failure of a ``Pods`` / ``Object`` / ``External`` metric ``spec`` of an HPA in
    ``namespace``; None for other types.

    * Pods: ``FailedGetPodsMetric``, ``unable to get metric <name>: <custom metrics error>``;
    * Object: ``FailedGetObjectMetric``, ``unable to get metric <name>: <Kind> on <ns>
      <object>/<custom metrics error>`` (Kubernetes' own argument order), or ``invalid object
      metric source: neither a value target nor an average value target was set``;
    * External: ``FailedGetExternalMetric``, ``unable to get external metric
      <ns>/<name>/<selector>: <external metrics error>``, or the ``invalid external metric
      source`` message when neither target is set.
    """
    kind = spec.get("type")
    if kind == "Pods":
        source: Any = spec.get("pods") or {}
        name = (source.get("metric") or {}).get("name", "")
        error = f"unable to get metric {name}: {CUSTOM_METRICS_ERROR}"
        return MetricFailure("FailedGetPodsMetric", error, f"failed to get pods metric value: {error}")
    if kind == "Object":
        source = spec.get("object") or {}
        name = (source.get("metric") or {}).get("name", "")
        target = source.get("target") or {}
        if target.get("value") is None and target.get("averageValue") is None:
            error = "invalid object metric source: neither a value target nor an average value target was set"
        else:
            ref = source.get("describedObject") or {}
            error = (f"unable to get metric {name}: {ref.get('kind', '')} on {namespace} "
                     f"{ref.get('name', '')}/{CUSTOM_METRICS_ERROR}")
        return MetricFailure("FailedGetObjectMetric", error, f"failed to get object metric value: {error}")
    if kind == "External":
        source = spec.get("external") or {}
        metric = source.get("metric") or {}
        name = metric.get("name", "")
        target = source.get("target") or {}
        if target.get("value") is None and target.get("averageValue") is None:
            error = "invalid external metric source: neither a value target nor an average value target was set"
        else:
            error = (f"unable to get external metric {namespace}/{name}/{go_label_selector(metric.get('selector'))}: "
                     f"{_external_error(name)}")
        return MetricFailure("FailedGetExternalMetric", error, f"failed to get {name} external metric value: {error}")
    return None
