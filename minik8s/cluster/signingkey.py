"""The keys of a local cluster (``minik8s up``): the service-account signing key and the key that
encrypts Secrets in etcd.

kube-apiserver signs service-account tokens with ``--service-account-signing-key-file``; kubeadm
and k3s make that key once, at cluster creation, and keep it.  :func:`ensure_signing_key` does the
same: an EC P-256 key (ES256 tokens), PEM (PKCS#8), mode 0600, made only when the file is missing,
so tokens issued before a restart stay valid after it.  :func:`ensure_encryption_config` writes, once,
the apiserver's ``--encryption-provider-config``: Secrets encrypted with a random 32-byte AES-GCM key
(Kubernetes' ``aesgcm`` provider), ``identity`` second so data written before still reads.
"""

from __future__ import annotations

import base64
import os
import secrets
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


def ensure_encryption_config(path: Path) -> Path:
    """Write the EncryptionConfiguration at ``path`` (mode 0600) unless it exists; return ``path``."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        key = base64.b64encode(secrets.token_bytes(32)).decode()
        text = ("apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n"
                "  - resources: [secrets]\n    providers:\n"
                f"      - aesgcm:\n          keys:\n            - name: key1\n              secret: {key}\n"
                "      - identity: {}\n")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
    return path
