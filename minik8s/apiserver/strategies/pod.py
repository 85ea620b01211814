"""v1 Pod: PodSpec defaults and validation (also used for workload templates), update rules,
field selectors and graceful deletion."""

from __future__ import annotations

import copy
import re
from typing import Any

from minik8s.api import validation as v
from minik8s.api.core import PROTOCOLS, qos_class
from minik8s.api.quantity import parse_quantity
from minik8s.api.taints import TAINT_EFFECTS
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, Strategy, unsupported
from minik8s.apiserver.strategies.podfields import pod_field_errors
from minik8s.apiserver.strategies.podlifecycle import container_lifecycle_errors, default_hooks
from minik8s.apiserver.strategies.podscheduling import (
    merge_affinity_label_keys,
    pod_affinity_errors,
    topology_spread_errors,
)
from minik8s.apiserver.strategies.podsources import default_volume_sources, env_source_errors, volume_source_errors
from minik8s.apiserver.strategies.podvolumes import default_volume_types, other_volume_errors
from minik8s.apiserver.strategies.priorityclass import preemption_policy_errors
from minik8s.apiserver.strategies.storage import nfs_errors

RESTART_POLICIES = ("Always", "OnFailure", "Never")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
TOLERATION_OPERATORS = ("Exists", "Equal")


def default_probe(probe: Obj | None) -> None:
    """``corev1.Probe`` defaults: timeout 1 s, period 10 s, success 1, failure 3; httpGet path ``/``."""
    if not probe:
        return
    probe.setdefault("timeoutSeconds", 1)
    probe.setdefault("periodSeconds", 10)
    probe.setdefault("successThreshold", 1)
    probe.setdefault("failureThreshold", 3)
    probe.setdefault("initialDelaySeconds", 0)
    if probe.get("httpGet") is not None:
        probe["httpGet"].setdefault("path", "/")
        probe["httpGet"].setdefault("scheme", "HTTP")


def default_pod_spec(spec: Obj) -> None:
    """Kubernetes' PodSpec defaults (restartPolicy Always, grace 30 s, TCP ports, IfNotPresent...)."""
    default_volume_sources(spec)
    default_volume_types(spec)
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        default_hooks(c)
        # Kubernetes picks Always for ":latest"; minik8s has no registry in its default
        # setup, so it defaults to IfNotPresent for every tag (see README).
        c.setdefault("imagePullPolicy", "IfNotPresent")
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        c.setdefault("resources", {})
        for p in c.get("ports") or []:
            p.setdefault("protocol", "TCP")
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            default_probe(c.get(probe))
    for ec in spec.get("ephemeralContainers") or []:
        # SetDefaults_EphemeralContainer: the container defaults but resources (refused on them)
        ec.setdefault("imagePullPolicy", "IfNotPresent")
        ec.setdefault("terminationMessagePath", "/dev/termination-log")
        ec.setdefault("terminationMessagePolicy", "File")
    for t in spec.get("tolerations") or []:
        if t.get("operator") is None:
            t["operator"] = "Equal"


def _validate_resources(res: Obj | None, path: str) -> list[Cause]:
    causes: list[Cause] = []
    parsed: dict[str, dict[str, Any]] = {}
    for kind in ("limits", "requests"):
        for rname, qty in ((res or {}).get(kind) or {}).items():
            try:
                value = parse_quantity(qty)
            except ValueError as exc:
                causes.append((f"{path}.{kind}[{rname}]", qty, str(exc)))
                continue
            if value < 0:
                causes.append((f"{path}.{kind}[{rname}]", qty, "must be greater than or equal to 0"))
            parsed.setdefault(kind, {})[rname] = value
    for rname, req in parsed.get("requests", {}).items():
        lim = parsed.get("limits", {}).get(rname)
        if lim is not None and req > lim:
            causes.append((f"{path}.requests", (res or {})["requests"][rname],
                           f"must be less than or equal to {rname} limit of {(res or {})['limits'][rname]}"))
    return causes


