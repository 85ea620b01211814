"""What the node agents (kubelet, proxy) share about the host they run on.

* :mod:`.errors` — one error hierarchy: :class:`~.errors.HostError`, with
  :class:`~.errors.CommandFailed` (a host command failed) and :class:`~.errors.ConfigError`
  (a flag value the agent cannot use);
* :mod:`.commands` — running host commands (``ip``, ``bridge``, ``iptables``, ``modprobe``)
  with a bounded time, through a :data:`~.commands.Runner` that tests point at another
  network namespace or at a fake;
* :mod:`.iptables` — iptables programming: single rules in one chain (``-C``/``-A``/``-I``/
  ``-D``/``-S``/``-N``/``-X``) and whole tables (``iptables-save`` / ``iptables-restore``).

Which rules an agent wants is the agent's business (the kubelet's pod-network chains,
kube-proxy's Service chains); this package only carries them out.
"""
