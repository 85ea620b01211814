"""``kubectl describe``: a readable story of an object, with its Events.

Pods and Nodes follow kubectl's own layouts (``pkg/describe``); every other kind
gets the generic rendering kubectl uses for unstructured objects (metadata, spec,
status as indented ``Title Case:`` fields). :data:`DESCRIBERS` maps a Kind to its
describer, so later kinds can add their own.
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import typer

from minik8s.api import columns as cols
from minik8s.api import errors
from minik8s.api.columns import NONE, since
from minik8s.api.quantity import format_cpu, format_memory, parse_memory, parse_millicpu
from minik8s.api.registry import ResourceType
from minik8s.kubectl import printing
from minik8s.kubectl.errors import KubectlError, server_error
from minik8s.kubectl.printing import describe_time
from minik8s.kubectl.resolve import parse_targets
from minik8s.kubectl.session import GlobalOptions, Session

Obj = dict[str, Any]
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


class Writer:
    """kubectl's PrefixWriter over a tabwriter: ``write(level, "Key:\\tvalue")`` lines, 2 spaces a level."""

    def __init__(self) -> None:
        self.done: list[str] = []
        self.pending: list[list[str]] = []

    def write(self, level: int, text: str = "") -> None:
        """Add one line at indentation ``level`` (cells separated by tabs)."""
        self.pending.append(("  " * level + text).split("\t"))

    def flush(self) -> None:
        """Align what was written so far (later lines start new column blocks)."""
        self.done += printing.tabwrite(self.pending, minwidth=0, padding=2)
        self.pending = []

    def text(self) -> str:
        """The finished description."""
        self.flush()
        return "\n".join(self.done) + "\n"


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def write_labels(w: Writer, title: str, labels: dict[str, Any] | None, level: int = 0) -> None:
    """``Labels:  a=1`` then one ``k=v`` per line (sorted), or ``<none>``."""
    if not labels:
        w.write(level, f"{title}:\t{NONE}")
        return
    for i, key in enumerate(sorted(labels)):
        w.write(level, f"{title + ':' if i == 0 else ''}\t{key}={labels[key]}")


def write_annotations(w: Writer, title: str, annotations: dict[str, Any] | None) -> None:
    """``Annotations:  k: v`` lines, kubectl's last-applied-configuration left out."""
    shown = {k: v for k, v in (annotations or {}).items() if k != LAST_APPLIED}
    if not shown:
        w.write(0, f"{title}:\t{NONE}")
        return
    first = True
    for key in sorted(shown):
        for j, line in enumerate(str(shown[key]).splitlines() or [""]):
            label = f"{title}:" if first else ""
            w.write(0, f"{label}\t{key}: {line}" if j == 0 else f"{label}\t  {line}")
            first = False


def write_events(w: Writer, events: list[Obj] | None) -> None:
    """The Events table (Type Reason Age From Message), or ``Events:  <none>``."""
    if events is None:
        return
    if not events:
        w.write(0, f"Events:\t{NONE}")
        return
    w.flush()
    w.write(0, "Events:")
    w.write(1, "Type\tReason\tAge\tFrom\tMessage")
    w.write(1, "----\t------\t----\t----\t-------")
    at = printing.now()
    for e in sorted(events, key=cols.event_sort_key):
        first = since(e.get("firstTimestamp") or e.get("eventTime") or _meta(e).get("creationTimestamp"), at)
        count = int(e.get("count") or (e.get("series") or {}).get("count") or 1)
        interval = first
        if count > 1:
            last = e.get("lastTimestamp") or (e.get("series") or {}).get("lastObservedTime")
            interval = f"{since(last, at)} (x{count} over {first})"
        source = (e.get("source") or {}).get("component") or e.get("reportingComponent") or \
            e.get("reportingController") or ""
        w.write(1, f"{e.get('type', '')}\t{e.get('reason', '')}\t{interval}\t{source}\t"
                   f"{str(e.get('message') or '').strip()}")


