"""``kubectl describe`` for the cluster-scoped core kinds: a Node (with its lease, conditions,
capacity, non-terminated pods and their summed requests/limits) and a Namespace."""

from __future__ import annotations

from minik8s.api import columns as cols
from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.columns import NONE
from minik8s.api.quantity import format_cpu, format_memory, parse_memory, parse_millicpu
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.describe.quota import namespace_sections, write_namespace_limits, write_namespace_quotas
from minik8s.kubectl.describe.shared import fetch_events
from minik8s.kubectl.printing import describe_time
from minik8s.kubectl.sections import Writer, meta_of, text_of, write_annotations, write_events, write_labels
from minik8s.kubectl.session import Session


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


#: What Go's int64() of a NaN or infinite float gives on amd64 (a share of a zero allocatable).
GO_INT64_OF_NAN = -9223372036854775808


def _pod_fraction(amount: int, total: int) -> str:
    """A pod's share in the Non-terminated Pods table: kubectl divides without checking for zero."""
    return f"{int(amount * 100 / total) if total else GO_INT64_OF_NAN}%"


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
        except errors.APIError as exc:
            w.write(0, f"Lease:\tFailed to get lease: {exc}")
        else:
            w.write(0, "Lease:")
            lspec = lease.get("spec") or {}
            w.write(1, f"HolderIdentity:\t{lspec.get('holderIdentity') or '<unset>'}")
            w.write(1, "AcquireTime:\t"
                       f"{describe_time(lspec['acquireTime']) if lspec.get('acquireTime') else '<unset>'}")
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
    w.write(0, "Addresses:")
    for a in addresses:
        w.write(1, f"{a.get('type')}:\t{a.get('address')}")
    for key, label in (("capacity", "Capacity"), ("allocatable", "Allocatable")):
        values = status.get(key) or {}
        if values:
            w.write(0, f"{label}:")
            for res in sorted(values):
                w.write(1, f"{res}:\t{values[res]}")
    info = status.get("nodeInfo") or {}
    w.write(0, "System Info:")
    for field, label in (("machineID", "Machine ID"), ("systemUUID", "System UUID"), ("bootID", "Boot ID"),
                         ("kernelVersion", "Kernel Version"), ("osImage", "OS Image"),
                         ("operatingSystem", "Operating System"), ("architecture", "Architecture"),
                         ("containerRuntimeVersion", "Container Runtime Version"),
                         ("kubeletVersion", "Kubelet Version"), ("kubeProxyVersion", "Kube-Proxy Version")):
        w.write(1, f"{label}:\t{info.get(field) or ''}")
    if spec.get("podCIDR"):
        w.write(0, f"PodCIDR:\t{spec['podCIDR']}")
    if spec.get("podCIDRs"):
        w.write(0, f"PodCIDRs:\t{','.join(spec['podCIDRs'])}")
    if spec.get("providerID"):
        w.write(0, f"ProviderID:\t{spec['providerID']}")
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
        w.write(1, "Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge")
        w.write(1, "---------\t----\t\t------------\t----------\t---------------\t-------------\t---")
        for p in pods:
            req = _pod_requests(p)
            cells = []
            for res, total in (("cpu", cpu_total), ("memory", mem_total)):
                r, lim = req[res]
                totals[res][0] += r
                totals[res][1] += lim
                cells += [f"{_fmt(res, r)} ({_pod_fraction(r, total)})",
                          f"{_fmt(res, lim)} ({_pod_fraction(lim, total)})"]
            pm = meta_of(p)
            w.write(1, f"{pm.get('namespace')}\t{pm.get('name')}\t\t" + "\t".join(cells) + f"\t{cols.age(p)}")
        w.write(0, "Allocated resources:")
        w.write(1, "(Total limits may be over 100 percent, i.e., overcommitted.)")
        w.write(1, "Resource\tRequests\tLimits")
        w.write(1, "--------\t--------\t------")
        for res, total in (("cpu", cpu_total), ("memory", mem_total)):
            r, lim = totals[res]
            w.write(1, f"{res}\t{_fmt(res, r)} ({_fraction(r, total)})\t{_fmt(res, lim)} ({_fraction(lim, total)})")
        # ephemeral storage: minik8s' pods request none
        w.write(1, "ephemeral-storage\t0 (0%)\t0 (0%)")
    write_events(w, await fetch_events(s, node, rt))
    return w.text()


async def describe_namespace(s: Session, rt: ResourceType, ns: Obj) -> str:
    """A Namespace: name, labels, annotations, status and its conditions, its ResourceQuotas and
    LimitRanges."""
    meta = meta_of(ns)
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    status = ns.get("status") or {}
    w.write(0, f"Status:\t{status.get('phase') or ''}")
    if status.get("conditions"):
        w.write(0, "Conditions:")
        w.write(1, "Type\tStatus\tLastTransitionTime\tReason\tMessage")
        w.write(1, "----\t------\t------------------\t------\t-------")
        for c in status["conditions"]:
            w.write(1, f"{c.get('type')}\t{c.get('status')}\t{describe_time(c.get('lastTransitionTime'))}\t"
                       f"{c.get('reason') or ''}\t{c.get('message') or ''}")
    quotas, ranges = await namespace_sections(s, str(meta.get("name") or ""))
    if quotas is not None:
        w.write(0, "")
        write_namespace_quotas(w, quotas)
    if ranges is not None:
        w.write(0, "")
        write_namespace_limits(w, ranges)
    return w.text()
