"""Pod-level fields of a PodSpec validated as Kubernetes 1.32's ``ValidatePodSpec`` does, beyond
containers, volumes, security context and scheduling constraints (checked in :mod:`.pod`,
:mod:`.podvolumes`, :mod:`.podsources` and :mod:`.podscheduling`):

* ``os.name`` required, ``linux`` or ``windows`` (``validateOS``);
* ``dnsPolicy`` one of ``ClusterFirstWithHostNet``, ``ClusterFirst``, ``Default``, ``None``;
  ``dnsConfig`` (``validatePodDNSConfig``): with ``dnsPolicy: None`` a ``dnsConfig`` with at least
  one nameserver; at most 3 nameservers, each an IP address; at most 32 search domains of at most
  2048 characters in all (spaces between them counted), each a DNS subdomain (a trailing dot is
  allowed); each option with a name;
* ``hostAliases[i].ip`` an IP address, ``hostnames[j]`` DNS subdomains (``ValidateHostAliases``);
* ``readinessGates[i].conditionType`` a qualified name;
* ``hostname``, ``subdomain``: DNS labels; ``serviceAccountName``, ``nodeName``,
  ``runtimeClassName``: DNS subdomains; ``activeDeadlineSeconds`` in 1..2^31-1;
* ``shareProcessNamespace`` and ``hostPID`` not both true; no ``net.*`` sysctl with ``hostNetwork``,
  no IPC sysctl with ``hostIPC``;
* ``affinity.nodeAffinity`` (``validateNodeAffinity``): at least one required node selector term,
  each requirement's operator and values consistent and key a label name, field selectors on
  ``metadata.name`` only, preferred weights in 1..100.

Causes are ``(field path, bad value or None, message)``; ``path`` is the spec's (``spec`` or a
template's ``spec.template.spec``).
"""

from __future__ import annotations

import json
from typing import Any

from minik8s.api import validation as v
from minik8s.api.base import Obj
from minik8s.api.discovery import parse_ip_sloppy
from minik8s.apiserver.strategies.base import REQUIRED, Cause, unsupported

OS_NAMES = ("linux", "windows")
DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
#: Kubernetes' ``MaxDNSNameservers``, ``MaxDNSSearchPaths``, ``MaxDNSSearchListChars``
MAX_DNS_NAMESERVERS, MAX_DNS_SEARCH_PATHS, MAX_DNS_SEARCH_LIST_CHARS = 3, 32, 2048
MAX_INT32 = 2147483647
IP_MESSAGE = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
REQUIRED_TERMS = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED_TERMS = "preferredDuringSchedulingIgnoredDuringExecution"


def _invalid_list(path: str, values: list[str], message: str) -> Cause:
    """A ``field.Invalid`` of a string list, whose value Kubernetes prints as Go's ``%#v``:
    ``Invalid value: []string{"a", "b"}: message``."""
    shown = "[]string{" + ", ".join(json.dumps(x) for x in values) + "}"
    return (path, None, f"Invalid value: {shown}: {message}")


def ip_errors(value: Any, path: str) -> list[Cause]:
    """``validation.IsValidIP`` (1.32): an IPv4 (leading zeros allowed, as ``ParseIPSloppy``) or IPv6 address."""
    if isinstance(value, str) and parse_ip_sloppy(value) is not None:
        return []
    return [(path, value, IP_MESSAGE)]


def os_errors(os_spec: Any, path: str) -> list[Cause]:
    """``validateOS``: a name, ``linux`` or ``windows`` (``path`` is ``<spec>.os``)."""
    if not isinstance(os_spec, dict):
        return []
    name = os_spec.get("name")
    if not name:
        return [(f"{path}.name", None, f"{REQUIRED}: cannot be empty")]
    if name not in OS_NAMES:
        return [(path, None, unsupported(name, OS_NAMES))]
    return []


