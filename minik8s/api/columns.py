"""The columns of every kind's table: Kubernetes' ``printers/internalversion``, in one place.

The apiserver answers ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io`` with a
``meta.k8s.io`` Table built from these columns (:func:`table`), and minik8s' own kubectl prints
the same columns, so both show exactly what kube-apiserver would.

:data:`COLUMNS` maps a Kind to its columns after NAME (Event's table has no leading NAME
column, see :data:`NO_NAME_COLUMN`); a kind without a row gets ``NAME AGE``, as custom
resources without ``additionalPrinterColumns`` do.  Every column is a function of the
wire-form object dict and the current time, so kinds need no model here.  A column's
``name`` is Kubernetes' (``Up-to-date``, ``Nominated Node``); kubectl prints it upper-cased.
Columns with ``priority`` 1 appear only with ``-o wide``.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from minik8s.api import events_v1, kubejsonpath
from minik8s.api.base import Obj, parse_time
from minik8s.api.certificates import condition_summary
from minik8s.api.quantity import cpu_nanocores, format_memory, format_nanocores, parse_memory
from minik8s.api.storage import access_modes_text, is_default_class

Cell = str | int
Getter = Callable[[Obj, dt.datetime], Cell]

NONE = "<none>"

#: ``metav1.ObjectMeta``'s documentation of the fields the Name and Age columns show.
NAME_DESCRIPTION = ("Name must be unique within a namespace. Is required when creating resources, although some "
                    "resources may allow a client to request the generation of an appropriate name automatically. "
                    "Name is primarily intended for creation idempotence and configuration definition. Cannot be "
                    "updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/"
                    "names#names")
AGE_DESCRIPTION = ("CreationTimestamp is a timestamp representing the server time when this object was created. "
                   "It is represented in RFC3339 form and is in UTC.")


@dataclass(frozen=True)
class Column:
    """One table column (``metav1.TableColumnDefinition`` plus the function giving its cells).

    ``name``: Kubernetes' column name; ``value(obj, at)``: the cell (str, or int for
    ``type="integer"``); ``wide``: priority 1 (only with ``-o wide``); ``format="name"`` marks
    the column holding the object's name.
    """

    name: str
    value: Getter
    wide: bool = False
    type: str = "string"
    format: str = ""
    description: str = ""

    @property
    def header(self) -> str:
        """The header kubectl prints (the name upper-cased)."""
        return self.name.upper()

    @property
    def priority(self) -> int:
        return 1 if self.wide else 0

    def definition(self) -> Obj:
        """The ``metav1.TableColumnDefinition`` of this column."""
        return {"name": self.name, "type": self.type, "format": self.format, "description": self.description,
                "priority": self.priority}


# ------------------------------------------------------------------ time and labels
def human_duration(seconds: float) -> str:
    """kubectl's ``duration.HumanDuration``: ``45s``, ``3m12s``, ``15m``, ``5h``, ``2d3h``, ``3y``."""
    secs = int(seconds)
    if secs < -1:
        return "<invalid>"
    if secs < 0:
        return "0s"
    if secs < 120:
        return f"{secs}s"
    minutes = secs // 60
    if minutes < 10:
        s = secs % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = secs // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def since(timestamp: str | None, at: dt.datetime | None = None) -> str:
    """Age of an RFC 3339 timestamp (``<unknown>`` when unset or unparsable), as
    Kubernetes' ``translateTimestampSince``."""
    try:
        when = parse_time(timestamp)
    except ValueError:
        when = None
    if when is None:
        return "<unknown>"
    return human_duration(((at or dt.datetime.now(dt.UTC)) - when).total_seconds())


def age(obj: Obj, at: dt.datetime | None = None) -> str:
    """The AGE column: time since ``metadata.creationTimestamp``."""
    return since((obj.get("metadata") or {}).get("creationTimestamp"), at)


def join_labels(labels: dict[str, str] | None) -> str:
    """``a=1,b=2`` (sorted), or ``<none>`` (``labels.FormatLabels``)."""
    if not labels:
        return NONE
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def _spec(obj: Obj) -> Obj:
    return obj.get("spec") or {}


def _status(obj: Obj) -> Obj:
    return obj.get("status") or {}


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _num(value: Any) -> str:
    return str(value if value is not None else 0)


def _int_or_na(value: Any) -> str:
    """An IntOrString as ``IntOrString.String()`` prints it, ``N/A`` when unset (PodDisruptionBudget columns)."""
    return "N/A" if value is None else str(value)


def _int(value: Any) -> int:
    """An integer cell (0 when unset), as Kubernetes' ``int64(...)`` cells."""
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


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
    if any(c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated"
           for c in status.get("conditions") or []):
        reason = "SchedulingGated"
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


def _template_containers(obj: Obj) -> list[Obj]:
    """The containers of a PodTemplate's ``template`` (the object's own field, not ``spec``'s)."""
    return ((obj.get("template") or {}).get("spec") or {}).get("containers") or []


def _selector(obj: Obj, at: dt.datetime) -> str:
    return format_selector(_spec(obj).get("selector") or {})


def format_selector(sel: Any) -> str:
    """A ``metav1.LabelSelector`` as kubectl prints it (``a=1,b in (x,y)``), ``<none>`` when empty."""
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
    Column("Containers", lambda o, at: ",".join(c.get("name", "") for c in _containers(o)), wide=True,
           description="Names of each container in the template."),
    Column("Images", lambda o, at: ",".join(c.get("image", "") for c in _containers(o)), wide=True,
           description="Images referenced by each container in the template."),
    Column("Selector", _selector, wide=True, description="Label selector for pods."),
]


def daemonset_node_selector(obj: Obj, at: dt.datetime) -> str:
    """The template's ``nodeSelector`` as ``k=v,...`` (``<none>`` when empty)."""
    template = _spec(obj).get("template") or {}
    return join_labels((template.get("spec") or {}).get("nodeSelector"))


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


def _list_with_more(shown: list[str], count: int, limit: int = 3) -> str:
    """kubectl's ``listWithMoreString``: ``a,b,c + N more...``, ``<unset>`` when empty."""
    if count > limit:
        return ",".join(shown) + f" + {count - limit} more..."
    return ",".join(shown) or "<unset>"


def endpointslice_ports(obj: Obj, at: dt.datetime) -> str:
    """PORTS of an EndpointSlice: each port's number (its name when unset, ``*`` when neither)."""
    ports = obj.get("ports") or []
    shown = [str(p["port"]) if p.get("port") is not None else str(p["name"]) if p.get("name") is not None else "*"
             for p in ports[:3]]
    return _list_with_more(shown, len(ports))


def endpointslice_endpoints(obj: Obj, at: dt.datetime) -> str:
    """ENDPOINTS of an EndpointSlice: every endpoint's addresses, three shown."""
    addresses = [str(a) for e in obj.get("endpoints") or [] for a in e.get("addresses") or []]
    return _list_with_more(addresses[:3], len(addresses))


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


