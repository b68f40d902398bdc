"""Envs hosted in another Python interpreter: :func:`bridge.remote` (client), the host entry
``python -m bridge.hosted.host`` and their pickle-free wire format (protocol)."""
