"""Pod Security Admission: the Pod Security Standards checked against namespace labels.

A namespace chooses a level per mode with labels (Kubernetes' ``pod-security.kubernetes.io``):

- ``.../enforce``: a pod that violates the level is refused with 403 Forbidden,
  ``pods "x" is forbidden: violates PodSecurity "restricted:latest": <reason> (<detail>), ...``;
- ``.../warn``: the write succeeds with one ``Warning`` header,
  ``would violate PodSecurity "baseline:latest": ...``;
- ``.../audit``: the write succeeds and the apiserver logs the violation (logger
  ``minik8s.apiserver.podsecurity``, ``pod-security audit: ... would violate PodSecurity ...``);
  minik8s has no audit log, so the log line stands in for Kubernetes' audit annotation.

Levels are ``privileged`` (no checks, the default for a namespace without labels),
``baseline`` and ``restricted``; ``.../<mode>-version`` is ``latest`` (the default) or
``v1.N`` (checks newer than that version are skipped).  An unknown level is evaluated as
``restricted``, an unparsable version as ``latest`` (as Kubernetes does for bad labels).
Pods are checked on create; the pod templates of Deployments, ReplicaSets, StatefulSets,
DaemonSets, Jobs and CronJobs are checked for ``warn`` and ``audit`` only, as in Kubernetes.
Nothing is exempt.

The checks, their order, reasons and details follow Kubernetes' Pod Security Standards
(``baseline``: host namespaces, privileged, non-default capabilities, hostPath volumes,
hostPorts, procMount, seccomp Unconfined, unsafe sysctls; ``restricted`` adds
allowPrivilegeEscalation, capabilities drop ALL, volume types, runAsNonRoot, runAsUser=0 and a
required seccomp profile).  AppArmor, SELinux and Windows options are not checked.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

Obj = dict[str, Any]
LABEL_PREFIX = "pod-security.kubernetes.io/"
LEVELS = ("privileged", "baseline", "restricted")
MODES = ("enforce", "audit", "warn")
#: the pod template's path in each workload kind that is checked for warn and audit
TEMPLATE_PATHS: dict[str, tuple[str, ...]] = {
    "Deployment": ("spec", "template"), "ReplicaSet": ("spec", "template"),
    "StatefulSet": ("spec", "template"), "DaemonSet": ("spec", "template"),
    "Job": ("spec", "template"), "ReplicationController": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}

BASELINE_CAPABILITIES = frozenset({
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE",
    "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"})
SAFE_SYSCTLS = frozenset({
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start", "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"})
#: volume sources the restricted level allows
RESTRICTED_VOLUME_TYPES = ("configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                           "persistentVolumeClaim", "projected", "secret")
_VERSION = re.compile(r"^v1\.(0|[1-9][0-9]*)$")
LATEST = 1 << 30

Violation = tuple[str, str]  # (forbidden reason, detail)


@dataclass(frozen=True)
class LevelVersion:
    """One mode's level and version as the labels give them (``version`` as written)."""

    level: str
    version: str = "latest"

    def __str__(self) -> str:
        return f"{self.level}:{self.version}"

    @property
    def minor(self) -> int:
        m = _VERSION.match(self.version)
        return int(m.group(1)) if m else LATEST


def policy(labels: dict[str, str] | None) -> dict[str, LevelVersion]:
    """Mode → level of a namespace's labels (modes without a label are left out; ``privileged``
    ones too, as they check nothing)."""
    labels = labels or {}
    out: dict[str, LevelVersion] = {}
    for mode in MODES:
        level = labels.get(LABEL_PREFIX + mode)
        if level is None:
            continue
        if level not in LEVELS:
            level = "restricted"
        version = labels.get(f"{LABEL_PREFIX}{mode}-version") or "latest"
        if version != "latest" and not _VERSION.match(version):
            version = "latest"
        if level != "privileged":
            out[mode] = LevelVersion(level, version)
    return out


