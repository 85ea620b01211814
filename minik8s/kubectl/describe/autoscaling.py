"""``kubectl describe hpa``: a HorizontalPodAutoscaler (autoscaling/v2) in kubectl's layout
(``pkg/describe``'s ``describeHorizontalPodAutoscalerV2``)."""

from __future__ import annotations

from typing import Any

from minik8s.api.base import Obj
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.describe.shared import fetch_events
from minik8s.kubectl.printing import describe_time
from minik8s.kubectl.sections import Writer, meta_of, write_annotations, write_events, write_labels
from minik8s.kubectl.session import Session

UNKNOWN = "<unknown>"


def _current(status: Obj, index: int, key: str) -> Obj | None:
    """The ``key`` part (``resource``, ``pods``...) of the status's ``index``-th current metric, if any."""
    current = status.get("currentMetrics") or []
    if len(current) > index and current[index].get(key) is not None:
        return (current[index][key].get("current") or {})
    return None


def _text(value: Any) -> str:
    return "0" if value is None else str(value)


def _resource_line(prefix: str, target: Obj, current: Obj | None) -> str:
    """A Resource or ContainerResource metric: an average value, or a utilization of the requests."""
    if target.get("averageValue") is not None:
        now = _text(current.get("averageValue")) if current is not None else UNKNOWN
        return f"{prefix}:\t{now} / {target['averageValue']}"
    now = UNKNOWN
    if current is not None and current.get("averageUtilization") is not None:
        now = f"{current['averageUtilization']}% ({_text(current.get('averageValue'))})"
    wanted = f"{target['averageUtilization']}%" if target.get("averageUtilization") is not None else "<auto>"
    return f"{prefix}  (as a percentage of request):\t{now} / {wanted}"


def metric_line(metric: Obj, index: int, status: Obj) -> str:
    """One ``Metrics:`` line (``resource cpu on pods  (as a percentage of request):\\t12% (6m) / 80%``)."""
    kind = metric.get("type")
    if kind == "Resource":
        src = metric.get("resource") or {}
        return _resource_line(f"resource {src.get('name')} on pods", src.get("target") or {},
                              _current(status, index, "resource"))
    if kind == "ContainerResource":
        src = metric.get("containerResource") or {}
        return _resource_line(f'resource {src.get("name")} of container "{src.get("container")}" on pods',
                              src.get("target") or {}, _current(status, index, "containerResource"))
    if kind == "Pods":
        src = metric.get("pods") or {}
        current = _current(status, index, "pods")
        now = _text(current.get("averageValue")) if current is not None else UNKNOWN
        wanted = _text((src.get("target") or {}).get("averageValue"))
        return f'"{(src.get("metric") or {}).get("name")}" on pods:\t{now} / {wanted}'
    if kind == "External":
        src = metric.get("external") or {}
        name, target = (src.get("metric") or {}).get("name"), src.get("target") or {}
        current = _current(status, index, "external")
        if target.get("averageValue") is not None:
            now = _text(current.get("averageValue")) if current and current.get("averageValue") else UNKNOWN
            return f'"{name}" (target average value):\t{now} / {target["averageValue"]}'
        now = _text(current.get("value")) if current is not None else UNKNOWN
        return f'"{name}" (target value):\t{now} / {_text(target.get("value"))}'
    if kind == "Object":
        src = metric.get("object") or {}
        described, target = src.get("describedObject") or {}, src.get("target") or {}
        head = f'"{(src.get("metric") or {}).get("name")}" on {described.get("kind")}/{described.get("name")} '
        current = _current(status, index, "object")
        if target.get("type") == "AverageValue":
            now = _text(current.get("averageValue")) if current is not None else UNKNOWN
            return f"{head}(target average value):\t{now} / {_text(target.get('averageValue'))}"
        now = _text(current.get("value")) if current is not None else UNKNOWN
        return f"{head}(target value):\t{now} / {_text(target.get('value'))}"
    return f'<unknown metric type "{kind}">'


def _write_direction(w: Writer, title: str, rules: Obj | None) -> None:
    """One direction of ``Behavior:`` (``printDirectionBehavior``)."""
    if rules is None:
        return
    w.write(1, f"{title}:")
    if rules.get("stabilizationWindowSeconds") is not None:
        w.write(2, f"Stabilization Window: {rules['stabilizationWindowSeconds']} seconds")
    if rules.get("policies"):
        w.write(2, f"Select Policy: {rules.get('selectPolicy') or 'Max'}")
        w.write(2, "Policies:")
        for p in rules["policies"]:
            w.write(3, f"- Type: {p.get('type')}\tValue: {p.get('value', 0)}\t"
                       f"Period: {p.get('periodSeconds', 0)} seconds")


async def describe_hpa(s: Session, rt: ResourceType, hpa: Obj) -> str:
    """A HorizontalPodAutoscaler: reference, metrics (current / target), replicas, behavior, conditions, events."""
    meta, spec, status = meta_of(hpa), hpa.get("spec") or {}, hpa.get("status") or {}
    if rt.version != "v2":  # kubectl reads the autoscaling/v2 form
        v2 = s.registry.by_kind("autoscaling/v2", "HorizontalPodAutoscaler")
        if v2 is not None:
            return await describe_hpa(s, v2, await s.client.get(v2, str(meta.get("name")), meta.get("namespace")))
    ref = spec.get("scaleTargetRef") or {}
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    w.write(0, f"CreationTimestamp:\t{describe_time(meta.get('creationTimestamp'))}")
    w.write(0, f"Reference:\t{ref.get('kind')}/{ref.get('name')}")
    w.write(0, "Metrics:\t( current / target )")
    for i, metric in enumerate(spec.get("metrics") or []):
        w.write(1, metric_line(metric, i, status))
    w.write(0, f"Min replicas:\t{spec['minReplicas'] if spec.get('minReplicas') is not None else '<unset>'}")
    w.write(0, f"Max replicas:\t{spec.get('maxReplicas', 0)}")
    behavior = spec.get("behavior")
    if behavior is not None:
        w.write(0, "Behavior:")
        _write_direction(w, "Scale Up", behavior.get("scaleUp"))
        _write_direction(w, "Scale Down", behavior.get("scaleDown"))
    w.write(0, f"{ref.get('kind')} pods:\t{status.get('currentReplicas') or 0} current / "
               f"{status.get('desiredReplicas') or 0} desired")
    if status.get("conditions"):
        w.write(0, "Conditions:")
        w.write(1, "Type\tStatus\tReason\tMessage")
        w.write(1, "----\t------\t------\t-------")
        for c in status["conditions"]:
            w.write(1, f"{c.get('type')}\t{c.get('status')}\t{c.get('reason') or ''}\t{c.get('message') or ''}")
    write_events(w, await fetch_events(s, hpa, rt))
    return w.text()

