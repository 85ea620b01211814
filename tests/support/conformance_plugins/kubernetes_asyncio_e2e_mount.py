"""pytest plugin for kubernetes_asyncio's pinned e2e tests (``-p kubernetes_asyncio_e2e_mount``).

The tests import ``kubernetes_asyncio.e2e_test.base``: upstream, ``e2e_test`` is a package inside
the ``kubernetes_asyncio`` package, which the published wheel does not ship. This plugin adds the
pinned copy's folder (``$MINIK8S_CONFORMANCE_SOURCE``, ``../shared/conformance/kubernetes_asyncio``,
laid out as the package) to the installed package's ``__path__``, so that the import finds it
there, unmodified. It runs in the suite's own virtualenv, not in minik8s' one.
"""

import os

import kubernetes_asyncio

kubernetes_asyncio.__path__.append(os.environ["MINIK8S_CONFORMANCE_SOURCE"])
