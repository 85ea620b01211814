"""The node's pod network: one Docker bridge network whose subnet is the node's podCIDR.

Every pod's pause container is attached to it, so the pause container's address is the
pod IP; the gateway is the subnet's first address (``.1``), held by the bridge on the
host.  The network is created the way a Kubernetes pod network behaves:

* ``com.docker.network.bridge.enable_ip_masquerade=false`` — Docker would masquerade
  everything leaving the bridge, pod-to-pod traffic between nodes included; the kubelet's
  own rule (:mod:`minik8s.kubelet.network.netfilter`) masquerades only what leaves the cluster CIDR;
* ``com.docker.network.bridge.gateway_mode_ipv4=nat-unprotected`` on Docker 28 and later,
  which otherwise drops packets for container addresses arriving from other interfaces
  (other nodes' pods);
* a smaller MTU when pods may talk through VXLAN (50 bytes of encapsulation);
* hairpin mode on every bridge port (:func:`set_hairpin`), as the kubelet's
  ``--hairpin-mode=hairpin-veth`` does, so a pod reaches itself through its Service's
  ClusterIP (the DNATed packet leaves by the port it came in).

Routing between nodes' podCIDRs is :mod:`minik8s.kubelet.network.routes`.
"""

from __future__ import annotations

import ipaddress
import logging
from typing import Any

from minik8s.host.commands import Runner, run_json
from minik8s.host.commands import run as host_runner
from minik8s.host.errors import CommandFailed, HostError
from minik8s.kubelet import naming
from minik8s.kubelet.runtime import DockerRuntime, RuntimeFailure

log = logging.getLogger("kubelet.network")

__all__ = ["NetworkError", "bridge_of", "ensure_pod_network", "gateway_of", "ip_in_cidr", "set_hairpin"]


class NetworkError(HostError):
    """The pod network cannot be set up (a subnet clash, a network in use with another subnet)."""

MASQUERADE_OPTION = "com.docker.network.bridge.enable_ip_masquerade"
BRIDGE_NAME_OPTION = "com.docker.network.bridge.name"
GATEWAY_MODE_OPTION = "com.docker.network.bridge.gateway_mode_ipv4"
MTU_OPTION = "com.docker.network.driver.mtu"


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


def bridge_of(info: dict[str, Any]) -> str:
    """The Linux bridge of a ``docker network inspect`` result (its ``bridge.name`` option, else
    Docker's default ``br-<first 12 characters of the id>``)."""
    options = info.get("Options") or {}
    return str(options.get(BRIDGE_NAME_OPTION) or f"br-{str(info.get('Id', ''))[:12]}")


def network_options(name: str, mtu: int | None, docker_version: str) -> dict[str, str]:
    """The driver options the pod network is created with (see the module docstring)."""
    options = {"com.docker.network.bridge.enable_icc": "true", MASQUERADE_OPTION: "false"}
    bridge = bridge_name(name)
    if bridge:
        options[BRIDGE_NAME_OPTION] = bridge
    if mtu:
        options[MTU_OPTION] = str(mtu)
    try:
        major = int(docker_version.split(".")[0])
    except ValueError:
        major = 0
    if major >= 28:
        options[GATEWAY_MODE_OPTION] = "nat-unprotected"
    return options


def network_mismatch(info: dict[str, Any], cidr: str, options: dict[str, str]) -> str | None:
    """Why an existing network does not fit (another subnet, Docker's masquerading, the MTU), or None."""
    subnets = network_subnets(info)
    if cidr not in subnets:
        return f"subnet {subnets} but the podCIDR is {cidr}"
    have = info.get("Options") or {}
    if str(have.get(MASQUERADE_OPTION, "true")).lower() != "false":
        return "Docker masquerades its traffic (pods would not keep their source address)"
    if MTU_OPTION in options and have.get(MTU_OPTION) != options[MTU_OPTION]:
        return f"MTU {have.get(MTU_OPTION, 'default')} but {options[MTU_OPTION]} is needed"
    return None


async def ensure_pod_network(runtime: DockerRuntime, name: str, cidr: str, mtu: int | None = None) -> str:
    """Create the bridge network ``name`` with subnet ``cidr`` unless it exists; returns the gateway.

    An existing network with another subnet, Docker's masquerading or another MTU is
    recreated when no container uses it.  With containers attached, another subnet raises
    NetworkError (pods would get addresses outside the podCIDR); the other differences are
    logged and the network kept (running pods are never disturbed).  Docker refusing the
    subnet (it overlaps another network) also raises NetworkError.
    """
    cidr = str(ipaddress.ip_network(cidr, strict=False))
    gateway = gateway_of(cidr)
    options = network_options(name, mtu, await runtime.version())
    info = await runtime.inspect_network(name)
    if info is not None:
        why = network_mismatch(info, cidr, options)
        if why is None:
            return gateway
        if info.get("Containers"):
            if cidr not in network_subnets(info):
                raise NetworkError(f"docker network {name} has {why}, and containers still use it; "
                                   "remove them or choose another --network-name")
            log.warning("kubelet network=%s has %s; kept while containers use it "
                        "(it is re-created on a kubelet start without pods)", name, why)
            return gateway
        log.warning("kubelet network=%s has %s; re-creating it", name, why)
        await runtime.remove_network(name)
    try:
        await runtime.create_network(name, cidr, gateway, {naming.MANAGED: "true"}, options)
    except RuntimeFailure as exc:
        raise NetworkError(f"cannot create docker network {name} with subnet {cidr}: {exc.message}") from exc
    log.info("kubelet network=%s created subnet=%s gateway=%s", name, cidr, gateway)
    return gateway


def set_hairpin(bridge: str, runner: Runner = host_runner) -> int:
    """Turn hairpin mode on for every port of ``bridge`` (``bridge link set dev <port> hairpin on``,
    netlink, so it also works where ``/sys`` is read-only); returns how many ports were switched.
    A missing bridge or a port that vanished meanwhile is skipped; other failures raise CommandFailed."""
    changed = 0
    for port in run_json(runner, ["bridge", "-j", "-d", "link", "show"]):
        if port.get("master") != bridge or port.get("hairpin") is not False or not port.get("ifname"):
            continue
        try:
            runner(["bridge", "link", "set", "dev", str(port["ifname"]), "hairpin", "on"])
        except CommandFailed as exc:
            if "Cannot find device" not in exc.stderr:
                raise
            continue
        changed += 1
    return changed


def ip_in_cidr(ip: str | None, cidr: str) -> bool:
    """Whether ``ip`` lies in ``cidr`` (False for None or garbage)."""
    if not ip:
        return False
    try:
        return ipaddress.ip_address(ip) in ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return False