# ------------------------------------------------------------------ ComponentStatus
def component_health(obj: Obj) -> tuple[str, str, str]:
    """(STATUS, MESSAGE, ERROR) of a ComponentStatus from its ``Healthy`` condition: ``Healthy`` when
    it is True, else ``Unhealthy``; ``Unknown`` without one."""
    for cond in obj.get("conditions") or []:
        if cond.get("type") == "Healthy":
            return ("Healthy" if cond.get("status") == "True" else "Unhealthy",
                    str(cond.get("message") or ""), str(cond.get("error") or ""))
    return "Unknown", "", ""


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


# ------------------------------------------------------------------ Ingress
def pv_claim(obj: Obj, at: dt.datetime) -> str:
    """``namespace/name`` of the PV's ``claimRef`` (empty when unclaimed)."""
    ref = _spec(obj).get("claimRef") or {}
    return f"{ref.get('namespace') or ''}/{ref.get('name') or ''}" if ref.get("name") else ""


def pvc_capacity(obj: Obj, at: dt.datetime) -> str:
    """The bound volume's capacity (``status.capacity.storage``), empty while unbound."""
    if not _spec(obj).get("volumeName"):
        return ""
    return str((_status(obj).get("capacity") or {}).get("storage") or "")


def pvc_access_modes(obj: Obj, at: dt.datetime) -> str:
    """The bound volume's access modes (``status.accessModes``), empty while unbound."""
    if not _spec(obj).get("volumeName"):
        return ""
    return access_modes_text(_status(obj).get("accessModes"))


def ingress_class_parameters(obj: Obj, at: dt.datetime) -> str:
    """An IngressClass's PARAMETERS cell: ``Kind.apiGroup/name`` (``<none>``)."""
    params = _spec(obj).get("parameters")
    if not params:
        return NONE
    text = str(params.get("kind") or "")
    if params.get("apiGroup") is not None:
        text += "." + str(params["apiGroup"])
    return f"{text}/{params.get('name') or ''}"


def csi_token_requests(obj: Obj, at: dt.datetime) -> str:
    """A CSIDriver's TOKENREQUESTS cell: the audiences (``<unset>``)."""
    requests = _spec(obj).get("tokenRequests") or []
    return ",".join(str(r.get("audience") or "") for r in requests) if requests else "<unset>"


#: The CSIDriverSpec field descriptions its table columns carry (the first sentence of Kubernetes' own).
CSI_DRIVER_DOCS = {
    "attachRequired": "attachRequired indicates this CSI volume driver requires an attach operation (because it "
                      "implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach "
                      "controller should call the attach volume interface which checks the volumeattachment status "
                      "and waits until the volume is attached before proceeding to mounting.",
    "podInfoOnMount": "podInfoOnMount indicates this CSI volume driver requires additional pod information (like "
                      "podName, podUID, etc.) during mount operations, if set to true.",
    "storageCapacity": "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the "
                       "storage capacity that the driver deployment will report by creating CSIStorageCapacity "
                       "objects with capacity information, if set to true.",
    "tokenRequests": "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting "
                     "volume for to do necessary authentication.",
    "requiresRepublish": "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically "
                         "called to reflect any possible change in the mounted volume.",
    "volumeLifecycleModes": "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports.",
}


def ingress_hosts(obj: Obj, at: dt.datetime) -> str:
    """HOSTS: the rules' hosts (``*`` for a rule without one), at most 3 then `` + N more...``."""
    hosts = [str(r.get("host") or "*") for r in _spec(obj).get("rules") or []]
    if not hosts:
        return "*"
    more = len(hosts) - 3
    return ",".join(hosts[:3]) + (f" + {more} more..." if more > 0 else "")


def load_balancer_addresses(obj: Obj, at: dt.datetime) -> str:
    """ADDRESS: the IPs or host names of ``status.loadBalancer.ingress``, whole (kube-apiserver
    generates its Tables in wide mode, where they are not cut)."""
    ingress = (_status(obj).get("loadBalancer") or {}).get("ingress") or []
    return ",".join(str(i.get("ip") or i.get("hostname")) for i in ingress if i.get("ip") or i.get("hostname"))


def ingress_ports(obj: Obj, at: dt.datetime) -> str:
    """PORTS: ``80``, or ``80, 443`` with TLS."""
    return "80, 443" if _spec(obj).get("tls") else "80"


# ------------------------------------------------------------------ metrics.k8s.io (as metrics-server)
def _usage(obj: Obj) -> tuple[int, int]:
    """(nanocores, bytes) of a NodeMetrics, or summed over a PodMetrics' containers."""
    usages = [c.get("usage") or {} for c in obj.get("containers") or []] if "containers" in obj \
        else [obj.get("usage") or {}]
    cpu = mem = 0
    for usage in usages:
        try:
            cpu += cpu_nanocores(usage.get("cpu") or 0)
            mem += parse_memory(usage.get("memory") or 0)
        except ValueError:
            continue
    return cpu, mem


METRICS_COLUMNS = [
    Column("cpu", lambda o, at: format_nanocores(_usage(o)[0]), format="quantity"),
    Column("memory", lambda o, at: format_memory(_usage(o)[1]), format="quantity"),
    Column("Window", lambda o, at: str(o.get("window") or ""), format="duration"),
]


def csr_requested_duration(obj: Obj) -> str:
    """REQUESTEDDURATION: ``spec.expirationSeconds`` as a human duration, ``<none>`` without one."""
    seconds = _spec(obj).get("expirationSeconds")
    return human_duration(seconds) if isinstance(seconds, int) and not isinstance(seconds, bool) else NONE


# ------------------------------------------------------------------ GPU jobs (minik8s.io/v1)
def _condition(obj: Obj, type_: str) -> Obj:
    return next((c for c in _status(obj).get("conditions") or [] if c.get("type") == type_), {})


def gpujob_phase(obj: Obj, at: dt.datetime) -> str:
    """Pending/Submitted/Running/...; ``Terminating`` while a deletion waits for scancel."""
    if _meta(obj).get("deletionTimestamp"):
        return "Terminating"
    phase = str(_status(obj).get("phase") or "Pending")
    if phase == "Pending" and _condition(obj, "ClusterReachable").get("status") == "False":
        return f"Pending ({_condition(obj, 'ClusterReachable').get('reason')})"
    return phase


def gpujob_reason(obj: Obj, at: dt.datetime) -> str:
    """Slurm's reason while queued (``Resources``), else the GPUJob's own (``BuildFailed``...)."""
    status = _status(obj)
    return str(status.get("slurmReason") or status.get("reason") or NONE)


def gpujob_submitted(obj: Obj, at: dt.datetime) -> str:
    submitted = _status(obj).get("submitTime")
    return since(submitted, at) if submitted else NONE


def slurmcluster_reachable(obj: Obj, at: dt.datetime) -> str:
    cond = _condition(obj, "Reachable")
    if not cond:
        return "Unknown"
    return "True" if cond.get("status") == "True" else f"False ({cond.get('reason')})"


