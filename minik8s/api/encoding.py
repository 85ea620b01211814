"""JSON as kube-apiserver writes it: Go's ``encoding/json`` ``Encoder`` (the apiserver's JSON serializer).

:func:`encode_json` gives the bytes a Kubernetes client reads from kube-apiserver for the same
value — compact, UTF-8 (not ``\\u`` escapes) except ``<``, ``>``, ``&``, U+2028 and U+2029, which
Go escapes (``SetEscapeHTML``'s default), and a newline at the end (``Encoder.Encode`` writes one
after every value).  Clients compare these texts (the official Python client's ``create_from_yaml``
puts the body of a failed create in its error), so the apiserver and every listener that answers a
``Status`` use it.  Key order is the dict's own: see :func:`minik8s.api.errors.status_object` and the
apiserver's stored wire order for objects.
"""

from __future__ import annotations

import json
from typing import Any

#: What Go's encoder escapes that Python's does not (with ``ensure_ascii=False``).
_GO_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def encode_json(value: Any) -> bytes:
    """``value`` as Go's ``json.NewEncoder(w).Encode(value)`` writes it (see the module docstring).

    Raises ValueError for NaN or infinite floats (Go refuses them too) and TypeError for a value that
    is not JSON (a set, bytes)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for char, escape in _GO_ESCAPES:
        if char in text:  # only inside strings: JSON's own syntax has none of them
            text = text.replace(char, escape)
    try:
        return text.encode() + b"\n"
    except UnicodeEncodeError:  # a lone surrogate (from a "\ud800" escape): no UTF-8 for it, so escapes
        return json.dumps(value, separators=(",", ":"), allow_nan=False).encode() + b"\n"