async def fetch_events(s: Session, obj: Obj, rt: ResourceType) -> list[Obj] | None:
    """Events about ``obj`` (fieldSelector on involvedObject); None when events are not served."""
    try:
        ev_rt = s.registry.by_kind("v1", "Event")
        if ev_rt is None:
            return None
        meta = _meta(obj)
        fields = [f"involvedObject.name={meta.get('name')}"]
        if rt.namespaced:
            fields.append(f"involvedObject.namespace={meta.get('namespace')}")
            if meta.get("uid"):
                fields.append(f"involvedObject.uid={meta['uid']}")
            namespace = meta.get("namespace")
        else:
            fields.append(f"involvedObject.kind={rt.kind}")
            namespace = None
        listed = await s.client.list_all(ev_rt, namespace, field_selector=",".join(fields))
        return list(listed.get("items") or [])
    except errors.APIError:
        return None


# ------------------------------------------------------------------ Pod
def _ports(ports: list[Obj], key: str) -> str:
    parts = [f"{p.get(key, 0)}/{p.get('protocol') or 'TCP'}" for p in ports]
    return ",".join(parts) if parts else NONE


def describe_probe(probe: Obj) -> str:
    """``http-get http://:8080/healthz delay=0s timeout=1s period=10s #success=1 #failure=3``."""
    attrs = (f"delay={probe.get('initialDelaySeconds', 0)}s timeout={probe.get('timeoutSeconds', 1)}s "
             f"period={probe.get('periodSeconds', 10)}s #success={probe.get('successThreshold', 1)} "
             f"#failure={probe.get('failureThreshold', 3)}")
    if probe.get("exec") is not None:
        return f"exec [{' '.join(str(c) for c in probe['exec'].get('command') or [])}] {attrs}"
    if probe.get("httpGet") is not None:
        get = probe["httpGet"]
        scheme = str(get.get("scheme") or "HTTP").lower()
        host = get.get("host") or ""
        port = get.get("port")
        return f"http-get {scheme}://{host}{':' + str(port) if port is not None else ''}{get.get('path', '/')} {attrs}"
    if probe.get("tcpSocket") is not None:
        tcp = probe["tcpSocket"]
        return f"tcp-socket {tcp.get('host') or ''}:{tcp.get('port')} {attrs}"
    if probe.get("grpc") is not None:
        return f"grpc <pod>:{probe['grpc'].get('port')} {probe['grpc'].get('service') or ''} {attrs}"
    return f"unknown {attrs}"


def _state(w: Writer, title: str, state: Obj) -> None:
    if state.get("running") is not None:
        w.write(2, f"{title}:\tRunning")
        w.write(3, f"Started:\t{describe_time(state['running'].get('startedAt'))}")
    elif state.get("waiting") is not None:
        w.write(2, f"{title}:\tWaiting")
        if state["waiting"].get("reason"):
            w.write(3, f"Reason:\t{state['waiting']['reason']}")
        if state["waiting"].get("message"):
            w.write(3, f"Message:\t{state['waiting']['message']}")
    elif state.get("terminated") is not None:
        term = state["terminated"]
        w.write(2, f"{title}:\tTerminated")
        if term.get("reason"):
            w.write(3, f"Reason:\t{term['reason']}")
        if term.get("message"):
            w.write(3, f"Message:\t{term['message']}")
        w.write(3, f"Exit Code:\t{term.get('exitCode', 0)}")
        if term.get("signal"):
            w.write(3, f"Signal:\t{term['signal']}")
        w.write(3, f"Started:\t{describe_time(term.get('startedAt'))}")
        w.write(3, f"Finished:\t{describe_time(term.get('finishedAt'))}")
    else:
        w.write(2, f"{title}:\tWaiting")


def _env_line(e: Obj) -> str:
    src = e.get("valueFrom") or {}
    if src.get("fieldRef"):
        ref = src["fieldRef"]
        return f"{e['name']}:\t ({ref.get('apiVersion', 'v1')}:{ref.get('fieldPath', '')})"
    if src.get("resourceFieldRef"):
        return f"{e['name']}:\t ({src['resourceFieldRef'].get('resource', '')})"
    if src.get("secretKeyRef"):
        ref = src["secretKeyRef"]
        return (f"{e['name']}:\t<set to the key '{ref.get('key')}' in secret '{ref.get('name')}'>\t"
                f"Optional: {_str(bool(ref.get('optional')))}")
    if src.get("configMapKeyRef"):
        ref = src["configMapKeyRef"]
        return (f"{e['name']}:\t<set to the key '{ref.get('key')}' of config map '{ref.get('name')}'>\t"
                f"Optional: {_str(bool(ref.get('optional')))}")
    return f"{e['name']}:\t"


