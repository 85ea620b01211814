"""Kubernetes name, label and port rules, with Kubernetes' own error messages.

Each ``*_errors`` function returns a list of human-readable messages; an empty list means
the value is valid. The messages are those of ``k8s.io/apimachinery/pkg/util/validation``
so that ``kubectl`` users see familiar text (for example ``a lowercase RFC 1123 label must
consist of ...``). The ``validate_*`` functions return ``(field path, bad value, message)``
triples like Kubernetes' ``field.Invalid`` errors, ready to become a 422 ``Status``.

All functions are pure; lengths are counted in characters except where a rule speaks of
bytes (annotation size is measured in UTF-8 bytes, as Go's ``len`` does).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = [
    "ANNOTATIONS_SIZE_LIMIT",
    "DNS1035_LABEL_MAX_LENGTH",
    "DNS1123_LABEL_MAX_LENGTH",
    "DNS1123_SUBDOMAIN_MAX_LENGTH",
    "FieldError",
    "IANA_SVC_NAME_MAX_LENGTH",
    "LABEL_VALUE_MAX_LENGTH",
    "QUALIFIED_NAME_MAX_LENGTH",
    "c_identifier_errors",
    "config_map_key_errors",
    "dns1035_label_errors",
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "empty_error",
    "env_var_name_errors",
    "iana_svc_name_errors",
    "label_value_errors",
    "max_len_error",
    "port_number_errors",
    "qualified_name_errors",
    "regex_error",
    "validate_annotations",
    "validate_labels",
]

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
DNS1035_LABEL_MAX_LENGTH = 63
QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63
IANA_SVC_NAME_MAX_LENGTH = 15
#: Total size of all annotation keys and values of one object, in bytes (256 KiB).
ANNOTATIONS_SIZE_LIMIT = 256 * 1024

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)
_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT = "(" + _QUALIFIED_NAME_FMT + ")?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_C_IDENTIFIER_MSG = (
    "a valid C identifier must start with alphabetic character or '_', "
    "followed by a string of alphanumeric characters or '_'"
)
_CONFIG_MAP_KEY_FMT = "[-._a-zA-Z0-9]+"
_CONFIG_MAP_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
_ENV_VAR_NAME_MSG = (
    "a valid environment variable name must consist only of printable ASCII characters other than '='"
)

# re.fullmatch is used everywhere: Go anchors with ^...$ and Python's "$" would accept a
# trailing newline.
_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL_RE = re.compile(_DNS1035_LABEL_FMT)
_QUALIFIED_NAME_RE = re.compile(_QUALIFIED_NAME_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_C_IDENTIFIER_RE = re.compile(_C_IDENTIFIER_FMT)
_CONFIG_MAP_KEY_RE = re.compile(_CONFIG_MAP_KEY_FMT)
_IANA_SVC_NAME_CHARSET_RE = re.compile("[-a-z0-9]+")
_IANA_SVC_NAME_LETTER_RE = re.compile("[a-z]")

# Path, offending value, message: the shape of a Kubernetes field.Error.
FieldError = tuple[str, str, str]


def regex_error(message: str, fmt: str, *examples: str) -> str:
    """Build a Kubernetes ``RegexError`` message: the rule, examples and the regex.

    ``regex_error("m", "[a-z]", "a", "b")`` -> ``"m (e.g. 'a',  or 'b', regex used for
    validation is '[a-z]')"`` -- the doubled space is Kubernetes' own.
    """
    if not examples:
        return f"{message} (regex used for validation is '{fmt}')"
    listed = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {listed}regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    """Kubernetes' ``MaxLenError``: ``"must be no more than 63 characters"``."""
    return f"must be no more than {length} characters"


def empty_error() -> str:
    """Kubernetes' ``EmptyError``: ``"must be non-empty"``."""
    return "must be non-empty"


def dns1123_label_errors(value: str) -> list[str]:
    """Check an RFC 1123 DNS label (``IsDNS1123Label``): at most 63 characters of
    ``[a-z0-9-]``, starting and ending alphanumeric. Used for namespace names, container
    names and most object names that become host names.

    Returns Kubernetes' messages (length first, then the pattern), or ``[]`` when valid.
    """
    errors: list[str] = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        errors.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        errors.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errors