def label_errors(labels: dict[str, str] | None) -> list[tuple[str, Any, str]]:
    """Causes for bad ``pod-security.kubernetes.io`` label values on a Namespace."""
    causes: list[tuple[str, Any, str]] = []
    for key, value in (labels or {}).items():
        if not key.startswith(LABEL_PREFIX):
            continue
        mode = key[len(LABEL_PREFIX):]
        if mode in MODES and value not in LEVELS:
            causes.append((f"metadata.labels[{key}]", value, 'must be one of privileged, baseline, restricted'))
        elif mode.endswith("-version") and mode[:-8] in MODES and value != "latest" and not _VERSION.match(value):
            causes.append((f"metadata.labels[{key}]", value, 'must be "latest" or "v1.x"'))
    return causes


# ---------------------------------------------------------------- helpers
def _containers(spec: Obj) -> list[Obj]:
    return [c for kind in ("initContainers", "containers", "ephemeralContainers") for c in spec.get(kind) or []]


def _sc(c: Obj) -> Obj:
    return c.get("securityContext") or {}


def _plural(one: str, many: str, n: int) -> str:
    return one if n == 1 else many


def _quote(items: list[str]) -> str:
    return ", ".join(f'"{i}"' for i in items)


def _who(names: list[str]) -> str:
    return f"{_plural('container', 'containers', len(names))} {_quote(names)}"


# ---------------------------------------------------------------- baseline
def _capabilities_baseline(spec: Obj) -> Violation | None:
    bad, caps = [], set()
    for c in _containers(spec):
        added = [a for a in (_sc(c).get("capabilities") or {}).get("add") or [] if a not in BASELINE_CAPABILITIES]
        if added:
            bad.append(c["name"])
            caps.update(added)
    if not bad:
        return None
    return "non-default capabilities", f"{_who(bad)} must not include {_quote(sorted(caps))} in " \
                                       "securityContext.capabilities.add"


def _host_namespaces(spec: Obj) -> Violation | None:
    used = [f"{f}=true" for f in ("hostIPC", "hostNetwork", "hostPID") if spec.get(f)]
    return ("host namespaces", ", ".join(used)) if used else None


def _host_ports(spec: Obj) -> Violation | None:
    bad, ports = [], set()
    for c in _containers(spec):
        used = [str(p["hostPort"]) for p in c.get("ports") or [] if p.get("hostPort")]
        if used:
            bad.append(c["name"])
            ports.update(used)
    if not bad:
        return None
    return "hostPort", f"{_who(bad)} {_plural('uses', 'use', len(bad))} " \
                       f"{_plural('hostPort', 'hostPorts', len(ports))} {', '.join(sorted(ports))}"


def _privileged(spec: Obj) -> Violation | None:
    bad = [c["name"] for c in _containers(spec) if _sc(c).get("privileged")]
    return ("privileged", f"{_who(bad)} must not set securityContext.privileged=true") if bad else None


def _proc_mount(spec: Obj) -> Violation | None:
    bad, kinds = [], set()
    for c in _containers(spec):
        mount = _sc(c).get("procMount")
        if mount is not None and mount != "Default":
            bad.append(c["name"])
            kinds.add(mount)
    if not bad:
        return None
    return "procMount", f"{_who(bad)} must not set securityContext.procMount to {_quote(sorted(kinds))}"


def _sysctls(spec: Obj) -> Violation | None:
    bad = [s.get("name", "") for s in (spec.get("securityContext") or {}).get("sysctls") or []
           if s.get("name") not in SAFE_SYSCTLS]
    return ("forbidden sysctls", ", ".join(bad)) if bad else None


def _host_path_volumes(spec: Obj) -> Violation | None:
    bad = [v.get("name", "") for v in spec.get("volumes") or [] if v.get("hostPath") is not None]
    return ("hostPath volumes", f"{_plural('volume', 'volumes', len(bad))} {_quote(bad)}") if bad else None


