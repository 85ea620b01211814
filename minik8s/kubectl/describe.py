"""``kubectl describe``: a readable story of an object, with its Events.

Pods and Nodes follow kubectl's own layouts (``pkg/describe``); every other kind
gets the generic rendering kubectl uses for unstructured objects (metadata, spec,
status as indented ``Title Case:`` fields). :data:`DESCRIBERS` maps a Kind to its
describer, so later kinds can add their own.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
import sys
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import typer

from minik8s.api import columns as cols
from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.columns import NONE, since
from minik8s.api.config import b64decode
from minik8s.api.quantity import format_cpu, format_memory, parse_memory, parse_millicpu
from minik8s.api.registry import ResourceType
from minik8s.kubectl.errors import KubectlError, server_error
from minik8s.kubectl.printing import describe_time
from minik8s.kubectl.resolve import parse_targets
from minik8s.kubectl.sections import (
    Writer,
    header,
    meta_of,
    text_of,
    write_annotations,
    write_containers,
    write_events,
    write_labels,
    write_pod_template,
    write_tolerations,
    write_volumes,
)
from minik8s.kubectl.session import GlobalOptions, Session


async def fetch_events(s: Session, obj: Obj, rt: ResourceType) -> list[Obj] | None:
    """Events about ``obj`` (fieldSelector on involvedObject); None when events are not served."""
    try:
        ev_rt = s.registry.by_kind("v1", "Event")
        if ev_rt is None:
            return None
        meta = meta_of(obj)
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


def _controller(obj: Obj) -> str:
    for ref in meta_of(obj).get("ownerReferences") or []:
        if ref.get("controller"):
            return f"{ref.get('kind')}/{ref.get('name')}"
    return ""


async def describe_pod(s: Session, rt: ResourceType, pod: Obj) -> str:
    """A Pod in kubectl's layout."""
    meta, spec, status = meta_of(pod), pod.get("spec") or {}, pod.get("status") or {}
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
    meta, spec, status = meta_of(node), node.get("spec") or {}, node.get("status") or {}
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
    w.write(0, f"Unschedulable:\t{text_of(bool(spec.get('unschedulable')))}")
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
            pm = meta_of(p)
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
                w.write(level + 1, text_of(item))
    else:
        text = text_of(value)
        if "\n" in text:
            w.write(level, f"{label}:")
            for line in text.splitlines():
                w.write(level + 1, line)
        else:
            w.write(level, f"{label}:\t{text}")


async def describe_generic(s: Session, rt: ResourceType, obj: Obj) -> str:
    """Any kind: Name, Namespace, Labels, Annotations, then the object's fields as ``Title Case:`` lines."""
    meta = meta_of(obj)
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
    meta = meta_of(ns)
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
    meta, spec = meta_of(svc), svc.get("spec") or {}
    w = header(meta)
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


def _write_block(w: Writer, title: str, text: str | None) -> None:
    """``Title:`` then the text's lines indented verbatim (``<none>`` when empty)."""
    if not text:
        w.write(0, f"{title}:\t{NONE}")
        return
    w.write(0, f"{title}:")
    w.verbatim("\n".join("  " + line for line in text.rstrip("\n").splitlines()))