SECCOMP_TYPES = ("Localhost", "RuntimeDefault", "Unconfined")
PROC_MOUNT_TYPES = ("Default", "Unmasked")
MAX_ID = 2147483647
_SYSCTL = re.compile(r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$")
_SYSCTL_FMT = "([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?"


def _id_errors(value: Any, path: str) -> list[Cause]:
    """A uid/gid: Kubernetes' ``must be between 0 and 2147483647, inclusive``."""
    if value is None or (isinstance(value, int) and 0 <= value <= MAX_ID):
        return []
    return [(path, value, f"must be between 0 and {MAX_ID}, inclusive")]


def _seccomp_errors(profile: Obj | None, path: str) -> list[Cause]:
    """``seccompProfile``: a known ``type``; ``localhostProfile`` exactly when it is Localhost."""
    if profile is None:
        return []
    kind, local = profile.get("type"), profile.get("localhostProfile")
    if not kind:
        return [(f"{path}.type", None, REQUIRED)]
    if kind not in SECCOMP_TYPES:
        return [(f"{path}.type", None, unsupported(kind, SECCOMP_TYPES))]
    if kind == "Localhost" and not local:
        return [(f"{path}.localhostProfile", None, "Required value: must be set when seccomp type is Localhost")]
    if kind != "Localhost" and local is not None:
        return [(f"{path}.localhostProfile", local, "can only be set when seccomp type is Localhost")]
    if local and (local.startswith("/") or ".." in local.split("/")):
        return [(f"{path}.localhostProfile", local, "must be a relative path without '..'")]
    return []


APPARMOR_TYPES = ("Localhost", "RuntimeDefault", "Unconfined")


def _apparmor_errors(profile: Obj | None, path: str) -> list[Cause]:
    """``validateAppArmorProfileField``: a known ``type``; ``localhostProfile`` exactly when it is
    Localhost, not blank nor padded with whitespace."""
    if not isinstance(profile, dict):
        return []
    kind, local = profile.get("type"), profile.get("localhostProfile")
    if not kind:
        return [(f"{path}.type", None, f"{REQUIRED}: type is required when appArmorProfile is set")]
    if kind not in APPARMOR_TYPES:
        return [(f"{path}.type", None, unsupported(kind, APPARMOR_TYPES))]
    if kind == "Localhost":
        if local is None or (isinstance(local, str) and local == ""):
            return [(f"{path}.localhostProfile", None, f"{REQUIRED}: must be set when AppArmor type is Localhost")]
        if str(local).strip() != local:
            return [(f"{path}.localhostProfile", local, "must not be padded with whitespace")]
    elif local is not None:
        return [(f"{path}.localhostProfile", local, "can only be set when AppArmor type is Localhost")]
    return []


def validate_pod_security_context(psc: Obj | None, path: str) -> list[Cause]:
    """PodSecurityContext: ids in [0, 2^31-1], the seccomp profile, sysctl names (unique)."""
    psc = psc or {}
    causes: list[Cause] = []
    for fld in ("runAsUser", "runAsGroup", "fsGroup"):
        causes += _id_errors(psc.get(fld), f"{path}.{fld}")
    for i, gid in enumerate(psc.get("supplementalGroups") or []):
        causes += _id_errors(gid, f"{path}.supplementalGroups[{i}]")
    policy = psc.get("fsGroupChangePolicy")
    if policy is not None and policy not in ("OnRootMismatch", "Always"):
        causes.append((f"{path}.fsGroupChangePolicy", None, unsupported(policy, ("Always", "OnRootMismatch"))))
    causes += _seccomp_errors(psc.get("seccompProfile"), f"{path}.seccompProfile")
    causes += _apparmor_errors(psc.get("appArmorProfile"), f"{path}.appArmorProfile")
    seen: set[str] = set()
    for i, sysctl in enumerate(psc.get("sysctls") or []):
        name = sysctl.get("name") or ""
        sp = f"{path}.sysctls[{i}].name"
        if not name:
            causes.append((sp, None, REQUIRED))
        elif len(name) > 253 or not _SYSCTL.match(name):
            causes.append((sp, name, f"must have at most 253 characters and match regex {_SYSCTL_FMT}"))
        elif name in seen:
            causes.append((sp, None, f'Duplicate value: "{name}"'))
        seen.add(name)
    return causes


def validate_security_context(sc: Obj | None, path: str) -> list[Cause]:
    """A container's SecurityContext, with Kubernetes' cross-field rules: privileged or
    ``CAP_SYS_ADMIN`` cannot go with ``allowPrivilegeEscalation: false``."""
    if not sc:
        return []
    causes: list[Cause] = []
    for fld in ("runAsUser", "runAsGroup"):
        causes += _id_errors(sc.get(fld), f"{path}.{fld}")
    causes += _seccomp_errors(sc.get("seccompProfile"), f"{path}.seccompProfile")
    causes += _apparmor_errors(sc.get("appArmorProfile"), f"{path}.appArmorProfile")
    proc = sc.get("procMount")
    if proc is not None and proc not in PROC_MOUNT_TYPES:
        causes.append((f"{path}.procMount", None, unsupported(proc, PROC_MOUNT_TYPES)))
    if sc.get("allowPrivilegeEscalation") is False:
        if sc.get("privileged"):
            causes.append((path, None, "Invalid value: cannot set `allowPrivilegeEscalation` to false "
                           "and `privileged` to true"))
        added = (sc.get("capabilities") or {}).get("add") or []
        if any(cap in ("CAP_SYS_ADMIN", "SYS_ADMIN") for cap in added):
            causes.append((path, None, "Invalid value: cannot set `allowPrivilegeEscalation` to false "
                           "and `capabilities.Add` CAP_SYS_ADMIN"))
    return causes


def validate_container(c: Obj, path: str, volume_names: set[str], kind: str = "containers",
                       grace: Any = None) -> list[Cause]:
    """One container of ``kind`` (``containers``, ``initContainers`` or ``ephemeralContainers``) at
    ``path``; ``grace`` is the pod's ``terminationGracePeriodSeconds`` (the bound of a sleep hook)."""
    causes: list[Cause] = []
    name = c.get("name")
    if not name:
        causes.append((f"{path}.name", None, REQUIRED))
    else:
        causes += [(f"{path}.name", name, m) for m in v.dns1123_label_errors(name)]
    if not c.get("image"):
        causes.append((f"{path}.image", None, REQUIRED))
    pp = c.get("imagePullPolicy")
    if pp is not None and pp not in PULL_POLICIES:
        causes.append((f"{path}.imagePullPolicy", None, unsupported(pp, PULL_POLICIES)))
    port_names: set[str] = set()
    for j, p in enumerate(c.get("ports") or []):
        pp_path = f"{path}.ports[{j}]"
        cp = p.get("containerPort")
        if cp is None:
            causes.append((f"{pp_path}.containerPort", None, REQUIRED))
        else:
            causes += [(f"{pp_path}.containerPort", cp, m) for m in v.port_number_errors(cp)]
        hp = p.get("hostPort")
        if hp:
            causes += [(f"{pp_path}.hostPort", hp, m) for m in v.port_number_errors(hp)]
        proto = p.get("protocol")
        if proto is not None and proto not in PROTOCOLS:
            causes.append((f"{pp_path}.protocol", None, unsupported(proto, PROTOCOLS)))
        pname = p.get("name")
        if pname:
            causes += [(f"{pp_path}.name", pname, m) for m in v.iana_svc_name_errors(pname)]
            if pname in port_names:
                causes.append((f"{pp_path}.name", None, f'Duplicate value: "{pname}"'))
            port_names.add(pname)
    for j, e in enumerate(c.get("env") or []):
        ename = e.get("name")
        if not ename:
            causes.append((f"{path}.env[{j}].name", None, REQUIRED))
        else:
            causes += [(f"{path}.env[{j}].name", ename, m) for m in v.env_var_name_errors(ename)]
    causes += env_source_errors(c, path)
    causes += validate_security_context(c.get("securityContext"), f"{path}.securityContext")
    causes += _validate_resources(c.get("resources"), f"{path}.resources")
    mount_paths: set[str] = set()
    for j, m in enumerate(c.get("volumeMounts") or []):
        mp = f"{path}.volumeMounts[{j}]"
        if not m.get("name"):
            causes.append((f"{mp}.name", None, REQUIRED))
        elif m["name"] not in volume_names:
            causes.append((f"{mp}.name", None, f'Not found: "{m["name"]}"'))
        if not m.get("mountPath"):
            causes.append((f"{mp}.mountPath", None, REQUIRED))
        elif m["mountPath"] in mount_paths:
            causes.append((f"{mp}.mountPath", m["mountPath"], "must be unique"))
        else:
            mount_paths.add(m["mountPath"])
        for fld in ("subPath", "subPathExpr"):
            if m.get(fld):
                causes += [(f"{mp}.{fld}", m[fld], msg) for msg in _local_descending_path_errors(m[fld])]
        if m.get("subPathExpr") and m.get("subPath"):
            causes.append((f"{mp}.subPathExpr", m["subPathExpr"], "subPathExpr and subPath are mutually exclusive"))
        causes += _mount_propagation_errors(m.get("mountPropagation"), c, f"{mp}.mountPropagation")
    if kind != "ephemeralContainers":
        causes += container_lifecycle_errors(c, path, grace, kind == "initContainers")
    return causes


MOUNT_PROPAGATIONS = ("Bidirectional", "HostToContainer", "None")


def _local_descending_path_errors(path: str) -> list[str]:
    """Kubernetes' ``validateLocalDescendingPath``: a relative path without ``..`` elements."""
    out = []
    if path.startswith("/"):
        out.append("must be a relative path")
    if ".." in path.replace("\\", "/").split("/"):
        out.append("must not contain '..'")
    return out


def _mount_propagation_errors(mode: Any, container: Obj, path: str) -> list[Cause]:
    """Kubernetes' ``validateMountPropagation``: one of :data:`MOUNT_PROPAGATIONS`; ``Bidirectional``
    only in a privileged container."""
    if mode is None:
        return []
    if mode not in MOUNT_PROPAGATIONS:
        return [(path, None, unsupported(mode, MOUNT_PROPAGATIONS))]
    if mode == "Bidirectional" and not (container.get("securityContext") or {}).get("privileged"):
        return [(path, None, "Forbidden: Bidirectional mount propagation is available only to privileged containers")]
    return []


#: the fields of a container an ephemeral container may not set (Kubernetes' ``validateEphemeralContainers``
#: allows a list of fields; these are the ones of minik8s' Container outside it), in Go's field order
EPHEMERAL_FORBIDDEN = ("ports", "resources", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle",
                       "restartPolicy")
EPHEMERAL_FORBIDDEN_MSG = "Forbidden: cannot be set for an Ephemeral Container"


def _is_set(value: Any) -> bool:
    """Whether a field holds something other than its zero value (``resources: {}`` is unset)."""
    if isinstance(value, dict):
        return any(_is_set(v) for v in value.values())
    return value is not None and value != [] and value != ""


def validate_ephemeral_containers(spec: Obj, path: str, volume_names: set[str]) -> list[Cause]:
    """``spec.ephemeralContainers`` as Kubernetes' ``validateEphemeralContainers``: each a valid
    container whose name is unique among all the pod's containers, whose ``targetContainerName``
    names a regular or init container (``Not found``), and without ports, resources, probes or
    lifecycle (``Forbidden: cannot be set for an Ephemeral Container``)."""
    causes: list[Cause] = []
    others = {c.get("name") for kind in ("containers", "initContainers") for c in spec.get(kind) or []}
    names = set(others)
    for i, ec in enumerate(spec.get("ephemeralContainers") or []):
        ep = f"{path}.ephemeralContainers[{i}]"
        causes += validate_container(ec, ep, volume_names, "ephemeralContainers")
        image = ec.get("image")
        if isinstance(image, str) and image != image.strip():
            causes.append((f"{ep}.image", image, "must not have leading or trailing whitespace"))
        name = ec.get("name")
        if name in names:
            causes.append((f"{ep}.name", None, f'Duplicate value: "{name}"'))
        names.add(name)
        target = ec.get("targetContainerName")
        if target and target not in others:
            causes.append((f"{ep}.targetContainerName", None, f'Not found: "{target}"'))
        for fld in EPHEMERAL_FORBIDDEN:
            if _is_set(ec.get(fld)):
                causes.append((f"{ep}.{fld}", None, EPHEMERAL_FORBIDDEN_MSG))
        for j, m in enumerate(ec.get("volumeMounts") or []):
            for fld in ("subPath", "subPathExpr"):
                if m.get(fld):
                    causes.append((f"{ep}.volumeMounts[{j}].{fld}", None, EPHEMERAL_FORBIDDEN_MSG))
    return causes


def _host_port_errors(spec: Obj, path: str) -> list[Cause]:
    """Kubernetes' ``checkHostPortConflicts`` and ``validatePodHostNetworkDeps`` over the regular
    containers: one ``protocol/hostIP/hostPort`` used once; with ``hostNetwork`` a host port equal
    to its container port. (Kubernetes also defaults a host-network pod's host ports to the container
    ports, which minik8s does not.)"""
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, c in enumerate(spec.get("containers") or []):
        for j, p in enumerate(c.get("ports") or [] if isinstance(c, dict) else []):
            host_port = p.get("hostPort") if isinstance(p, dict) else None
            if not host_port:
                continue
            hp = f"{path}.containers[{i}].ports[{j}].hostPort"
            key = f'{p.get("protocol") or ""}/{p.get("hostIP") or ""}/{host_port}'
            if key in seen:
                causes.append((hp, None, f'Duplicate value: "{key}"'))
            seen.add(key)
            if spec.get("hostNetwork") and host_port != p.get("containerPort"):
                causes.append((hp, host_port, "must match `containerPort` when `hostNetwork` is true"))
    return causes


def validate_pod_spec(spec: Obj, path: str = "spec") -> list[Cause]:
    """PodSpec validation with Kubernetes' field paths and messages. ``path`` other than ``spec``:
    a pod template's, where ephemeral containers are refused."""
    causes: list[Cause] = []
    volume_names: set[str] = set()
    for i, vol in enumerate(spec.get("volumes") or []):
        vname = vol.get("name")
        vp = f"{path}.volumes[{i}]"
        if not vname:
            causes.append((f"{vp}.name", None, REQUIRED))
            continue
        causes += [(f"{vp}.name", vname, m) for m in v.dns1123_label_errors(vname)]
        if vname in volume_names:
            causes.append((f"{vp}.name", None, f'Duplicate value: "{vname}"'))
        volume_names.add(vname)
        causes += other_volume_errors(vol, vp)
        host_path = (vol.get("hostPath") or {}).get("path") if isinstance(vol.get("hostPath"), dict) else None
        if host_path and not str(host_path).startswith("/"):
            causes.append((f"{vp}.hostPath.path", host_path, "must be an absolute path"))
        causes += volume_source_errors(vol, vp)
        if isinstance(vol.get("nfs"), dict):
            causes += nfs_errors(vol["nfs"], f"{vp}.nfs")
    causes += validate_pod_security_context(spec.get("securityContext"), f"{path}.securityContext")
    containers = spec.get("containers") or []
    if not containers:
        causes.append((f"{path}.containers", None, REQUIRED))
    names: set[str] = set()
    for kind in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(kind) or []):
            cp = f"{path}.{kind}[{i}]"
            causes += validate_container(c, cp, volume_names, kind, spec.get("terminationGracePeriodSeconds"))
            image = c.get("image")
            if path == "spec" and isinstance(image, str) and image != image.strip():
                causes.append((f"{cp}.image", image, "must not have leading or trailing whitespace"))
            cname = c.get("name")
            if cname and cname in names:
                causes.append((f"{path}.{kind}[{i}].name", None, f'Duplicate value: "{cname}"'))
            if cname:
                names.add(cname)
    causes += _host_port_errors(spec, path)
    if path == "spec":
        causes += validate_ephemeral_containers(spec, path, volume_names)
    elif spec.get("ephemeralContainers"):
        causes.append((f"{path}.ephemeralContainers", None,
                       "Forbidden: ephemeral containers not allowed in pod template"))
    rp = spec.get("restartPolicy")
    if rp not in RESTART_POLICIES:
        causes.append((f"{path}.restartPolicy", None, unsupported(rp, RESTART_POLICIES)))
    grace = spec.get("terminationGracePeriodSeconds")
    if grace is not None and grace < 0:
        causes.append((f"{path}.terminationGracePeriodSeconds", grace, "must be greater than or equal to 0"))
    for key, val in (spec.get("nodeSelector") or {}).items():
        causes += [(f"{path}.nodeSelector", key, m) for m in v.qualified_name_errors(key)]
        causes += [(f"{path}.nodeSelector", val, m) for m in v.label_value_errors(val)]
    for i, t in enumerate(spec.get("tolerations") or []):
        tp = f"{path}.tolerations[{i}]"
        if t.get("key"):
            causes += [(f"{tp}.key", t["key"], m) for m in v.qualified_name_errors(str(t["key"]))]
        op = t.get("operator") or "Equal"
        value_errors = v.label_value_errors(str(t["value"])) if op == "Equal" and t.get("value") else []
        if value_errors:
            causes.append((f"{tp}.operator", t["value"], ";".join(value_errors)))
        if op not in TOLERATION_OPERATORS:
            causes.append((f"{tp}.operator", None, unsupported(op, TOLERATION_OPERATORS)))
        if op == "Exists" and t.get("value"):
            causes.append((f"{tp}.operator", t["value"],
                           "value must be empty when `operator` is 'Exists'"))
        if not t.get("key") and op != "Exists":
            causes.append((f"{tp}.operator", op, "operator must be Exists when `key` is empty, "
                           "which means \"match all values and all keys\""))
        eff = t.get("effect")
        if t.get("tolerationSeconds") is not None and eff != "NoExecute":
            causes.append((f"{tp}.effect", eff or "", "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if eff and eff not in TAINT_EFFECTS:
            causes.append((f"{tp}.effect", None, unsupported(eff, TAINT_EFFECTS)))
    causes += pod_affinity_errors(spec.get("affinity"), f"{path}.affinity")
    causes += topology_spread_errors(spec.get("topologySpreadConstraints"), f"{path}.topologySpreadConstraints")
    seen_gates: set[str] = set()
    for i, gate in enumerate(spec.get("schedulingGates") or []):
        gname = gate.get("name") or ""
        causes += [(f"{path}.schedulingGates[{i}]", gname, m) for m in v.qualified_name_errors(gname)]
        if gname in seen_gates:
            causes.append((f"{path}.schedulingGates[{i}]", None, f'Duplicate value: "{gname}"'))
        seen_gates.add(gname)
    pc_name = spec.get("priorityClassName")
    if pc_name:
        causes += [(f"{path}.priorityClassName", pc_name, m) for m in v.dns1123_subdomain_errors(pc_name)]
    causes += preemption_policy_errors(spec.get("preemptionPolicy"), f"{path}.preemptionPolicy")
    return causes + pod_field_errors(spec, path)


def only_added_tolerations(new: list[Obj], old: list[Obj]) -> list[Cause]:
    """Kubernetes' ``validateOnlyAddedTolerations``: every toleration of the stored pod must still
    be there, equal but for its ``tolerationSeconds``; new ones may be added."""
    for was in old:
        rest = {k: v for k, v in was.items() if k != "tolerationSeconds"}
        if not any({k: v for k, v in t.items() if k != "tolerationSeconds"} == rest for t in new):
            return [("spec.tolerations", None,
                     "Forbidden: existing toleration can not be modified except its tolerationSeconds")]
    return []


def only_deleted_scheduling_gates(new: list[Obj], old: list[Obj]) -> list[Cause]:
    """Kubernetes' ``validateOnlyDeletedSchedulingGates``: a pod's ``schedulingGates`` may only shrink."""
    had = {g.get("name") for g in old}
    return [(f"spec.schedulingGates[{i}].name", None,
             f"Forbidden: only deletion is allowed, but found new scheduling gate '{g.get('name')}'")
            for i, g in enumerate(new) if g.get("name") not in had]


#: ``PodScheduled`` of a pod created with ``schedulingGates`` (Kubernetes' ``applySchedulingGatedCondition``)
SCHEDULING_GATED = "SchedulingGated"
SCHEDULING_GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"

POD_MUTABLE_SPEC = ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds", "schedulingGates")


class PodStrategy(Strategy):
    has_status = True

    def prepare_for_create(self, obj: Obj) -> None:
        """A new pod's status: Pending, its QoS class, and ``PodScheduled=False`` (``SchedulingGated``)
        while it has ``schedulingGates`` (the scheduler leaves such a pod alone); its pod affinity
        terms' ``matchLabelKeys`` / ``mismatchLabelKeys`` merged into their label selectors."""
        spec = obj.get("spec") or {}
        obj["status"] = {"phase": "Pending", "qosClass": qos_class(spec)}
        merge_affinity_label_keys(obj)
        if spec.get("schedulingGates"):
            obj["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": SCHEDULING_GATED,
                                            "message": SCHEDULING_GATED_MESSAGE}]

    def default(self, obj: Obj) -> None:
        """The PodSpec defaults, and those Kubernetes gives a Pod but not a pod template
        (``SetDefaults_Pod``): ``enableServiceLinks`` true, and each container's requests default to
        its limits when only limits are given."""
        spec = obj.setdefault("spec", {})
        default_pod_spec(spec)
        spec.setdefault("enableServiceLinks", True)
        for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
            res = c.get("resources")
            if isinstance(res, dict):
                for rname, qty in (res.get("limits") or {}).items():
                    res.setdefault("requests", {}).setdefault(rname, qty)

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes = self.validate_metadata(obj) + validate_pod_spec(spec)
        if old is not None:
            causes += self._validate_spec_update(spec, old.get("spec") or {})
        elif spec.get("ephemeralContainers"):
            causes.append(("spec.ephemeralContainers", None, "Forbidden: cannot be set on create"))
        if old is None and spec.get("nodeName") and spec.get("schedulingGates"):
            causes.append(("spec.nodeName", None,
                           "Forbidden: cannot be set until all schedulingGates have been cleared"))
        return causes

    @staticmethod
    def prepare_for_ephemeral_update(new: Obj, old: Obj) -> None:
        """An ``ephemeralcontainers`` write changes only ``spec.ephemeralContainers`` (Kubernetes'
        ``dropNonEphemeralContainerUpdates``): the rest of the spec, the status and the metadata
        stay as stored."""
        wanted = (new.get("spec") or {}).get("ephemeralContainers")
        for key in list(new):
            if key not in ("metadata", "apiVersion", "kind"):
                new.pop(key)
        for key, value in old.items():
            if key != "metadata":
                new[key] = copy.deepcopy(value)
        managed = new.get("metadata", {}).get("managedFields")
        new["metadata"] = copy.deepcopy(old["metadata"])
        if managed is not None:
            new["metadata"]["managedFields"] = managed
        new["spec"].pop("ephemeralContainers", None)
        if wanted:
            new["spec"]["ephemeralContainers"] = wanted

    @staticmethod
    def validate_ephemeral_update(new: Obj, old: Obj) -> list[Cause]:
        """Kubernetes' ``ValidatePodEphemeralContainersUpdate``: the pod stays valid, and every
        ephemeral container already there is kept unchanged (``Forbidden: existing ephemeral
        containers "x" may not be removed`` / ``... may not be changed``, matched by name; the lines
        after "changed" name the changed fields, where Kubernetes prints Go's ``cmp.Diff`` of the two)."""
        causes = validate_pod_spec(new.get("spec") or {})
        if (old.get("metadata") or {}).get("annotations", {}).get("kubernetes.io/config.mirror") is not None:
            return [("", None, "Forbidden: static pods do not support ephemeral containers")]
        now = {c.get("name"): c for c in (new.get("spec") or {}).get("ephemeralContainers") or []}
        for was in (old.get("spec") or {}).get("ephemeralContainers") or []:
            name = was.get("name")
            if name not in now:
                causes.append(("spec.ephemeralContainers", None,
                               f'Forbidden: existing ephemeral containers "{name}" may not be removed\n'))
            elif now[name] != was:
                changed = sorted(k for k in set(was) | set(now[name]) if was.get(k) != now[name].get(k))
                causes.append(("spec.ephemeralContainers", None,
                               f'Forbidden: existing ephemeral containers "{name}" may not be changed\n'
                               + "".join(f"  {k}: {was.get(k)!r} -> {now[name].get(k)!r}\n" for k in changed)))
        return causes

    @staticmethod
    def _validate_spec_update(new: Obj, old: Obj) -> list[Cause]:
        """Pods are immutable but for images, tolerations (additions), schedulingGates (deletions) and
        activeDeadlineSeconds."""
        added_only = only_added_tolerations(new.get("tolerations") or [], old.get("tolerations") or [])
        if added_only:
            return added_only
        deleted_only = only_deleted_scheduling_gates(new.get("schedulingGates") or [], old.get("schedulingGates") or [])
        if deleted_only:
            return deleted_only
        a, b = copy.deepcopy(new), copy.deepcopy(old)
        for spec in (a, b):
            for fld in POD_MUTABLE_SPEC:
                spec.pop(fld, None)
            for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
                c.pop("image", None)
        if a != b:
            return [("spec", None, "Forbidden: pod updates may not change fields other than "
                     "`spec.containers[*].image`, `spec.initContainers[*].image`, "
                     "`spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing "
                     "tolerations), `spec.terminationGracePeriodSeconds` (allow it to be set to 1 "
                     "if it was previously negative)")]
        return []

    def fields(self, obj: Obj) -> dict[str, str]:
        f = super().fields(obj)
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        f.update({
            "spec.nodeName": spec.get("nodeName") or "",
            "spec.restartPolicy": spec.get("restartPolicy") or "",
            "spec.schedulerName": spec.get("schedulerName") or "",
            "status.phase": status.get("phase") or "",
            "status.podIP": status.get("podIP") or "",
        })
        return f

    def graceful_delete_seconds(self, obj: Obj, requested: int | None) -> int:
        """Kubernetes: an unscheduled or finished pod goes at once; else the requested grace
        period, or ``spec.terminationGracePeriodSeconds``."""
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
            return 0
        if requested is not None:
            return max(requested, 0)
        return int(spec.get("terminationGracePeriodSeconds", 30))
