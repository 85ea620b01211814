"""minik8s proxy: kube-proxy for minik8s (Service ClusterIPs and NodePorts → pod endpoints).

Layers, each its own module:

* :mod:`.config` — the flags and every name derived from ``--chain-prefix``;
* :mod:`.servicemap` — Services + Endpoints (wire dicts) → a :class:`~.servicemap.ProxyState` snapshot;
* :mod:`.iptables` — the snapshot → ``iptables-restore`` text, and applying it atomically;
* :mod:`.ipvs` — the snapshot → IPVS virtual/real servers, a plan against the kernel's table;
* :mod:`.routing` — the service CIDR route to a local port-less bridge (network safety);
* :mod:`.proxier` — informers that mark the state dirty and the one rate-limited sync loop;
* :mod:`.main` — the ``minik8s proxy`` command.
"""