def slurmcluster_partitions(obj: Obj, at: dt.datetime) -> str:
    """``dgx2*(2 GPUs),debug(2 GPUs)``: the default partition starred."""
    parts = _status(obj).get("partitions") or []
    return ",".join(f"{p.get('name')}{'*' if p.get('default') else ''}({p.get('gpus') or 0} GPUs)"
                    for p in parts) or NONE


# ------------------------------------------------------------------ serverless (minik8s.io/v1)
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


# ------------------------------------------------------------------ Job / CronJob
def _has_condition(obj: Obj, type_: str) -> bool:
    return any(c.get("type") == type_ and c.get("status") == "True"
               for c in _status(obj).get("conditions") or [] if isinstance(c, dict))


def job_status(obj: Obj, at: dt.datetime | None = None) -> str:
    """The STATUS of a Job (kubectl 1.32+): Complete, Failed, Terminating, Suspended, FailureTarget,
    SuccessCriteriaMet or Running, the first that holds."""
    if _has_condition(obj, "Complete"):
        return "Complete"
    if _has_condition(obj, "Failed"):
        return "Failed"
    if _meta(obj).get("deletionTimestamp"):
        return "Terminating"
    for type_ in ("Suspended", "FailureTarget", "SuccessCriteriaMet"):
        if _has_condition(obj, type_):
            return type_
    return "Running"


def job_completions(obj: Obj, at: dt.datetime) -> str:
    """``succeeded/completions``; without completions ``succeeded/1`` (``of <parallelism>`` when above 1)."""
    succeeded = _int(_status(obj).get("succeeded"))
    completions, parallelism = _spec(obj).get("completions"), _spec(obj).get("parallelism")
    if completions is not None:
        return f"{succeeded}/{completions}"
    if parallelism is not None and _int(parallelism) > 1:
        return f"{succeeded}/1 of {parallelism}"
    return f"{succeeded}/1"


def job_duration(obj: Obj, at: dt.datetime) -> str:
    """From ``status.startTime`` to ``completionTime`` (or now); empty before the Job started."""
    try:
        start = parse_time(_status(obj).get("startTime"))
        end = parse_time(_status(obj).get("completionTime")) or at
    except ValueError:
        return ""
    if start is None:
        return ""
    return human_duration((end - start).total_seconds())


def _job_template_spec(obj: Obj) -> Obj:
    return (_spec(obj).get("jobTemplate") or {}).get("spec") or {}


def cronjob_last_schedule(obj: Obj, at: dt.datetime) -> str:
    stamp = _status(obj).get("lastScheduleTime")
    return since(stamp, at) if stamp else NONE


def controllerrevision_controller(o: Obj, at: dt.datetime) -> str:
    """kubectl's ``printControllerRevision``: the controller as ``daemonset.apps/web``, ``<none>`` without one."""
    for ref in _meta(o).get("ownerReferences") or []:
        if ref.get("controller"):
            group = str(ref.get("apiVersion") or "").rpartition("/")[0]
            kind = str(ref.get("kind") or "")
            return f"{kind}.{group}".lower() + f"/{ref.get('name')}" if group else f"{kind.lower()}/{ref.get('name')}"
    return NONE


def _bool_ptr(value: Any) -> str:
    if value is None:
        return "<unset>"
    return "True" if value else "False"


def quota_usage(obj: Obj, limits: bool) -> str:
    """A ResourceQuota's ``Request`` or ``Limit`` column (``printResourceQuota``): ``name: used/hard``
    of each ``spec.hard`` resource by name, ``limits.*`` ones in the Limit column."""
    parts = []
    for name in sorted(_spec(obj).get("hard") or {}):
        if (name.split(".")[0] == "limits" and "." in name) != limits:
            continue
        used = (_status(obj).get("used") or {}).get(name) or "0"
        hard = (_status(obj).get("hard") or {}).get(name) or "0"
        parts.append(f"{name}: {used}/{hard}")
    return ", ".join(parts)


# ------------------------------------------------------------------ rbac.authorization.k8s.io
def created_at(obj: Obj, at: dt.datetime) -> str:
    """Roles' ``Created At``: the creation time itself (RFC 3339), not an age."""
    return str(_meta(obj).get("creationTimestamp") or "")


def binding_role(obj: Obj, at: dt.datetime) -> str:
    """``Role``/``ClusterRole/<name>`` of a (Cluster)RoleBinding's roleRef."""
    ref = obj.get("roleRef") or {}
    return f"{ref.get('kind', '')}/{ref.get('name', '')}"


def binding_subjects(kind: str) -> Getter:
    """The names of a binding's subjects of ``kind`` (service accounts as ``namespace/name``)."""
    def value(obj: Obj, at: dt.datetime) -> str:
        names = [f"{s.get('namespace', '')}/{s.get('name', '')}" if kind == "ServiceAccount" else str(s.get("name"))
                 for s in obj.get("subjects") or [] if s.get("kind") == kind]
        return ", ".join(names)
    return value


_CREATED_AT = Column("Created At", created_at, type="date",
                     description="CreationTimestamp is a timestamp representing the server time when this object "
                                 "was created.")
_BINDING_COLUMNS = [
    Column("Role", binding_role, description="RoleRef is the role the binding grants."),
    Column("Age", _age, description=AGE_DESCRIPTION),
    Column("Users", binding_subjects("User"), wide=True, description="Users in the binding"),
    Column("Groups", binding_subjects("Group"), wide=True, description="Groups in the binding"),
    Column("ServiceAccounts", binding_subjects("ServiceAccount"), wide=True,
           description="ServiceAccounts in the binding"),
]


# ------------------------------------------------------------------ the table
def _missing_pl(obj: Obj, at: dt.datetime) -> str:
    """A FlowSchema's ``Dangling`` condition status (``?`` when it has none)."""
    for cond in _status(obj).get("conditions") or []:
        if cond.get("type") == "Dangling":
            return str(cond.get("status") or "")
    return "?"


def _limited(obj: Obj, field: str) -> Any:
    """A Limited priority level's shares or queuing figure; ``<none>`` when it has none."""
    limited = _spec(obj).get("limited")
    if not isinstance(limited, dict):
        return "<none>"
    if field == "nominalConcurrencyShares":
        return _int(limited.get(field))
    queuing = (limited.get("limitResponse") or {}).get("queuing")
    return _int(queuing.get(field)) if isinstance(queuing, dict) else "<none>"


_AGE = Column("Age", _age, description=AGE_DESCRIPTION)

