"""``kubectl describe`` for storage: a PersistentVolume, a PersistentVolumeClaim (with the pods
using it), a StorageClass and a CSINode in kubectl's layouts (``pkg/describe``'s
PersistentVolumeDescriber, PersistentVolumeClaimDescriber, StorageClassDescriber and
CSINodeDescriber, ``pkg/util/storage``'s helpers)."""

from __future__ import annotations

from typing import Any

from minik8s.api.base import Obj
from minik8s.api.columns import NONE, since
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.describe.apps import claim_class, format_labels
from minik8s.kubectl.describe.shared import fetch_events
from minik8s.kubectl.printing import describe_time
from minik8s.kubectl.sections import Writer, meta_of, text_of, write_annotations, write_events, write_labels
from minik8s.kubectl.session import Session

BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
#: Access modes in kubectl's order and short names (``storageutil.GetAccessModesAsString``).
ACCESS_MODES = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                ("ReadWriteOncePod", "RWOP"))
DEFAULT_CLASS = ("storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class")


def access_modes(modes: list[str] | None) -> str:
    """``RWO,ROX``: the modes present, each once, in kubectl's order."""
    present = set(modes or [])
    return ",".join(short for mode, short in ACCESS_MODES if mode in present)


def go_strings(values: list[Any] | None) -> str:
    """A string slice as Go's ``%v`` prints it: ``[a b]``."""
    return "[" + " ".join(str(v) for v in values or []) + "]"


def _volume_class(pv: Obj) -> str:
    beta = (meta_of(pv).get("annotations") or {}).get(BETA_CLASS)
    return str(beta) if beta is not None else str((pv.get("spec") or {}).get("storageClassName") or "")


def _write_node_affinity(w: Writer, affinity: Obj | None) -> None:
    required = (affinity or {}).get("required")
    if required is None:
        w.write(0, f"Node Affinity:\t{NONE}")
        return
    w.write(0, "Node Affinity:\t")
    terms = required.get("nodeSelectorTerms") or []
    if not terms:
        w.write(1, f"Required Terms:\t{NONE}")
        return
    w.write(1, "Required Terms:\t")
    for i, term in enumerate(terms):
        exprs = term.get("matchExpressions") or []
        if not exprs:
            w.write(2, f"Term {i}:\t{NONE}")
            continue
        for j, req in enumerate(exprs):
            text = f"{req.get('key')} {str(req.get('operator') or '').lower()}"
            if req.get("values"):
                text += f" [{', '.join(req['values'])}]"
            w.write(2, f"{f'Term {i}:' if j == 0 else ''}\t{text}")


def _write_source(w: Writer, spec: Obj) -> None:
    """The PersistentVolume's Source lines for the sources minik8s provisions (hostPath, local, nfs)."""
    if spec.get("hostPath") is not None:
        src = spec["hostPath"]
        w.write(2, "Type:\tHostPath (bare host directory volume)")
        w.write(2, f"Path:\t{src.get('path', '')}")
        w.write(2, f"HostPathType:\t{src.get('type', NONE)}")
    elif spec.get("nfs") is not None:
        src = spec["nfs"]
        w.write(2, "Type:\tNFS (an NFS mount that lasts the lifetime of a pod)")
        w.write(2, f"Server:\t{src.get('server', '')}")
        w.write(2, f"Path:\t{src.get('path', '')}")
        w.write(2, f"ReadOnly:\t{text_of(bool(src.get('readOnly')))}")
    elif spec.get("local") is not None:
        src = spec["local"]
        w.write(2, "Type:\tLocalVolume (a persistent volume backed by local storage on a node)")
        w.write(2, f"Path:\t{src.get('path', '')}")
    else:
        w.write(1, "<unknown>")


