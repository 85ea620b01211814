"""The kubelet's side of pod networking (the network rules are in docs/network.md).

* :mod:`.bridge` — the node's Docker bridge network: subnet = podCIDR, no Docker
  masquerading, hairpin mode on the bridge ports; :class:`~.bridge.NetworkError`;
* :mod:`.podnetwork` — :class:`~.podnetwork.PodNetworkAgent`, driven by a Node informer: the
  cluster CIDR blackhole, :mod:`.netfilter` and :mod:`.routes`, level-triggered;
* :mod:`.netfilter` — masquerade only what leaves the cluster CIDR, let pod traffic through
  Docker's isolation (chains ``MINIK8S-POSTROUTING`` and ``MINIK8S-FORWARD``);
* :mod:`.routes` — routes to the other Nodes' podCIDRs (host-gw, VXLAN);
* :mod:`.dnsconfig` — a pod's ``/etc/resolv.conf`` and ``/etc/hosts`` (dnsPolicy, dnsConfig,
  ``--cluster-dns``).

Host commands go through :mod:`minik8s.host` (a runner that tests point at another network
namespace).
"""
