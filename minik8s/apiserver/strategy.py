"""Per-kind behaviour of the generic REST handlers: defaulting, validation, update rules.

Follows Kubernetes' ``rest.RESTCreateStrategy`` / ``RESTUpdateStrategy`` shape:
``prepare_for_create`` and ``prepare_for_update`` reset what a client may not set,
``default`` fills defaults (``pkg/apis/core/v1/defaults.go`` values), ``validate``
returns ``(field path, bad value or None, message)`` causes that become a 422
``Invalid`` Status.  A kind without special needs uses :class:`Strategy`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

from minik8s.api import validation as v
from minik8s.api.core import qos_class
from minik8s.api.networking import normalize_path
from minik8s.api.quantity import parse_quantity
from minik8s.api.selectors import LabelSelector
from minik8s.apiserver.config_refs import default_volume_sources, env_source_errors, volume_source_errors

Cause = tuple[str, Any, str]
Obj = dict[str, Any]

REQUIRED = "Required value"


def _supported(value: Any, allowed: tuple[str, ...]) -> str:
    return f'Unsupported value: "{value}": supported values: ' + ", ".join(f'"{a}"' for a in allowed)


class Strategy:
    """The default behaviour: metadata validation only; status kept apart when ``has_status``."""

    has_status: bool = False
    namespace_scoped: bool = True
    name_check: Callable[[str], list[str]] = staticmethod(v.dns1123_subdomain_errors)

    # ---------------------------------------------------------- create / update
    def prepare_for_create(self, obj: Obj) -> None:
        """Drop what a client may not set on create (status of kinds with a status subresource)."""

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        """A main-resource update never changes status (Kubernetes' status subresource contract)."""
        if self.has_status:
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)

    def prepare_for_status_update(self, new: Obj, old: Obj) -> None:
        """A ``/status`` update changes only status: spec and metadata stay as stored."""
        for key in list(new):
            if key not in ("status", "metadata", "apiVersion", "kind"):
                new.pop(key)
        for key, value in old.items():
            if key not in ("status", "metadata"):
                new[key] = copy.deepcopy(value)
        new["metadata"] = copy.deepcopy(old["metadata"])

    def default(self, obj: Obj) -> None:
        """Fill Kubernetes' defaults in place."""

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        """Causes why ``obj`` is invalid (empty list: valid). ``old`` is set for updates."""
        return self.validate_metadata(obj)

    def validate_metadata(self, obj: Obj) -> list[Cause]:
        meta = obj.get("metadata") or {}
        causes: list[Cause] = []
        name = meta.get("name")
        if not name:
            causes.append(("metadata.name", None, "name or generateName is required"))
        else:
            causes += [("metadata.name", name, msg) for msg in type(self).name_check(name)]
        causes += v.validate_labels(meta.get("labels"), "metadata.labels")
        causes += v.validate_annotations(meta.get("annotations"), "metadata.annotations")
        for i, ref in enumerate(meta.get("ownerReferences") or []):
            for fld in ("apiVersion", "kind", "name", "uid"):
                if not ref.get(fld):
                    causes.append((f"metadata.ownerReferences[{i}].{fld}", None, REQUIRED))
        return causes

    # ---------------------------------------------------------- reads
    def fields(self, obj: Obj) -> dict[str, str]:
        """The values ``fieldSelector`` may filter on (``metadata.name``, ``metadata.namespace`` ...)."""
        meta = obj.get("metadata") or {}
        return {"metadata.name": meta.get("name") or "", "metadata.namespace": meta.get("namespace") or ""}

    # ---------------------------------------------------------- delete
    def graceful_delete_seconds(self, obj: Obj, requested: int | None) -> int:
        """Seconds of graceful deletion (0: remove at once). Only pods are graceful."""
        return 0

    # ---------------------------------------------------------- allocations (Service IPs, node ports)
    async def allocate(self, store: Any, obj: Obj, old: Obj | None) -> list[str]:
        """Reserve what ``obj`` needs before it is written; returns the reservation keys taken."""
        return []

    @staticmethod
    def keys_of(obj: Obj | None) -> set[str]:
        """Reservation keys an object holds (released when it is deleted)."""
        return set()

    @staticmethod
    async def release_keys(store: Any, keys: Any) -> None:
        """Give reservations back (no-op for kinds that reserve nothing)."""