def write_containers(w: Writer, title: str, containers: list[Obj], statuses: list[Obj], space: str = "") -> None:
    """kubectl's container section: image, ports, command, state, resources, probes, env, mounts.

    ``space`` prefixes the title (a pod template's section is indented by two spaces and,
    as in kubectl's ``describeContainers``, its container names by one more).
    """
    by_name = {s.get("name"): s for s in statuses}
    w.write(0, f"{space}{title}:")
    for c in containers:
        st = by_name.get(c.get("name"))
        w.write(1, f"{' ' if space else ''}{c.get('name')}:")
        if st is not None:
            w.write(2, f"Container ID:\t{st.get('containerID') or ''}")
        w.write(2, f"Image:\t{c.get('image') or ''}")
        if st is not None:
            w.write(2, f"Image ID:\t{st.get('imageID') or ''}")
        ports = c.get("ports") or []
        port_text = _ports(ports, "containerPort")
        w.write(2, f"{'Ports' if ',' in port_text else 'Port'}:\t{port_text}")
        host_text = _ports(ports, "hostPort")
        w.write(2, f"{'Host Ports' if ',' in host_text else 'Host Port'}:\t{host_text}")
        for key, label in (("command", "Command"), ("args", "Args")):
            if c.get(key):
                w.write(2, f"{label}:")
                for item in c[key]:
                    for line in str(item).split("\n"):
                        w.write(3, line)
        if st is not None:
            _state(w, "State", st.get("state") or {})
            last = st.get("lastState") or {}
            if last.get("terminated"):
                _state(w, "Last State", last)
            w.write(2, f"Ready:\t{_str(bool(st.get('ready')))}")
            w.write(2, f"Restart Count:\t{st.get('restartCount', 0)}")
        resources = c.get("resources") or {}
        for key, label in (("limits", "Limits"), ("requests", "Requests")):
            if resources.get(key):
                w.write(2, f"{label}:")
                for name in sorted(resources[key]):
                    w.write(3, f"{name}:\t{resources[key][name]}")
        for key, label in (("livenessProbe", "Liveness"), ("readinessProbe", "Readiness"),
                           ("startupProbe", "Startup")):
            if c.get(key):
                w.write(2, f"{label}:\t{describe_probe(c[key])}")
        env = c.get("env") or []
        w.write(2, "Environment:" + ("" if env else f"\t{NONE}"))
        for e in env:
            if e.get("valueFrom"):
                w.write(3, _env_line(e))
                continue
            for i, line in enumerate(str(e.get("value") or "").split("\n")):
                w.write(3, f"{e.get('name')}:\t{line}" if i == 0 else f"\t{line}")
        mounts = sorted(c.get("volumeMounts") or [], key=lambda m: str(m.get("mountPath")))
        w.write(2, "Mounts:" + ("" if mounts else f"\t{NONE}"))
        for m in mounts:
            flags = ["ro" if m.get("readOnly") else "rw"]
            if m.get("subPath"):
                flags.append(f'path="{m["subPath"]}"')
            w.write(3, f"{m.get('mountPath')} from {m.get('name')} ({','.join(flags)})")