async def describe_gpujob(s: Session, rt: ResourceType, job: Obj) -> str:
    """A GPUJob: cluster, phase, Slurm job (id, state, reason), times, exit code, results, the
    generated batch script, the build log, the output tails, conditions and events."""
    meta, spec, status = meta_of(job), job.get("spec") or {}, job.get("status") or {}
    slurm = spec.get("slurm") or {}
    w = header(meta)
    w.write(0, f"Cluster:\t{spec.get('cluster', '')}")
    sources = spec.get("sources") or {}
    if sources.get("configMapRef"):
        w.write(0, f"Sources:\tConfigMap {sources['configMapRef'].get('name')}")
    else:
        w.write(0, "Sources:\t" + (", ".join(sorted(sources.get("files") or {})) or NONE))
    w.write(0, f"Build:\t{spec.get('build') or NONE}")
    run = spec.get("run") or {}
    w.write(0, "Run:\t" + " ".join([*(run.get("command") or []), *(run.get("args") or [])]))
    w.write(0, "Slurm:\t" + (", ".join(f"{k}={slurm[k]}" for k in sorted(slurm)) or NONE))
    w.write(0, "Result Files:\t" + (", ".join(spec.get("resultFiles") or []) or NONE))
    w.write(0, f"Phase:\t{status.get('phase') or 'Pending'}")
    for key, title in (("reason", "Reason"), ("message", "Message")):
        if status.get(key):
            w.write(0, f"{title}:\t{status[key]}")
    w.write(0, f"Slurm Job ID:\t{status.get('jobID') or NONE}")
    state = status.get("slurmState") or NONE
    w.write(0, f"Slurm State:\t{state}" + (f" ({status['slurmReason']})" if status.get("slurmReason") else ""))
    w.write(0, f"Partition:\t{status.get('partition') or slurm.get('partition') or NONE}")
    w.write(0, f"Work Dir:\t{status.get('workDir') or NONE}")
    for key, title in (("submitTime", "Submit Time"), ("startTime", "Start Time"),
                       ("completionTime", "Completion Time")):
        w.write(0, f"{title}:\t{describe_time(status[key]) if status.get(key) else NONE}")
    w.write(0, f"Exit Code:\t{status['exitCode'] if status.get('exitCode') is not None else NONE}")
    if status.get("results") is not None:
        w.write(0, f"Results:\tConfigMap {status.get('resultsConfigMap') or NONE}")
        for r in status.get("results") or []:
            kept = f"key {r['key']}" if r.get("key") else r.get("message", "not kept")
            w.write(1, f"{r.get('path')}\t{r.get('size')} bytes\t{kept}")
    if status.get("conditions"):
        w.flush()
        w.write(0, "Conditions:")
        w.write(1, "Type\tStatus\tReason\tMessage")
        w.write(1, "----\t------\t------\t-------")
        for c in status["conditions"]:
            w.write(1, f"{c.get('type')}\t{c.get('status')}\t{c.get('reason') or ''}\t{c.get('message') or ''}")
    _write_block(w, "Batch Script", status.get("batchScript"))
    _write_block(w, "Build Log", status.get("buildLog"))
    _write_block(w, "Stdout (tail)", status.get("stdoutTail"))
    _write_block(w, "Stderr (tail)", status.get("stderrTail"))
    write_events(w, await fetch_events(s, job, rt))
    return w.text()


async def describe_config_map(s: Session, rt: ResourceType, cm: Obj) -> str:
    """A ConfigMap as kubectl shows it: every ``data`` value in full, ``binaryData`` as byte counts."""
    w = header(meta_of(cm))
    text = ["", "Data", "===="]
    for key, value in sorted((cm.get("data") or {}).items()):
        text += [f"{key}:", "----", str(value), ""]
    text += ["", "BinaryData", "===="]
    for key, value in sorted((cm.get("binaryData") or {}).items()):
        text.append(f"{key}: {len(b64decode(value))} bytes")
    text.append("")
    w.verbatim("\n".join(text))
    write_events(w, await fetch_events(s, cm, rt))
    return w.text()


async def describe_secret(s: Session, rt: ResourceType, secret: Obj) -> str:
    """A Secret as kubectl shows it: its type and the size of each value, never the values."""
    w = header(meta_of(secret))
    w.write(0, "")
    w.write(0, f"Type:\t{secret.get('type') or 'Opaque'}")
    w.write(0, "")
    w.write(0, "Data")
    w.write(0, "====")
    for key, value in sorted((secret.get("data") or {}).items()):
        w.write(0, f"{key}:\t{len(b64decode(value))} bytes")
    return w.text()


def _write_conditions(w: Writer, conditions: list[Obj]) -> None:
    if not conditions:
        return
    w.write(0, "Conditions:")
    w.write(1, "Type\tStatus\tReason\tMessage")
    w.write(1, "----\t------\t------\t-------")
    for c in conditions:
        w.write(1, f"{c.get('type')}\t{c.get('status')}\t{c.get('reason') or ''}\t{c.get('message') or ''}")


