"""Structured one-line logs: ``<time> <component> <level> <message key=value ...>``."""

from __future__ import annotations

import logging
import sys


def setup(component: str, verbose: bool = False) -> None:
    """Configure the root logger for one process; the component name leads each line."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(
        f"%(asctime)s {component} %(levelname)s %(message)s", datefmt="%Y-%m-%dT%H:%M:%S"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    for noisy in ("httpx", "httpcore", "aetcd", "grpc", "docker", "urllib3", "websockets"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