def dns1123_subdomain_errors(value: str) -> list[str]:
    """Check an RFC 1123 DNS subdomain (``IsDNS1123Subdomain``): at most 253 characters,
    dot-separated DNS labels. This is the rule for most object names (Pods, ConfigMaps,
    Deployments) and for label key prefixes.

    Returns Kubernetes' messages (length first, then the pattern), or ``[]`` when valid.
    """
    errors: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errors.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errors.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errors


def dns1035_label_errors(value: str) -> list[str]:
    """Check an RFC 1035 DNS label (``IsDNS1035Label``): like a DNS-1123 label but must
    start with a letter. Kubernetes requires it for Service names.

    Returns Kubernetes' messages, or ``[]`` when valid.
    """
    errors: list[str] = []
    if len(value) > DNS1035_LABEL_MAX_LENGTH:
        errors.append(max_len_error(DNS1035_LABEL_MAX_LENGTH))
    if not _DNS1035_LABEL_RE.fullmatch(value):
        errors.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errors


def qualified_name_errors(value: str) -> list[str]:
    """Check a qualified name (``IsQualifiedName``), the rule for label and annotation keys.

    Shape: an optional prefix that is a DNS-1123 subdomain followed by ``/``, then a name
    part of at most 63 characters matching ``([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]``.
    ``"app"``, ``"app.kubernetes.io/name"`` and ``"My_Key.1"`` are valid; ``"a/b/c"``,
    ``"/name"``, ``"Example.com/x"`` and ``"-x"`` are not.

    Returns Kubernetes' messages (prefixed ``"prefix part "`` / ``"name part "``), or ``[]``.
    """
    errors: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append("prefix part " + empty_error())
        else:
            errors.extend("prefix part " + msg for msg in dns1123_subdomain_errors(prefix))
    else:
        errors.append(
            "a qualified name "
            + regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        )
        return errors
    if not name:
        errors.append("name part " + empty_error())
    elif len(name) > QUALIFIED_NAME_MAX_LENGTH:
        errors.append("name part " + max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _QUALIFIED_NAME_RE.fullmatch(name):
        errors.append(
            "name part "
            + regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errors


def label_value_errors(value: str) -> list[str]:
    """Check a label value (``IsValidLabelValue``): empty, or at most 63 characters of
    ``[A-Za-z0-9._-]`` starting and ending alphanumeric.

    Returns Kubernetes' messages, or ``[]`` when valid.
    """
    errors: list[str] = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        errors.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errors.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errors


def validate_labels(labels: Mapping[str, str] | None, path: str = "metadata.labels") -> list[FieldError]:
    """Validate an object's labels like Kubernetes' ``ValidateLabels``.

    Every key must be a qualified name and every value a label value. Returns
    ``(path, bad key or value, message)`` triples -- e.g. ``("metadata.labels", "-x",
    "name part must consist of ...")`` -- with ``path`` as given (Kubernetes reports the
    map's path, not one per key); ``[]`` when valid or when ``labels`` is None. A key or
    value that is not a string yields ``"must be a string"``.
    """
    errors: list[FieldError] = []
    if labels is None:
        return errors
    for key, value in labels.items():
        if not isinstance(key, str):
            errors.append((path, repr(key), "must be a string"))
        else:
            errors.extend((path, key, msg) for msg in qualified_name_errors(key))
        if not isinstance(value, str):
            errors.append((path, repr(value), "must be a string"))
        else:
            errors.extend((path, value, msg) for msg in label_value_errors(value))
    return errors


def validate_annotations(
    annotations: Mapping[str, str] | None, path: str = "metadata.annotations"
) -> list[FieldError]:
    """Validate an object's annotations like Kubernetes' ``ValidateAnnotations``.

    Keys must be qualified names, compared case-insensitively (Kubernetes lower-cases the
    key first, so ``"Example.COM/Key"`` is accepted); values are free text. The total size
    of all keys and values must not exceed 262144 bytes (256 KiB, UTF-8), else one
    ``(path, "", "must have at most 262144 bytes")`` error. Returns ``(path, bad value,
    message)`` triples; ``[]`` when valid or when ``annotations`` is None.
    """
    errors: list[FieldError] = []
    if annotations is None:
        return errors
    total = 0
    for key, value in annotations.items():
        if not isinstance(key, str):
            errors.append((path, repr(key), "must be a string"))
            continue
        errors.extend((path, key, msg) for msg in qualified_name_errors(key.lower()))
        total += len(key.encode("utf-8"))
        if not isinstance(value, str):
            errors.append((path, repr(value), "must be a string"))
            continue
        total += len(value.encode("utf-8"))
    if total > ANNOTATIONS_SIZE_LIMIT:
        errors.append((path, "", f"must have at most {ANNOTATIONS_SIZE_LIMIT} bytes"))
    return errors


def port_number_errors(port: int) -> list[str]:
    """Check a TCP/UDP port number (``IsValidPortNum``): 1 to 65535 inclusive.

    Returns ``["must be between 1 and 65535, inclusive"]`` when out of range or not an
    integer (a bool is not a port), else ``[]``.
    """
    if isinstance(port, int) and not isinstance(port, bool) and 1 <= port <= 65535:
        return []
    return ["must be between 1 and 65535, inclusive"]


def c_identifier_errors(value: str) -> list[str]:
    """Check a C identifier (``IsCIdentifier``): ``[A-Za-z_][A-Za-z0-9_]*``.

    Kubernetes used this for environment variable names before relaxing the rule (see
    :func:`env_var_name_errors`). Returns Kubernetes' message, or ``[]`` when valid.
    """
    if _C_IDENTIFIER_RE.fullmatch(value):
        return []
    return [regex_error(_C_IDENTIFIER_MSG, _C_IDENTIFIER_FMT, "my_name", "MY_NAME", "MyName")]


def env_var_name_errors(value: str) -> list[str]:
    """Check an environment variable name (``IsRelaxedEnvVarName``, current Kubernetes).

    Any non-empty string of printable ASCII characters (space through ``~``) except
    ``=`` is valid: ``"MY_VAR"``, ``"my.var"``, ``"1st-var"``. Returns
    ``["environment variable name must be non-empty"]`` for ``""`` and Kubernetes'
    printable-ASCII message otherwise, or ``[]`` when valid.
    """
    errors: list[str] = []
    if not value:
        errors.append("environment variable name " + empty_error())
    if any(not (" " <= char <= "~") or char == "=" for char in value):
        errors.append(_ENV_VAR_NAME_MSG)
    return errors


def iana_svc_name_errors(value: str) -> list[str]:
    """Check an IANA service name (``IsValidPortName``), the rule for named ports.

    At most 15 characters of ``[a-z0-9-]``, at least one letter, no ``--``, no leading
    or trailing ``-``: ``"http"``, ``"metrics-1"`` are valid; ``"HTTP"``, ``"8080"``,
    ``"a--b"``, ``"-web"`` are not. Returns each broken rule's Kubernetes message, or ``[]``.
    """
    errors: list[str] = []
    if len(value) > IANA_SVC_NAME_MAX_LENGTH:
        errors.append(max_len_error(IANA_SVC_NAME_MAX_LENGTH))
    if not _IANA_SVC_NAME_CHARSET_RE.fullmatch(value):
        errors.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _IANA_SVC_NAME_LETTER_RE.search(value):
        errors.append("must contain at least one letter (a-z)")
    if "--" in value:
        errors.append("must not contain consecutive hyphens")
    if value.startswith("-") or value.endswith("-"):
        errors.append("must not begin or end with a hyphen")
    return errors


def config_map_key_errors(value: str) -> list[str]:
    """Check a ConfigMap or Secret key (``IsConfigMapKey``), which becomes a file name in
    volumes: at most 253 characters of ``[-._a-zA-Z0-9]``, not ``.`` or ``..`` and not
    starting with ``..`` (the kubelet's ``..data`` link lives next to the keys).

    Returns Kubernetes' messages (length, pattern, then the ``.`` rule), or ``[]`` when valid.
    """
    errors: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errors.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _CONFIG_MAP_KEY_RE.fullmatch(value):
        errors.append(regex_error(_CONFIG_MAP_KEY_MSG, _CONFIG_MAP_KEY_FMT, "key.name", "KEY_NAME", "key-name"))
    if value == ".":
        errors.append("must not be '.'")
    elif value == "..":
        errors.append("must not be '..'")
    elif value.startswith(".."):
        errors.append("must not start with '..'")
    return errors
