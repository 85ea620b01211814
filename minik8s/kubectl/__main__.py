"""``python3 -m minik8s.kubectl``."""

from minik8s.kubectl.app import main

main()
