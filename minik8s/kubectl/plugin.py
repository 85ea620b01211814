"""kubectl plugins, both ways round (Kubernetes' "Extend kubectl with plugins").

* minik8s' own verbs as plugins of any kubectl: the executables ``kubectl-function``,
  ``kubectl-workflow``, ``kubectl-event`` and ``kubectl-gpujob`` (console scripts of the package,
  ``minik8s.kubectl.app``'s ``function_plugin`` ...). The official kubectl runs ``kubectl-function ARGS...`` for
  ``kubectl function ARGS...``, with its own environment (``KUBECONFIG``); flags go after the
  plugin's name, as kubectl requires of plugins.
* Plugins on ``PATH`` from minik8s' kubectl: a command line whose verb kubectl does not have runs
  the plugin named by its longest run of leading words (``kubectl foo bar x`` runs
  ``kubectl-foo-bar x`` if it exists, else ``kubectl-foo bar x``; a dash inside a word is an
  underscore in the file name), replacing this process; ``kubectl plugin list`` lists them.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

#: minik8s' verbs that are also installed as ``kubectl-<verb>`` plugins.
PLUGIN_VERBS = ("function", "workflow", "event", "gpujob")
PREFIX = "kubectl-"


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _path_dirs() -> list[Path]:
    return [Path(d) for d in os.environ.get("PATH", "").split(os.pathsep) if d]


def find(words: Sequence[str]) -> tuple[Path, int] | None:
    """The plugin for a command line's leading ``words`` (non-flag arguments) and how many of them
    its name took: the longest name first, the first match on ``PATH``; None if there is none."""
    names = []
    for word in words:
        if word.startswith("-"):
            break
        names.append(word.replace("-", "_"))
    for n in range(len(names), 0, -1):
        found = shutil.which(PREFIX + "-".join(names[:n]))
        if found is not None:
            return Path(found), n
    return None


def run(plugin: Path, args: list[str]) -> None:
    """Replace this process with ``plugin args...`` (its exit code is kubectl's)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(plugin, [str(plugin), *args])


def listing(overwrites: Callable[[list[str]], str | None]) -> list[tuple[Path, list[str]]]:
    """``kubectl plugin list``: each plugin on ``PATH`` (in ``PATH`` order, each directory's sorted
    by name, each directory once) with its warnings: not executable, overshadowed by one of the same
    name earlier on ``PATH``, or overwriting the kubectl command that ``overwrites`` finds for its
    name's words (the command's path, or None)."""
    found: list[tuple[Path, list[str]]] = []
    seen: dict[str, Path] = {}
    for directory in dict.fromkeys(_path_dirs()):
        try:
            entries = sorted(directory.iterdir())
        except OSError:
            continue
        for entry in entries:
            if not entry.name.startswith(PREFIX) or entry.is_dir():
                continue
            warnings = []
            if not _executable(entry):
                warnings.append(f"warning: {entry} identified as a kubectl plugin, but it is not executable")
            if entry.name in seen:
                warnings.append(f"warning: {entry} is overshadowed by a similarly named plugin: {seen[entry.name]}")
            else:
                seen[entry.name] = entry
            command = overwrites(entry.name.split("-")[1:])
            if command is not None:
                warnings.append(f'warning: {entry.name} overwrites existing command: "{command}"')
            found.append((entry, warnings))
    return found
