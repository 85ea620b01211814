"""Off loopback the gateway needs bearer tokens (--token-auth-file); without them it refuses to listen."""

from __future__ import annotations

import subprocess
import sys


def test_gateway_refuses_a_non_loopback_bind_address_without_tokens() -> None:
    proc = subprocess.run([sys.executable, "-m", "minik8s", "gateway", "--bind-address", "0.0.0.0"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "minik8s gateway: --bind-address 0.0.0.0 is not a loopback address; it needs --token-auth-file"]
