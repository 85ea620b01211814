"""minik8s controllers, run by ``minik8s controller-manager`` (:mod:`minik8s.controllers.main`).

One module per controller, each a :class:`~minik8s.controllers.base.Controller` whose
informer handlers only enqueue keys and whose ``sync(key)`` reconciles from the shared
caches (:class:`minik8s.client.factory.SharedInformerFactory`):

* :mod:`~minik8s.controllers.replicaset` — ReplicaSet (pods, expectations, status);
* :mod:`~minik8s.controllers.deployment` — Deployment (rollouts through ReplicaSets);
* :mod:`~minik8s.controllers.job` — Job (pods to completion, back-off, deadlines, suspend, TTL);
* :mod:`~minik8s.controllers.cronjob` — CronJob (Jobs at cron schedule times);
* :mod:`~minik8s.controllers.podautoscaler` — HorizontalPodAutoscaler (cpu/memory metrics,
  behavior policies, the scale subresource);
* :mod:`~minik8s.controllers.garbagecollector` — ownerReference garbage collection;
* :mod:`~minik8s.controllers.endpoints` — Endpoints of selector Services;
* :mod:`~minik8s.controllers.nodeipam` — Node podCIDRs from the cluster CIDR;
* :mod:`~minik8s.controllers.nodelifecycle` — node health from Leases: Ready=Unknown,
  not-ready/unreachable taints, rate-limited evictions;
* :mod:`~minik8s.controllers.dnsrecords` — nginx Deployment + Service per DNS object / Ingress
  (configuration text from :mod:`~minik8s.controllers.nginxconf`);
* :mod:`~minik8s.controllers.persistentvolume` — the PV binder: claims to volumes, phases, reclaim;
* :mod:`~minik8s.controllers.volumeprotection` — the pvc-protection and pv-protection finalizers;
* :mod:`~minik8s.controllers.localpath` — the ``local-path`` StorageClass and its provisioner;
* :mod:`~minik8s.controllers.gpujob` — GPUJobs run as Slurm batch jobs over SSH, and the
  SlurmCluster checks (a package: SSH, Slurm text, results, the two controllers).

Pure logic lives beside them: :mod:`~minik8s.controllers.podutil` (pod states, scale-down
order), :mod:`~minik8s.controllers.expectations`, :mod:`~minik8s.controllers.deploymentutil`
(hash, surge/unavailable, rollout steps, status) and :mod:`~minik8s.controllers.ownerrefs`
(adoption and release).  :mod:`~minik8s.controllers.manager` runs the selected controllers over
one shared informer factory; :mod:`~minik8s.controllers.main` is the command and its flags.
"""
