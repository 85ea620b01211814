from minik8s.cli import main

main()
