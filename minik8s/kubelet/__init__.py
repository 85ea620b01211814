"""minik8s kubelet: the node agent that runs the pods bound to its node on Docker.

Modules, by what they do:

- ``main``: the ``minik8s kubelet`` command (flags) → :class:`kubelet.Kubelet`.
- ``config``: the settings and their parsers (labels, taints, CIDR, node IP).
- ``kubelet``: wiring — informers on this node's pods and on Nodes, the podCIDR (waiting for
  the node IPAM controller unless --pod-cidr), work queue, workers, Docker events,
  housekeeping, the HTTP server; start-up and shutdown (pods keep running).
- ``node``: Node registration, Lease heartbeats, node status.
- ``sync``: the pod worker — reconcile one pod's containers, graceful deletion, status writes.
- ``status``: pod phase, conditions and container statuses (pure functions).
- ``runtime``: every Docker Engine call, run in threads.
- ``container_spec``: a Kubernetes container → Docker create parameters (resources, env, ...).
- ``network/``: pod networking — ``bridge`` (the Docker bridge network, subnet = podCIDR),
  ``podnetwork`` (the node's side, driven by a Node informer: the cluster CIDR blackhole,
  ``netfilter`` rules and ``routes`` to the other Nodes' podCIDRs) and ``dnsconfig`` (a
  pod's resolv.conf and hosts file); host commands run through :mod:`minik8s.host`.
- ``volumes``: emptyDir, hostPath, API-data, persistentVolumeClaim and nfs volumes.
- ``storage``: claim and volume informers, the NFS client check, removal of deleted
  local-path volumes' directories.
- ``images``: pull policies, image pull back-off and events.
- ``probes``: liveness/readiness/startup probe workers; ``hooks``: postStart/preStop.
- ``backoff``: Kubernetes' per-key exponential back-off (CrashLoopBackOff, ImagePullBackOff).
- ``recording``: fire-and-forget pod events through the shared EventRecorder.
- ``naming``: container names and labels.
- ``server``: the kubelet API (``/healthz``, ``/pods``, ``/stats/summary``, ``/containerLogs``, ``/exec``);
  ``stats``: CPU/memory usage of the node and its pods (cgroups).
"""
