"""How minik8s' HTTP listeners serve: uvicorn with bounded request heads, and TLS.

Every HTTP listener (apiserver, kubelet, gateway) builds its uvicorn server with
:func:`minik8s.serving.http.server_config`, so every one refuses a request head larger than
``max_head_bytes`` (431) and closes a connection whose head is not complete within
``header_timeout`` seconds (Go's ``http.Server.ReadHeaderTimeout``).
"""
