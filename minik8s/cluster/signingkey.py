"""The service-account signing key of a local cluster (``minik8s up``).

kube-apiserver signs service-account tokens with ``--service-account-signing-key-file``; kubeadm
and k3s make that key once, at cluster creation, and keep it.  :func:`ensure_signing_key` does the
same: an EC P-256 key (ES256 tokens), PEM (PKCS#8), mode 0600, made only when the file is missing,
so tokens issued before a restart stay valid after it.
"""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec


def ensure_signing_key(path: Path) -> Path:
    """Create the key at ``path`` unless it exists; return ``path``.  OSError when it cannot be written."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(pem)
    return path