def write_volumes(w: Writer, volumes: list[Obj], space: str = "") -> None:
    """The Volumes section (HostPath, EmptyDir, ConfigMap, Secret, PVC...); ``space`` as in write_containers."""
    if not volumes:
        w.write(0, f"{space}Volumes:\t{NONE}")
        return
    w.write(0, f"{space}Volumes:")
    for v in volumes:
        w.write(1, f"{' ' if space else ''}{v.get('name')}:")
        if v.get("hostPath") is not None:
            w.write(2, "Type:\tHostPath (bare host directory volume)")
            w.write(2, f"Path:\t{v['hostPath'].get('path', '')}")
            w.write(2, f"HostPathType:\t{v['hostPath'].get('type', '')}")
        elif v.get("emptyDir") is not None:
            w.write(2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)")
            w.write(2, f"Medium:\t{v['emptyDir'].get('medium', '')}")
            w.write(2, f"SizeLimit:\t{v['emptyDir'].get('sizeLimit') or '<unset>'}")
        elif v.get("configMap") is not None:
            w.write(2, "Type:\tConfigMap (a volume populated by a ConfigMap)")
            w.write(2, f"Name:\t{v['configMap'].get('name', '')}")
            w.write(2, f"Optional:\t{_str(bool(v['configMap'].get('optional')))}")
        elif v.get("secret") is not None:
            w.write(2, "Type:\tSecret (a volume populated by a Secret)")
            w.write(2, f"SecretName:\t{v['secret'].get('secretName', '')}")
            w.write(2, f"Optional:\t{_str(bool(v['secret'].get('optional')))}")
        elif v.get("persistentVolumeClaim") is not None:
            w.write(2, "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)")
            w.write(2, f"ClaimName:\t{v['persistentVolumeClaim'].get('claimName', '')}")
            w.write(2, f"ReadOnly:\t{_str(bool(v['persistentVolumeClaim'].get('readOnly')))}")
        else:
            others = [k for k in v if k != "name"]
            w.write(2, f"Type:\t{others[0] if others else '<unknown>'}")


def write_tolerations(w: Writer, title: str, tolerations: list[Obj]) -> None:
    """``key=value:Effect op=Exists for 300s`` per line, or ``<none>``."""
    if not tolerations:
        w.write(0, f"{title}:\t{NONE}")
        return
    for i, t in enumerate(tolerations):
        text = str(t.get("key") or "")
        if t.get("value"):
            text += f"={t['value']}"
        if t.get("effect"):
            text += f":{t['effect']}"
        if t.get("operator") == "Exists":
            text += " op=Exists"
        if t.get("tolerationSeconds") is not None:
            text += f" for {t['tolerationSeconds']}s"
        w.write(0, f"{title + ':' if i == 0 else ''}\t{text}")


def write_pod_template(w: Writer, template: Obj | None) -> None:
    """kubectl's ``DescribePodTemplate``: ``Pod Template:`` then labels, annotations, containers and volumes."""
    w.write(0, "Pod Template:")
    if template is None:
        w.write(1, "<unset>")
        return
    meta, spec = _meta(template), template.get("spec") or {}
    write_labels(w, "  Labels", meta.get("labels"))
    if meta.get("annotations"):
        write_annotations(w, "  Annotations", meta["annotations"])
    if spec.get("serviceAccountName"):
        w.write(1, f"Service Account:\t{spec['serviceAccountName']}")
    if spec.get("initContainers"):
        write_containers(w, "Init Containers", spec["initContainers"], [], space="  ")
    write_containers(w, "Containers", spec.get("containers") or [], [], space="  ")
    write_volumes(w, spec.get("volumes") or [], space="  ")
    if spec.get("priorityClassName"):
        w.write(1, f"Priority Class Name:\t{spec['priorityClassName']}")


def _controller(obj: Obj) -> str:
    for ref in _meta(obj).get("ownerReferences") or []:
        if ref.get("controller"):
            return f"{ref.get('kind')}/{ref.get('name')}"
    return ""