async def describe_persistent_volume(s: Session, rt: ResourceType, pv: Obj) -> str:
    """A PersistentVolume: finalizers, class, phase, claim, policy, modes, capacity, node affinity,
    message, source, events."""
    meta, spec, status = meta_of(pv), pv.get("spec") or {}, pv.get("status") or {}
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    w.write(0, f"Finalizers:\t{go_strings(meta.get('finalizers'))}")
    w.write(0, f"StorageClass:\t{_volume_class(pv)}")
    if meta.get("deletionTimestamp"):
        w.write(0, f"Status:\tTerminating (lasts {since(meta['deletionTimestamp'])})")
    else:
        w.write(0, f"Status:\t{status.get('phase') or ''}")
    claim = spec.get("claimRef")
    w.write(0, f"Claim:\t{claim.get('namespace', '')}/{claim.get('name', '')}" if claim else "Claim:\t")
    w.write(0, f"Reclaim Policy:\t{spec.get('persistentVolumeReclaimPolicy') or ''}")
    w.write(0, f"Access Modes:\t{access_modes(spec.get('accessModes'))}")
    if spec.get("volumeMode"):
        w.write(0, f"VolumeMode:\t{spec['volumeMode']}")
    w.write(0, f"Capacity:\t{(spec.get('capacity') or {}).get('storage') or '0'}")
    _write_node_affinity(w, spec.get("nodeAffinity"))
    w.write(0, f"Message:\t{status.get('message') or ''}")
    w.write(0, "Source:")
    _write_source(w, spec)
    write_events(w, await fetch_events(s, pv, rt))
    return w.text()


def _claim_pods(pvc: Obj, pods: list[Obj]) -> list[str]:
    """The pods using the claim: those with a volume naming it, then its owner pods (``getPodsForPVC``)."""
    name = meta_of(pvc).get("name")
    users = [p for p in pods for v in (p.get("spec") or {}).get("volumes") or []
             if (v.get("persistentVolumeClaim") or {}).get("claimName") == name]
    for ref in meta_of(pvc).get("ownerReferences") or []:
        if ref.get("kind") != "Pod":
            continue
        owner = next((p for p in pods if meta_of(p).get("uid") == ref.get("uid")), None)
        if owner is not None and all(meta_of(u).get("uid") != ref.get("uid") for u in users):
            users.append(owner)
    return sorted(str(meta_of(p).get("name")) for p in users)


