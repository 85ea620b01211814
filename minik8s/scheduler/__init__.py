"""minik8s scheduler: Kubernetes' scheduler framework, in Python.

Modules, by activity:

* :mod:`~minik8s.scheduler.nodeinfo` -- Resource, PodInfo, NodeInfo, Snapshot (pure data).
* :mod:`~minik8s.scheduler.framework` -- plugin interfaces (PreFilter / Filter / PostFilter /
  PreScore / Score + NormalizeScore), Status codes, CycleState, the profile (:class:`PluginRow`), one
  scheduling cycle and Kubernetes' "0/N nodes are available: ..." message.
* :mod:`~minik8s.scheduler.plugins` -- one module per plugin (``default_preemption``: preemption),
  and ``DEFAULT_PLUGINS``.
* :mod:`~minik8s.scheduler.queue` -- active (by priority) / backoff / unschedulable pools, event-driven retries.
* :mod:`~minik8s.scheduler.cache` -- nodes with their bound and assumed pods.
* :mod:`~minik8s.scheduler.scheduler` -- informers, the scheduling loop, binding, status and events.
* :mod:`~minik8s.scheduler.main` -- the ``minik8s scheduler`` command.
"""