def dns_errors(spec: Obj, path: str) -> list[Cause]:
    """``validateDNSPolicy`` and ``validatePodDNSConfig`` (module docstring)."""
    policy = spec.get("dnsPolicy")
    if policy == "":
        return [(f"{path}.dnsPolicy", None, REQUIRED)]
    if policy is not None and policy not in DNS_POLICIES:
        return [(f"{path}.dnsPolicy", None, unsupported(policy, DNS_POLICIES))]
    config, cp = spec.get("dnsConfig"), f"{path}.dnsConfig"
    if policy == "None":
        if not isinstance(config, dict):
            return [(cp, None, f"{REQUIRED}: must provide `dnsConfig` when `dnsPolicy` is None")]
        if not config.get("nameservers"):
            return [(f"{cp}.nameservers", None,
                     f"{REQUIRED}: must provide at least one DNS nameserver when `dnsPolicy` is None")]
    if not isinstance(config, dict):
        return []
    causes: list[Cause] = []
    servers = [str(s) for s in config.get("nameservers") or []]
    if len(servers) > MAX_DNS_NAMESERVERS:
        causes.append(_invalid_list(f"{cp}.nameservers", servers,
                                    f"must not have more than {MAX_DNS_NAMESERVERS} nameservers"))
    for i, server in enumerate(servers):
        causes += ip_errors(server, f"{cp}.nameservers[{i}]")
    searches = [str(s) for s in config.get("searches") or []]
    if len(searches) > MAX_DNS_SEARCH_PATHS:
        causes.append(_invalid_list(f"{cp}.searches", searches,
                                    f"must not have more than {MAX_DNS_SEARCH_PATHS} search paths"))
    if len(" ".join(searches)) > MAX_DNS_SEARCH_LIST_CHARS:
        causes.append(_invalid_list(f"{cp}.searches", searches, f"must not have more than "
                                    f"{MAX_DNS_SEARCH_LIST_CHARS} characters (including spaces) in the search list"))
    for i, search in enumerate(searches):
        trimmed = search[:-1] if search.endswith(".") else search
        causes += [(f"{cp}.searches[{i}]", trimmed, m) for m in v.dns1123_subdomain_errors(trimmed)]
    for i, option in enumerate(config.get("options") or []):
        if not (option or {}).get("name"):
            causes.append((f"{cp}.options[{i}]", None, f"{REQUIRED}: must not be empty"))
    return causes


def host_alias_errors(aliases: Any, path: str) -> list[Cause]:
    """``ValidateHostAliases``: each ``ip`` an IP address, each hostname a DNS subdomain."""
    causes: list[Cause] = []
    for i, alias in enumerate(aliases or []):
        if not isinstance(alias, dict):
            continue
        causes += ip_errors(alias.get("ip") or "", f"{path}[{i}].ip")
        for j, host in enumerate(alias.get("hostnames") or []):
            causes += [(f"{path}[{i}].hostnames[{j}]", host, m) for m in v.dns1123_subdomain_errors(str(host))]
    return causes


def name_field_errors(spec: Obj, path: str) -> list[Cause]:
    """The pod's names and numbers: readiness gates, hostname, subdomain, service account, node,
    RuntimeClass, ``activeDeadlineSeconds``, and ``shareProcessNamespace`` without ``hostPID``."""
    causes: list[Cause] = []
    for i, gate in enumerate(spec.get("readinessGates") or []):
        ctype = str((gate or {}).get("conditionType") or "")
        causes += [(f"{path}.readinessGates[{i}].conditionType", ctype, m) for m in v.qualified_name_errors(ctype)]
    for fld, check in (("hostname", v.dns1123_label_errors), ("subdomain", v.dns1123_label_errors),
                       ("serviceAccountName", v.dns1123_subdomain_errors), ("nodeName", v.dns1123_subdomain_errors),
                       ("runtimeClassName", v.dns1123_subdomain_errors)):
        value = spec.get(fld)
        if value:
            causes += [(f"{path}.{fld}", value, m) for m in check(str(value))]
    deadline = spec.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and not 1 <= deadline <= MAX_INT32:
        causes.append((f"{path}.activeDeadlineSeconds", deadline, f"must be between 1 and {MAX_INT32}, inclusive"))
    if spec.get("shareProcessNamespace") and spec.get("hostPID"):
        causes.append((f"{path}.shareProcessNamespace", True,
                       "ShareProcessNamespace and HostPID cannot both be enabled"))
    return causes


#: the IPC namespace's sysctls (Kubernetes' ``utilsysctl.GetNamespace``; plus ``fs.mqueue.*``)
IPC_SYSCTLS = ("kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced", "kernel.msgmax",
               "kernel.msgmnb", "kernel.msgmni", "kernel.sem")


