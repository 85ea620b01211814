"""The client side every component shares: ``rest.py`` (the REST client), ``kubeconfig.py``,
``informer.py``, ``factory.py`` (shared informers), ``workqueue.py``, ``events.py``,
``leaderelection.py``, ``flags.py``, ``nodeheartbeat.py``.  Import each from its module
(``from minik8s.client.rest import Client``): this package imports nothing, so a command that
needs only the REST client (kubectl) does not pay for the informers."""