class NamespaceStrategy(Strategy):
    has_status = True
    name_check = staticmethod(v.dns1123_label_errors)

    def default(self, obj: Obj) -> None:
        obj.setdefault("status", {}).setdefault("phase", "Active")
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)

    def fields(self, obj: Obj) -> dict[str, str]:
        f = super().fields(obj)
        f["status.phase"] = (obj.get("status") or {}).get("phase") or ""
        return f


# ============================================================== Pods
RESTART_POLICIES = ("Always", "OnFailure", "Never")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
PROTOCOLS = ("TCP", "UDP", "SCTP")
TOLERATION_OPERATORS = ("Exists", "Equal")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


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
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    for vol in spec.get("volumes") or []:
        if not any(k in vol for k in ("emptyDir", "hostPath", "configMap", "secret")):
            vol["emptyDir"] = {}
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        # Kubernetes picks Always for ":latest"; minik8s has no registry in its default
        # setup, so it defaults to IfNotPresent for every tag (see README).
        c.setdefault("imagePullPolicy", "IfNotPresent")
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        c.setdefault("resources", {})
        res = c["resources"]
        # Kubernetes: requests default to limits when only limits are given.
        for rname, qty in (res.get("limits") or {}).items():
            res.setdefault("requests", {}).setdefault(rname, qty)
        for p in c.get("ports") or []:
            p.setdefault("protocol", "TCP")
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            default_probe(c.get(probe))
    for t in spec.get("tolerations") or []:
        if t.get("operator") is None:
            t["operator"] = "Equal"


def _validate_probe(probe: Obj | None, path: str) -> list[Cause]:
    if not probe:
        return []
    handlers = [h for h in ("exec", "httpGet", "tcpSocket", "grpc") if probe.get(h) is not None]
    causes: list[Cause] = []
    if not handlers:
        causes.append((path, None, "Required value: must specify a handler type"))
    elif len(handlers) > 1:
        causes.append((f"{path}.{handlers[1]}", None, "Forbidden: may not specify more than 1 handler type"))
    for fld in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold",
                "failureThreshold"):
        val = probe.get(fld)
        if val is not None and val < 0:
            causes.append((f"{path}.{fld}", val, "must be greater than or equal to 0"))
    for h in ("httpGet", "tcpSocket"):
        port = (probe.get(h) or {}).get("port")
        if isinstance(port, int):
            causes += [(f"{path}.{h}.port", port, m) for m in v.port_number_errors(port)]
    return causes


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


def validate_container(c: Obj, path: str, volume_names: set[str]) -> list[Cause]:
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
        causes.append((f"{path}.imagePullPolicy", None, _supported(pp, PULL_POLICIES)))
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
            causes.append((f"{pp_path}.protocol", None, _supported(proto, PROTOCOLS)))
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
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        causes += _validate_probe(c.get(probe), f"{path}.{probe}")
    if c.get("livenessProbe") and (c["livenessProbe"].get("successThreshold") or 1) != 1:
        causes.append((f"{path}.livenessProbe.successThreshold",
                       c["livenessProbe"]["successThreshold"], "must be 1"))
    return causes


