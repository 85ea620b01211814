"""Cluster DNS (``minik8s dns``): Service, pod and DNS-object names answered from the API.

* :mod:`~minik8s.dns.records` — the zone: names → records from informer caches (pure);
* :mod:`~minik8s.dns.server` — UDP/TCP server on dnslib, optional forwarding;
* the ``kube-dns`` Service and this server's Endpoints are kept by :mod:`minik8s.client.registration`;
* :mod:`~minik8s.dns.app` — the process wiring; :mod:`~minik8s.dns.main` — its flags.
"""
