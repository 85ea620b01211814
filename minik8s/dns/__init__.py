"""Cluster DNS (``minik8s dns``): Service, pod and DNS-object names answered from the API.

* :mod:`~minik8s.dns.records` — the zone: names → records from informer caches (pure);
* :mod:`~minik8s.dns.server` — UDP/TCP server on dnslib, optional forwarding;
* :mod:`~minik8s.dns.registration` — the ``kube-dns`` Service and this server's Endpoints;
* :mod:`~minik8s.dns.app` — the process wiring; :mod:`~minik8s.dns.main` — its flags.
"""
