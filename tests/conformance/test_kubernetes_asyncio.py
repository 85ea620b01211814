"""The pinned e2e tests of ``kubernetes_asyncio``, one test here per test of theirs, run once against the session's
cluster (``tests/support/conformance.py``; recorded skips: ``tests/conformance/skips.py``)."""

from __future__ import annotations

import pytest

from tests.support.conformance import SUITES, CollectionProblem, Runs, check, suite_params

SUITE = SUITES["kubernetes_asyncio"]


# The first of these tests waits for the cluster (up to 300 s) and the whole suite's run.
@pytest.mark.timeout(SUITE.timeout + 420)
@pytest.mark.parametrize("test_id", suite_params(SUITE))
def test_kubernetes_asyncio(test_id: str | CollectionProblem, conformance: Runs) -> None:
    check(conformance, SUITE, test_id)
