"""The service account controller: a ``default`` ServiceAccount in every namespace.

Kubernetes' ``pkg/controller/serviceaccount`` (``ServiceAccountsController``): keys are namespace
names.  A namespace is queued when it is added or changed and when one of its ServiceAccounts is
deleted; its sync creates each wanted ServiceAccount (``default``) the ServiceAccount cache does not
hold.  A namespace that is terminating gets nothing (its contents are being deleted), and an
AlreadyExists answer (the cache was behind) is success, so a restart or a replayed event never
makes a second one.  Tokens and their Secrets are not issued (there is no token controller yet).
"""

from __future__ import annotations

from minik8s.api import errors
from minik8s.api.base import Obj, object_key
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.rest import Client
from minik8s.controllers.base import Controller
from minik8s.controllers.ownerrefs import meta_of

#: The ServiceAccounts every namespace gets (kube-controller-manager's default: ``default``).
SERVICE_ACCOUNTS = ("default",)


class ServiceAccountsController(Controller):
    """Creates the :data:`SERVICE_ACCOUNTS` of every active namespace (keys: namespace names).

    A manager limited to one namespace (``factory.namespace``) looks after that namespace only."""

    name = "serviceaccount-controller"

    def __init__(self, client: Client, factory: SharedInformerFactory, recorder: EventRecorder | None = None,
                 names: tuple[str, ...] = SERVICE_ACCOUNTS) -> None:
        super().__init__(client, factory, recorder)
        self.names = names
        self.namespace_rt = client.kind("v1", "Namespace")
        self.sa_rt = client.kind("v1", "ServiceAccount")
        self.namespaces = factory.informer(self.namespace_rt)
        self.accounts = factory.informer(self.sa_rt)
        self.namespaces.add_handler(self._on_namespace, lambda _old, cur: self._on_namespace(cur), None)
        self.accounts.add_handler(None, None, self._on_account_deleted)

    def _on_namespace(self, ns: Obj) -> None:
        name = str(meta_of(ns).get("name") or "")
        if self.factory.namespace in (None, name):
            self.enqueue(name)

    def _on_account_deleted(self, sa: Obj) -> None:
        meta = meta_of(sa)
        if meta.get("name") in self.names:
            self.enqueue(str(meta.get("namespace") or ""))

    async def sync(self, key: str) -> None:
        """Create the missing ServiceAccounts of namespace ``key``; raise to be retried."""
        ns = self.namespaces.get(key)
        if ns is None or meta_of(ns).get("deletionTimestamp") or (ns.get("status") or {}).get("phase") == "Terminating":
            return
        for name in self.names:
            if self.accounts.get(f"{key}/{name}") is not None:
                continue
            body = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": key}}
            try:
                created = await self.client.create(self.sa_rt, body, namespace=key)
            except errors.AlreadyExists:
                continue  # the cache was behind: it exists
            except errors.Forbidden:
                return  # the namespace began terminating meanwhile
            except errors.NotFound:
                return  # the namespace is gone
            self.log.info("serviceaccount %s created", object_key(created))