async def describe_pod(s: Session, rt: ResourceType, pod: Obj) -> str:
    """A Pod in kubectl's layout."""
    meta, spec, status = _meta(pod), pod.get("spec") or {}, pod.get("status") or {}
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}")
    w.write(0, f"Priority:\t{spec.get('priority', 0)}")
    if spec.get("priorityClassName"):
        w.write(0, f"Priority Class Name:\t{spec['priorityClassName']}")
    if spec.get("serviceAccountName"):
        w.write(0, f"Service Account:\t{spec['serviceAccountName']}")
    node = spec.get("nodeName")
    w.write(0, f"Node:\t{node + '/' + (status.get('hostIP') or '') if node else NONE}")
    if status.get("startTime"):
        w.write(0, f"Start Time:\t{describe_time(status['startTime'])}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    if meta.get("deletionTimestamp") and status.get("phase") not in ("Failed", "Succeeded"):
        w.write(0, f"Status:\tTerminating (lasts {since(meta['deletionTimestamp'])})")
        w.write(0, f"Termination Grace Period:\t{meta.get('deletionGracePeriodSeconds', 0)}s")
    else:
        w.write(0, f"Status:\t{status.get('phase') or ''}")
    if status.get("reason"):
        w.write(0, f"Reason:\t{status['reason']}")
    if status.get("message"):
        w.write(0, f"Message:\t{status['message']}")
    w.write(0, f"IP:\t{status.get('podIP') or ''}")
    ips = [i.get("ip") for i in status.get("podIPs") or [] if i.get("ip")]
    if not ips and status.get("podIP"):
        ips = [status["podIP"]]
    if ips:
        w.write(0, "IPs:")
        for ip in ips:
            w.write(1, f"IP:\t{ip}")
    else:
        w.write(0, f"IPs:\t{NONE}")
    if _controller(pod):
        w.write(0, f"Controlled By:\t{_controller(pod)}")
    if status.get("nominatedNodeName"):
        w.write(0, f"NominatedNodeName:\t{status['nominatedNodeName']}")
    if spec.get("initContainers"):
        write_containers(w, "Init Containers", spec["initContainers"], status.get("initContainerStatuses") or [])
    write_containers(w, "Containers", spec.get("containers") or [], status.get("containerStatuses") or [])
    if status.get("conditions"):
        w.write(0, "Conditions:")
        w.write(1, "Type\tStatus")
        for c in status["conditions"]:
            w.write(1, f"{c.get('type')} \t{c.get('status')} ")
    write_volumes(w, spec.get("volumes") or [])
    w.write(0, f"QoS Class:\t{status.get('qosClass') or ''}")
    write_labels(w, "Node-Selectors", spec.get("nodeSelector"))
    write_tolerations(w, "Tolerations", spec.get("tolerations") or [])
    write_events(w, await fetch_events(s, pod, rt))
    return w.text()


# ------------------------------------------------------------------ Node
def _pod_requests(pod: Obj) -> dict[str, tuple[int, int]]:
    """cpu (millicores) and memory (bytes): (requests, limits) summed over the containers."""
    totals = {"cpu": [0, 0], "memory": [0, 0]}
    for c in (pod.get("spec") or {}).get("containers") or []:
        res = c.get("resources") or {}
        for i, key in enumerate(("requests", "limits")):
            values = res.get(key) or {}
            try:
                if "cpu" in values:
                    totals["cpu"][i] += parse_millicpu(values["cpu"])
                if "memory" in values:
                    totals["memory"][i] += parse_memory(values["memory"])
            except ValueError:
                continue
    return {k: (v[0], v[1]) for k, v in totals.items()}


def _fraction(amount: int, total: int) -> str:
    return f"{int(amount * 100 / total) if total else 0}%"


def _fmt(resource: str, amount: int) -> str:
    return format_cpu(amount / 1000) if resource == "cpu" else format_memory(amount)


async def describe_node(s: Session, rt: ResourceType, node: Obj) -> str:
    """A Node in kubectl's layout, with its non-terminated pods and their requests."""
    meta, spec, status = _meta(node), node.get("spec") or {}, node.get("status") or {}
    name = str(meta.get("name") or "")
    w = Writer()
    w.write(0, f"Name:\t{name}")
    w.write(0, f"Roles:\t{cols.node_roles(node)}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    w.write(0, f"CreationTimestamp:\t{describe_time(meta.get('creationTimestamp'))}")
    taints = spec.get("taints") or []
    if not taints:
        w.write(0, f"Taints:\t{NONE}")
    for i, t in enumerate(taints):
        value = f"={t['value']}" if t.get("value") else ""
        w.write(0, f"{'Taints:' if i == 0 else ''}\t{t.get('key')}{value}:{t.get('effect')}")
    w.write(0, f"Unschedulable:\t{_str(bool(spec.get('unschedulable')))}")
    lease_rt = s.registry.by_kind("coordination.k8s.io/v1", "Lease")
    if lease_rt is not None:
        try:
            lease = await s.client.get(lease_rt, name, "kube-node-lease")
        except errors.APIError:
            lease = None
        w.write(0, "Lease:")
        lspec = (lease or {}).get("spec") or {}
        w.write(1, f"HolderIdentity:\t{lspec.get('holderIdentity') or '<unset>'}")
        w.write(1, f"AcquireTime:\t{describe_time(lspec['acquireTime']) if lspec.get('acquireTime') else '<unset>'}")
        w.write(1, f"RenewTime:\t{describe_time(lspec['renewTime']) if lspec.get('renewTime') else '<unset>'}")
    conditions = status.get("conditions") or []
    if conditions:
        w.write(0, "Conditions:")
        w.write(1, "Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage")
        w.write(1, "----\t------\t-----------------\t------------------\t------\t-------")
        for c in conditions:
            w.write(1, f"{c.get('type')} \t{c.get('status')} \t{describe_time(c.get('lastHeartbeatTime'))} \t"
                       f"{describe_time(c.get('lastTransitionTime'))} \t{c.get('reason') or ''} \t"
                       f"{c.get('message') or ''}")
    addresses = status.get("addresses") or []
    w.write(0, "Addresses:" + ("" if addresses else f"\t{NONE}"))
    for a in addresses:
        w.write(1, f"{a.get('type')}:\t{a.get('address')}")
    for key, label in (("capacity", "Capacity"), ("allocatable", "Allocatable")):
        values = status.get(key) or {}
        if values:
            w.write(0, f"{label}:")
            for res in sorted(values):
                w.write(1, f"{res}:\t{values[res]}")
    info = status.get("nodeInfo") or {}
    if info:
        w.write(0, "System Info:")
        for field, label in (("machineID", "Machine ID"), ("systemUUID", "System UUID"), ("bootID", "Boot ID"),
                             ("kernelVersion", "Kernel Version"), ("osImage", "OS Image"),
                             ("operatingSystem", "Operating System"), ("architecture", "Architecture"),
                             ("containerRuntimeVersion", "Container Runtime Version"),
                             ("kubeletVersion", "Kubelet Version"), ("kubeProxyVersion", "Kube-Proxy Version")):
            w.write(1, f"{label}:\t{info.get(field) or ''}")
    if spec.get("podCIDR"):
        w.write(0, f"PodCIDR:\t{spec['podCIDR']}")
        w.write(0, f"PodCIDRs:\t{','.join(spec.get('podCIDRs') or [spec['podCIDR']])}")
    pods_rt = s.registry.by_kind("v1", "Pod")
    if pods_rt is not None:
        listed = await s.client.list_all(pods_rt, None, field_selector=f"spec.nodeName={name}")
        pods = [p for p in listed.get("items") or []
                if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        alloc = status.get("allocatable") or status.get("capacity") or {}
        try:
            cpu_total = parse_millicpu(alloc.get("cpu", "0"))
            mem_total = parse_memory(alloc.get("memory", "0"))
        except ValueError:
            cpu_total = mem_total = 0
        totals = {"cpu": [0, 0], "memory": [0, 0]}
        w.write(0, f"Non-terminated Pods:\t({len(pods)} in total)")
        w.write(1, "Namespace\tName\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge")
        w.write(1, "---------\t----\t------------\t----------\t---------------\t-------------\t---")
        for p in pods:
            req = _pod_requests(p)
            cells = []
            for res, total in (("cpu", cpu_total), ("memory", mem_total)):
                r, lim = req[res]
                totals[res][0] += r
                totals[res][1] += lim
                cells += [f"{_fmt(res, r)} ({_fraction(r, total)})", f"{_fmt(res, lim)} ({_fraction(lim, total)})"]
            pm = _meta(p)
            w.write(1, f"{pm.get('namespace')}\t{pm.get('name')}\t" + "\t".join(cells) + f"\t{cols.age(p)}")
        w.write(0, "Allocated resources:")
        w.write(1, "(Total limits may be over 100 percent, i.e., overcommitted.)")
        w.write(1, "Resource\tRequests\tLimits")
        w.write(1, "--------\t--------\t------")
        for res, total in (("cpu", cpu_total), ("memory", mem_total)):
            r, lim = totals[res]
            w.write(1, f"{res}\t{_fmt(res, r)} ({_fraction(r, total)})\t{_fmt(res, lim)} ({_fraction(lim, total)})")
    write_events(w, await fetch_events(s, node, rt))
    return w.text()


# ------------------------------------------------------------------ generic
ACRONYMS = {"api", "cidr", "cpu", "dns", "fs", "gpu", "http", "https", "id", "ip", "ips", "json", "os", "tcp",
            "tls", "ttl", "udp", "uid", "uri", "url", "uuid"}


def smart_label(key: str) -> str:
    """kubectl's label for a field: ``apiVersion`` -> ``API Version``, ``podIP`` -> ``Pod IP``."""
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+|[A-Z]", key)
    out = []
    for word in words or [key]:
        low = word.lower()
        if low in ACRONYMS:
            out.append(low.upper() if low != "ips" else "IPs")
        else:
            out.append(word[:1].upper() + word[1:])
    return " ".join(out)


#: Maps whose keys are data (label keys, resource names), shown as they are, not as ``Title Case``.
VERBATIM_MAPS = {"labels", "annotations", "matchLabels", "nodeSelector", "selector", "data", "stringData",
                 "binaryData", "capacity", "allocatable", "limits", "requests", "hard", "used"}


def write_value(w: Writer, level: int, key: str, value: Any, verbatim: bool = False) -> None:
    """One field of the generic rendering (maps and lists nest one level deeper)."""
    label = key if verbatim else smart_label(key)
    if isinstance(value, dict):
        if not value:
            return
        w.write(level, f"{label}:")
        data_map = key in VERBATIM_MAPS and not any(isinstance(v, dict | list) for v in value.values())
        for k in sorted(value):
            write_value(w, level + 1, k, value[k], verbatim=data_map)
    elif isinstance(value, list):
        if not value:
            return
        w.write(level, f"{label}:")
        for item in value:
            if isinstance(item, dict):
                for k in sorted(item):
                    write_value(w, level + 1, k, item[k])
            else:
                w.write(level + 1, _str(item))
    else:
        text = _str(value)
        if "\n" in text:
            w.write(level, f"{label}:")
            for line in text.splitlines():
                w.write(level + 1, line)
        else:
            w.write(level, f"{label}:\t{text}")


async def describe_generic(s: Session, rt: ResourceType, obj: Obj) -> str:
    """Any kind: Name, Namespace, Labels, Annotations, then the object's fields as ``Title Case:`` lines."""
    meta = _meta(obj)
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    if rt.namespaced:
        w.write(0, f"Namespace:\t{meta.get('namespace', '')}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    w.write(0, f"API Version:\t{obj.get('apiVersion') or rt.api_version}")
    w.write(0, f"Kind:\t{obj.get('kind') or rt.kind}")
    rest_meta = {k: v for k, v in meta.items()
                 if k not in ("name", "namespace", "labels", "annotations", "managedFields")}
    write_value(w, 0, "metadata", rest_meta)
    for key in obj:
        if key not in ("apiVersion", "kind", "metadata"):
            write_value(w, 0, key, obj[key])
    write_events(w, await fetch_events(s, obj, rt))
    return w.text()


async def describe_namespace(s: Session, rt: ResourceType, ns: Obj) -> str:
    """A Namespace: name, labels, annotations, status."""
    meta = _meta(ns)
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    w.write(0, f"Status:\t{(ns.get('status') or {}).get('phase') or ''}")
    w.write(0, "")
    w.write(0, "No resource quota.")
    w.write(0, "")
    w.write(0, "No LimitRange resource.")
    return w.text()


async def describe_service(s: Session, rt: ResourceType, svc: Obj) -> str:
    """A Service in kubectl's layout: Selector, Type, IP, and per port Port/TargetPort/NodePort/Endpoints."""
    meta, spec = _meta(svc), svc.get("spec") or {}
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    selector = spec.get("selector") or {}
    w.write(0, "Selector:\t" + (",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>"))
    w.write(0, f"Type:\t{spec.get('type', 'ClusterIP')}")
    if spec.get("ipFamilyPolicy"):
        w.write(0, f"IP Family Policy:\t{spec['ipFamilyPolicy']}")
    if spec.get("ipFamilies"):
        w.write(0, f"IP Families:\t{','.join(spec['ipFamilies'])}")
    if spec.get("clusterIP"):
        w.write(0, f"IP:\t{spec['clusterIP']}")
        w.write(0, f"IPs:\t{','.join(spec.get('clusterIPs') or [spec['clusterIP']])}")
    try:
        ep_rt = s.registry.by_kind("v1", "Endpoints")
        endpoints = await s.client.get(ep_rt, meta.get("name", ""), meta.get("namespace")) if ep_rt else {}
    except errors.NotFound:
        endpoints = {}
    for port in spec.get("ports") or []:
        name = port.get("name") or "<unset>"
        proto = port.get("protocol", "TCP")
        w.write(0, f"Port:\t{name}  {port.get('port')}/{proto}")
        target = port.get("targetPort", port.get("port"))
        w.write(0, f"TargetPort:\t{target}/{proto}")
        if port.get("nodePort"):
            w.write(0, f"NodePort:\t{name}  {port['nodePort']}/{proto}")
        addrs = []
        for subset in endpoints.get("subsets") or []:
            numbers = [p.get("port") for p in subset.get("ports") or [] if p.get("name") == port.get("name")]
            for a in subset.get("addresses") or []:
                addrs += [f"{a['ip']}:{n}" for n in numbers]
        w.write(0, "Endpoints:\t" + (",".join(addrs) or "<none>"))
    w.write(0, f"Session Affinity:\t{spec.get('sessionAffinity', 'None')}")
    if spec.get("externalTrafficPolicy"):
        w.write(0, f"External Traffic Policy:\t{spec['externalTrafficPolicy']}")
    write_events(w, await fetch_events(s, svc, rt))
    return w.text()


Describer = Callable[[Session, ResourceType, Obj], Awaitable[str]]
DESCRIBERS: dict[str, Describer] = {
    "Pod": describe_pod,
    "Node": describe_node,
    "Namespace": describe_namespace,
    "Service": describe_service,
}


async def run_describe(opts: GlobalOptions, args: list[str], selector: str, all_namespaces: bool) -> int:
    """Describe what the arguments name; returns 1 when something was not found."""
    async with Session(opts) as s:
        targets = parse_targets(s.registry, args)
        failed = False
        texts: list[str] = []
        for t in targets:
            ns = None if (all_namespaces or not t.rt.namespaced) else s.namespace
            objs: list[Obj] = []
            if t.names:
                for name in t.names:
                    try:
                        objs.append(await s.client.get(t.rt, name, ns))
                    except errors.NotFound as exc:
                        # kubectl describe also matches a name prefix
                        listed = await s.client.list_all(t.rt, ns, label_selector=selector or None)
                        matches = [o for o in listed.get("items") or [] if str(_meta(o).get("name")).startswith(name)]
                        if not matches:
                            print(server_error(exc), file=sys.stderr)
                            failed = True
                        objs += matches
            else:
                listed = await s.client.list_all(t.rt, ns, label_selector=selector or None)
                objs = list(listed.get("items") or [])
            describer = DESCRIBERS.get(t.rt.kind, describe_generic)
            for obj in objs:
                texts.append(await describer(s, t.rt, obj))
        if texts:
            sys.stdout.write("\n\n".join(t.rstrip("\n") for t in texts) + "\n")
            sys.stdout.flush()
        elif not failed:
            namespaced = not all_namespaces and any(t.rt.namespaced for t in targets)
            where = f" in {s.namespace} namespace" if namespaced else ""
            print(f"No resources found{where}.", file=sys.stderr)
        return 1 if failed else 0


def describe(
    ctx: typer.Context,
    args: Annotated[list[str] | None, typer.Argument(metavar="TYPE [NAME_PREFIX...] | TYPE/NAME...",
                                                     help="what to describe")] = None,
    selector: Annotated[str, typer.Option("-l", "--selector", help="label selector")] = "",
    all_namespaces: Annotated[bool, typer.Option("-A", "--all-namespaces", help="across namespaces")] = False,
) -> None:
    """Show details of a specific resource or group of resources, with their events."""
    if not args:
        raise KubectlError('You must specify the type of resource to describe. Use "kubectl api-resources" '
                           "for a complete list of supported resources.")
    code = asyncio.run(run_describe(ctx.obj, args, selector, all_namespaces))
    if code:
        raise typer.Exit(code)

