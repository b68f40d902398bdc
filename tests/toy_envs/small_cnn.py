"""A features extractor for 16x16 images (SB3's NatureCNN needs 36x36), and the policy_kwargs that
use it: ``envbridge train sb3 --policy-kwargs toy_envs.small_cnn:SMALL_CNN_KWARGS`` (modern era)."""

from __future__ import annotations

from typing import Any

import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor


class SmallCNN(BaseFeaturesExtractor):
    """One 3x3 stride-2 convolution and a linear layer: 16x16x3 -> 16 features."""

    def __init__(self, observation_space: Any, features_dim: int = 16) -> None:
        super().__init__(observation_space, features_dim)
        channels, height, width = observation_space.shape  # SB3 presents images channel-first
        out = ((height - 3) // 2 + 1) * ((width - 3) // 2 + 1) * 4
        self.net = torch.nn.Sequential(
            torch.nn.Conv2d(channels, 4, 3, stride=2),
            torch.nn.ReLU(),
            torch.nn.Flatten(),
            torch.nn.Linear(out, features_dim),
            torch.nn.ReLU(),
        )

    def forward(self, observations: Any) -> Any:
        return self.net(observations)


SMALL_CNN_KWARGS = {"features_extractor_class": SmallCNN, "net_arch": [16]}
