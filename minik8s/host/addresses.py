"""This host's addresses and name, as the node components and ``minik8s up`` see them."""

from __future__ import annotations

import ipaddress
import socket


def default_node_ip() -> str:
    """The host's primary IPv4: the source address of its default route.

    A UDP ``connect`` only selects a route; no packet is sent.  Falls back to the
    address the host name resolves to, then to ``127.0.0.1``.
    """
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.123", 9))  # TEST-NET-1: only the routing decision matters
            ip = str(s.getsockname()[0])
            if ip and not ip.startswith("0."):
                return ip
    except OSError:
        pass
    try:
        ip = socket.gethostbyname(socket.gethostname())
        if ip and not ip.startswith("127."):
            return ip
    except OSError:
        pass
    return "127.0.0.1"


def default_node_name() -> str:
    """The host name, trimmed and lower-cased: the node name of the kubelet and kube-proxy without
    ``--hostname-override`` (Kubernetes' ``GetHostname``)."""
    return socket.gethostname().strip().lower()


def publishable(host: str) -> bool:
    """Whether ``host`` can be an endpoint pods reach: an IP, neither loopback nor unspecified."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return not (ip.is_loopback or ip.is_unspecified)
