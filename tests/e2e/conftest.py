"""Fixtures of the end-to-end tests. The whole local cluster they run against (``cluster``) is the
session's one, shared with ``tests/conformance``: ``tests/conftest.py`` and
``tests/support/cluster.py``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.cluster import Cluster


@pytest.fixture
def ns(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace for one test, named after its module's ``NS_PREFIX`` (default ``e2e``)."""
    with cluster.namespace(getattr(request.module, "NS_PREFIX", "e2e")) as name:
        yield name
