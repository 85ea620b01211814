"""``minik8s hollow-node``: a simulator of many kubelets (kubemark's hollow nodes, KWOK) for scale runs."""