COLUMNS: dict[str, list[Column]] = {
    "Pod": [
        Column("Ready", pod_ready, description="The aggregate readiness state of this pod for accepting traffic."),
        Column("Status", pod_status, description="The aggregate status of the containers in this pod."),
        Column("Restarts", pod_restarts,
               description="The number of times the containers in this pod have been restarted and when the last "
                           "container in this pod has restarted."),
        _AGE,
        Column("IP", pod_ip, wide=True, description="IP address allocated to the pod."),
        Column("Node", pod_node, wide=True, description="The node the pod is scheduled onto (spec.nodeName)."),
        Column("Nominated Node", pod_nominated, wide=True,
               description="The node nominated by the scheduler for preemption (status.nominatedNodeName)."),
        Column("Readiness Gates", pod_gates, wide=True,
               description="If specified, all readiness gates will be evaluated for pod readiness."),
    ],
    "Node": [
        Column("Status", node_status, description="The status of the node"),
        Column("Roles", node_roles, description="The roles of the node"),
        _AGE,
        Column("Version", _node_info("kubeletVersion"), description="Kubelet Version reported by the node."),
        Column("Internal-IP", lambda o, at: _address(o, "InternalIP"), wide=True,
               description="List of addresses reachable to the node (InternalIP)."),
        Column("External-IP", lambda o, at: _address(o, "ExternalIP"), wide=True,
               description="List of addresses reachable to the node (ExternalIP)."),
        Column("OS-Image", _node_info("osImage"), wide=True,
               description="OS Image reported by the node from /etc/os-release."),
        Column("Kernel-Version", _node_info("kernelVersion"), wide=True,
               description="Kernel Version reported by the node from 'uname -r'."),
        Column("Container-Runtime", _node_info("containerRuntimeVersion"), wide=True,
               description="ContainerRuntime Version reported by the node through runtime remote API."),
    ],
    "Namespace": [
        Column("Status", lambda o, at: str(_status(o).get("phase") or ""),
               description="The status of the namespace"),
        _AGE,
    ],
    "Event": [
        Column("Last Seen", event_last_seen, description="The time the event was last seen, and how often."),
        Column("Type", lambda o, at: str(o.get("type") or ""), description="Type of this event (Normal, Warning)."),
        Column("Reason", lambda o, at: str(o.get("reason") or ""),
               description="A short, machine understandable string that gives the reason for the event."),
        Column("Object", event_object, description="The object that this event is about."),
        Column("Subobject", lambda o, at: str((o.get("involvedObject") or {}).get("fieldPath") or ""), wide=True,
               description="The part of the object this event is about (involvedObject.fieldPath)."),
        Column("Source", lambda o, at: ", ".join(filter(None, [(o.get("source") or {}).get("component"),
                                                                (o.get("source") or {}).get("host")])),
               wide=True, description="The component reporting this event."),
        Column("Message", lambda o, at: str(o.get("message") or "").strip(),
               description="A human-readable description of the status of this operation."),
        Column("First Seen", lambda o, at: since(o.get("firstTimestamp") or o.get("eventTime"), at), wide=True,
               description="The time at which the event was first recorded."),
        Column("Count", lambda o, at: _int(o.get("count") or 1), wide=True, type="integer",
               description="The number of times this event has occurred."),
        Column("Name", lambda o, at: str(_meta(o).get("name") or ""), wide=True, format="name",
               description=NAME_DESCRIPTION),
    ],
    "ReplicaSet": [
        Column("Desired", lambda o, at: _int(_spec(o).get("replicas", 1)), type="integer",
               description="Replicas is the number of desired replicas."),
        Column("Current", lambda o, at: _int(_status(o).get("replicas")), type="integer",
               description="Replicas is the most recently observed number of replicas."),
        Column("Ready", lambda o, at: _int(_status(o).get("readyReplicas")), type="integer",
               description="The number of ready replicas for this replica set."),
        _AGE,
        *WORKLOAD_WIDE,
    ],
    "PodTemplate": [
        Column("Containers", lambda o, at: ",".join(c.get("name", "") for c in _template_containers(o)),
               description="Names of each container in the template."),
        Column("Images", lambda o, at: ",".join(c.get("image", "") for c in _template_containers(o)),
               description="Images referenced by each container in the template."),
        Column("Pod Labels", lambda o, at: join_labels(((o.get("template") or {}).get("metadata") or {})
                                                       .get("labels")),
               description="The labels of the template's pods."),
    ],
    "ReplicationController": [
        Column("Desired", lambda o, at: _int(_spec(o).get("replicas", 1)), type="integer",
               description="Replicas is the number of desired replicas."),
        Column("Current", lambda o, at: _int(_status(o).get("replicas")), type="integer",
               description="Replicas is the most recently observed number of replicas."),
        Column("Ready", lambda o, at: _int(_status(o).get("readyReplicas")), type="integer",
               description="The number of ready replicas for this replication controller."),
        _AGE,
        *WORKLOAD_WIDE[:2],
        Column("Selector", _service_selector, wide=True, description="Label selector for pods (a label map)."),
    ],
    "Deployment": [
        Column("Ready", lambda o, at: f"{_num(_status(o).get('readyReplicas'))}/{_num(_spec(o).get('replicas', 1))}",
               description="Number of the pod with ready state"),
        Column("Up-to-date", lambda o, at: _int(_status(o).get("updatedReplicas")), type="integer",
               description="Total number of non-terminated pods targeted by this deployment that have the desired "
                           "template spec."),
        Column("Available", lambda o, at: _int(_status(o).get("availableReplicas")), type="integer",
               description="Total number of available pods (ready for at least minReadySeconds) targeted by this "
                           "deployment."),
        _AGE,
        *WORKLOAD_WIDE,
    ],
    "DaemonSet": [
        Column("Desired", lambda o, at: _int(_status(o).get("desiredNumberScheduled")), type="integer",
               description="The total number of nodes that should be running the daemon pod (including nodes "
                           "correctly running the daemon pod)."),
        Column("Current", lambda o, at: _int(_status(o).get("currentNumberScheduled")), type="integer",
               description="The number of nodes that are running at least 1 daemon pod and are supposed to run "
                           "the daemon pod."),
        Column("Ready", lambda o, at: _int(_status(o).get("numberReady")), type="integer",
               description="The number of nodes that should be running the daemon pod and have one or more of "
                           "the daemon pod running with a Ready Condition."),
        Column("Up-to-date", lambda o, at: _int(_status(o).get("updatedNumberScheduled")), type="integer",
               description="The total number of nodes that are running updated daemon pod"),
        Column("Available", lambda o, at: _int(_status(o).get("numberAvailable")), type="integer",
               description="The number of nodes that should be running the daemon pod and have one or more of "
                           "the daemon pod running and available (ready for at least spec.minReadySeconds)"),
        Column("Node Selector", daemonset_node_selector,
               description="NodeSelector is a selector which must be true for the pod to fit on a node."),
        _AGE,
        *WORKLOAD_WIDE,
    ],
    "StatefulSet": [
        Column("Ready", lambda o, at: f"{_num(_status(o).get('readyReplicas'))}/{_num(_spec(o).get('replicas', 1))}",
               description="Number of the pod with ready state"),
        _AGE,
        *WORKLOAD_WIDE[:2],
    ],
    "ControllerRevision": [
        Column("Controller", controllerrevision_controller, description="Controller of the object"),
        Column("Revision", lambda o, at: _int(o.get("revision")),
               description="Revision indicates the revision of the state represented by Data."),
        _AGE,
    ],
    "Job": [
        Column("Status", job_status, description="Status of the job."),
        Column("Completions", job_completions, description="The number of succeeded pods out of the desired."),
        Column("Duration", job_duration, description="Time required to complete the job."),
        _AGE,
        *WORKLOAD_WIDE,
    ],
    "CronJob": [
        Column("Schedule", lambda o, at: str(_spec(o).get("schedule") or ""),
               description="The schedule in Cron format."),
        Column("Timezone", lambda o, at: str(_spec(o).get("timeZone") or NONE),
               description="The time zone of the schedule."),
        Column("Suspend", lambda o, at: _bool_ptr(_spec(o).get("suspend")),
               description="Whether subsequent executions are suspended."),
        Column("Active", lambda o, at: len(_status(o).get("active") or []), type="integer",
               description="The number of running jobs."),
        Column("Last Schedule", cronjob_last_schedule,
               description="When the job was last successfully scheduled."),
        _AGE,
        Column("Containers", lambda o, at: ",".join(
            c.get("name", "") for c in ((_job_template_spec(o).get("template") or {}).get("spec") or {})
            .get("containers") or []), wide=True, description="Names of each container in the template."),
        Column("Images", lambda o, at: ",".join(
            c.get("image", "") for c in ((_job_template_spec(o).get("template") or {}).get("spec") or {})
            .get("containers") or []), wide=True, description="Images referenced by each container in the template."),
        Column("Selector", lambda o, at: _selector({"spec": _job_template_spec(o)}, at), wide=True,
               description="Label selector for the jobs' pods."),
    ],
    "Service": [
        Column("Type", lambda o, at: str(_spec(o).get("type") or "ClusterIP"),
               description="type determines how the Service is exposed."),
        Column("Cluster-IP", lambda o, at: str(_spec(o).get("clusterIP") or NONE),
               description="clusterIP is the IP address of the service."),
        Column("External-IP", service_external_ip,
               description="The external IPs of the service (load-balancer ingress or externalIPs)."),
        Column("Port(s)", service_ports, description="The ports that are exposed by this service."),
        _AGE,
        Column("Selector", _service_selector, wide=True,
               description="Route service traffic to pods with label keys and values matching this selector."),
    ],
    "Endpoints": [
        Column("Endpoints", endpoints_list, description="Endpoints of the service"),
        _AGE,
    ],
    "EndpointSlice": [
        Column("AddressType", lambda o, at: str(o.get("addressType") or ""),
               description="addressType specifies the type of address carried by this EndpointSlice. All "
                           "addresses in this slice must be the same type. This field is immutable after creation. "
                           "The following address types are currently supported: * IPv4: Represents an IPv4 "
                           "Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified "
                           "Domain Name."),
        Column("Ports", endpointslice_ports,
               description="ports specifies the list of network ports exposed by each endpoint in this slice. Each "
                           "port must have a unique name. When ports is empty, it indicates that there are no "
                           "defined ports. When a port is defined with a nil port value, it indicates \"all "
                           "ports\". Each slice may include a maximum of 100 ports."),
        Column("Endpoints", endpointslice_endpoints,
               description="endpoints is a list of unique endpoints in this slice. Each slice may include a "
                           "maximum of 1000 endpoints."),
        _AGE,
    ],
    "HorizontalPodAutoscaler": [
        Column("Reference", hpa_reference, description="Reference to the scaled resource (kind/name)."),
        Column("Targets", hpa_targets, description="The current and target metric values."),
        Column("MinPods", lambda o, at: _int(_spec(o).get("minReplicas", 1)), type="integer",
               description="The lower limit for the number of pods that can be set by the autoscaler."),
        Column("MaxPods", lambda o, at: _int(_spec(o).get("maxReplicas")), type="integer",
               description="The upper limit for the number of pods that can be set by the autoscaler."),
        Column("Replicas", lambda o, at: _int(_status(o).get("currentReplicas")), type="integer",
               description="Current number of replicas of pods managed by this autoscaler."),
        _AGE,
    ],
    "CustomResourceDefinition": [
        Column("Created At", lambda o, at: str(_meta(o).get("creationTimestamp") or ""), type="date",
               description=AGE_DESCRIPTION),
    ],
    "PodDisruptionBudget": [
        Column("Min Available", lambda o, at: _int_or_na(_spec(o).get("minAvailable")),
               description="The minimum number of pods that must be available."),
        Column("Max Unavailable", lambda o, at: _int_or_na(_spec(o).get("maxUnavailable")),
               description="The maximum number of pods that may be unavailable."),
        Column("Allowed Disruptions", lambda o, at: _int(_status(o).get("disruptionsAllowed")), type="integer",
               description="Calculated number of pods that may be disrupted at this time."),
        _AGE,
    ],
    "ResourceQuota": [
        _AGE,
        Column("Request", lambda o, at: quota_usage(o, limits=False),
               description="Request represents a minimum amount of cpu/memory that a container may consume."),
        Column("Limit", lambda o, at: quota_usage(o, limits=True),
               description="Limits control the maximum amount of cpu/memory that a container may use independent of "
                           "contention on the node."),
    ],
    "LimitRange": [_CREATED_AT],
    "Lease": [
        Column("Holder", lambda o, at: str(_spec(o).get("holderIdentity") or ""),
               description="holderIdentity contains the identity of the holder of a current lease."),
        _AGE,
    ],
    "ConfigMap": [
        Column("Data", lambda o, at: len(o.get("data") or {}) + len(o.get("binaryData") or {}), type="integer",
               description="The number of keys in data and binaryData."),
        _AGE,
    ],
    "GPUJob": [
        Column("Phase", gpujob_phase, description="Pending, Submitted, Running, Succeeded, Failed or Cancelled."),
        Column("Job-ID", lambda o, at: str(_status(o).get("jobID") or NONE), description="The Slurm job id."),
        Column("Slurm-State", lambda o, at: str(_status(o).get("slurmState") or NONE),
               description="The job's state in Slurm (PENDING, RUNNING, COMPLETED...)."),
        Column("Reason", gpujob_reason, description="Slurm's reason while queued, else the GPUJob's own."),
        Column("Submitted", gpujob_submitted, description="Time since the job was submitted to Slurm."),
        _AGE,
        Column("Cluster", lambda o, at: str(_spec(o).get("cluster") or ""), description="The SlurmCluster."),
        Column("Partition", lambda o, at: str(_status(o).get("partition") or
                                              (_spec(o).get("slurm") or {}).get("partition") or NONE), wide=True,
               description="The Slurm partition."),
        Column("GPUs", lambda o, at: _num((_spec(o).get("slurm") or {}).get("gpus")), wide=True,
               description="GPUs asked for."),
        Column("Exit-Code", lambda o, at: str(_status(o).get("exitCode", NONE)), wide=True,
               description="The job's exit code."),
    ],
    "SlurmCluster": [
        Column("Host", lambda o, at: f"{_spec(o).get('user')}@{_spec(o).get('host')}:{_spec(o).get('port', 22)}",
               description="The login node."),
        Column("Reachable", slurmcluster_reachable, description="The Reachable condition."),
        Column("Version", lambda o, at: str(_status(o).get("slurmVersion") or NONE), description="Slurm's version."),
        Column("Partitions", slurmcluster_partitions, description="Partitions with their GPU counts."),
        _AGE,
        Column("Accounting", lambda o, at: str(_status(o).get("accounting", NONE)).lower(), wide=True,
               description="Whether the site keeps accounting (sacct)."),
        Column("Last-Check", lambda o, at: since(_status(o).get("lastCheckTime"), at), wide=True,
               description="Time since the last reachability check."),
    ],
    "Function": [
        Column("Ready", function_ready, description="The Ready condition's status."),
        Column("Instances", function_instances, description="Ready and desired instances."),
        Column("URL", lambda o, at: str(_status(o).get("url") or NONE), description="Where the gateway serves it."),
        _AGE,
        Column("Revision", lambda o, at: str(_status(o).get("revision") or NONE), wide=True,
               description="The revision being served."),
        Column("Reason", lambda o, at: str(_condition(o, "Ready").get("reason") or ""), wide=True,
               description="The Ready condition's reason."),
    ],
    "Workflow": [
        Column("Start", lambda o, at: str(_spec(o).get("startAt") or ""), description="The first state."),
        Column("States", lambda o, at: len(_spec(o).get("states") or {}), type="integer",
               description="The number of states."),
        Column("Last Run", lambda o, at: str(_status(o).get("lastRun") or NONE), description="The latest WorkflowRun."),
        _AGE,
    ],
    "WorkflowRun": [
        Column("Workflow", lambda o, at: str((_spec(o).get("workflowRef") or {}).get("name") or ""),
               description="The Workflow run."),
        Column("Status", lambda o, at: str(_status(o).get("phase") or "Running"), description="The run's phase."),
        Column("Steps", lambda o, at: len(_status(o).get("steps") or []), type="integer",
               description="States visited."),
        Column("Duration", run_duration, description="How long the run took."),
        _AGE,
        Column("Error", lambda o, at: str(_status(o).get("error") or ""), wide=True, description="Why it failed."),
    ],
    "Trigger": [
        Column("Subscriber", trigger_subscriber, description="The Function or Workflow called."),
        Column("Source", trigger_source, description="Where its events come from."),
        Column("Delivered", lambda o, at: _num(_status(o).get("delivered")), description="Deliveries that succeeded."),
        Column("Failed", lambda o, at: _num(_status(o).get("failed")), description="Deliveries that failed."),
        _AGE,
    ],
    "Secret": [
        Column("Type", lambda o, at: str(o.get("type") or "Opaque"), description="The type of the secret"),
        Column("Data", lambda o, at: len(o.get("data") or {}) + len(o.get("stringData") or {}), type="integer",
               description="The number of keys in data."),
        _AGE,
    ],
    "Role": [_CREATED_AT],
    "ClusterRole": [_CREATED_AT],
    "RoleBinding": _BINDING_COLUMNS,
    "ClusterRoleBinding": _BINDING_COLUMNS,
    "ServiceAccount": [
        Column("Secrets", lambda o, at: len(o.get("secrets") or []), type="integer",
               description="The number of secrets listed in secrets."),
        _AGE,
    ],
    "Ingress": [
        Column("Class", lambda o, at: str(_spec(o).get("ingressClassName") or NONE),
               description="The name of the IngressClass resource."),
        Column("Hosts", ingress_hosts, description="Hosts that incoming requests are matched against."),
        Column("Address", load_balancer_addresses,
               description="Address is a list containing ingress points for the load-balancer"),
        Column("Ports", ingress_ports, description="Ports of TLS configurations that open"),
        _AGE,
    ],
    "NetworkPolicy": [
        Column("Pod-Selector", lambda o, at: format_selector(_spec(o).get("podSelector")),
               description="Selects the pods to which this NetworkPolicy object applies. The array of ingress rules "
                           "is applied to any pods selected by this field. Multiple network policies can select the "
                           "same set of pods. In this case, the ingress rules for each are combined additively. This "
                           "field is NOT optional and follows standard label selector semantics. An empty podSelector "
                           "matches all pods in this namespace."),
        _AGE,
    ],
    "PersistentVolume": [
        Column("Capacity", lambda o, at: str((_spec(o).get("capacity") or {}).get("storage") or ""),
               description="The storage capacity of the persistent volume."),
        Column("Access Modes", lambda o, at: access_modes_text(_spec(o).get("accessModes")),
               description="The access modes of the persistent volume."),
        Column("Reclaim Policy", lambda o, at: str(_spec(o).get("persistentVolumeReclaimPolicy") or ""),
               description="What happens to a persistent volume when released from its claim."),
        Column("Status", lambda o, at: str(_status(o).get("phase") or ""),
               description="The phase of the persistent volume."),
        Column("Claim", pv_claim, description="The claim bound to the persistent volume."),
        Column("StorageClass", lambda o, at: str(_spec(o).get("storageClassName") or ""),
               description="The storage class of the persistent volume."),
        Column("VolumeAttributesClass", lambda o, at: str(_spec(o).get("volumeAttributesClassName") or "<unset>"),
               description="The volume attributes class of the persistent volume."),
        Column("Reason", lambda o, at: str(_status(o).get("reason") or ""),
               description="A brief reason why the persistent volume is in its phase."),
        _AGE,
        Column("VolumeMode", lambda o, at: str(_spec(o).get("volumeMode") or "Filesystem"), wide=True,
               description="The volume mode of the persistent volume."),
    ],
    "PersistentVolumeClaim": [
        Column("Status", lambda o, at: str(_status(o).get("phase") or ""),
               description="The phase of the persistent volume claim."),
        Column("Volume", lambda o, at: str(_spec(o).get("volumeName") or ""),
               description="The persistent volume bound to the claim."),
        Column("Capacity", pvc_capacity, description="The storage capacity of the bound volume."),
        Column("Access Modes", pvc_access_modes, description="The access modes of the bound volume."),
        Column("StorageClass", lambda o, at: str(_spec(o).get("storageClassName") or ""),
               description="The storage class of the persistent volume claim."),
        Column("VolumeAttributesClass", lambda o, at: str(_spec(o).get("volumeAttributesClassName") or "<unset>"),
               description="The volume attributes class of the persistent volume claim."),
        _AGE,
        Column("VolumeMode", lambda o, at: str(_spec(o).get("volumeMode") or "Filesystem"), wide=True,
               description="The volume mode of the persistent volume claim."),
    ],
    "StorageClass": [
        Column("Provisioner", lambda o, at: str(o.get("provisioner") or ""),
               description="Indicates the type of the provisioner."),
        Column("ReclaimPolicy", lambda o, at: str(o.get("reclaimPolicy") or "Delete"),
               description="Indicates the type of the reclaim policy."),
        Column("VolumeBindingMode", lambda o, at: str(o.get("volumeBindingMode") or "Immediate"),
               description="Indicates when volume binding and dynamic provisioning should occur."),
        Column("AllowVolumeExpansion", lambda o, at: str(bool(o.get("allowVolumeExpansion"))).lower(),
               description="Indicates whether the storage class allow volume expand."),
        _AGE,
    ],
    "PriorityClass": [
        Column("Value", lambda o, at: _int(o.get("value")), type="integer",
               description="value represents the integer value of this priority class. This is the actual "
                           "priority that pods receive when they have the name of this class in their pod spec."),
        Column("Global-Default", lambda o, at: bool(o.get("globalDefault")), type="boolean",
               description="globalDefault specifies whether this PriorityClass should be considered as the "
                           "default priority for pods that do not have any priority class. Only one "
                           "PriorityClass can be marked as `globalDefault`. However, if more than one "
                           "PriorityClasses exists with their `globalDefault` field set to true, the smallest "
                           "value of such global default PriorityClasses will be used as the default priority."),
        _AGE,
        Column("PreemptionPolicy", lambda o, at: str(o.get("preemptionPolicy") or ""),
               description="preemptionPolicy is the Policy for preempting pods with lower priority. One of "
                           "Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset."),
    ],
    "IngressClass": [
        Column("Controller", lambda o, at: str(_spec(o).get("controller") or ""),
               description="controller refers to the name of the controller that should handle this class. This "
                           "allows for different \"flavors\" that are controlled by the same controller. For "
                           "example, you may have different parameters for the same implementing controller. This "
                           "should be specified as a domain-prefixed path no more than 250 characters in length, "
                           "e.g. \"acme.io/ingress-controller\". This field is immutable."),
        Column("Parameters", ingress_class_parameters,
               description="parameters is a link to a custom resource containing additional configuration for "
                           "the controller. This is optional if the controller does not require extra parameters."),
        _AGE,
    ],
    "CertificateSigningRequest": [
        _AGE,
        Column("SignerName", lambda o, at: str(_spec(o).get("signerName") or NONE),
               description="signerName indicates the requested signer, and is a qualified name."),
        # Kubernetes describes this column with the request field's words, as here
        Column("Requestor", lambda o, at: str(_spec(o).get("username") or ""),
               description="request contains an x509 certificate signing request encoded in a \"CERTIFICATE "
                           "REQUEST\" PEM block. When serialized as JSON or YAML, the data is additionally "
                           "base64-encoded."),
        Column("RequestedDuration", lambda o, at: csr_requested_duration(o),
               description="expirationSeconds is the requested duration of validity of the issued certificate."),
        Column("Condition", lambda o, at: condition_summary(o),
               description="conditions applied to the request. Known conditions are \"Approved\", \"Denied\", "
                           "and \"Failed\"."),
    ],
    "RuntimeClass": [
        Column("Handler", lambda o, at: str(o.get("handler") or ""),
               description="handler specifies the underlying runtime and configuration that the CRI "
                           "implementation will use to handle pods of this class. The possible values are specific "
                           "to the node & CRI configuration.  It is assumed that all handlers are available on "
                           "every node, and handlers of the same name are equivalent on every node. For example, a "
                           "handler called \"runc\" might specify that the runc OCI runtime (using native Linux "
                           "containers) will be used to run the containers in a pod. The Handler must be lowercase, "
                           "conform to the DNS Label (RFC 1123) requirements, and is immutable."),
        _AGE,
    ],
    "CSIDriver": [
        Column("AttachRequired", lambda o, at: _spec(o).get("attachRequired") is not False, type="boolean",
               description=CSI_DRIVER_DOCS["attachRequired"]),
        Column("PodInfoOnMount", lambda o, at: _spec(o).get("podInfoOnMount") is not False, type="boolean",
               description=CSI_DRIVER_DOCS["podInfoOnMount"]),
        Column("StorageCapacity", lambda o, at: bool(_spec(o).get("storageCapacity")), type="boolean",
               description=CSI_DRIVER_DOCS["storageCapacity"]),
        Column("TokenRequests", csi_token_requests, description=CSI_DRIVER_DOCS["tokenRequests"]),
        Column("RequiresRepublish", lambda o, at: bool(_spec(o).get("requiresRepublish")), type="boolean",
               description=CSI_DRIVER_DOCS["requiresRepublish"]),
        Column("Modes", lambda o, at: ",".join(_spec(o).get("volumeLifecycleModes") or []) or NONE,
               description=CSI_DRIVER_DOCS["volumeLifecycleModes"]),
        _AGE,
    ],
    "CSINode": [
        Column("Drivers", lambda o, at: len(_spec(o).get("drivers") or []), type="integer",
               description="drivers is a list of information of all CSI Drivers existing on a node. If all "
                           "drivers in the list are uninstalled, this can become empty."),
        _AGE,
    ],
    "CSIStorageCapacity": [
        Column("StorageClassName", lambda o, at: str(o.get("storageClassName") or ""),
               description="storageClassName represents the name of the StorageClass that the reported capacity "
                           "applies to. It must meet the same requirements as the name of a StorageClass object "
                           "(non-empty, DNS subdomain). If that object no longer exists, the CSIStorageCapacity "
                           "object is obsolete and should be removed by its creator. This field is immutable."),
        Column("Capacity", lambda o, at: str(o["capacity"]) if o.get("capacity") is not None else "<unset>",
               description="capacity is the value reported by the CSI driver in its GetCapacityResponse for a "
                           "GetCapacityRequest with topology and parameters that match the previous fields.\n\n"
                           "The semantic is currently (CSI spec 1.2) defined as: The available capacity, in bytes, "
                           "of the storage that can be used to provision volumes. If not set, that information is "
                           "currently unavailable."),
    ],
    "VolumeAttachment": [
        Column("Attacher", lambda o, at: str(_spec(o).get("attacher") or ""), format="name",
               description="attacher indicates the name of the volume driver that MUST handle this request. This "
                           "is the name returned by GetPluginName()."),
        Column("PV", lambda o, at: str((_spec(o).get("source") or {}).get("persistentVolumeName") or ""),
               description="persistentVolumeName represents the name of the persistent volume to attach."),
        Column("Node", lambda o, at: str(_spec(o).get("nodeName") or ""),
               description="nodeName represents the node that the volume should be attached to."),
        Column("Attached", lambda o, at: bool(_status(o).get("attached")), type="boolean",
               description="attached indicates the volume is successfully attached. This field must only be set "
                           "by the entity completing the attach operation, i.e. the external-attacher."),
        _AGE,
    ],
    "FlowSchema": [  # printFlowSchema
        Column("PriorityLevel", lambda o, at: str((_spec(o).get("priorityLevelConfiguration") or {}).get("name") or ""),
               description="The name of the PriorityLevelConfiguration this FlowSchema refers to."),
        Column("MatchingPrecedence", lambda o, at: _int(_spec(o).get("matchingPrecedence")),
               description="The matching precedence of this FlowSchema."),
        Column("DistinguisherMethod", lambda o, at: str((_spec(o).get("distinguisherMethod") or {}).get("type")
                                                        or "<none>"),
               description="The distinguisher method of this FlowSchema."),
        _AGE,
        Column("MissingPL", _missing_pl,
               description="Whether the priority level configuration the FlowSchema refers to is missing."),
    ],
    "PriorityLevelConfiguration": [  # printPriorityLevelConfiguration
        Column("Type", lambda o, at: str(_spec(o).get("type") or ""), description="The type of the priority level."),
        Column("NominalConcurrencyShares", lambda o, at: _limited(o, "nominalConcurrencyShares"),
               description="NominalConcurrencyShares for the priority level."),
        Column("Queues", lambda o, at: _limited(o, "queues"), description="Number of queues."),
        Column("HandSize", lambda o, at: _limited(o, "handSize"), description="Hand size."),
        Column("QueueLengthLimit", lambda o, at: _limited(o, "queueLengthLimit"), description="Queue length limit."),
        _AGE,
    ],
    "NodeMetrics": METRICS_COLUMNS,
    "PodMetrics": METRICS_COLUMNS,
    "ComponentStatus": [  # no AGE: the objects are made at each read
        Column("Status", lambda o, at: component_health(o)[0], description="Status of the component conditions"),
        Column("Message", lambda o, at: component_health(o)[1], description="Message of the component conditions"),
        Column("Error", lambda o, at: component_health(o)[2], description="Error of the component conditions"),
    ],
}

