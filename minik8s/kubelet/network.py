"""The node's pod network: one Docker bridge network whose subnet is the node's podCIDR.

Every pod's pause container is attached to it, so the pause container's address is the
pod IP; the gateway is the subnet's first address (``.1``), held by the bridge on the
host.  Routing between nodes' podCIDRs is the pod-network component's job, not this one.
"""

from __future__ import annotations

import ipaddress
import logging

from minik8s.kubelet import naming
from minik8s.kubelet.runtime import DockerRuntime, RuntimeFailure

log = logging.getLogger("kubelet.network")


class NetworkError(Exception):
    """The pod network cannot be set up (a subnet clash, or an existing network in use)."""


def gateway_of(cidr: str) -> str:
    """The first host address of ``cidr`` (``10.244.1.0/24`` → ``10.244.1.1``)."""
    net = ipaddress.ip_network(cidr, strict=False)
    return str(net.network_address + 1)


def bridge_name(network: str) -> str | None:
    """The Linux bridge name to ask for (the network name when it fits in 15 characters)."""
    return network if len(network) <= 15 else None


def network_subnets(info: dict[str, object]) -> list[str]:
    """The subnets (CIDR strings) of a ``docker network inspect`` result."""
    ipam = info.get("IPAM") or {}
    configs = ipam.get("Config") if isinstance(ipam, dict) else None
    return [str(c.get("Subnet")) for c in configs or [] if isinstance(c, dict) and c.get("Subnet")]


async def ensure_pod_network(runtime: DockerRuntime, name: str, cidr: str) -> str:
    """Create the bridge network ``name`` with subnet ``cidr`` unless it exists; returns the gateway.

    An existing network with another subnet is recreated when no container uses it;
    otherwise NetworkError is raised (pods would get addresses outside the podCIDR).
    Docker refusing the subnet (it overlaps another network) also raises NetworkError.
    """
    cidr = str(ipaddress.ip_network(cidr, strict=False))
    gateway = gateway_of(cidr)
    info = await runtime.inspect_network(name)
    if info is not None:
        subnets = network_subnets(info)
        if cidr in subnets:
            return gateway
        if info.get("Containers"):
            raise NetworkError(f"docker network {name} has subnet {subnets} but the podCIDR is {cidr}, "
                               "and containers still use it; remove them or choose another --network-name")
        log.warning("kubelet network=%s subnet=%s replaced by podCIDR %s", name, subnets, cidr)
        await runtime.remove_network(name)
    options = {"com.docker.network.bridge.enable_icc": "true"}
    bridge = bridge_name(name)
    if bridge:
        options["com.docker.network.bridge.name"] = bridge
    try:
        await runtime.create_network(name, cidr, gateway, {naming.MANAGED: "true"}, options)
    except RuntimeFailure as exc:
        raise NetworkError(f"cannot create docker network {name} with subnet {cidr}: {exc.message}") from exc
    log.info("kubelet network=%s created subnet=%s gateway=%s", name, cidr, gateway)
    return gateway


def ip_in_cidr(ip: str | None, cidr: str) -> bool:
    """Whether ``ip`` lies in ``cidr`` (False for None or garbage)."""
    if not ip:
        return False
    try:
        return ipaddress.ip_address(ip) in ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return False
