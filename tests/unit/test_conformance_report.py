"""Reading the client suites' JUnit reports (tests/support/conformance.py): node ids to JUnit keys
and outcomes."""

from __future__ import annotations

from pathlib import Path

from tests.support.conformance import junit_key, read_junit

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="e2e-tests.test_client" name="test_crd" time="1.0"/>
<testcase classname="tests.e2e.test_examples" name="test_all_examples_are_runnable[05-handlers]">
  <failure message="AssertionError: assert Counter({'delete': 2})">trace</failure>
  <system-out>operator log</system-out>
</testcase>
<testcase classname="e2e_test.test_api.TestClientApi" name="test_create_daemonset">
  <skipped type="pytest.skip" message="no cluster">skip</skipped>
</testcase>
<testcase classname="e2e-tests.test_client" name="test_apply"/>
<testcase classname="e2e-tests.test_client" name="test_apply"><error message="teardown failed">x</error></testcase>
</testsuite></testsuites>
"""


def test_junit_key_follows_pytest_mangling() -> None:
    assert junit_key("e2e-tests/test_client.py::test_wait_global[Node]") == ("e2e-tests.test_client",
                                                                            "test_wait_global[Node]")
    assert junit_key("e2e_test/test_api.py::TestClientApi::test_create_deployment") == (
        "e2e_test.test_api.TestClientApi", "test_create_deployment")
    assert junit_key("examples/09-testing/test_example_09.py::test_resource_lifecycle") == (
        "examples.09-testing.test_example_09", "test_resource_lifecycle")
    # Brackets may hold dots and slashes: only the path part is mangled.
    assert junit_key("a/t.py::t[x/y.py]") == ("a.t", "t[x/y.py]")


def test_read_junit_outcomes(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text(REPORT)
    outcomes = read_junit(path)
    assert outcomes[("e2e-tests.test_client", "test_crd")].status == "passed"
    failed = outcomes[("tests.e2e.test_examples", "test_all_examples_are_runnable[05-handlers]")]
    assert failed.status == "failed" and "Counter" in failed.message and "operator log" in failed.details
    assert outcomes[("e2e_test.test_api.TestClientApi", "test_create_daemonset")].message == "no cluster"
    # A test that passed but whose teardown erred (a second <testcase>) counts as failed.
    assert outcomes[("e2e-tests.test_client", "test_apply")].status == "failed"
