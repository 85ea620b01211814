"""Mutating admission of Pods: the ``ServiceAccount``, ``DefaultTolerationSeconds``, ``Priority`` and
``RuntimeClass`` (:mod:`minik8s.apiserver.runtimeclass`) plugins;
the names of the other plugins (``LimitRanger``: :mod:`minik8s.apiserver.limitranger`,
``ResourceQuota``: :mod:`minik8s.apiserver.resourcequota`), which
:class:`~minik8s.apiserver.resources.ResourceAPI` runs.

Which plugins run is kube-apiserver's rule: those on by default (here ``DefaultTolerationSeconds``,
:mod:`minik8s.apiserver.defaulttolerationseconds`, ``Priority``, :mod:`minik8s.apiserver.priority`,
which also checks PriorityClasses, ``RuntimeClass``, ``LimitRanger`` and ``ResourceQuota``), plus
``--enable-admission-plugins``, minus ``--disable-admission-plugins``.  ``ServiceAccount`` is on
by default in Kubernetes but must be named here (a cluster without service-account signing keys
has no tokens to mount); ``minik8s up`` and the Ansible role enable it.

``ServiceAccount``: Kubernetes' ``plugin/pkg/admission/serviceaccount`` for Pods being created:

- ``spec.serviceAccountName`` defaults to ``default``;
- a pod without ``imagePullSecrets`` gets its ServiceAccount's;
- unless the pod or its ServiceAccount says ``automountServiceAccountToken: false``, or a container
  already mounts something at ``/var/run/secrets/kubernetes.io/serviceaccount``, the pod gets the
  projected volume ``kube-api-access-<5 random characters>`` — a service-account token for the
  apiserver's audiences (``expirationSeconds`` 3607, ``token``), the cluster CA (ConfigMap
  ``kube-root-ca.crt``, key ``ca.crt``) and the namespace (downward API) — mounted read-only at that
  path in every container and init container: what ``load_incluster_config()`` reads.

Kubernetes refuses a pod whose ServiceAccount does not exist yet; here the pod is admitted and the
kubelet's token request waits for the account (the ``default`` one appears within a second of its
namespace), so a pod created right after its namespace does not fail.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.apiserver.defaulttolerationseconds import PLUGIN_NAME as DEFAULT_TOLERATION_SECONDS
from minik8s.apiserver.defaulttolerationseconds import DefaultTolerationSeconds
from minik8s.apiserver.limitranger import PLUGIN_NAME as LIMIT_RANGER
from minik8s.apiserver.priority import PLUGIN_NAME as PRIORITY
from minik8s.apiserver.priority import admit_pod as admit_pod_priority
from minik8s.apiserver.resourcequota import PLUGIN_NAME as RESOURCE_QUOTA
from minik8s.apiserver.runtimeclass import PLUGIN_NAME as RUNTIME_CLASS
from minik8s.apiserver.runtimeclass import admit_pod as admit_pod_runtime_class

SERVICE_ACCOUNT = "ServiceAccount"
#: The admission plugins this apiserver knows (``--enable-admission-plugins``).
KNOWN_PLUGINS = (SERVICE_ACCOUNT, DEFAULT_TOLERATION_SECONDS, PRIORITY, RUNTIME_CLASS, LIMIT_RANGER, RESOURCE_QUOTA)
#: The plugins that run unless ``--disable-admission-plugins`` names them (kube-apiserver's
#: default-on set, of the plugins known here).
DEFAULT_PLUGINS = frozenset({DEFAULT_TOLERATION_SECONDS, PRIORITY, RUNTIME_CLASS, LIMIT_RANGER, RESOURCE_QUOTA})
MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
ROOT_CA_CONFIG_MAP = "kube-root-ca.crt"
#: Kubernetes' lifetime of the default token: an hour and a bit (3607 s), renewed by the kubelet.
TOKEN_SECONDS = 3607
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # Kubernetes' utilrand alphabet (no vowels, no look-alikes)


def parse_plugins(enable: str | None, disable: str | None = None) -> frozenset[str]:
    """The plugins that run: :data:`DEFAULT_PLUGINS`, plus ``--enable-admission-plugins``, minus
    ``--disable-admission-plugins`` (both comma-separated).  ValueError naming an unknown plugin, or
    one both enabled and disabled (kube-apiserver refuses that too)."""
    lists: dict[str, frozenset[str]] = {}
    for flag, text in (("--enable-admission-plugins", enable), ("--disable-admission-plugins", disable)):
        names = frozenset(p.strip() for p in (text or "").split(",") if p.strip())
        unknown = sorted(names - set(KNOWN_PLUGINS))
        if unknown:
            raise ValueError(f"{flag}: unknown plugin(s) {', '.join(unknown)} (known: {', '.join(KNOWN_PLUGINS)})")
        lists[flag] = names
    enabled, disabled = lists["--enable-admission-plugins"], lists["--disable-admission-plugins"]
    both = sorted(enabled & disabled)
    if both:
        raise ValueError(f"{', '.join(both)} cannot be both enabled and disabled")
    return (DEFAULT_PLUGINS | enabled) - disabled


@dataclass(frozen=True)
class AdmissionConfig:
    """The mutating admission of this apiserver: the ``plugins`` that run (names from
    :data:`KNOWN_PLUGINS`) and the settings of ``DefaultTolerationSeconds``."""

    plugins: frozenset[str] = DEFAULT_PLUGINS
    default_tolerations: DefaultTolerationSeconds = field(default_factory=DefaultTolerationSeconds)


def api_access_volume(name: str) -> Obj:
    """The ``kube-api-access-*`` projected volume."""
    return {"name": name, "projected": {"defaultMode": 0o644, "sources": [
        {"serviceAccountToken": {"expirationSeconds": TOKEN_SECONDS, "path": "token"}},
        {"configMap": {"name": ROOT_CA_CONFIG_MAP, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}}


def mount_service_account_token(pod: Obj, account: Obj | None) -> None:
    """Apply the plugin to ``pod`` (changed in place); ``account`` is its ServiceAccount, None when
    it does not exist (yet)."""
    spec = pod.setdefault("spec", {})
    if not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = "default"
    if not spec.get("imagePullSecrets") and account is not None and account.get("imagePullSecrets"):
        spec["imagePullSecrets"] = [{"name": ref.get("name")} for ref in account["imagePullSecrets"]]
    if spec.get("automountServiceAccountToken") is False:
        return
    if spec.get("automountServiceAccountToken") is None and account is not None \
            and account.get("automountServiceAccountToken") is False:
        return
    containers = [c for kind in ("initContainers", "containers") for c in spec.get(kind) or []]
    if any(m.get("mountPath") == MOUNT_PATH for c in containers for m in c.get("volumeMounts") or []):
        return
    volumes = spec.setdefault("volumes", [])
    taken = {v.get("name") for v in volumes}
    while True:
        name = "kube-api-access-" + "".join(secrets.choice(_ALPHABET) for _ in range(5))
        if name not in taken:
            break
    volumes.append(api_access_volume(name))
    for container in containers:
        container.setdefault("volumeMounts", []).append({"name": name, "mountPath": MOUNT_PATH, "readOnly": True})


async def admit_pod(api: Any, pod: Obj, config: AdmissionConfig, old: Obj | None = None) -> None:
    """Run the enabled mutating plugins on a Pod being created (``old`` None) or updated (``old``:
    the stored pod; not for subresources); ``pod`` is changed in place, ``api`` is the ResourceAPI.
    ``ServiceAccount`` and ``RuntimeClass`` run on create only, ``DefaultTolerationSeconds`` and ``Priority``
    on both (as in Kubernetes).  Raises ``errors.Forbidden`` when ``Priority`` or ``RuntimeClass`` refuses
    the pod."""
    if DEFAULT_TOLERATION_SECONDS in config.plugins:
        config.default_tolerations.admit(pod)
    if PRIORITY in config.plugins:
        await admit_pod_priority(api, pod, old)
    if RUNTIME_CLASS in config.plugins and old is None:
        await admit_pod_runtime_class(api, pod)
    if SERVICE_ACCOUNT not in config.plugins or old is not None:
        return
    meta = pod.get("metadata") or {}
    name = (pod.get("spec") or {}).get("serviceAccountName") or "default"
    try:
        account = await api.get(api.registry.by_kind("v1", "ServiceAccount"), meta.get("namespace"), name)
    except errors.NotFound:
        account = None
    mount_service_account_token(pod, account)


__all__ = ["DEFAULT_PLUGINS", "KNOWN_PLUGINS", "LIMIT_RANGER", "PRIORITY", "RESOURCE_QUOTA", "AdmissionConfig",
           "admit_pod", "mount_service_account_token", "parse_plugins"]
