"""minik8s' kubectl: the command line (:mod:`minik8s.kubectl.app`, one module per verb).

Start-up matters here (a kubectl command should answer in a blink), so importing this package
marks httpx's own command-line tool as absent: httpx imports it, and with it rich, pygments and
click, whenever they are installed (about 60 ms), and kubectl never uses it.  httpx then behaves
as when installed without its ``cli`` extra.
"""

import sys

sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
