"""The client side every component shares: REST client, informer, workqueue, events."""

from minik8s.client.informer import Informer
from minik8s.client.kubeconfig import ClientConfig
from minik8s.client.rest import Client, resource_path
from minik8s.client.workqueue import WorkQueue, run_workers

__all__ = ["Client", "ClientConfig", "Informer", "WorkQueue", "resource_path", "run_workers"]
