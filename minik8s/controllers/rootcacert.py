"""The root CA publisher: a ``kube-root-ca.crt`` ConfigMap in every namespace.

Kubernetes' ``pkg/controller/certificates/rootcacertpublisher``: the controller-manager's
``--root-ca-file`` (the cluster CA that signed the apiserver's serving certificate) is published
as ConfigMap ``kube-root-ca.crt`` (key ``ca.crt``) in every active namespace, so that pods verify
the apiserver (the ``kube-api-access-*`` volume projects it as ``ca.crt``).  Keys are namespace
names; a namespace is queued when it is added or changed and when its ConfigMap is changed or
deleted, and its sync puts the ConfigMap back as it should be.  Without ``--root-ca-file`` the
controller does nothing.
"""

from __future__ import annotations

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.client.events import EventRecorder
from minik8s.client.factory import SharedInformerFactory
from minik8s.client.rest import Client
from minik8s.controllers.base import Controller
from minik8s.controllers.ownerrefs import meta_of

CONFIG_MAP = "kube-root-ca.crt"
#: Kubernetes' annotation on the ConfigMap: what it holds.
DESCRIPTION = {"kubernetes.io/description": "Contains a CA bundle that can be used to verify the kube-apiserver "
                                            "when using internal endpoints such as the internal service IP or "
                                            "kubernetes.default.svc. No other usage is guaranteed across "
                                            "distributions of Kubernetes clusters."}


class RootCACertPublisher(Controller):
    """Keeps ``kube-root-ca.crt`` = ``{"ca.crt": ca_pem}`` in every active namespace."""

    name = "root-ca-cert-publisher"

    def __init__(self, client: Client, factory: SharedInformerFactory, ca_pem: str | None,
                 recorder: EventRecorder | None = None) -> None:
        super().__init__(client, factory, recorder)
        self.ca_pem = ca_pem
        self.namespace_rt = client.kind("v1", "Namespace")
        self.cm_rt = client.kind("v1", "ConfigMap")
        self.namespaces = factory.informer(self.namespace_rt)
        self.config_maps = factory.informer(self.cm_rt)
        if ca_pem is None:
            return
        self.namespaces.add_handler(self._on_namespace, lambda _old, cur: self._on_namespace(cur), None)
        self.config_maps.add_handler(None, lambda _old, cur: self._on_config_map(cur), self._on_config_map)

    def _on_namespace(self, ns: Obj) -> None:
        name = str(meta_of(ns).get("name") or "")
        if self.factory.namespace in (None, name):
            self.enqueue(name)

    def _on_config_map(self, cm: Obj) -> None:
        meta = meta_of(cm)
        if meta.get("name") == CONFIG_MAP:
            self.enqueue(str(meta.get("namespace") or ""))

    async def sync(self, key: str) -> None:
        """Create or repair ``kube-root-ca.crt`` in namespace ``key``; raise to be retried."""
        if self.ca_pem is None:
            return
        ns = self.namespaces.get(key)
        if ns is None or meta_of(ns).get("deletionTimestamp") or (ns.get("status") or {}).get("phase") == "Terminating":
            return
        current = self.config_maps.get(f"{key}/{CONFIG_MAP}")
        data = {"ca.crt": self.ca_pem}
        try:
            if current is None:
                await self.client.create(self.cm_rt, {
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": CONFIG_MAP, "namespace": key, "annotations": dict(DESCRIPTION)},
                    "data": data}, namespace=key)
                self.log.info("root-ca-cert-publisher: created %s/%s", key, CONFIG_MAP)
            elif current.get("data") != data:
                await self.client.patch(self.cm_rt, CONFIG_MAP, {"data": data}, key)
        except errors.AlreadyExists:
            pass  # the cache was behind; the add event brings it
        except (errors.Forbidden, errors.NotFound):
            pass  # the namespace is terminating or gone