def validate_pod_spec(spec: Obj, path: str = "spec") -> list[Cause]:
    """PodSpec validation with Kubernetes' field paths and messages."""
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
        sources = [k for k in ("emptyDir", "hostPath", "configMap", "secret") if vol.get(k) is not None]
        if len(sources) > 1:
            causes.append((f"{vp}.{sources[1]}", None, "Forbidden: may not specify more than 1 volume type"))
        if vol.get("hostPath") is not None and not (vol["hostPath"].get("path") or "").startswith("/"):
            causes.append((f"{vp}.hostPath.path", vol["hostPath"].get("path"), "must be an absolute path"))
        causes += volume_source_errors(vol, vp)
    containers = spec.get("containers") or []
    if not containers:
        causes.append((f"{path}.containers", None, REQUIRED))
    names: set[str] = set()
    for kind in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(kind) or []):
            causes += validate_container(c, f"{path}.{kind}[{i}]", volume_names)
            cname = c.get("name")
            if cname and cname in names:
                causes.append((f"{path}.{kind}[{i}].name", None, f'Duplicate value: "{cname}"'))
            if cname:
                names.add(cname)
    rp = spec.get("restartPolicy")
    if rp not in RESTART_POLICIES:
        causes.append((f"{path}.restartPolicy", None, _supported(rp, RESTART_POLICIES)))
    grace = spec.get("terminationGracePeriodSeconds")
    if grace is not None and grace < 0:
        causes.append((f"{path}.terminationGracePeriodSeconds", grace, "must be greater than or equal to 0"))
    for key, val in (spec.get("nodeSelector") or {}).items():
        causes += [(f"{path}.nodeSelector", key, m) for m in v.qualified_name_errors(key)]
        causes += [(f"{path}.nodeSelector", val, m) for m in v.label_value_errors(val)]
    for i, t in enumerate(spec.get("tolerations") or []):
        tp = f"{path}.tolerations[{i}]"
        op = t.get("operator") or "Equal"
        if op not in TOLERATION_OPERATORS:
            causes.append((f"{tp}.operator", None, _supported(op, TOLERATION_OPERATORS)))
        if op == "Exists" and t.get("value"):
            causes.append((f"{tp}.operator", t["value"],
                           "value must be empty when `operator` is 'Exists'"))
        if not t.get("key") and op != "Exists":
            causes.append((f"{tp}.operator", op, "operator must be Exists when `key` is empty, "
                           "which means \"match all values and all keys\""))
        eff = t.get("effect")
        if eff and eff not in TAINT_EFFECTS:
            causes.append((f"{tp}.effect", None, _supported(eff, TAINT_EFFECTS)))
    return causes


POD_MUTABLE_SPEC = ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds")


class PodStrategy(Strategy):
    has_status = True

    def prepare_for_create(self, obj: Obj) -> None:
        obj["status"] = {"phase": "Pending", "qosClass": qos_class(obj.get("spec") or {})}

    def default(self, obj: Obj) -> None:
        default_pod_spec(obj.setdefault("spec", {}))

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj) + validate_pod_spec(obj.get("spec") or {})
        if old is not None:
            causes += self._validate_spec_update(obj.get("spec") or {}, old.get("spec") or {})
        return causes

    @staticmethod
    def _validate_spec_update(new: Obj, old: Obj) -> list[Cause]:
        """Pods are immutable but for images, tolerations (additions) and activeDeadlineSeconds."""
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


class NodeStrategy(Strategy):
    has_status = True
    namespace_scoped = False

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        for i, t in enumerate((obj.get("spec") or {}).get("taints") or []):
            if not t.get("key"):
                causes.append((f"spec.taints[{i}].key", None, REQUIRED))
            else:
                causes += [(f"spec.taints[{i}].key", t["key"], m) for m in v.qualified_name_errors(t["key"])]
            if t.get("effect") not in TAINT_EFFECTS:
                causes.append((f"spec.taints[{i}].effect", None, _supported(t.get("effect"), TAINT_EFFECTS)))
        return causes

    def fields(self, obj: Obj) -> dict[str, str]:
        f = super().fields(obj)
        f["spec.unschedulable"] = str(bool((obj.get("spec") or {}).get("unschedulable"))).lower()
        return f