async def describe_persistent_volume_claim(s: Session, rt: ResourceType, pvc: Obj) -> str:
    """A PersistentVolumeClaim: class, phase, volume, finalizers, the bound capacity and modes,
    the pods using it (``Used By``), conditions, events."""
    meta, spec, status = meta_of(pvc), pvc.get("spec") or {}, pvc.get("status") or {}
    listed = await s.client.list_all(s.resource("pods"), meta.get("namespace"))
    users = _claim_pods(pvc, list(listed.get("items") or []))
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}")
    w.write(0, f"StorageClass:\t{claim_class(pvc)}")
    if meta.get("deletionTimestamp"):
        w.write(0, f"Status:\tTerminating (lasts {since(meta['deletionTimestamp'])})")
    else:
        w.write(0, f"Status:\t{status.get('phase') or ''}")
    w.write(0, f"Volume:\t{spec.get('volumeName') or ''}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    w.write(0, f"Finalizers:\t{go_strings(meta.get('finalizers'))}")
    bound = bool(spec.get("volumeName"))
    w.write(0, f"Capacity:\t{((status.get('capacity') or {}).get('storage') or '0') if bound else ''}")
    w.write(0, f"Access Modes:\t{access_modes(status.get('accessModes')) if bound else ''}")
    if spec.get("volumeMode"):
        w.write(0, f"VolumeMode:\t{spec['volumeMode']}")
    source = spec.get("dataSource")
    if source:
        w.write(0, "DataSource:")
        if source.get("apiGroup") is not None:
            w.write(1, f"APIGroup:\t{source['apiGroup']}")
        w.write(1, f"Kind:\t{source.get('kind') or ''}")
        w.write(1, f"Name:\t{source.get('name') or ''}")
    for i, name in enumerate(users or [NONE]):
        w.write(0, f"{'Used By:' if i == 0 else ''}\t{name}")
    if status.get("conditions"):
        w.write(0, "Conditions:")
        w.write(1, "Type\tStatus\tLastProbeTime\tLastTransitionTime\tReason\tMessage")
        w.write(1, "----\t------\t-----------------\t------------------\t------\t-------")
        for c in status["conditions"]:
            w.write(1, f"{c.get('type')} \t{c.get('status')} \t{describe_time(c.get('lastProbeTime'))} \t"
                       f"{describe_time(c.get('lastTransitionTime'))} \t{c.get('reason') or ''} \t"
                       f"{c.get('message') or ''}")
    write_events(w, await fetch_events(s, pvc, rt))
    return w.text()


async def describe_storage_class(s: Session, rt: ResourceType, sc: Obj) -> str:
    """A StorageClass: whether it is the default, annotations and parameters as ``k=v`` lists,
    provisioner, expansion, mount options, reclaim policy, binding mode, topologies, events."""
    meta = meta_of(sc)
    annotations = meta.get("annotations") or {}
    default = any(annotations.get(key) == "true" for key in DEFAULT_CLASS)
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"IsDefaultClass:\t{'Yes' if default else 'No'}")
    w.write(0, f"Annotations:\t{format_labels(annotations)}")
    w.write(0, f"Provisioner:\t{sc.get('provisioner') or ''}")
    w.write(0, f"Parameters:\t{format_labels(sc.get('parameters'))}")
    expansion = sc.get("allowVolumeExpansion")
    w.write(0, f"AllowVolumeExpansion:\t{'<unset>' if expansion is None else ('True' if expansion else 'False')}")
    options = sc.get("mountOptions") or []
    w.write(0, "MountOptions:" + ("" if options else f"\t{NONE}"))
    for option in options:
        w.write(1, str(option))
    if sc.get("reclaimPolicy"):
        w.write(0, f"ReclaimPolicy:\t{sc['reclaimPolicy']}")
    if sc.get("volumeBindingMode"):
        w.write(0, f"VolumeBindingMode:\t{sc['volumeBindingMode']}")
    topologies = sc.get("allowedTopologies")
    if topologies is not None:
        w.write(0, "AllowedTopologies:\t" + ("" if topologies else NONE))
        for i, term in enumerate(topologies):
            reqs = term.get("matchLabelExpressions") or []
            if not reqs:
                w.write(1, f"Term {i}:\t{NONE}")
            for j, req in enumerate(reqs):
                text = f"{req.get('key')} in"
                if req.get("values"):
                    text += f" [{', '.join(req['values'])}]"
                w.write(1, f"{f'Term {i}:' if j == 0 else ''}\t{text}")
    write_events(w, await fetch_events(s, sc, rt))
    return w.text()


async def describe_csi_node(s: Session, rt: ResourceType, node: Obj) -> str:
    """Name, labels, annotations, creation time, then each driver under ``Spec: Drivers:`` with its
    node ID, allocatable volume count and topology keys (kubectl's ``describeCSINode``), events."""
    meta = meta_of(node)
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    w.write(0, f"CreationTimestamp:\t{describe_time(meta.get('creationTimestamp'))}")
    w.write(0, "Spec:")
    drivers = (node.get("spec") or {}).get("drivers")
    if drivers is not None:
        w.write(1, "Drivers:")
        for driver in drivers:
            w.write(2, f"{driver.get('name') or ''}:")
            w.write(3, f"Node ID:\t{driver.get('nodeID') or ''}")
            count = (driver.get("allocatable") or {}).get("count")
            if count is not None:
                w.write(3, "Allocatables:")
                w.write(4, f"Count:\t{count}")
            if driver.get("topologyKeys") is not None:
                w.write(3, f"Topology Keys:\t{go_strings(driver['topologyKeys'])}")
    write_events(w, await fetch_events(s, node, rt))
    return w.text()
