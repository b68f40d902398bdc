"""The "sb3" conformance view: drive SB3's own DummyVecEnv (via ``make_vec_env``) with neutral actions.

What is checked is what SB3 hands to an algorithm: the auto-reset observation stream with
``info["terminal_observation"]`` on episode ends, and ``done`` + ``info["TimeLimit.truncated"]``
for the flags (one "done", so both-flags steps read as terminated: ``both_flags = False``).
Observations are ``to_sb3``'s own, float64 presented as float32 (the one float policy): the view
compares them with the tape through the same lowering's ``expected``. SB3 stores rewards as
float32; the view checks SB3's value equals float32 of the export's reward and reports the export's
exact Python float (tapped inside the VecEnv) for the bit-exact rule.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from bridge.adapters.sb3.export import to_sb3

from bridge.conformance.replay import StepOut, View
from bridge.env import Env


class SB3View(View):
    """One env in SB3's DummyVecEnv (with Monitor), as SB3's algorithms see it."""

    name = "sb3"
    both_flags = False

    def __init__(self, env: Env) -> None:
        from stable_baselines3.common.env_util import make_vec_env

        self.export = to_sb3(env)  # exactly what SB3 trains on (float64 presented as float32)
        self._tap = _reward_tap(self.export)
        # SB3's own make_vec_env: DummyVecEnv + Monitor around the (tapped) export
        self.vec = make_vec_env(lambda: self._tap, n_envs=1)
        self._pending: Any = None  # the observation SB3's auto-reset already produced
        self._decode = self.export.observation_lowering.decode
        self._encode_action = self.export.action_lowering.encode

    def expected(self, obs: Any) -> Any:
        return self.export.observation_lowering.expected(obs)

    def _first(self, batch: Any) -> Any:
        if isinstance(batch, dict):
            return self._decode({k: v[0] for k, v in batch.items()})
        return self._decode(batch[0])

    def reset(self, seed: Optional[int]) -> Any:
        if seed is None and self._pending is not None:
            obs, self._pending = self._pending, None
            return obs
        self.vec.seed(seed)
        return self._first(self.vec.reset())

    def step(self, action: Any) -> StepOut:
        obs, rewards, dones, infos = self.vec.step(np.asarray([self._encode_action(action)]))
        exact = self._tap.last_reward
        reward = exact if np.float32(exact) == rewards[0] else float(rewards[0])
        if not dones[0]:
            return self._first(obs), reward, False, False
        self._pending = self._first(obs)
        terminal = infos[0]["terminal_observation"]
        final = self._decode(terminal)
        truncated = bool(infos[0]["TimeLimit.truncated"])
        return final, reward, not truncated, truncated

    def clone_state(self) -> Any:
        return {"export": self.export.clone_state(), "pending": self._pending}

    def restore_state(self, snapshot: Any) -> None:
        self.export.restore_state(snapshot["export"])
        self._pending = snapshot["pending"]

    def close(self) -> None:
        self.vec.close()


def _reward_tap(export: Any) -> Any:
    """A Gymnasium wrapper that remembers the exact reward, before SB3 casts it to float32."""
    import gymnasium

    class RewardTap(gymnasium.Wrapper):
        last_reward = 0.0

        def step(self, action: Any) -> Any:
            out = self.env.step(action)
            self.last_reward = out[1]
            return out

    return RewardTap(export)