class EventStrategy(Strategy):
    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        if not obj.get("involvedObject"):
            causes.append(("involvedObject", None, REQUIRED))
        return causes

    def fields(self, obj: Obj) -> dict[str, str]:
        f = super().fields(obj)
        inv = obj.get("involvedObject") or {}
        for k in ("kind", "name", "namespace", "uid", "fieldPath"):
            f[f"involvedObject.{k}"] = inv.get(k) or ""
        f["reason"] = obj.get("reason") or ""
        f["type"] = obj.get("type") or ""
        f["source"] = (obj.get("source") or {}).get("component") or ""
        return f


class ReplicaSetStrategy(Strategy):
    """apps/v1 ReplicaSet: replicas default 1; the selector must select the template's labels."""

    has_status = True

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("replicas", 1)
        spec.setdefault("minReadySeconds", 0)
        template = spec.get("template")
        if template:
            default_pod_spec(template.setdefault("spec", {}))

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        causes += validate_workload_spec(spec, template_required=True)
        return causes


class DeploymentStrategy(ReplicaSetStrategy):
    """apps/v1 Deployment: RollingUpdate 25%/25% by default, history limit 10, deadline 600 s."""

    def default(self, obj: Obj) -> None:
        super().default(obj)
        spec = obj["spec"]
        strategy = spec.setdefault("strategy", {})
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            ru = strategy.setdefault("rollingUpdate", {})
            ru.setdefault("maxUnavailable", "25%")
            ru.setdefault("maxSurge", "25%")
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = super().validate(obj, old)
        strategy = (obj.get("spec") or {}).get("strategy") or {}
        if strategy.get("type") not in ("RollingUpdate", "Recreate"):
            causes.append(("spec.strategy.type", None, _supported(strategy.get("type"), ("Recreate", "RollingUpdate"))))
        if strategy.get("type") == "Recreate" and strategy.get("rollingUpdate"):
            causes.append(("spec.strategy.rollingUpdate", None,
                           "Forbidden: may not be specified when strategy `type` is 'Recreate'"))
        ru = strategy.get("rollingUpdate") or {}
        for fld in ("maxSurge", "maxUnavailable"):
            val = ru.get(fld)
            if isinstance(val, str) and not (val.endswith("%") and val[:-1].isdigit()):
                causes.append((f"spec.strategy.rollingUpdate.{fld}", val,
                               "a valid percent string must be a numeric string followed by an ending '%'"))
            elif isinstance(val, int) and val < 0:
                causes.append((f"spec.strategy.rollingUpdate.{fld}", val, "must be greater than or equal to 0"))
        if str(ru.get("maxSurge", "")).strip("%") in ("0", "") and str(ru.get("maxUnavailable", "")).strip("%") == "0" \
                and strategy.get("type") == "RollingUpdate":
            causes.append(("spec.strategy.rollingUpdate.maxUnavailable", ru.get("maxUnavailable"),
                           "may not be 0 when `maxSurge` is 0"))
        return causes


def validate_workload_spec(spec: Obj, template_required: bool) -> list[Cause]:
    """replicas >= 0, a non-empty selector that matches ``template.metadata.labels``, a valid pod template."""
    causes: list[Cause] = []
    replicas = spec.get("replicas")
    if replicas is not None and replicas < 0:
        causes.append(("spec.replicas", replicas, "must be greater than or equal to 0"))
    selector = spec.get("selector")
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        causes.append(("spec.selector", None, "Required value"))
    else:
        causes += selector_errors(selector, "spec.selector")
    template = spec.get("template")
    if template is None:
        if template_required:
            causes.append(("spec.template", None, "Required value"))
        return causes
    labels = (template.get("metadata") or {}).get("labels") or {}
    causes += v.validate_labels(labels, "spec.template.metadata.labels")
    if selector and not causes:
        if not LabelSelector.from_dict(selector).matches(labels):
            causes.append(("spec.template.metadata.labels", labels,
                           "`selector` does not match template `labels`"))
    causes += validate_pod_spec(template.get("spec") or {}, "spec.template.spec")
    return causes


