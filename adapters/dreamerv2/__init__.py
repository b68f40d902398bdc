"""Export a neutral env to DreamerV2 2.2.0 (legacy era: Gym 0.23, TensorFlow 2.6).

* :func:`to_dreamerv2`: the chain ``dreamerv2.api.train`` builds, from DreamerV2's own classes
  (GymWrapper -> ResizeImage -> OneHotAction | NormalizeAction -> TimeLimit), over a
  :class:`DreamerReadyEnv` (the lowering in :mod:`bridge.adapters.dreamerv2.lowering`);
* :func:`check`: DreamerV2's pre-flight gate without training (also the "dreamerv2" profile of
  :func:`bridge.check`);
* :func:`train`: ``dreamerv2.api.train`` with a config derived from the env;
  :func:`train_command` backs ``envbridge train dreamerv2``.

Importing this module imports gym only; TensorFlow and DreamerV2 load on first use.
"""

from __future__ import annotations

from bridge.adapters.dreamerv2.actions import ActionLowering
from bridge.adapters.dreamerv2.export import DreamerReadyEnv, build_chain, to_dreamer_ready, to_dreamerv2, wrap_chain
from bridge.adapters.dreamerv2.loader import load_dreamerv2
from bridge.adapters.dreamerv2.lowering import ObservationLowering
from bridge.adapters.dreamerv2.profile import check, key_regex
from bridge.adapters.dreamerv2.train import dreamer_config, replay_episodes, train, train_command

__all__ = [
    "to_dreamerv2",
    "to_dreamer_ready",
    "DreamerReadyEnv",
    "build_chain",
    "wrap_chain",
    "check",
    "train",
    "train_command",
    "dreamer_config",
    "replay_episodes",
    "key_regex",
    "load_dreamerv2",
    "ObservationLowering",
    "ActionLowering",
]
