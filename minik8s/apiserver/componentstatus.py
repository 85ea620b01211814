"""``v1`` ComponentStatus (deprecated in v1.19+): the control plane's health, computed at each read.

kube-apiserver answers ``GET /api/v1/componentstatuses[/NAME]`` by probing, at request time, three
components (``pkg/registry/core/componentstatus``), each a ComponentStatus with one condition::

    {"kind": "ComponentStatus", "apiVersion": "v1", "metadata": {"name": "etcd-0"},
     "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]}

* ``etcd-0``: the apiserver's own etcd client reads a key (2 s): ``True``/``ok``, else ``False`` with
  the client's error in ``error``;
* ``scheduler`` and ``controller-manager``: Kubernetes probes their ``/healthz`` on
  ``https://127.0.0.1:10259`` and ``:10257``.  minik8s' scheduler and controller-manager serve no
  health endpoint (and may run on another host), so their health is their leader Lease
  (``kube-system/kube-scheduler``, ``kube-system/kube-controller-manager``): ``True``/``ok`` while it
  has a holder and was renewed within its ``leaseDurationSeconds``, else ``False`` with the reason in
  ``message`` (as a failed Kubernetes probe reports).  A component run with ``--no-leader-elect``
  keeps no Lease and shows ``Unhealthy``.

Only ``get`` and ``list`` (label and field selectors apply); a name that is not one of the three is
kube-apiserver's 500 ``Component not found: NAME``.  Every answer carries kube-apiserver's deprecation
warning (:data:`DEPRECATION`).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj, parse_time
from minik8s.apiserver.resources import ListOptions, Selector
from minik8s.apiserver.strategies.base import GENERIC

#: The ``Warning`` kube-apiserver sends with every ComponentStatus answer.
DEPRECATION = "v1 ComponentStatus is deprecated in v1.19+"
#: component name → its leader Lease's name in ``kube-system``.
LEASES = {"scheduler": "kube-scheduler", "controller-manager": "kube-controller-manager"}
ETCD = "etcd-0"
NAMES = ("scheduler", "controller-manager", ETCD)


def component_status(name: str, healthy: bool, message: str = "", error: str = "") -> Obj:
    """One ComponentStatus with its ``Healthy`` condition (empty message and error left out, as Go's omitempty)."""
    cond: Obj = {"type": "Healthy", "status": "True" if healthy else "False"}
    if message:
        cond["message"] = message
    if error:
        cond["error"] = error
    return {"kind": "ComponentStatus", "apiVersion": "v1", "metadata": {"name": name}, "conditions": [cond]}


def lease_health(lease: Obj | None, lease_name: str, now: dt.datetime) -> tuple[bool, str]:
    """(healthy, message) of a component from its leader Lease (None: there is none)."""
    where = f"Lease kube-system/{lease_name}"
    if lease is None:
        return False, f"{where} not found: no leader"
    spec = lease.get("spec") or {}
    if not spec.get("holderIdentity"):
        return False, f"{where} has no holder"
    renewed = parse_time(spec.get("renewTime") or spec.get("acquireTime"))
    duration = int(spec.get("leaseDurationSeconds") or 0)
    if renewed is None or now > renewed + dt.timedelta(seconds=duration):
        return False, f"{where}: leader {spec['holderIdentity']} not renewed within {duration}s"
    return True, "ok"


async def probe(name: str, store: Any, read_lease: Any, now: dt.datetime | None = None) -> Obj:
    """The ComponentStatus of ``name`` (one of :data:`NAMES`): ``store`` has ``health_error()``,
    ``read_lease(name)`` returns the Lease or raises NotFound."""
    if name == ETCD:
        why = await store.health_error()
        return component_status(name, why is None, "ok" if why is None else "", why or "")
    try:
        lease = await read_lease(LEASES[name])
    except errors.NotFound:
        lease = None
    healthy, message = lease_health(lease, LEASES[name], now or dt.datetime.now(dt.UTC))
    return component_status(name, healthy, message)


async def get(name: str, store: Any, read_lease: Any) -> Obj:
    """GET componentstatuses/NAME; 500 ``Component not found: NAME`` for another name."""
    if name not in NAMES:
        raise errors.InternalError(f"Component not found: {name}")
    return await probe(name, store, read_lease)


async def list_(store: Any, read_lease: Any, opts: ListOptions) -> Obj:
    """GET componentstatuses: the three, filtered by ``opts``' label and field selectors (400 on bad syntax)."""
    selector = Selector(GENERIC, opts)
    items = [obj for obj in [await probe(name, store, read_lease) for name in NAMES] if selector.matches(obj)]
    return {"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {}, "items": items}