def selector_errors(selector: Obj | None, path: str) -> list[Cause]:
    """Validate a ``metav1.LabelSelector`` object."""
    if selector is None:
        return []
    try:
        LabelSelector.from_dict(selector)
    except ValueError as exc:
        return [(path, None, str(exc))]
    return []


# ============================================================== DNS (minik8s.io/v1) and Ingress
#: Characters a forwarded path may hold: RFC 3986 path characters without those that would
#: end or escape an nginx directive (whitespace, ``;``, ``{``, ``}``, quotes, ``#``, ``\\``, ``$``).
_HTTP_PATH_RE = re.compile(r"/[A-Za-z0-9._~!&()*+,=:@%/-]*")
INGRESS_PATH_TYPES = ("Exact", "Prefix", "ImplementationSpecific")


def host_errors(host: Any, path: str, wildcard: bool = False) -> list[Cause]:
    """A DNS host name: a lowercase RFC 1123 subdomain, not an IP address; with ``wildcard`` a
    leading ``*.`` label is allowed (Ingress hosts, ``IsWildcardDNS1123Subdomain``)."""
    if not isinstance(host, str) or not host:
        return [(path, None, REQUIRED)]
    name = host[2:] if wildcard and host.startswith("*.") else host
    causes = [(path, host, m) for m in v.dns1123_subdomain_errors(name)]
    if not causes and all(part.isdigit() for part in name.split(".")):
        causes.append((path, host, "must be a DNS name, not an IP address"))
    return causes


def http_path_errors(value: Any, path: str) -> list[Cause]:
    """A forwarded URL path: starts with ``/``; only characters safe in an nginx ``location``."""
    if not isinstance(value, str) or not value:
        return [(path, None, REQUIRED)]
    if not value.startswith("/"):
        return [(path, value, "must be an absolute path")]
    if not _HTTP_PATH_RE.fullmatch(value):
        return [(path, value, "must contain only the characters of an URL path "
                              "(letters, digits, and - . _ ~ ! & ( ) * + , = : @ % /)")]
    return []


class DNSStrategy(Strategy):
    """minik8s.io/v1 DNS: a host name plus paths, each forwarded to a Service of the namespace.

    Validation: ``spec.host`` is a DNS subdomain (not an IP), ``spec.paths`` is non-empty,
    every ``path`` starts with ``/`` and is unique (trailing slashes ignored),
    ``serviceName`` is a valid Service name (DNS-1035 label), ``servicePort`` is 1-65535.
    """

    has_status = True

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        causes += host_errors(spec.get("host"), "spec.host")
        paths = spec.get("paths") or []
        if not paths:
            causes.append(("spec.paths", None, REQUIRED))
        seen: set[str] = set()
        for i, p in enumerate(paths):
            pp = f"spec.paths[{i}]"
            if not isinstance(p, dict):
                causes.append((pp, None, "must be an object"))
                continue
            path_causes = http_path_errors(p.get("path"), f"{pp}.path")
            causes += path_causes
            if not path_causes:
                norm = normalize_path(p["path"])
                if norm in seen:
                    causes.append((f"{pp}.path", None, f'Duplicate value: "{p["path"]}"'))
                seen.add(norm)
            svc = p.get("serviceName")
            if not svc:
                causes.append((f"{pp}.serviceName", None, REQUIRED))
            else:
                causes += [(f"{pp}.serviceName", svc, m) for m in v.dns1035_label_errors(str(svc))]
            port = p.get("servicePort")
            if port is None:
                causes.append((f"{pp}.servicePort", None, REQUIRED))
            else:
                causes += [(f"{pp}.servicePort", port, m) for m in v.port_number_errors(port)]
        return causes


