"""Translate a pod's containers into Docker create parameters, the way the kubelet does.

- ``command`` → Docker ``Entrypoint`` and ``args`` → ``Cmd`` (a command without args drops the
  image's CMD, as Kubernetes documents); ``$(VAR)`` references in command, args and env
  values are expanded from the container's env (``$$`` escapes).
- ``env``: literal values and ``valueFrom.fieldRef`` (``metadata.name``, ``metadata.namespace``,
  ``metadata.uid``, ``metadata.labels['k']``, ``metadata.annotations['k']``, ``spec.nodeName``,
  ``spec.serviceAccountName``, ``status.podIP``, ``status.hostIP``) and
  ``resourceFieldRef`` (``limits.cpu`` in cores rounded up, ``limits.memory`` in bytes, ...),
  ``configMapKeyRef``/``secretKeyRef`` and ``envFrom`` (:mod:`minik8s.kubelet.configsources`;
  ``envFrom`` first, then ``env``, a later definition wins).
- Resources: ``limits.cpu`` → CFS quota (``cpu_quota = millicores × 100``, period 100 ms,
  at least 1 ms); ``requests.cpu`` → ``cpu_shares = millicores × 1024 / 1000`` (min 2, and 2
  when nothing is requested); ``limits.memory`` → memory limit in bytes (no extra swap);
  ``oom_score_adj`` by QoS class (Guaranteed -997, BestEffort 1000, Burstable in between).
- ``securityContext`` (the container's over the pod's): user ``uid:gid``, extra groups,
  read-only root, capabilities, privileged, no-new-privileges, seccomp and procMount
  (:func:`security_config`), and the kubelet's ``runAsNonRoot`` check (:func:`verify_run_as_non_root`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from minik8s.api.core import qos_class
from minik8s.api.quantity import parse_memory, parse_millicpu
from minik8s.kubelet.configsources import ContainerConfigError, Lookup, env_from, key_ref_value

MIN_SHARES = 2
MAX_SHARES = 262144
CPU_PERIOD_US = 100_000
MIN_QUOTA_US = 1000

_REF = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_.\-]*)\)|\$\$")


def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' ``$(VAR)`` expansion: defined names are replaced, unknown ones kept, ``$$`` → ``$``."""
    def repl(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        name = m.group(1)
        return env.get(name, m.group(0))
    return _REF.sub(repl, text)


def field_value(pod: dict[str, Any], path: str, host_ip: str = "", pod_ip: str = "") -> str:
    """The value of a ``fieldRef`` (Kubernetes' ``podFieldSelectorRuntimeValue``): ``metadata.name``,
    ``metadata.namespace``, ``metadata.uid``, ``metadata.labels['k']``/``metadata.annotations['k']``
    (``""`` when absent), the whole ``metadata.labels``/``metadata.annotations`` as sorted
    ``key="value"`` lines (Go ``%q`` quoting, as in downwardAPI volume files), ``spec.nodeName``,
    ``spec.serviceAccountName``, ``status.podIP``, ``status.hostIP``; anything else is ``""``."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    simple = {
        "metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"),
        "metadata.uid": meta.get("uid"), "spec.nodeName": spec.get("nodeName"),
        "spec.serviceAccountName": spec.get("serviceAccountName"), "status.podIP": pod_ip,
        "status.hostIP": host_ip, "status.podIPs": pod_ip, "status.hostIPs": host_ip,
    }
    if path in simple:
        return str(simple[path] or "")
    if path in ("metadata.labels", "metadata.annotations"):
        return format_map(meta.get(path.split(".")[1]) or {})
    m = re.fullmatch(r"metadata\.(labels|annotations)\['([^']+)'\]", path)
    if m:
        return str((meta.get(m.group(1)) or {}).get(m.group(2), ""))
    return ""


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
               "\v": "\\v", "\\": "\\\\", '"': '\\"'}


def go_quote(text: str) -> str:
    """``text`` as Go's ``%q`` writes it: double-quoted, ``\\``, ``\"`` and control characters escaped."""
    out = []
    for ch in text:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def format_map(values: dict[str, Any]) -> str:
    """Kubernetes' ``fieldpath.FormatMap``: one ``key="value"`` line per entry, keys sorted, no final newline."""
    return "\n".join(f"{key}={go_quote(str(values[key]))}" for key in sorted(values))


#: node resources a missing limit falls back to (Kubernetes' ``MergeContainerResourceLimits``)
LIMIT_FALLBACKS = ("cpu", "memory", "ephemeral-storage")


def resource_field_value(container: dict[str, Any], ref: dict[str, Any],
                         allocatable: dict[str, str] | None = None) -> str:
    """The value of a ``resourceFieldRef`` (``limits.cpu``/``requests.cpu`` in cores rounded up, or
    in units of ``divisor`` (``1m``); ``limits.memory``/``requests.memory``/``*.ephemeral-storage``
    in bytes, or ``ceil(bytes / divisor)``).

    As Kubernetes does, a missing cpu/memory/ephemeral-storage limit is the node's ``allocatable``
    amount (when given) and a missing request is ``0``.
    """
    resource = ref.get("resource") or ""
    kind, _, name = resource.partition(".")
    res = container.get("resources") or {}
    qty = (res.get(kind) or {}).get(name)
    if qty is None and kind == "limits" and name in LIMIT_FALLBACKS:
        qty = (allocatable or {}).get(name)
    if qty is None:
        qty = "0"
    divisor = str(ref.get("divisor") or "1")
    if divisor == "0":  # how Kubernetes serialises an unset divisor
        divisor = "1"
    if name == "cpu":
        millis = parse_millicpu(qty)
        return str(-(-millis // max(parse_millicpu(divisor), 1)))
    amount = parse_memory(qty)
    return str(-(-amount // max(parse_memory(divisor), 1)))


def container_env(pod: dict[str, Any], container: dict[str, Any], *, host_ip: str, pod_ip: str,
                  lookup: Lookup | None = None, warnings: list[str] | None = None,
                  allocatable: dict[str, str] | None = None,
                  services: dict[str, str] | None = None) -> dict[str, str]:
    """The container's environment, in order, with ``$(VAR)`` references expanded.

    ``services``: the Service variables (:mod:`minik8s.kubelet.serviceenv`), first, so the
    container's ``envFrom`` and ``env`` override them and may refer to them.

    ``lookup`` finds the ConfigMaps and Secrets that ``envFrom`` and ``valueFrom`` name (without
    it they count as missing); messages about skipped ``envFrom`` keys are appended to
    ``warnings``.  Raises :class:`~minik8s.kubelet.configsources.ContainerConfigError` when a
    non-optional one (or its key) is missing.  ``allocatable`` (the node's) stands in for
    missing limits in ``resourceFieldRef`` values.
    """
    lookup = lookup or (lambda kind, namespace, name: None)
    env, skipped = env_from(pod, container, lookup)
    if services:
        env = {**services, **env}
    if warnings is not None:
        warnings.extend(skipped)
    for item in container.get("env") or []:
        name = item.get("name")
        if not name:
            continue
        if item.get("value") is not None:
            env[name] = expand(str(item["value"]), env)
            continue
        source = item.get("valueFrom") or {}
        if source.get("fieldRef"):
            env[name] = field_value(pod, source["fieldRef"].get("fieldPath", ""), host_ip, pod_ip)
        elif source.get("resourceFieldRef"):
            env[name] = resource_field_value(container, source["resourceFieldRef"], allocatable)
        elif source.get("configMapKeyRef") or source.get("secretKeyRef"):
            value = key_ref_value(pod, source, lookup)
            if value is not None:
                env[name] = value
        else:
            env[name] = ""
    return env


def milli_cpu_to_shares(millis: int) -> int:
    """Kubernetes' ``MilliCPUToShares``: ``millis × 1024 / 1000`` clamped to [2, 262144]."""
    if millis <= 0:
        return MIN_SHARES
    return min(max(millis * 1024 // 1000, MIN_SHARES), MAX_SHARES)


def milli_cpu_to_quota(millis: int, period: int = CPU_PERIOD_US) -> int:
    """Kubernetes' ``MilliCPUToQuota``: microseconds of CPU per ``period`` (min 1000 µs), 0 = no limit."""
    if millis <= 0:
        return 0
    return max(millis * period // 1000, MIN_QUOTA_US)


def oom_score_adj(spec: dict[str, Any], container: dict[str, Any], memory_capacity: int) -> int:
    """Kubernetes' ``GetContainerOOMScoreAdjust``: -997 Guaranteed, 1000 BestEffort, else
    ``1000 - 1000 × request / capacity`` clamped to [2, 999]."""
    qos = qos_class(spec)
    if qos == "Guaranteed":
        return -997
    if qos == "BestEffort":
        return 1000
    request = (container.get("resources") or {}).get("requests", {}).get("memory")
    if not request or memory_capacity <= 0:
        return 999
    adj = 1000 - (1000 * parse_memory(request)) // memory_capacity
    return int(min(max(adj, 2), 999))


def oom_score_adj_floor() -> int:
    """The lowest ``oom_score_adj`` a container may be given here.

    Lowering it needs CAP_SYS_RESOURCE; without it (e.g. a kubelet inside a container
    started without that capability) runc refuses anything below the current value.
    """
    try:
        with open("/proc/self/status") as fh:
            caps = next((line.split()[1] for line in fh if line.startswith("CapEff:")), "0")
        if int(caps, 16) & (1 << 24):  # CAP_SYS_RESOURCE
            return -1000
        with open("/proc/self/oom_score_adj") as fh:
            return int(fh.read().strip() or 0)
    except (OSError, ValueError):
        return 0


def resource_config(pod: dict[str, Any], container: dict[str, Any], memory_capacity: int,
                    oom_floor: int = -1000) -> dict[str, Any]:
    """HostConfig resource settings (docker-py ``create_host_config`` keyword arguments).

    ``oom_floor`` is the lowest ``oom_score_adj`` allowed (see :func:`oom_score_adj_floor`).
    """
    res = container.get("resources") or {}
    limits, requests = res.get("limits") or {}, res.get("requests") or {}
    out: dict[str, Any] = {}
    cpu_limit = parse_millicpu(limits["cpu"]) if limits.get("cpu") is not None else 0
    cpu_request = parse_millicpu(requests["cpu"]) if requests.get("cpu") is not None else 0
    if cpu_request == 0 and cpu_limit:
        cpu_request = cpu_limit
    out["cpu_shares"] = milli_cpu_to_shares(cpu_request)
    if cpu_limit:
        out["cpu_period"] = CPU_PERIOD_US
        out["cpu_quota"] = milli_cpu_to_quota(cpu_limit)
    if limits.get("memory") is not None:
        mem = parse_memory(limits["memory"])
        if mem > 0:
            out["mem_limit"] = mem
            out["memswap_limit"] = mem
    out["oom_score_adj"] = max(oom_score_adj(pod.get("spec") or {}, container, memory_capacity), oom_floor)
    return out


#: fields a container's securityContext takes from the pod's when it does not set them
INHERITED = ("runAsUser", "runAsGroup", "runAsNonRoot", "seccompProfile", "seLinuxOptions")


def effective_security_context(container: dict[str, Any], pod_spec: dict[str, Any]) -> dict[str, Any]:
    """The container's securityContext with the pod's ``runAsUser``, ``runAsGroup``,
    ``runAsNonRoot``, ``seccompProfile`` and ``seLinuxOptions`` filled in where the container
    sets none (Kubernetes' ``DetermineEffectiveSecurityContext``)."""
    sc = dict(container.get("securityContext") or {})
    psc = pod_spec.get("securityContext") or {}
    for fld in INHERITED:
        if sc.get(fld) is None and psc.get(fld) is not None:
            sc[fld] = psc[fld]
    return sc


def pod_ref(pod: dict[str, Any]) -> str:
    """The kubelet's ``format.Pod``: ``name_namespace(uid)``."""
    meta = pod.get("metadata") or {}
    return f"{meta.get('name', '')}_{meta.get('namespace', '')}({meta.get('uid', '')})"


def verify_run_as_non_root(pod: dict[str, Any], container: dict[str, Any], image_user: str | None) -> None:
    """Kubernetes' ``verifyRunAsNonRoot``: with ``runAsNonRoot: true`` the container must not run as
    uid 0 (its ``runAsUser``, else the image's ``USER``; an empty one is root).  A non-numeric image
    user cannot be checked.  Raises ContainerConfigError with the kubelet's messages."""
    sc = effective_security_context(container, pod.get("spec") or {})
    if not sc.get("runAsNonRoot"):
        return
    where = f'(pod: "{pod_ref(pod)}", container: {container["name"]})'
    uid = sc.get("runAsUser")
    if uid is not None:
        if uid == 0:
            raise ContainerConfigError(f"container's runAsUser breaks non-root policy {where}")
        return
    user = (image_user or "").split(":", 1)[0]
    if not user:
        raise ContainerConfigError(f"container has runAsNonRoot and image will run as root {where}")
    if not user.isdigit():
        raise ContainerConfigError(f"container has runAsNonRoot and image has non-numeric user ({user}), "
                                   f"cannot verify user is non-root {where}")
    if int(user) == 0:
        raise ContainerConfigError(f"container has runAsNonRoot and image will run as root {where}")


def needs_image_user(container: dict[str, Any], pod_spec: dict[str, Any]) -> bool:
    """Whether :func:`security_config` / :func:`verify_run_as_non_root` need the image's ``USER``."""
    sc = effective_security_context(container, pod_spec)
    return bool(sc.get("runAsNonRoot")) or (sc.get("runAsGroup") is not None and sc.get("runAsUser") is None)


def security_config(container: dict[str, Any], pod_spec: dict[str, Any], image_user: str | None = None,
                    seccomp_dir: Path | None = None) -> tuple[dict[str, Any], str | None]:
    """(HostConfig settings, Docker ``User``) from the pod's and container's securityContext.

    - ``runAsUser``/``runAsGroup`` → ``User`` ``"uid:gid"`` (a group alone goes with the image's
      user, ``image_user``, or root); ``supplementalGroups`` and ``fsGroup`` → ``GroupAdd``;
    - ``privileged`` → ``Privileged``; ``capabilities.add``/``drop`` → ``CapAdd``/``CapDrop``
      (Kubernetes' names, ``ALL`` included); ``readOnlyRootFilesystem`` → ``ReadonlyRootfs``;
    - ``allowPrivilegeEscalation: false`` → ``SecurityOpt`` ``no-new-privileges``;
    - ``seccompProfile``: ``Unconfined`` → ``seccomp=unconfined``; ``Localhost`` → the JSON of
      ``seccomp_dir/<localhostProfile>`` (ContainerConfigError when it cannot be read);
      ``RuntimeDefault`` and unset → Docker's default profile (as a kubelet with
      ``--seccomp-default``);
    - ``procMount: Unmasked`` → ``systempaths=unconfined``.
    """
    sc = effective_security_context(container, pod_spec)
    psc = pod_spec.get("securityContext") or {}
    host: dict[str, Any] = {}
    if sc.get("privileged"):
        host["privileged"] = True
    caps = sc.get("capabilities") or {}
    if caps.get("add"):
        host["cap_add"] = list(caps["add"])
    if caps.get("drop"):
        host["cap_drop"] = list(caps["drop"])
    if sc.get("readOnlyRootFilesystem"):
        host["read_only"] = True
    groups = [str(g) for g in psc.get("supplementalGroups") or []]
    if psc.get("fsGroup") is not None and str(psc["fsGroup"]) not in groups:
        groups.append(str(psc["fsGroup"]))
    if groups:
        host["group_add"] = groups
    options: list[str] = []
    if sc.get("allowPrivilegeEscalation") is False:
        options.append("no-new-privileges")
    profile = sc.get("seccompProfile") or {}
    if profile.get("type") == "Unconfined":
        options.append("seccomp=unconfined")
    elif profile.get("type") == "Localhost":
        name = str(profile.get("localhostProfile") or "")
        path = (seccomp_dir or Path("seccomp")) / name
        try:
            options.append("seccomp=" + path.read_text())
        except OSError as exc:
            raise ContainerConfigError(f'failed to generate seccomp security options for container: cannot load '
                                       f'seccomp profile "{path}": {exc.strerror or exc}') from None
    if sc.get("procMount") == "Unmasked":
        options.append("systempaths=unconfined")
    if options:
        host["security_opt"] = options
    uid = sc.get("runAsUser")
    gid = sc.get("runAsGroup")
    user = None
    if uid is not None:
        user = f"{uid}:{gid}" if gid is not None else str(uid)
    elif gid is not None:
        user = f"{(image_user or '').split(':', 1)[0] or '0'}:{gid}"
    return host, user


def command_and_args(container: dict[str, Any], env: dict[str, str]) -> tuple[list[str] | None, list[str] | None]:
    """(entrypoint, cmd) with ``$(VAR)`` expanded; None leaves the image's value."""
    command = container.get("command")
    args = container.get("args")
    entrypoint = [expand(str(a), env) for a in command] if command else None
    cmd = [expand(str(a), env) for a in args] if args else None
    return entrypoint, cmd


def port_bindings(spec: dict[str, Any]) -> tuple[list[Any], dict[Any, Any]]:
    """(exposed ports, bindings) for every ``hostPort`` of the pod's containers.

    Ports belong to the pod's network namespace, so they are published on the pause container.
    """
    exposed: list[Any] = []
    bindings: dict[Any, Any] = {}
    for c in spec.get("containers") or []:
        for p in c.get("ports") or []:
            host_port = p.get("hostPort")
            if not host_port:
                continue
            proto = (p.get("protocol") or "TCP").lower()
            key = f"{p['containerPort']}/{proto}"
            exposed.append((int(p["containerPort"]), proto))
            bindings[key] = (p.get("hostIP") or "0.0.0.0", int(host_port))
    return exposed, bindings


def resolve_port(container: dict[str, Any], port: Any) -> int | None:
    """A probe's ``port``: a number, or the name of one of the container's ports."""
    if isinstance(port, int):
        return port
    text = str(port)
    if text.isdigit():
        return int(text)
    for p in container.get("ports") or []:
        if p.get("name") == text:
            return int(p["containerPort"])
    return None