DEFAULT_COLUMNS = [_AGE]

#: Kinds whose table has no leading NAME column (kubectl's event table starts with LAST SEEN).
NO_NAME_COLUMN = frozenset({"Event"})

NAME_COLUMN = Column("Name", lambda o, at: str(_meta(o).get("name") or ""), format="name",
                     description=NAME_DESCRIPTION)


def storage_class_name(obj: Obj, at: dt.datetime | None = None) -> str:
    """A StorageClass's NAME cell: ``local-path (default)`` for the default class."""
    name = str(_meta(obj).get("name") or "")
    return f"{name} (default)" if is_default_class(obj) else name


#: Kinds whose NAME cell says more than the name.
NAME_COLUMNS = {"StorageClass": Column("Name", storage_class_name, format="name", description=NAME_DESCRIPTION)}


def name_cell(kind: str, obj: Obj) -> str:
    """The NAME cell of ``obj`` (the name, or what :data:`NAME_COLUMNS` makes of it)."""
    column = NAME_COLUMNS.get(kind, NAME_COLUMN)
    return str(column.value(obj, dt.datetime.now(dt.UTC)))


def _printer_cell(kind: str, path: str) -> Getter:
    def value(obj: Obj, at: dt.datetime) -> Cell:
        found = kubejsonpath.find(obj, path)
        if not found or found[0] is None:
            return ""
        got = found[0]
        if kind == "date" and isinstance(got, str):
            return since(got, at)
        if kind == "integer" and isinstance(got, int) and not isinstance(got, bool):
            return got
        if isinstance(got, bool):
            return "true" if got else "false"
        if isinstance(got, dict | list):
            return json.dumps(got, separators=(",", ":"))
        return str(got)
    return value