def _seccomp_type(sc: Obj) -> str | None:
    profile = sc.get("seccompProfile")
    return None if profile is None else str(profile.get("type") or "")


def _seccomp(spec: Obj, restricted: bool) -> Violation | None:
    setters, values, implicit = [], set(), []
    pod_type = _seccomp_type(spec.get("securityContext") or {})
    pod_ok = pod_type in ("RuntimeDefault", "Localhost")
    if restricted:
        bad = pod_type is not None and not pod_ok
    else:
        bad = pod_type == "Unconfined"
    if bad:
        setters.append("pod")
        values.add(pod_type or "")
    explicit = []
    for c in _containers(spec):
        kind = _seccomp_type(_sc(c))
        if kind is None:
            if not pod_ok:
                implicit.append(c["name"])
        elif kind == "Unconfined" or (restricted and kind not in ("RuntimeDefault", "Localhost")):
            explicit.append(c["name"])
            values.add(kind)
    if explicit:
        setters.append(_who(explicit))
    if setters:
        return "seccompProfile", f"{' and '.join(setters)} must not set securityContext.seccompProfile.type " \
                                 f"to {_quote(sorted(values))}"
    if restricted and implicit:
        return "seccompProfile", f'pod or {_who(implicit)} must set securityContext.seccompProfile.type to ' \
                                 '"RuntimeDefault" or "Localhost"'
    return None


# ---------------------------------------------------------------- restricted
def _allow_privilege_escalation(spec: Obj) -> Violation | None:
    bad = [c["name"] for c in _containers(spec) if _sc(c).get("allowPrivilegeEscalation") is not False]
    return ("allowPrivilegeEscalation != false",
            f"{_who(bad)} must set securityContext.allowPrivilegeEscalation=false") if bad else None


def _capabilities_restricted(spec: Obj) -> Violation | None:
    no_drop, adding, caps = [], [], set()
    for c in _containers(spec):
        capabilities = _sc(c).get("capabilities") or {}
        if "ALL" not in (capabilities.get("drop") or []):
            no_drop.append(c["name"])
        added = [a for a in capabilities.get("add") or [] if a != "NET_BIND_SERVICE"]
        if added:
            adding.append(c["name"])
            caps.update(added)
    details = []
    if no_drop:
        details.append(f'{_who(no_drop)} must set securityContext.capabilities.drop=["ALL"]')
    if adding:
        details.append(f"{_who(adding)} must not include {_quote(sorted(caps))} in securityContext.capabilities.add")
    return ("unrestricted capabilities", "; ".join(details)) if details else None


def _restricted_volumes(spec: Obj) -> Violation | None:
    bad: list[str] = []
    kinds: set[str] = set()
    for v in spec.get("volumes") or []:
        if any(v.get(k) is not None for k in RESTRICTED_VOLUME_TYPES):
            continue
        bad.append(v.get("name", ""))
        kinds.update(k for k in v if k != "name" and v[k] is not None)
    if not bad:
        return None
    return "restricted volume types", f"{_plural('volume', 'volumes', len(bad))} {_quote(bad)} " \
                                      f"{_plural('uses', 'use', len(bad))} " \
                                      f"{_plural('restricted volume type', 'restricted volume types', len(kinds))} " \
                                      f"{_quote(sorted(kinds))}"


def _run_as_non_root(spec: Obj) -> Violation | None:
    setters: list[str] = []
    pod_value = (spec.get("securityContext") or {}).get("runAsNonRoot")
    if pod_value is False:
        setters.append("pod")
    explicit, implicit = [], []
    for c in _containers(spec):
        value = _sc(c).get("runAsNonRoot")
        if value is False:
            explicit.append(c["name"])
        elif value is None and pod_value is not True:
            implicit.append(c["name"])
    if explicit:
        setters.append(_who(explicit))
    if setters:
        return "runAsNonRoot != true", f"{' and '.join(setters)} must not set securityContext.runAsNonRoot=false"
    if implicit:
        return "runAsNonRoot != true", f"pod or {_who(implicit)} must set securityContext.runAsNonRoot=true"
    return None


