"""Importers: envs people already have (Gymnasium 1.x, gym 0.21-0.26) brought in as neutral
:class:`bridge.Env` s, so every export reaches them.

``spaces.py`` reverse-lowers a framework's spaces (one implementation for Gymnasium's and gym's
space classes, which share their design); ``source.py`` is the neutral env over a foreign one
(episode ends, seeding, snapshots); ``gymnasium.py`` and ``gym.py`` are the two entry points.
Importing this package imports no framework.
"""
