"""Ray RLlib 2.60 (new API stack) on neutral envs: ``register``, ``to_rllib``, ``to_rllib_vector``.

Inside: ``export`` (the exports and the env creator RLlib's registry holds), ``lowering`` (what
RLlib's default modules need, over the Gymnasium lowering), ``faults`` (env errors through Ray's
wrapping), ``profile`` (the "rllib" check), ``view`` (its conformance view, in a remote env runner),
``train`` (configs and the ``envbridge train rllib`` loop). See docs/rllib.md.
"""

from __future__ import annotations

from bridge.adapters.rllib.export import RLlibEnv, RLlibVectorEnv, register, to_rllib, to_rllib_vector
from bridge.adapters.rllib.faults import EnvRunnerFault, train_iteration

__all__ = ["register", "to_rllib", "to_rllib_vector", "RLlibEnv", "RLlibVectorEnv", "train_iteration", "EnvRunnerFault"]
