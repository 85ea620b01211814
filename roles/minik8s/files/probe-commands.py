"""Print {command: [flags]} for each `minik8s <command>` whose `--help` works.

Run on a host with the virtualenv's python: probe-commands.py MINIK8S_BIN COMMAND...
A command that does not exist yet (or fails to load) is left out.
"""

import json
import os
import re
import subprocess
import sys

binary, commands = sys.argv[1], sys.argv[2:]
env = dict(os.environ, COLUMNS="250", NO_COLOR="1", TERM="dumb")
found = {}
for command in commands:
    proc = subprocess.run([binary, command, "--help"], capture_output=True, text=True, env=env, timeout=120)
    if proc.returncode == 0:
        found[command] = sorted(set(re.findall(r"--[a-z0-9][a-z0-9-]*", proc.stdout)))
print(json.dumps(found))
