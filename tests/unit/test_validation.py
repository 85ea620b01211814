"""Unit tests for minik8s.api.validation (Kubernetes name, label and port rules)."""

from __future__ import annotations

import pytest

from minik8s.api.validation import (
    c_identifier_errors,
    dns1035_label_errors,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    empty_error,
    env_var_name_errors,
    iana_svc_name_errors,
    label_value_errors,
    max_len_error,
    port_number_errors,
    qualified_name_errors,
    regex_error,
    validate_annotations,
    validate_labels,
)

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
    "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
    "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
NAME_PART_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
ENV_MSG = "a valid environment variable name must consist only of printable ASCII characters other than '='"


def test_message_helpers() -> None:
    assert regex_error("m", "x") == "m (regex used for validation is 'x')"
    assert regex_error("m", "x", "a") == "m (e.g. 'a', regex used for validation is 'x')"
    assert regex_error("m", "x", "a", "b") == "m (e.g. 'a',  or 'b', regex used for validation is 'x')"
    assert max_len_error(63) == "must be no more than 63 characters"
    assert empty_error() == "must be non-empty"


@pytest.mark.parametrize(
    "value",
    ["a", "0", "my-name", "123-abc", "a" * 63, "a-b-c", "a--b", "9"],
)
def test_dns1123_label_valid(value: str) -> None:
    assert dns1123_label_errors(value) == []


@pytest.mark.parametrize(
    "value",
    ["", "-a", "a-", "A", "my_name", "a.b", "a b", "é", "a\n", "ab\n"],
)
def test_dns1123_label_invalid(value: str) -> None:
    assert dns1123_label_errors(value) == [LABEL_MSG]


def test_dns1123_label_too_long() -> None:
    assert dns1123_label_errors("a" * 64) == ["must be no more than 63 characters"]
    assert dns1123_label_errors("A" * 64) == ["must be no more than 63 characters", LABEL_MSG]


@pytest.mark.parametrize(
    "value",
    ["example.com", "a", "my-pod", "a.b.c", "1.2.3.4", "x" * 63 + "." + "y" * 63, "a" * 253],
)
def test_dns1123_subdomain_valid(value: str) -> None:
    assert dns1123_subdomain_errors(value) == []


@pytest.mark.parametrize(
    "value",
    ["", ".a", "a.", "a..b", "A.com", "a_b", "-a.b", "a.-b", "my pod", "a\n"],
)
def test_dns1123_subdomain_invalid(value: str) -> None:
    assert dns1123_subdomain_errors(value) == [SUBDOMAIN_MSG]


def test_dns1123_subdomain_too_long() -> None:
    assert dns1123_subdomain_errors("a" * 254) == ["must be no more than 253 characters"]
    assert dns1123_subdomain_errors("-" * 254) == ["must be no more than 253 characters", SUBDOMAIN_MSG]


@pytest.mark.parametrize("value", ["a", "my-svc", "abc-123", "a" * 63])
def test_dns1035_label_valid(value: str) -> None:
    assert dns1035_label_errors(value) == []


@pytest.mark.parametrize("value", ["", "1abc", "-a", "a-", "My-svc", "a.b"])
def test_dns1035_label_invalid(value: str) -> None:
    assert dns1035_label_errors(value) == [DNS1035_MSG]


def test_dns1035_label_too_long() -> None:
    assert dns1035_label_errors("a" * 64) == ["must be no more than 63 characters"]


@pytest.mark.parametrize(
    "value",
    [
        "app",
        "App",
        "my.name",
        "My_Key.1",
        "123-abc",
        "a",
        "app.kubernetes.io/name",
        "example.com/MyName",
        "k8s.io/" + "n" * 63,
        "a/b",
    ],
)
def test_qualified_name_valid(value: str) -> None:
    assert qualified_name_errors(value) == []


@pytest.mark.parametrize("value", ["-x", "x-", "_x", "a b", "a:b", "é", "x.", "tab\t"])
def test_qualified_name_bad_name_part(value: str) -> None:
    assert qualified_name_errors(value) == [NAME_PART_MSG]


def test_qualified_name_empty_and_long() -> None:
    assert qualified_name_errors("") == ["name part must be non-empty", NAME_PART_MSG]
    assert qualified_name_errors("n" * 64) == ["name part must be no more than 63 characters"]
    assert qualified_name_errors("example.com/") == ["name part must be non-empty", NAME_PART_MSG]


def test_qualified_name_prefix() -> None:
    assert qualified_name_errors("/name") == ["prefix part must be non-empty"]
    assert qualified_name_errors("Example.com/name") == ["prefix part " + SUBDOMAIN_MSG]
    assert qualified_name_errors("a_b/name") == ["prefix part " + SUBDOMAIN_MSG]
    assert qualified_name_errors("a" * 254 + "/name") == ["prefix part must be no more than 253 characters"]
    # Both parts wrong: prefix error first, then the name part.
    assert qualified_name_errors("Bad/-x") == ["prefix part " + SUBDOMAIN_MSG, NAME_PART_MSG]


def test_qualified_name_too_many_slashes() -> None:
    errors = qualified_name_errors("a/b/c")
    assert len(errors) == 1
    assert errors[0].startswith("a qualified name must consist of alphanumeric characters")
    assert errors[0].endswith("with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")


@pytest.mark.parametrize("value", ["", "a", "MyValue", "my_value", "12345", "a.b-c_d", "v" * 63])
def test_label_value_valid(value: str) -> None:
    assert label_value_errors(value) == []