def _run_as_user(spec: Obj) -> Violation | None:
    setters = ["pod"] if (spec.get("securityContext") or {}).get("runAsUser") == 0 else []
    bad = [c["name"] for c in _containers(spec) if _sc(c).get("runAsUser") == 0]
    if bad:
        setters.append(_who(bad))
    return ("runAsUser=0", f"{' and '.join(setters)} must not set runAsUser=0") if setters else None


Check = Callable[[Obj], "Violation | None"]
#: (minimum minor version, check) in Kubernetes' order: baseline, baseline-only, restricted
BASELINE: list[tuple[int, Check]] = [
    (0, _capabilities_baseline), (0, _host_namespaces), (0, _host_ports), (0, _privileged),
    (0, _proc_mount), (0, _sysctls)]
BASELINE_ONLY: list[tuple[int, Check]] = [(0, _host_path_volumes), (19, lambda s: _seccomp(s, False))]
RESTRICTED: list[tuple[int, Check]] = [
    (8, _allow_privilege_escalation), (22, _capabilities_restricted), (0, _restricted_volumes),
    (0, _run_as_non_root), (23, _run_as_user), (19, lambda s: _seccomp(s, True))]


def evaluate(spec: Obj, lv: LevelVersion) -> list[Violation]:
    """The violations of ``spec`` (a PodSpec) at ``lv``, in Kubernetes' order."""
    if lv.level == "privileged":
        return []
    checks = BASELINE + (BASELINE_ONLY if lv.level == "baseline" else RESTRICTED)
    found = [check(spec) for minimum, check in checks if lv.minor >= minimum]
    return [v for v in found if v is not None]


def summary(violations: list[Violation]) -> str:
    """``reason (detail), reason (detail), ...``."""
    return ", ".join(f"{reason} ({detail})" if detail else reason for reason, detail in violations)


def pod_spec_of(obj: Obj) -> Obj | None:
    """The PodSpec a Pod or workload holds (None for other kinds)."""
    kind = obj.get("kind")
    if kind == "Pod":
        return obj.get("spec") or {}
    path = TEMPLATE_PATHS.get(str(kind))
    if path is None:
        return None
    node: Any = obj
    for key in path:
        node = (node or {}).get(key)
    return (node or {}).get("spec") or {}


@dataclass
class Decision:
    """The outcome for one object: ``forbidden`` (the 403 message, or None) and warnings."""

    forbidden: str | None
    warnings: list[str]


def admit(obj: Obj, labels: dict[str, str] | None) -> Decision:
    """Check a Pod (enforce, warn, audit) or a workload's template (warn, audit) against the
    namespace's ``labels``; audit violations are logged here."""
    decision = Decision(None, [])
    spec = pod_spec_of(obj)
    if spec is None:
        return decision
    meta = obj.get("metadata") or {}
    is_pod = obj.get("kind") == "Pod"
    results: dict[LevelVersion, list[Violation]] = {}
    for mode, lv in policy(labels).items():
        if mode == "enforce" and not is_pod:
            continue
        if lv not in results:
            results[lv] = evaluate(spec, lv)
        violations = results[lv]
        if not violations:
            continue
        text = summary(violations)
        if mode == "enforce":
            decision.forbidden = f'pods "{meta.get("name", "")}" is forbidden: violates PodSecurity "{lv}": {text}'
        elif mode == "warn":
            decision.warnings.append(f'would violate PodSecurity "{lv}": {text}')
        else:
            log.warning('pod-security audit: %s %s/%s would violate PodSecurity "%s": %s', obj.get("kind"),
                        meta.get("namespace", ""), meta.get("name", ""), lv, text)
    return decision
