"""Node podCIDR allocation (the node IPAM controller's CIDR set), no services involved."""

from __future__ import annotations

import pytest

from minik8s.controllers.nodeipam import CIDRRangeFull, CIDRSet, node_pod_cidrs


def test_subnets_of_the_cluster_cidr() -> None:
    cidrs = CIDRSet("10.244.0.0/16", 24)
    assert cidrs.size == 256
    assert str(cidrs.subnet(0)) == "10.244.0.0/24" and str(cidrs.subnet(255)) == "10.244.255.0/24"
    assert cidrs.index_of("10.244.7.0/24") == 7
    assert cidrs.index_of("10.245.0.0/24") is None and cidrs.index_of("10.244.7.0/25") is None
    assert cidrs.index_of("garbage") is None


def test_allocation_skips_used_subnets_and_goes_round_robin() -> None:
    cidrs = CIDRSet("10.244.0.0/16", 24)
    used = cidrs.used_indexes(["10.244.0.0/24", "10.244.2.0/24", "192.168.0.0/24"])
    assert used == {0, 2}
    first = cidrs.allocate(used)
    assert str(first) == "10.244.1.0/24"
    used.add(1)
    assert str(cidrs.allocate(used)) == "10.244.3.0/24"
    used.discard(1)  # node 1 deleted: its subnet is not handed out again at once
    assert str(cidrs.allocate(used | {3})) == "10.244.4.0/24"


def test_a_wider_or_unaligned_cidr_marks_every_subnet_it_covers() -> None:
    cidrs = CIDRSet("10.244.0.0/16", 24)
    assert cidrs.used_indexes(["10.244.4.0/23"]) == {4, 5}
    assert cidrs.used_indexes(["10.244.9.128/25"]) == {9}
    assert cidrs.used_indexes(["10.0.0.0/8"]) == set(range(256))


def test_full_range_and_bad_settings() -> None:
    cidrs = CIDRSet("10.244.0.0/22", 24)
    with pytest.raises(CIDRRangeFull):
        cidrs.allocate({0, 1, 2, 3})
    for cluster, mask in (("10.244.0.0/16", 16), ("10.244.0.0/16", 31), ("fd00::/64", 80)):
        with pytest.raises(ValueError):
            CIDRSet(cluster, mask)


def test_node_pod_cidrs() -> None:
    assert node_pod_cidrs({"spec": {"podCIDR": "10.244.1.0/24"}}) == ["10.244.1.0/24"]
    assert node_pod_cidrs({"spec": {"podCIDR": "a", "podCIDRs": ["a", "b"]}}) == ["a", "b"]
    assert node_pod_cidrs({}) == []
