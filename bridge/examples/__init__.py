"""Example environments, each passing ``bridge.check``; registered under ``envbridge/...``."""

from __future__ import annotations

from bridge.examples.cartpole import CartPole, CartPoleVector
from bridge.examples.goalreach import GoalReach
from bridge.examples.gridworld import GridWorld
from bridge.examples.multimodal import MultiModal
from bridge.examples.pixelgrid import PixelGrid
from bridge.examples.pointmass import PointMass

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

# id -> (entry point, max_episode_steps); registered by bridge/__init__.py without importing us
EXAMPLE_IDS = {
    "envbridge/GridWorld-v0": ("bridge.examples.gridworld:GridWorld", 100),
    "envbridge/PointMass-v0": ("bridge.examples.pointmass:PointMass", 50),
    "envbridge/PixelGrid-v0": ("bridge.examples.pixelgrid:PixelGrid", 50),
    "envbridge/MultiModal-v0": ("bridge.examples.multimodal:MultiModal", 40),
    "envbridge/GoalReach-v0": ("bridge.examples.goalreach:GoalReach", 30),
    "envbridge/CartPole-v0": ("bridge.examples.cartpole:CartPole", 500),
}
