"""Exports of neutral envs to target runtimes, one module per runtime (heavy imports inside each).

``bridge.adapters.gymnasium`` and ``.sb3`` (modern era), ``.gym`` and ``.dreamerv2`` (legacy era),
``.matlab`` (both eras). Importing this package imports no framework.
"""