@pytest.mark.parametrize("value", ["-a", "a-", "_a", "a b", "a/b", "ä", "a\n"])
def test_label_value_invalid(value: str) -> None:
    assert label_value_errors(value) == [LABEL_VALUE_MSG]


def test_label_value_too_long() -> None:
    assert label_value_errors("v" * 64) == ["must be no more than 63 characters"]


def test_validate_labels() -> None:
    assert validate_labels(None, "metadata.labels") == []
    assert validate_labels({}, "metadata.labels") == []
    assert (
        validate_labels({"app": "web", "app.kubernetes.io/part-of": "", "tier": "db"}, "metadata.labels")
        == []
    )
    errors = validate_labels({"-bad": "ok", "good": "bad value"}, "metadata.labels")
    assert errors == [
        ("metadata.labels", "-bad", NAME_PART_MSG),
        ("metadata.labels", "bad value", LABEL_VALUE_MSG),
    ]


def test_validate_labels_path_is_kept_and_defaults() -> None:
    errors = validate_labels({"k": "-v"}, "spec.template.metadata.labels")
    assert errors == [("spec.template.metadata.labels", "-v", LABEL_VALUE_MSG)]
    assert validate_labels({"k": "-v"})[0][0] == "metadata.labels"


def test_validate_labels_non_strings() -> None:
    errors = validate_labels({"k": 1}, "metadata.labels")  # type: ignore[dict-item]
    assert errors == [("metadata.labels", "1", "must be a string")]


def test_validate_annotations() -> None:
    assert validate_annotations(None, "metadata.annotations") == []
    ok = {
        "kubectl.kubernetes.io/last-applied-configuration": '{"a": 1}',
        "Example.COM/Key": "free text, any chars: / = ,",
        "note": "",
    }
    assert validate_annotations(ok, "metadata.annotations") == []
    errors = validate_annotations({"a/b/c": "x", "-x": "y"}, "metadata.annotations")
    assert [(path, value) for path, value, _ in errors] == [
        ("metadata.annotations", "a/b/c"),
        ("metadata.annotations", "-x"),
    ]
    assert errors[1][2] == NAME_PART_MSG


def test_validate_annotations_size_limit() -> None:
    key = "big"
    exactly = {key: "x" * (262144 - len(key))}
    assert validate_annotations(exactly, "metadata.annotations") == []
    over = {key: "x" * (262144 - len(key) + 1)}
    assert validate_annotations(over, "metadata.annotations") == [
        ("metadata.annotations", "", "must have at most 262144 bytes")
    ]
    # Size is measured in UTF-8 bytes: "é" is two bytes.
    multibyte = {key: "é" * ((262144 - len(key)) // 2 + 1)}
    assert validate_annotations(multibyte, "metadata.annotations")[-1][2] == "must have at most 262144 bytes"
    # Sizes of all keys and values add up.
    split = {"a": "x" * 131072, "b": "y" * 131072}
    assert validate_annotations(split, "metadata.annotations") == [
        ("metadata.annotations", "", "must have at most 262144 bytes")
    ]


@pytest.mark.parametrize("port", [1, 80, 8080, 65535])
def test_port_number_valid(port: int) -> None:
    assert port_number_errors(port) == []


@pytest.mark.parametrize("port", [0, -1, 65536, 100000, True])
def test_port_number_invalid(port: int) -> None:
    assert port_number_errors(port) == ["must be between 1 and 65535, inclusive"]


def test_port_number_non_int() -> None:
    assert port_number_errors("80") == ["must be between 1 and 65535, inclusive"]  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["a", "_a", "MY_VAR", "MyName", "a1_b2"])
def test_c_identifier_valid(value: str) -> None:
    assert c_identifier_errors(value) == []


@pytest.mark.parametrize("value", ["", "1a", "a-b", "a.b", "a b", "a\n"])
def test_c_identifier_invalid(value: str) -> None:
    assert c_identifier_errors(value) == [
        "a valid C identifier must start with alphabetic character or '_', followed by a string of "
        "alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for "
        "validation is '[A-Za-z_][A-Za-z0-9_]*')"
    ]


@pytest.mark.parametrize("value", ["MY_VAR", "my.var", "1st-var", "a b", "~!@#$%^&*()", " ", "x" * 1000])
def test_env_var_name_valid(value: str) -> None:
    assert env_var_name_errors(value) == []


@pytest.mark.parametrize("value", ["A=B", "=", "tab\there", "new\nline", "é", "\x7f", "nul\x00"])
def test_env_var_name_invalid(value: str) -> None:
    assert env_var_name_errors(value) == [ENV_MSG]


def test_env_var_name_empty() -> None:
    assert env_var_name_errors("") == ["environment variable name must be non-empty"]


@pytest.mark.parametrize("value", ["http", "metrics-1", "a", "a1", "1a", "web-ui-8080", "x" * 15])
def test_iana_svc_name_valid(value: str) -> None:
    assert iana_svc_name_errors(value) == []


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        (
            "HTTP",
            [
                "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                "must contain at least one letter (a-z)",
            ],
        ),
        ("8080", ["must contain at least one letter (a-z)"]),
        ("a--b", ["must not contain consecutive hyphens"]),
        ("-web", ["must not begin or end with a hyphen"]),
        ("web-", ["must not begin or end with a hyphen"]),
        ("web_ui", ["must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"]),
        ("x" * 16, ["must be no more than 15 characters"]),
        (
            "",
            [
                "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                "must contain at least one letter (a-z)",
            ],
        ),
    ],
)
def test_iana_svc_name_invalid(value: str, errors: list[str]) -> None:
    assert iana_svc_name_errors(value) == errors