class IngressStrategy(Strategy):
    """networking.k8s.io/v1 Ingress, validated like Kubernetes' ``ValidateIngressSpec``.

    ``rules`` or ``defaultBackend`` is required; rule hosts are (wildcard) DNS subdomains;
    every HTTP path has a ``pathType`` (Exact, Prefix, ImplementationSpecific) and an absolute
    ``path``; a backend names a Service (DNS-1035 label) and exactly one of ``port.number``
    (1-65535) or ``port.name`` (IANA service name).
    """

    has_status = True

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        rules = spec.get("rules") or []
        if not rules and not spec.get("defaultBackend"):
            causes.append(("spec", None, "either `defaultBackend` or `rules` must be specified"))
        cls = spec.get("ingressClassName")
        if cls:
            causes += [("spec.ingressClassName", cls, m) for m in v.dns1123_subdomain_errors(str(cls))]
        if spec.get("defaultBackend"):
            causes += self._backend_errors(spec["defaultBackend"], "spec.defaultBackend")
        for i, rule in enumerate(rules):
            rp = f"spec.rules[{i}]"
            if rule.get("host"):
                causes += host_errors(rule["host"], f"{rp}.host", wildcard=True)
            http = rule.get("http")
            if http is None:
                continue
            if not http.get("paths"):
                causes.append((f"{rp}.http.paths", None, REQUIRED))
            for j, path in enumerate(http.get("paths") or []):
                pp = f"{rp}.http.paths[{j}]"
                path_type = path.get("pathType")
                if not path_type:
                    causes.append((f"{pp}.pathType", None, "Required value: pathType must be specified"))
                elif path_type not in INGRESS_PATH_TYPES:
                    causes.append((f"{pp}.pathType", None, _supported(path_type, INGRESS_PATH_TYPES)))
                causes += http_path_errors(path.get("path"), f"{pp}.path")
                causes += self._backend_errors(path.get("backend"), f"{pp}.backend")
        return causes

    @staticmethod
    def _backend_errors(backend: Any, path: str) -> list[Cause]:
        if not isinstance(backend, dict) or not (backend.get("service") or backend.get("resource")):
            return [(path, None, "Required value: one of `service` or `resource` must be specified")]
        if backend.get("service") and backend.get("resource"):
            return [(path, None, "Invalid value: cannot set both `resource` and `service` backends")]
        service = backend.get("service")
        if not service:
            return []
        causes: list[Cause] = []
        if not service.get("name"):
            causes.append((f"{path}.service.name", None, REQUIRED))
        else:
            causes += [(f"{path}.service.name", service["name"], m)
                       for m in v.dns1035_label_errors(str(service["name"]))]
        port = service.get("port") or {}
        number, name = port.get("number"), port.get("name")
        if number is not None and name:
            causes.append((f"{path}.service.port", None, "Invalid value: cannot set both port name & port number"))
        elif number is not None:
            causes += [(f"{path}.service.port.number", number, m) for m in v.port_number_errors(number)]
        elif name:
            causes += [(f"{path}.service.port.name", name, m) for m in v.iana_svc_name_errors(str(name))]
        else:
            causes.append((f"{path}.service.port", None, "Required value: port name or number is required"))
        return causes


def default_strategies() -> dict[str, Strategy]:
    """The strategy of every kind that has special needs (others use :class:`Strategy`)."""
    from minik8s.apiserver.config_strategy import ConfigMapStrategy, SecretStrategy
    from minik8s.apiserver.serverless_strategy import serverless_strategies

    return {
        "Namespace": NamespaceStrategy(),
        "Pod": PodStrategy(),
        "Node": NodeStrategy(),
        "Event": EventStrategy(),
        "ReplicaSet": ReplicaSetStrategy(),
        "Deployment": DeploymentStrategy(),
        "DNS": DNSStrategy(),
        "Ingress": IngressStrategy(),
        "HorizontalPodAutoscaler": HorizontalPodAutoscalerStrategy(),
        "ConfigMap": ConfigMapStrategy(),
        "Secret": SecretStrategy(),
        **serverless_strategies(),
    }


GENERIC = Strategy()


