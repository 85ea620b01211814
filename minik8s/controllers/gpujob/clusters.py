"""The SlurmCluster controller: a periodic check of every Slurm site, written to its status.

Every ``check_period`` seconds (and whenever the SlurmCluster changes) the controller logs in
(the key from the Secret its ``secretRef`` names, the host key checked against the
Secret's ``known_hosts``), runs ``sinfo --version``, ``sinfo`` and ``scontrol show config``
and writes ``status``: the ``Reachable`` condition (True, or False with the reason —
``Unreachable``, ``AuthenticationFailed``, ``HostKeyNotVerified``, ``InvalidCredentials`` —
and the message), ``slurmVersion``, ``partitions`` with their GPU counts, ``accounting`` and
``lastCheckTime``.  A failed check is retried with back-off (``backoff`` doubling up to the
check period).  When ``Reachable`` changes, the GPUJobs of the cluster are queued again
(``on_reachable``), so a job waiting for its site goes on as soon as the site is back.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable

from minik8s.api import errors
from minik8s.api.base import Obj, now_rfc3339
from minik8s.api.gpujobs import API_VERSION, KNOWN_HOSTS, REACHABLE, SSH_AUTH_SECRET_TYPE, SSH_PRIVATE_KEY
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.rest import Client
from minik8s.controllers.base import Controller
from minik8s.controllers.gpujob.site import SiteConfig, SlurmSites
from minik8s.controllers.gpujob.ssh import BAD_CREDENTIALS, Credentials, SiteError


def set_condition(conditions: list[Obj] | None, type_: str, status: str, reason: str, message: str,
                  now: str) -> list[Obj]:
    """``conditions`` with ``type_`` set (``lastTransitionTime`` kept unless the status changed;
    ``lastProbeTime`` always ``now``)."""
    result = [dict(c) for c in conditions or [] if c.get("type") != type_]
    old = next((c for c in conditions or [] if c.get("type") == type_), None)
    transition = old.get("lastTransitionTime") if old and old.get("status") == status else now
    result.append({"type": type_, "status": status, "reason": reason, "message": message,
                   "lastTransitionTime": transition or now, "lastProbeTime": now})
    return result


def condition_status(obj: Obj | None, type_: str) -> str | None:
    for cond in ((obj or {}).get("status") or {}).get("conditions") or []:
        if cond.get("type") == type_:
            return str(cond.get("status"))
    return None


async def site_config(client: Client, cluster: Obj) -> SiteConfig:
    """Login settings of a SlurmCluster (wire form) with its Secret's key and known_hosts.

    Raises SiteError(InvalidCredentials) when the Secret is missing, of another type or
    lacks ``ssh-privatekey`` / ``known_hosts``.
    """
    spec = cluster.get("spec") or {}
    ref = spec.get("secretRef") or {}
    name, namespace = ref.get("name") or "", ref.get("namespace") or "default"
    try:
        secret = await client.get(client.kind("v1", "Secret"), name, namespace)
    except errors.NotFound as exc:
        raise SiteError(BAD_CREDENTIALS, f'Secret "{namespace}/{name}" not found: {exc.message}') from exc
    if secret.get("type") not in (SSH_AUTH_SECRET_TYPE, None, "Opaque"):
        raise SiteError(BAD_CREDENTIALS, f'Secret "{namespace}/{name}" is of type {secret.get("type")}, '
                                         f'not {SSH_AUTH_SECRET_TYPE}')
    data = secret.get("data") or {}
    values: dict[str, str] = {}
    for key in (SSH_PRIVATE_KEY, KNOWN_HOSTS):
        if not data.get(key):
            raise SiteError(BAD_CREDENTIALS, f'Secret "{namespace}/{name}" has no "{key}" key')
        try:
            values[key] = base64.b64decode(data[key], validate=True).decode()
        except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
            raise SiteError(BAD_CREDENTIALS, f'Secret "{namespace}/{name}" key "{key}" is not base64 text') from exc
    meta = secret.get("metadata") or {}
    return SiteConfig(host=str(spec.get("host") or ""), port=int(spec.get("port") or 22),
                      user=str(spec.get("user") or ""), work_dir=str(spec.get("workDir") or ""),
                      credentials=Credentials(values[SSH_PRIVATE_KEY], values[KNOWN_HOSTS]),
                      secret_version=str(meta.get("uid") or "") + ":" + str(meta.get("resourceVersion") or ""))


class SlurmClusterController(Controller):
    """Checks SlurmClusters (see the module doc). ``sites`` is shared with the GPUJob controller."""

    name = "slurmcluster-controller"

    def __init__(self, client: Client, factory: SharedInformerFactory, sites: SlurmSites,
                 check_period: float = 30.0, backoff: float = 2.0,
                 on_reachable: Callable[[str], None] | None = None) -> None:
        super().__init__(client, factory)
        self.sites = sites
        self.check_period = check_period
        self.backoff = backoff
        self.on_reachable = on_reachable
        self.rt = client.kind(API_VERSION, "SlurmCluster")
        self.informer = factory.informer(self.rt)
        self.informer.add_handler(self._on_add, self._on_update, self._on_delete)
        self._failures: dict[str, int] = {}

    def _on_add(self, obj: Obj) -> None:
        self.enqueue(str((obj.get("metadata") or {}).get("name")))

    def _on_update(self, old: Obj, new: Obj) -> None:
        if old.get("spec") != new.get("spec"):
            self._on_add(new)
        if condition_status(old, REACHABLE) != condition_status(new, REACHABLE) and self.on_reachable:
            self.on_reachable(str((new.get("metadata") or {}).get("name")))

    def _on_delete(self, obj: Obj) -> None:
        name = str((obj.get("metadata") or {}).get("name"))
        self.enqueue(name)

    async def sync(self, key: str) -> None:
        cluster = self.informer.get(key)
        if cluster is None or (cluster.get("metadata") or {}).get("deletionTimestamp"):
            await self.sites.drop(key)
            self._failures.pop(key, None)
            return
        now = now_rfc3339()
        status = dict(cluster.get("status") or {})
        try:
            config = await site_config(self.client, cluster)
            site = await self.sites.get(key, config, force=True)
            info = await site.check()
        except SiteError as exc:
            if exc.reason != BAD_CREDENTIALS:
                await self.sites.drop(key)
            n = self._failures.get(key, 0)
            self._failures[key] = n + 1
            was = condition_status(cluster, REACHABLE)
            patch: Obj = {"conditions": set_condition(status.get("conditions"), REACHABLE, "False", exc.reason,
                                                 exc.message, now), "lastCheckTime": now}
            await self._patch_status(key, patch)
            if was != "False":
                self.event(cluster, "Warning", exc.reason, exc.message)
            self.enqueue_after(key, min(self.backoff * 2 ** n, self.check_period))
            return
        self._failures.pop(key, None)
        was = condition_status(cluster, REACHABLE)
        message = f"SSH login as {config.user} and sinfo work (Slurm {info.version})"
        patch = {"conditions": set_condition(status.get("conditions"), REACHABLE, "True", "SlurmResponding",
                                             message, now),
                 "slurmVersion": info.version, "partitions": info.partitions, "accounting": info.accounting,
                 "lastCheckTime": now}
        await self._patch_status(key, patch)
        if was != "True":
            self.event(cluster, "Normal", "Reachable", message)
        self.enqueue_after(key, self.check_period)

    async def _patch_status(self, name: str, status: Obj) -> None:
        try:
            await self.client.patch(self.rt, name, {"status": status}, subresource="status")
        except errors.NotFound:
            pass
