"""The columns ``kubectl get`` prints per kind (Kubernetes' ``printers/internalversion``).

:data:`COLUMNS` maps a Kind to its columns after NAME; a kind the server adds later
gets a row here (or prints ``NAME AGE``).  Every column is a function of the
wire-form object dict and the current time, so kinds need no model on this side.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from minik8s.api.base import parse_time
from minik8s.kubectl.printing import NONE, age, human_duration, join_labels, since

Obj = dict[str, Any]
Getter = Callable[[Obj, dt.datetime], str]


@dataclass(frozen=True)
class Column:
    """One table column: header, value function, shown only with ``-o wide`` when ``wide``."""

    header: str
    value: Getter
    wide: bool = False


def _spec(obj: Obj) -> Obj:
    return obj.get("spec") or {}


def _status(obj: Obj) -> Obj:
    return obj.get("status") or {}


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _num(value: Any) -> str:
    return str(value if value is not None else 0)


def _age(obj: Obj, at: dt.datetime) -> str:
    return age(obj, at)


# ------------------------------------------------------------------ Pod
def pod_ready(obj: Obj, at: dt.datetime) -> str:
    """``ready/total`` containers."""
    total = len(_spec(obj).get("containers") or [])
    ready = sum(1 for cs in _status(obj).get("containerStatuses") or [] if cs.get("ready"))
    return f"{ready}/{total}"


def pod_status(obj: Obj, at: dt.datetime | None = None) -> str:
    """The STATUS column, computed as kubectl's ``printPod`` does.

    Terminating when ``deletionTimestamp`` is set; else an init container's state
    (``Init:CrashLoopBackOff``, ``Init:0/2``); else the last container's waiting or
    terminated reason (``CrashLoopBackOff``, ``ErrImagePull``, ``OOMKilled``, ``Completed``...);
    else ``status.reason`` or the phase.
    """
    status = _status(obj)
    spec = _spec(obj)
    reason = status.get("reason") or status.get("phase") or "Unknown"
    init_statuses = status.get("initContainerStatuses") or []
    n_init = len(spec.get("initContainers") or [])
    initializing = False
    for i, cs in enumerate(init_statuses):
        state = cs.get("state") or {}
        term, wait = state.get("terminated"), state.get("waiting")
        if term is not None and term.get("exitCode") == 0:
            continue
        if term is not None:
            if term.get("reason"):
                reason = f"Init:{term['reason']}"
            elif term.get("signal"):
                reason = f"Init:Signal:{term['signal']}"
            else:
                reason = f"Init:ExitCode:{term.get('exitCode')}"
        elif wait and wait.get("reason") and wait.get("reason") != "PodInitializing":
            reason = f"Init:{wait['reason']}"
        else:
            reason = f"Init:{i}/{n_init}"
        initializing = True
        break
    if not initializing:
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            state = cs.get("state") or {}
            term, wait = state.get("terminated"), state.get("waiting")
            if wait and wait.get("reason"):
                reason = wait["reason"]
            elif term is not None and term.get("reason"):
                reason = term["reason"]
            elif term is not None:
                reason = f"Signal:{term['signal']}" if term.get("signal") else f"ExitCode:{term.get('exitCode')}"
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
        if reason == "Completed" and has_running:
            ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                        for c in status.get("conditions") or [])
            reason = "Running" if ready else "NotReady"
    if _meta(obj).get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return str(reason)


def pod_restarts(obj: Obj, at: dt.datetime) -> str:
    """Sum of restartCount, with ``(5s ago)`` for the latest restart when known."""
    status = _status(obj)
    total = 0
    last: dt.datetime | None = None
    for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        total += int(cs.get("restartCount") or 0)
        term = (cs.get("lastState") or {}).get("terminated") or {}
        try:
            finished = parse_time(term.get("finishedAt"))
        except ValueError:
            finished = None
        if finished and (last is None or finished > last):
            last = finished
    if total and last is not None:
        return f"{total} ({human_duration((at - last).total_seconds())} ago)"
    return str(total)


def pod_ip(obj: Obj, at: dt.datetime) -> str:
    """IP: ``status.podIP`` or ``<none>``."""
    return str(_status(obj).get("podIP") or NONE)


def pod_node(obj: Obj, at: dt.datetime) -> str:
    """NODE: ``spec.nodeName`` or ``<none>``."""
    return str(_spec(obj).get("nodeName") or NONE)


def pod_nominated(obj: Obj, at: dt.datetime) -> str:
    """NOMINATED NODE: ``status.nominatedNodeName`` or ``<none>``."""
    return str(_status(obj).get("nominatedNodeName") or NONE)


def pod_gates(obj: Obj, at: dt.datetime) -> str:
    """READINESS GATES: ``ready/total`` gates, or ``<none>``."""
    gates = _spec(obj).get("readinessGates") or []
    if not gates:
        return NONE
    conds = {c.get("type"): c.get("status") for c in _status(obj).get("conditions") or []}
    ready = sum(1 for g in gates if conds.get(g.get("conditionType")) == "True")
    return f"{ready}/{len(gates)}"


# ------------------------------------------------------------------ Node
def node_status(obj: Obj, at: dt.datetime) -> str:
    """Ready / NotReady / Unknown, plus ``,SchedulingDisabled`` when cordoned."""
    ready = next((c for c in _status(obj).get("conditions") or [] if c.get("type") == "Ready"), None)
    text = "Unknown"
    if ready is not None:
        text = {"True": "Ready", "False": "NotReady"}.get(ready.get("status"), "Unknown")
    if _spec(obj).get("unschedulable"):
        text += ",SchedulingDisabled"
    return text


def node_roles(obj: Obj, at: dt.datetime | None = None) -> str:
    """Roles from ``node-role.kubernetes.io/<role>`` (and ``kubernetes.io/role``) labels."""
    roles = set()
    for key, value in (_meta(obj).get("labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/") and key.split("/", 1)[1]:
            roles.add(key.split("/", 1)[1])
        elif key == "node-role.kubernetes.io" and value:
            roles.add(value)
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return ",".join(sorted(roles)) or NONE


def _address(obj: Obj, kind: str) -> str:
    return next((a.get("address") for a in _status(obj).get("addresses") or [] if a.get("type") == kind), None) \
        or NONE


def _node_info(key: str) -> Getter:
    return lambda obj, at: str((_status(obj).get("nodeInfo") or {}).get(key) or "")


# ------------------------------------------------------------------ workloads
def _containers(obj: Obj) -> list[Obj]:
    template = _spec(obj).get("template") or {}
    return (template.get("spec") or {}).get("containers") or []


def _selector(obj: Obj, at: dt.datetime) -> str:
    sel = _spec(obj).get("selector") or {}
    if not isinstance(sel, dict):
        return NONE
    parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for expr in sel.get("matchExpressions") or []:
        op, key, values = expr.get("operator"), expr.get("key"), expr.get("values") or []
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(str(key))
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts) or NONE


def _service_selector(obj: Obj, at: dt.datetime) -> str:
    return join_labels(_spec(obj).get("selector"))


WORKLOAD_WIDE = [
    Column("CONTAINERS", lambda o, at: ",".join(c.get("name", "") for c in _containers(o)), wide=True),
    Column("IMAGES", lambda o, at: ",".join(c.get("image", "") for c in _containers(o)), wide=True),
    Column("SELECTOR", _selector, wide=True),
]


# ------------------------------------------------------------------ Service / Endpoints
def service_external_ip(obj: Obj, at: dt.datetime) -> str:
    """EXTERNAL-IP: load-balancer ingress, external IPs, ``<pending>`` or ``<none>``."""
    spec = _spec(obj)
    ips = list(spec.get("externalIPs") or [])
    if spec.get("type") == "LoadBalancer":
        ingress = [i.get("ip") or i.get("hostname") for i in
                   (_status(obj).get("loadBalancer") or {}).get("ingress") or []]
        ips = [i for i in ingress if i] + ips
        return ",".join(ips) if ips else "<pending>"
    if spec.get("type") == "ExternalName":
        return str(spec.get("externalName") or NONE)
    return ",".join(ips) if ips else NONE


def service_ports(obj: Obj, at: dt.datetime) -> str:
    """``80/TCP``, ``80:30080/TCP`` (with a nodePort), comma-joined."""
    parts = []
    for p in _spec(obj).get("ports") or []:
        proto = p.get("protocol") or "TCP"
        if p.get("nodePort"):
            parts.append(f"{p.get('port')}:{p['nodePort']}/{proto}")
        else:
            parts.append(f"{p.get('port')}/{proto}")
    return ",".join(parts) or NONE


def endpoints_list(obj: Obj, at: dt.datetime) -> str:
    """``ip:port,...`` (at most 3, then `` + N more...``)."""
    shown: list[str] = []
    count = 0
    for subset in obj.get("subsets") or []:
        addresses = subset.get("addresses") or []
        ports = subset.get("ports") or [{}]
        for addr in addresses:
            for port in ports:
                count += 1
                if len(shown) < 3:
                    ip = addr.get("ip", "")
                    shown.append(f"{ip}:{port['port']}" if port.get("port") is not None else ip)
    if not shown:
        return NONE
    more = count - len(shown)
    return ",".join(shown) + (f" + {more} more..." if more else "")


# ------------------------------------------------------------------ HPA
def _metric_name(spec: Obj) -> str:
    kind = spec.get("type") or ""
    body = spec.get(kind[:1].lower() + kind[1:]) or {}
    if kind in ("Resource", "ContainerResource"):
        return str(body.get("name") or "")
    return str((body.get("metric") or {}).get("name") or kind.lower())


def _metric_value(target: Obj) -> str | None:
    if target.get("averageUtilization") is not None:
        return f"{target['averageUtilization']}%"
    for key in ("averageValue", "value"):
        if target.get(key) is not None:
            return str(target[key])
    return None


def hpa_targets(obj: Obj, at: dt.datetime) -> str:
    """``cpu: 40%/80%, memory: <unknown>/60%`` (autoscaling/v2; v1's targetCPUUtilizationPercentage too)."""
    spec, status = _spec(obj), _status(obj)
    metrics = list(spec.get("metrics") or [])
    current = list(status.get("currentMetrics") or [])
    parts: list[str] = []
    if not metrics and spec.get("targetCPUUtilizationPercentage") is not None:
        cur = status.get("currentCPUUtilizationPercentage")
        cur_text = f"{cur}%" if cur is not None else "<unknown>"
        return f"cpu: {cur_text}/{spec['targetCPUUtilizationPercentage']}%"
    for i, metric in enumerate(metrics):
        kind = metric.get("type") or ""
        body = metric.get(kind[:1].lower() + kind[1:]) or {}
        target = _metric_value(body.get("target") or {}) or "<unknown>"
        cur_text = "<unknown>"
        if i < len(current):
            cur_body = current[i].get(kind[:1].lower() + kind[1:]) or {}
            cur_text = _metric_value(cur_body.get("current") or {}) or "<unknown>"
        parts.append(f"{_metric_name(metric)}: {cur_text}/{target}")
    if not parts:
        return NONE
    if len(parts) > 2:
        return ", ".join(parts[:2]) + f" + {len(parts) - 2} more..."
    return ", ".join(parts)


def hpa_reference(obj: Obj, at: dt.datetime) -> str:
    """REFERENCE: ``Kind/name`` of ``spec.scaleTargetRef``."""
    ref = _spec(obj).get("scaleTargetRef") or {}
    return f"{ref.get('kind', '')}/{ref.get('name', '')}"


# ------------------------------------------------------------------ Event
def event_last_seen(obj: Obj, at: dt.datetime) -> str:
    """``5s``, or ``5s (x3 over 2m)`` for repeated events."""
    last = obj.get("lastTimestamp") or obj.get("eventTime") or (obj.get("series") or {}).get("lastObservedTime") \
        or _meta(obj).get("creationTimestamp")
    first = obj.get("firstTimestamp") or obj.get("eventTime") or _meta(obj).get("creationTimestamp")
    count = int(obj.get("count") or (obj.get("series") or {}).get("count") or 1)
    text = since(last, at)
    if count > 1:
        text += f" (x{count} over {since(first, at)})"
    return text


def event_object(obj: Obj, at: dt.datetime) -> str:
    """OBJECT: ``kind/name`` of the involved object (lower-case kind)."""
    inv = obj.get("involvedObject") or obj.get("regarding") or {}
    return f"{str(inv.get('kind') or '').lower()}/{inv.get('name') or ''}"


def event_sort_key(obj: Obj) -> str:
    """Sort key of events (oldest first, as ``kubectl events``)."""
    return str(obj.get("lastTimestamp") or obj.get("eventTime") or obj.get("firstTimestamp")
               or _meta(obj).get("creationTimestamp") or "")


# ------------------------------------------------------------------ serverless (minik8s.io/v1)
def _condition(obj: Obj, type_: str) -> Obj:
    return next((c for c in _status(obj).get("conditions") or [] if c.get("type") == type_), {})


def function_ready(obj: Obj, at: dt.datetime) -> str:
    """The Ready condition's status (``True``/``False``/``Unknown``)."""
    return str(_condition(obj, "Ready").get("status") or "Unknown")


def function_instances(obj: Obj, at: dt.datetime) -> str:
    """``ready/desired`` instances (``0/0`` when scaled to zero)."""
    status = _status(obj)
    return f"{_num(status.get('readyInstances'))}/{_num(status.get('instances'))}"


def trigger_source(obj: Obj, at: dt.datetime) -> str:
    """Where the Trigger's events come from: ``schedule <cron>``, ``<Kind> objects`` or ``events``."""
    spec = _spec(obj)
    if spec.get("schedule"):
        return f"schedule {spec['schedule']}"
    if spec.get("objects"):
        return f"{(spec['objects'] or {}).get('kind')} objects"
    attrs = (spec.get("filter") or {}).get("attributes") or {}
    return "events" + (" " + ",".join(f"{k}={v}" for k, v in sorted(attrs.items())) if attrs else "")


def trigger_subscriber(obj: Obj, at: dt.datetime) -> str:
    ref = (_spec(obj).get("subscriber") or {}).get("ref") or {}
    return f"{ref.get('kind')}/{ref.get('name')}"


def run_duration(obj: Obj, at: dt.datetime) -> str:
    seconds = _status(obj).get("durationSeconds")
    return f"{seconds:.3f}s" if isinstance(seconds, int | float) else NONE


# ------------------------------------------------------------------ the table
COLUMNS: dict[str, list[Column]] = {
    "Pod": [
        Column("READY", pod_ready),
        Column("STATUS", pod_status),
        Column("RESTARTS", pod_restarts),
        Column("AGE", _age),
        Column("IP", pod_ip, wide=True),
        Column("NODE", pod_node, wide=True),
        Column("NOMINATED NODE", pod_nominated, wide=True),
        Column("READINESS GATES", pod_gates, wide=True),
    ],
    "Node": [
        Column("STATUS", node_status),
        Column("ROLES", node_roles),
        Column("AGE", _age),
        Column("VERSION", _node_info("kubeletVersion")),
        Column("INTERNAL-IP", lambda o, at: _address(o, "InternalIP"), wide=True),
        Column("EXTERNAL-IP", lambda o, at: _address(o, "ExternalIP"), wide=True),
        Column("OS-IMAGE", _node_info("osImage"), wide=True),
        Column("KERNEL-VERSION", _node_info("kernelVersion"), wide=True),
        Column("CONTAINER-RUNTIME", _node_info("containerRuntimeVersion"), wide=True),
    ],
    "Namespace": [
        Column("STATUS", lambda o, at: str(_status(o).get("phase") or "")),
        Column("AGE", _age),
    ],
    "Event": [
        Column("LAST SEEN", event_last_seen),
        Column("TYPE", lambda o, at: str(o.get("type") or "")),
        Column("REASON", lambda o, at: str(o.get("reason") or "")),
        Column("OBJECT", event_object),
        Column("SUBOBJECT", lambda o, at: str((o.get("involvedObject") or {}).get("fieldPath") or ""), wide=True),
        Column("SOURCE", lambda o, at: ", ".join(filter(None, [(o.get("source") or {}).get("component"),
                                                                (o.get("source") or {}).get("host")])),
               wide=True),
        Column("MESSAGE", lambda o, at: str(o.get("message") or "").strip()),
        Column("FIRST SEEN", lambda o, at: since(o.get("firstTimestamp") or o.get("eventTime"), at), wide=True),
        Column("COUNT", lambda o, at: str(o.get("count") or 1), wide=True),
        Column("NAME", lambda o, at: str(_meta(o).get("name") or ""), wide=True),
    ],
    "ReplicaSet": [
        Column("DESIRED", lambda o, at: _num(_spec(o).get("replicas", 1))),
        Column("CURRENT", lambda o, at: _num(_status(o).get("replicas"))),
        Column("READY", lambda o, at: _num(_status(o).get("readyReplicas"))),
        Column("AGE", _age),
        *WORKLOAD_WIDE,
    ],
    "Deployment": [
        Column("READY", lambda o, at: f"{_num(_status(o).get('readyReplicas'))}/{_num(_spec(o).get('replicas', 1))}"),
        Column("UP-TO-DATE", lambda o, at: _num(_status(o).get("updatedReplicas"))),
        Column("AVAILABLE", lambda o, at: _num(_status(o).get("availableReplicas"))),
        Column("AGE", _age),
        *WORKLOAD_WIDE,
    ],
    "Service": [
        Column("TYPE", lambda o, at: str(_spec(o).get("type") or "ClusterIP")),
        Column("CLUSTER-IP", lambda o, at: str(_spec(o).get("clusterIP") or NONE)),
        Column("EXTERNAL-IP", service_external_ip),
        Column("PORT(S)", service_ports),
        Column("AGE", _age),
        Column("SELECTOR", _service_selector, wide=True),
    ],
    "Endpoints": [
        Column("ENDPOINTS", endpoints_list),
        Column("AGE", _age),
    ],
    "HorizontalPodAutoscaler": [
        Column("REFERENCE", hpa_reference),
        Column("TARGETS", hpa_targets),
        Column("MINPODS", lambda o, at: _num(_spec(o).get("minReplicas", 1))),
        Column("MAXPODS", lambda o, at: _num(_spec(o).get("maxReplicas"))),
        Column("REPLICAS", lambda o, at: _num(_status(o).get("currentReplicas"))),
        Column("AGE", _age),
    ],
    "Lease": [
        Column("HOLDER", lambda o, at: str(_spec(o).get("holderIdentity") or "")),
        Column("AGE", _age),
    ],
    "ConfigMap": [
        Column("DATA", lambda o, at: str(len(o.get("data") or {}) + len(o.get("binaryData") or {}))),
        Column("AGE", _age),
    ],
    "Secret": [
        Column("TYPE", lambda o, at: str(o.get("type") or "Opaque")),
        Column("DATA", lambda o, at: str(len(o.get("data") or {}) + len(o.get("stringData") or {}))),
        Column("AGE", _age),
    ],
    "Function": [
        Column("READY", function_ready),
        Column("INSTANCES", function_instances),
        Column("URL", lambda o, at: str(_status(o).get("url") or NONE)),
        Column("AGE", _age),
        Column("REVISION", lambda o, at: str(_status(o).get("revision") or NONE), wide=True),
        Column("REASON", lambda o, at: str(_condition(o, "Ready").get("reason") or ""), wide=True),
    ],
    "Workflow": [
        Column("START", lambda o, at: str(_spec(o).get("startAt") or "")),
        Column("STATES", lambda o, at: str(len(_spec(o).get("states") or {}))),
        Column("LAST RUN", lambda o, at: str(_status(o).get("lastRun") or NONE)),
        Column("AGE", _age),
    ],
    "WorkflowRun": [
        Column("WORKFLOW", lambda o, at: str((_spec(o).get("workflowRef") or {}).get("name") or "")),
        Column("STATUS", lambda o, at: str(_status(o).get("phase") or "Running")),
        Column("STEPS", lambda o, at: str(len(_status(o).get("steps") or []))),
        Column("DURATION", run_duration),
        Column("AGE", _age),
        Column("ERROR", lambda o, at: str(_status(o).get("error") or ""), wide=True),
    ],
    "Trigger": [
        Column("SUBSCRIBER", trigger_subscriber),
        Column("SOURCE", trigger_source),
        Column("DELIVERED", lambda o, at: _num(_status(o).get("delivered"))),
        Column("FAILED", lambda o, at: _num(_status(o).get("failed"))),
        Column("AGE", _age),
    ],
}

DEFAULT_COLUMNS = [Column("AGE", _age)]


def columns_for(kind: str, wide: bool = False) -> list[Column]:
    """The columns after NAME for ``kind`` (``AGE`` alone for kinds without a row)."""
    cols = COLUMNS.get(kind, DEFAULT_COLUMNS)
    return [c for c in cols if wide or not c.wide]

#: Kinds whose table has no leading NAME column (kubectl's event table starts with LAST SEEN).
NO_NAME_COLUMN = frozenset({"Event"})
