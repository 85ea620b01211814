"""Mutating admission: the ``ServiceAccount`` plugin (``--enable-admission-plugins=ServiceAccount``).

Kubernetes' ``plugin/pkg/admission/serviceaccount`` for Pods being created:

- ``spec.serviceAccountName`` defaults to ``default``;
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
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj

SERVICE_ACCOUNT = "ServiceAccount"
#: The admission plugins this apiserver knows (``--enable-admission-plugins``).
KNOWN_PLUGINS = (SERVICE_ACCOUNT,)
MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
ROOT_CA_CONFIG_MAP = "kube-root-ca.crt"
#: Kubernetes' lifetime of the default token: an hour and a bit (3607 s), renewed by the kubelet.
TOKEN_SECONDS = 3607
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # Kubernetes' utilrand alphabet (no vowels, no look-alikes)


def parse_plugins(text: str | None) -> frozenset[str]:
    """``--enable-admission-plugins`` (comma-separated); ValueError naming an unknown one."""
    names = frozenset(p.strip() for p in (text or "").split(",") if p.strip())
    unknown = sorted(names - set(KNOWN_PLUGINS))
    if unknown:
        raise ValueError(f"--enable-admission-plugins: unknown plugin(s) {', '.join(unknown)} "
                         f"(known: {', '.join(KNOWN_PLUGINS)})")
    return names


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


async def admit_pod(api: Any, pod: Obj, plugins: frozenset[str]) -> None:
    """Run the enabled mutating plugins on a Pod being created (``api``: the ResourceAPI)."""
    if SERVICE_ACCOUNT not in plugins:
        return
    meta = pod.get("metadata") or {}
    name = (pod.get("spec") or {}).get("serviceAccountName") or "default"
    try:
        account = await api.get(api.registry.by_kind("v1", "ServiceAccount"), meta.get("namespace"), name)
    except errors.NotFound:
        account = None
    mount_service_account_token(pod, account)


__all__ = ["KNOWN_PLUGINS", "admit_pod", "mount_service_account_token", "parse_plugins"]
