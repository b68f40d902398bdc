"""Example environments, each passing ``bridge.check``; registered under ``envbridge/...``."""

from __future__ import annotations

from bridge.examples.cartpole import CartPole, CartPoleVector
from bridge.examples.goalreach import GoalReach
from bridge.examples.gridworld import GridWorld
from bridge.examples.multimodal import MultiModal
from bridge.examples.pixelgrid import PixelGrid
from bridge.examples.pointmass import PointMass
from bridge.registry import EXAMPLE_IDS

__all__ = [
    "GridWorld",
    "PointMass",
    "PixelGrid",
    "MultiModal",
    "GoalReach",
    "CartPole",
    "CartPoleVector",
    "EXAMPLE_IDS",
]

# the ids the registry knows them by (bridge.registry.EXAMPLE_IDS: id -> (entry point, max_episode_steps))