def host_sysctl_errors(spec: Obj, path: str) -> list[Cause]:
    """``ValidateHostSysctl``: no network sysctl (``net.*``) with ``hostNetwork``, no IPC one with
    ``hostIPC`` (a ``/``-separated name read as dotted)."""
    causes: list[Cause] = []
    psc = spec.get("securityContext") if isinstance(spec.get("securityContext"), dict) else {}
    for i, sysctl in enumerate((psc or {}).get("sysctls") or []):
        name = str((sysctl or {}).get("name") or "") if isinstance(sysctl, dict) else ""
        dotted = name.replace("/", ".")
        sp = f"{path}.securityContext.sysctls[{i}].name"
        if spec.get("hostNetwork") and dotted.startswith("net."):
            causes.append((sp, name, "may not be specified when 'hostNetwork' is true"))
        elif spec.get("hostIPC") and (dotted in IPC_SYSCTLS or dotted.startswith("fs.mqueue.")):
            causes.append((sp, name, "may not be specified when 'hostIPC' is true"))
    return causes


def _requirement_errors(req: Obj, path: str) -> list[Cause]:
    """``ValidateNodeSelectorRequirement``."""
    causes: list[Cause] = []
    op, values = req.get("operator"), req.get("values") or []
    if op in ("In", "NotIn"):
        if not values:
            causes.append((f"{path}.values", None, f"{REQUIRED}: must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            causes.append((f"{path}.values", None,
                           "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            causes.append((f"{path}.values", None,
                           f"{REQUIRED}: must be specified single value when `operator` is 'Lt' or 'Gt'"))
    else:
        causes.append((f"{path}.operator", op, "not a valid selector operator"))
    key = str(req.get("key") or "")
    return causes + [(f"{path}.key", key, m) for m in v.qualified_name_errors(key)]


def _field_requirement_errors(req: Obj, path: str) -> list[Cause]:
    """``ValidateNodeFieldSelectorRequirement``: ``metadata.name`` In/NotIn one value."""
    causes: list[Cause] = []
    op = req.get("operator")
    if op in ("In", "NotIn"):
        if len(req.get("values") or []) != 1:
            causes.append((f"{path}.values", None, f"{REQUIRED}: must be only one value when `operator` is "
                           "'In' or 'NotIn' for node field selector"))
    else:
        causes.append((f"{path}.operator", op, "not a valid selector operator"))
    if req.get("key") != "metadata.name":
        causes.append((f"{path}.key", req.get("key"), "not a valid field selector key"))
    return causes


def _term_errors(term: Any, path: str) -> list[Cause]:
    """``ValidateNodeSelectorTerm``."""
    causes: list[Cause] = []
    term = term if isinstance(term, dict) else {}
    for j, req in enumerate(term.get("matchExpressions") or []):
        causes += _requirement_errors(req or {}, f"{path}.matchExpressions[{j}]")
    for j, req in enumerate(term.get("matchFields") or []):
        causes += _field_requirement_errors(req or {}, f"{path}.matchFields[{j}]")
    return causes


def node_affinity_errors(affinity: Any, path: str) -> list[Cause]:
    """``validateNodeAffinity`` of ``<spec>.affinity`` (``path``)."""
    node = (affinity or {}).get("nodeAffinity") if isinstance(affinity, dict) else None
    if not isinstance(node, dict):
        return []
    causes: list[Cause] = []
    np = f"{path}.nodeAffinity"
    required = node.get(REQUIRED_TERMS)
    if isinstance(required, dict):
        terms = required.get("nodeSelectorTerms") or []
        tp = f"{np}.{REQUIRED_TERMS}.nodeSelectorTerms"
        if not terms:
            causes.append((tp, None, f"{REQUIRED}: must have at least one node selector term"))
        for i, term in enumerate(terms):
            causes += _term_errors(term, f"{tp}[{i}]")
    for i, weighted in enumerate(node.get(PREFERRED_TERMS) or []):
        weighted = weighted if isinstance(weighted, dict) else {}
        wp = f"{np}.{PREFERRED_TERMS}[{i}]"
        weight = weighted.get("weight")
        if not isinstance(weight, int) or not 1 <= weight <= 100:
            causes.append((f"{wp}.weight", weight, "must be in the range 1-100"))
        causes += _term_errors(weighted.get("preference"), f"{wp}.preference")
    return causes


def pod_field_errors(spec: Obj, path: str) -> list[Cause]:
    """Every check of this module for one PodSpec."""
    return (os_errors(spec.get("os"), f"{path}.os") + dns_errors(spec, path)
            + host_alias_errors(spec.get("hostAliases"), f"{path}.hostAliases")
            + name_field_errors(spec, path) + node_affinity_errors(spec.get("affinity"), f"{path}.affinity")
            + host_sysctl_errors(spec, path))
