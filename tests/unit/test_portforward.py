"""The kubelet's port-forward request parsing."""

from __future__ import annotations

import pytest

from minik8s.kubelet.portforward import parse_ports


def test_parse_ports() -> None:
    assert parse_ports(["8080,9090", "7000"]) == [8080, 9090, 7000]
    for bad in (["0"], ["65536"], ["http"], ["80,80"], [], [""]):
        with pytest.raises(ValueError):
            parse_ports(bad)