def _write_job_spec(w: Writer, spec: Obj) -> None:
    """The JobSpec lines kubectl's Job describer prints (Parallelism ... Backoff Limit)."""
    w.write(0, f"Parallelism:\t{spec.get('parallelism', 1)}")
    w.write(0, f"Completions:\t{spec['completions'] if spec.get('completions') is not None else '<unset>'}")
    w.write(0, f"Completion Mode:\t{spec.get('completionMode') or 'NonIndexed'}")
    w.write(0, f"Suspend:\t{str(bool(spec.get('suspend'))).lower()}")
    w.write(0, f"Backoff Limit:\t{spec.get('backoffLimit', 6)}")
    if spec.get("activeDeadlineSeconds") is not None:
        w.write(0, f"Active Deadline Seconds:\t{spec['activeDeadlineSeconds']}s")
    if spec.get("ttlSecondsAfterFinished") is not None:
        w.write(0, f"TTL Seconds After Finished:\t{spec['ttlSecondsAfterFinished']}")


async def describe_job(s: Session, rt: ResourceType, job: Obj) -> str:
    """A Job in kubectl's layout: selector, counts and modes, times, pod statuses, template, conditions, events."""
    meta, spec, status = meta_of(job), job.get("spec") or {}, job.get("status") or {}
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}")
    w.write(0, "Selector:\t" + cols.format_selector(spec.get("selector")))
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    if _controller(job):
        w.write(0, f"Controlled By:\t{_controller(job)}")
    _write_job_spec(w, spec)
    if status.get("startTime"):
        w.write(0, f"Start Time:\t{describe_time(status['startTime'])}")
    if status.get("completionTime"):
        w.write(0, f"Completed At:\t{describe_time(status['completionTime'])}")
    duration = cols.job_duration(job, dt.datetime.now(dt.UTC))
    if duration and status.get("completionTime"):
        w.write(0, f"Duration:\t{duration}")
    w.write(0, f"Pods Statuses:\t{status.get('active') or 0} Active ({status.get('ready') or 0} Ready) / "
               f"{status.get('succeeded') or 0} Succeeded / {status.get('failed') or 0} Failed")
    if spec.get("completionMode") == "Indexed":
        w.write(0, f"Completed Indexes:\t{status.get('completedIndexes') or NONE}")
    write_pod_template(w, spec.get("template"))
    w.flush()
    _write_conditions(w, status.get("conditions") or [])
    write_events(w, await fetch_events(s, job, rt))
    return w.text()


async def describe_cronjob(s: Session, rt: ResourceType, cj: Obj) -> str:
    """A CronJob in kubectl's layout: schedule, policies, limits, the job template, active jobs, events."""
    meta, spec, status = meta_of(cj), cj.get("spec") or {}, cj.get("status") or {}
    w = header(meta)
    w.write(0, f"Schedule:\t{spec.get('schedule', '')}")
    if spec.get("timeZone"):
        w.write(0, f"Time Zone:\t{spec['timeZone']}")
    w.write(0, f"Concurrency Policy:\t{spec.get('concurrencyPolicy') or 'Allow'}")
    w.write(0, f"Suspend:\t{str(bool(spec.get('suspend'))).lower()}")
    w.write(0, f"Successful Job History Limit:\t{spec.get('successfulJobsHistoryLimit', 3)}")
    w.write(0, f"Failed Job History Limit:\t{spec.get('failedJobsHistoryLimit', 1)}")
    deadline = spec.get("startingDeadlineSeconds")
    w.write(0, f"Starting Deadline Seconds:\t{f'{deadline}s' if deadline is not None else '<unset>'}")
    job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    _write_job_spec(w, job_spec)
    write_pod_template(w, job_spec.get("template"))
    w.flush()
    last = status.get("lastScheduleTime")
    w.write(0, f"Last Schedule Time:\t{describe_time(last) if last else '<unset>'}")
    w.write(0, "Active Jobs:\t" + (", ".join(str(r.get("name")) for r in status.get("active") or []) or NONE))
    write_events(w, await fetch_events(s, cj, rt))
    return w.text()


Describer = Callable[[Session, ResourceType, Obj], Awaitable[str]]
DESCRIBERS: dict[str, Describer] = {
    "Pod": describe_pod,
    "Node": describe_node,
    "Namespace": describe_namespace,
    "Service": describe_service,
    "GPUJob": describe_gpujob,
    "ConfigMap": describe_config_map,
    "Secret": describe_secret,
    "Job": describe_job,
    "CronJob": describe_cronjob,
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
                        matches = [o for o in listed.get("items") or [] if str(meta_of(o).get("name")).startswith(name)]
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