# ============================================================== HorizontalPodAutoscaler (autoscaling/v2)
def _path_segment_errors(value: str) -> list[str]:
    """Kubernetes' ``IsValidPathSegmentName`` (what a ``scaleTargetRef`` kind or name must be)."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{ch}'" for ch in ("/", "%") if ch in value]


def _scaling_rules_errors(rules: Any, path: str) -> list[Cause]:
    """``HPAScalingRules``: window 0..3600 s, selectPolicy Max/Min/Disabled, at least one policy,
    each policy Pods/Percent with value > 0 and 0 < periodSeconds <= 1800 (``validateScalingRules``)."""
    from minik8s.api import autoscaling as a

    if not isinstance(rules, dict):
        return []
    causes: list[Cause] = []
    window = rules.get("stabilizationWindowSeconds")
    if isinstance(window, int) and window < 0:
        causes.append((f"{path}.stabilizationWindowSeconds", window, "must be greater than or equal to zero"))
    elif isinstance(window, int) and window > a.MAX_STABILIZATION_WINDOW_SECONDS:
        causes.append((f"{path}.stabilizationWindowSeconds", window,
                       f"must be less than or equal to {a.MAX_STABILIZATION_WINDOW_SECONDS}"))
    select = rules.get("selectPolicy")
    if select is not None and select not in a.SELECT_POLICIES:
        causes.append((f"{path}.selectPolicy", None, _supported(select, a.SELECT_POLICIES)))
    policies = rules.get("policies") or []
    if not policies:
        causes.append((f"{path}.policies", None, "Required value: must specify at least one Policy"))
    for i, policy in enumerate(policies):
        pp = f"{path}.policies[{i}]"
        if policy.get("type") not in a.SCALING_POLICY_TYPES:
            causes.append((f"{pp}.type", None, _supported(policy.get("type"), a.SCALING_POLICY_TYPES)))
        if (policy.get("value") or 0) <= 0:
            causes.append((f"{pp}.value", policy.get("value"), "must be greater than zero"))
        period = policy.get("periodSeconds") or 0
        if period <= 0:
            causes.append((f"{pp}.periodSeconds", policy.get("periodSeconds"), "must be greater than zero"))
        elif period > a.MAX_PERIOD_SECONDS:
            causes.append((f"{pp}.periodSeconds", period, f"must be less than or equal to {a.MAX_PERIOD_SECONDS}"))
    return causes


def _metric_errors(metric: Obj, path: str) -> list[Cause]:
    """One ``spec.metrics`` entry: a Resource metric (cpu or memory) with a Utilization
    (``averageUtilization`` > 0) or AverageValue (``averageValue`` > 0) target
    (Kubernetes' ``validateMetricSpec`` / ``validateResourceSource`` / ``validateMetricTarget``)."""
    from minik8s.api import autoscaling as a

    mtype = metric.get("type")
    if not mtype:
        return [(f"{path}.type", None, "Required value: must specify a metric source type")]
    if mtype not in a.METRIC_SOURCE_TYPES:
        return [(f"{path}.type", None, _supported(mtype, a.METRIC_SOURCE_TYPES))]
    source = metric.get("resource")
    if not isinstance(source, dict):
        return [(f"{path}.resource", None, "Required value: must populate information for the given metric source")]
    causes: list[Cause] = []
    rp = f"{path}.resource"
    name = source.get("name")
    if not name:
        causes.append((f"{rp}.name", None, "Required value: must specify a resource name"))
    elif name not in a.METRIC_RESOURCES:
        causes.append((f"{rp}.name", None, _supported(name, a.METRIC_RESOURCES)))
    target = source.get("target") or {}
    tp = f"{rp}.target"
    ttype = target.get("type")
    if not ttype:
        causes.append((f"{tp}.type", None, "Required value: must specify a metric target type"))
    elif ttype not in a.METRIC_TARGET_TYPES:
        causes.append((f"{tp}.type", ttype, "must be either Utilization, Value, or AverageValue"))
    for fld in ("value", "averageValue"):
        if target.get(fld) is None:
            continue
        try:
            positive = parse_quantity(target[fld]) > 0
        except ValueError as exc:
            causes.append((f"{tp}.{fld}", target[fld], str(exc)))
            continue
        if not positive:
            causes.append((f"{tp}.{fld}", target[fld], "must be positive"))
    util = target.get("averageUtilization")
    if util is not None and util < 1:
        causes.append((f"{tp}.averageUtilization", util, "must be greater than 0"))
    if util is None and target.get("averageValue") is None:
        causes.append((f"{tp}.averageUtilization", None,
                       "Required value: must set either a target raw value or a target utilization"))
    if util is not None and target.get("averageValue") is not None:
        causes.append((f"{tp}.averageValue", None,
                       "Forbidden: may not set both a target raw value and a target utilization"))
    return causes


class HorizontalPodAutoscalerStrategy(Strategy):
    """autoscaling/v2 HorizontalPodAutoscaler (Kubernetes' ``SetDefaults_HorizontalPodAutoscaler`` and
    ``ValidateHorizontalPodAutoscaler``).

    Defaults: ``minReplicas`` 1; no ``metrics`` → cpu Utilization 80 %; a ``behavior`` that is
    given gets the missing parts of ``scaleUp`` (window 0, Max of +4 pods / +100 % per 15 s) and
    ``scaleDown`` (Max of −100 % per 15 s; the window stays unset and the controller applies
    its downscale-stabilization flag, 300 s); an absent ``behavior`` stays absent, as in
    Kubernetes (the controller then uses its flag-driven defaults).  Quantities are stored as
    strings.  Validation: ``scaleTargetRef.kind``/``name`` required, ``minReplicas`` >= 1,
    ``maxReplicas`` >= 1 and >= ``minReplicas``, metrics and behavior as in
    :func:`_metric_errors` and :func:`_scaling_rules_errors`.
    """

    has_status = True

    def default(self, obj: Obj) -> None:
        from minik8s.api import autoscaling as a

        spec = obj.setdefault("spec", {})
        spec.setdefault("minReplicas", 1)
        if not spec.get("metrics"):
            spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": {
                "type": "Utilization", "averageUtilization": a.DEFAULT_CPU_UTILIZATION}}}]
        for metric in spec["metrics"]:
            target = (metric.get("resource") or {}).get("target") or {}
            for fld in ("value", "averageValue"):
                if isinstance(target.get(fld), int | float):
                    target[fld] = str(target[fld])
        behavior = spec.get("behavior")
        if isinstance(behavior, dict):
            for key, defaults in (("scaleUp", a.default_scale_up_rules()), ("scaleDown", a.default_scale_down_rules())):
                given = behavior.get(key) or {}
                behavior[key] = {**defaults, **{k: v for k, v in given.items() if v is not None}}

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        ref = spec.get("scaleTargetRef")
        if not isinstance(ref, dict):
            causes.append(("spec.scaleTargetRef", None, REQUIRED))
        else:
            for fld in ("kind", "name"):
                if not ref.get(fld):
                    causes.append((f"spec.scaleTargetRef.{fld}", None, REQUIRED))
                else:
                    causes += [(f"spec.scaleTargetRef.{fld}", ref[fld], m) for m in _path_segment_errors(ref[fld])]
        low, high = spec.get("minReplicas"), spec.get("maxReplicas")
        if low is not None and low < 1:
            causes.append(("spec.minReplicas", low, "must be greater than or equal to 1"))
        if high is None or high < 1:
            causes.append(("spec.maxReplicas", high, "must be greater than 0"))
        elif low is not None and high < low:
            causes.append(("spec.maxReplicas", high, "must be greater than or equal to `minReplicas`"))
        for i, metric in enumerate(spec.get("metrics") or []):
            causes += _metric_errors(metric, f"spec.metrics[{i}]")
        behavior = spec.get("behavior") or {}
        for key in ("scaleUp", "scaleDown"):
            causes += _scaling_rules_errors(behavior.get(key), f"spec.behavior.{key}")
        return causes