def printer_columns(defined: list[Obj]) -> list[Column]:
    """The columns after NAME of a custom resource whose CRD version has ``defined``
    (``additionalPrinterColumns``), as kube-apiserver's CRD table convertor: in order, ``priority`` > 0
    only with ``-o wide``; a version without any gets AGE.  A cell is the first value the column's
    JSONPath names: ``date`` as an age (``5m``), objects and lists as JSON, absent as empty."""
    if not defined:
        return list(DEFAULT_COLUMNS)
    out = []
    for col in defined:
        kind = str(col.get("type") or "string")
        out.append(Column(str(col.get("name")), _printer_cell(kind, str(col.get("jsonPath") or "")),
                          wide=int(col.get("priority") or 0) > 0, type=kind,
                          format=str(col.get("format") or ""), description=str(col.get("description") or "")))
    return out


def columns_for(kind: str, wide: bool = False) -> list[Column]:
    """The columns after NAME for ``kind`` (``AGE`` alone for kinds without a row)."""
    cols = COLUMNS.get(kind, DEFAULT_COLUMNS)
    return [c for c in cols if wide or not c.wide]


def definitions(kind: str) -> list[Column]:
    """Every column of ``kind``'s table, NAME first (none for Event), priority-1 columns included."""
    lead = [] if kind in NO_NAME_COLUMN else [NAME_COLUMNS.get(kind, NAME_COLUMN)]
    return lead + COLUMNS.get(kind, DEFAULT_COLUMNS)


