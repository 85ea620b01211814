"""What the tests share that is not a test: helpers, stand-ins and process wrappers.

* :mod:`.waiting` — :func:`~.waiting.wait_for` / :func:`~.waiting.wait_for_sync`, the one way
  a test waits for a condition (polling with a deadline, never a fixed sleep);
* :mod:`.processes` — a throwaway etcd and a real ``minik8s apiserver`` process;
* :mod:`.pki` — a test CA and certificates;
* :mod:`.controllers` — the controller-manager in-process and a simulated node (what the
  scheduler and kubelet would do, over the API);
* :mod:`.metrics` — an apiserver with a fast metrics scraper and a kubelet stats stand-in;
* :mod:`.kubelet`, :mod:`.proxy`, :mod:`.dns`, :mod:`.kubectl` — the kubelet, kube-proxy,
  DNS server and kubectl as the integration tests drive them.

Fixtures live in ``conftest.py`` files (``tests/conftest.py``: etcd, apiserver, client,
namespace; ``tests/integration/conftest.py``: those several integration modules share);
test modules import helpers from here, never from each other.
"""
