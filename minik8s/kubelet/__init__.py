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
- ``network``: the pod bridge network (subnet = podCIDR, no Docker masquerading, hairpin ports).
- ``podnetwork``: the node's side of the pod network, driven by a Node informer — the cluster
  CIDR blackhole, ``netfilter`` (masquerade only what leaves the cluster CIDR, forward pod
  traffic) and ``routes`` (host-gw routes / VXLAN to the other Nodes' podCIDRs);
  host commands run through :mod:`minik8s.host` (any network namespace).
- ``dns``: the pod's resolv.conf (dnsPolicy, dnsConfig, --cluster-dns) and managed hosts file.
- ``volumes``: emptyDir and hostPath volumes.
- ``images``: pull policies, image pull back-off and events.
- ``probes``: liveness/readiness/startup probe workers; ``hooks``: postStart/preStop.
- ``backoff``: Kubernetes' per-key exponential back-off (CrashLoopBackOff, ImagePullBackOff).
- ``recording``: fire-and-forget pod events through the shared EventRecorder.
- ``naming``: container names and labels.
- ``server``: the kubelet API (``/healthz``, ``/pods``, ``/stats/summary``, ``/containerLogs``, ``/exec``);
  ``stats``: CPU/memory usage of the node and its pods (cgroups).
"""