def cells(columns: list[Column], obj: Obj, at: dt.datetime) -> list[Cell]:
    """The cells of one row of ``obj`` (an events.k8s.io/v1 Event is read in its core form, as
    kube-apiserver prints every version of a kind from the one internal form)."""
    if obj.get("apiVersion") == events_v1.API_VERSION and obj.get("kind") == "Event":
        obj = events_v1.from_v1(obj)
    return [c.value(obj, at) for c in columns]


#: ``includeObject`` values (``metav1.IncludeObjectPolicy``).
INCLUDE_OBJECT = ("Object", "Metadata", "None")


def table(kind: str, objects: list[Obj], *, include_object: str = "Metadata", table_version: str = "v1",
          list_meta: Obj | None = None, with_definitions: bool = True, at: dt.datetime | None = None,
          cols: list[Column] | None = None) -> Obj:
    """A ``meta.k8s.io`` Table of ``objects`` (all of kind ``kind``), as kube-apiserver answers
    ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``.

    ``include_object``: ``Object`` (each row carries the object), ``Metadata`` (the default: a
    ``PartialObjectMetadata``, enough for ``--show-labels`` and ``-L``) or ``None``; any other value
    raises ValueError.  ``table_version``: ``v1`` or ``v1beta1`` (the Table's apiVersion).
    ``list_meta``: resourceVersion/continue of the list; ``with_definitions`` False leaves out the
    column definitions (watch events after the first, as kube-apiserver sends them).
    ``cols``: the columns (NAME included) when not ``kind``'s own (a custom resource's).
    """
    if include_object in ("", None):
        include_object = "Metadata"
    if include_object not in INCLUDE_OBJECT:
        raise ValueError(f'unrecognized includeObject value: "{include_object}"')
    at = at or dt.datetime.now(dt.UTC)
    api_version = f"meta.k8s.io/{table_version}"
    columns = cols if cols is not None else definitions(kind)
    rows: list[Obj] = []
    for obj in objects:
        row: Obj = {"cells": cells(columns, obj, at)}
        if include_object == "Object":
            row["object"] = obj
        elif include_object == "Metadata":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": api_version,
                             "metadata": obj.get("metadata") or {}}
        else:
            row["object"] = None
        rows.append(row)
    return {"kind": "Table", "apiVersion": api_version, "metadata": dict(list_meta or {}),
            "columnDefinitions": [c.definition() for c in columns] if with_definitions else [],
            "rows": rows}
