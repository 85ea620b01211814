"""Leader-election settings and the kubeconfig's list of apiservers (pure parsing)."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

from minik8s.client.kubeconfig import KubeconfigError, load, render
from minik8s.client.leaderelection import (
    DEFAULT_LEASE_DURATION,
    DEFAULT_RENEW_DEADLINE,
    DEFAULT_RETRY_PERIOD,
    LeaderElectionConfig,
    config_from_flags,
    default_identity,
)


def test_client_go_defaults_and_identity() -> None:
    assert (DEFAULT_LEASE_DURATION, DEFAULT_RENEW_DEADLINE, DEFAULT_RETRY_PERIOD) == (15.0, 10.0, 2.0)
    config = config_from_flags("kube-scheduler", "kube-system", "15s", "10s", "2s")
    assert (config.lease_duration, config.renew_deadline, config.retry_period) == (15.0, 10.0, 2.0)
    assert re.fullmatch(re.escape(socket.gethostname()) + r"_[0-9a-f-]{36}", default_identity())


@pytest.mark.parametrize(("flags", "message"), [
    (("10s", "10s", "2s"), "leaseDuration must be greater than renewDeadline"),
    (("15s", "2s", "2s"), "renewDeadline must be greater than retryPeriod*JitterFactor"),
    (("15s", "10s", "5"), "--leader-elect-retry-period: time: missing unit"),
])
def test_bad_timings_are_refused(flags: tuple[str, str, str], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        config_from_flags("kube-scheduler", "kube-system", *flags)
    with pytest.raises(ValueError, match="lease name"):
        LeaderElectionConfig().validate()


def test_kubeconfig_lists_further_apiservers(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(render("https://10.0.0.1:6443", fallback_servers=["https://10.0.0.2:6443/"]))
    config = load(path)
    assert config.server == "https://10.0.0.1:6443"
    assert config.servers == ["https://10.0.0.1:6443", "https://10.0.0.2:6443"]
    path.write_text(render("https://10.0.0.1:6443"))
    assert load(path).servers == ["https://10.0.0.1:6443"]
    path.write_text(render("https://10.0.0.1:6443", fallback_servers=["x"]).replace("- x", "- 5"))
    with pytest.raises(KubeconfigError, match="minik8s.io/servers"):
        load(path)
