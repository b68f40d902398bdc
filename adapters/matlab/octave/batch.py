"""``rlFunctionVectorEnv`` over ``.m`` functions: NumEnv instances of your single-env step and reset
functions in one Octave process, one round trip per batch step.

Octave keeps one LoggedSignals per instance and loops over them; the facade sees the batched
functions it knows (``step(Action, EnvData)`` with the instances on the leading axis, ``reset(EnvData,
ResetMask, rng)``), ``EnvData`` being a :class:`~bridge.adapters.matlab.octave.runner.LoggedSignals`
token for all of them. The fast layout is the single env's, instance after instance; any instance
off it sends every instance's outputs back for the facade's batched conversion and refusals. Each
instance a reset reaches is seeded with two words of the batch's Generator.
"""

from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np
from bridge.adapters.matlab.octave import session as _session
from bridge.adapters.matlab.octave.runner import LoggedSignals, OctaveFunctions, seed_words

__all__ = ["OctaveBatch"]


def _per_instance(batch: np.ndarray, dims: Tuple[int, ...]) -> np.ndarray:
    """(N, prod(dims)) in MATLAB's column-major order -> (N,) + dims."""
    n = batch.shape[0]
    return batch.reshape((n,) + tuple(reversed(dims))).transpose((0,) + tuple(range(len(dims), 0, -1)))


class OctaveBatch(OctaveFunctions):
    """The session, layout and tokens of NumEnv instances (see the module docstring)."""

    def step(self, Action: Any, EnvData: Any) -> Tuple[Any, Any, Any, LoggedSignals]:  # type: ignore[override]
        if EnvData is not self.current:
            self._put_back(EnvData)
        n = self.num_envs
        actions = np.asarray(Action, dtype=np.float64).reshape((n,) + tuple(self.act_dims))
        flat = actions.transpose((0,) + tuple(range(actions.ndim - 1, 0, -1))).reshape(n, -1)  # each column-major
        status, reply = self.session.call(_session.BATCH_STEP, flat.tobytes(), "step")
        if status == _session.OK:
            data = self._doubles(reply, n * (self.nobs + 2)).reshape(n, self.nobs + 2)
            done = data[:, self.nobs + 1] == 1.0
            return self._observations(data[:, : self.nobs]), data[:, self.nobs].copy(), done, self._advance()
        outs = self._off_layout(status, reply, 3 * n)
        obs = self._stacked([outs[3 * k] for k in range(n)])
        rewards = [outs[3 * k + 1] for k in range(n)]
        dones = [outs[3 * k + 2] for k in range(n)]
        return obs, _array(rewards), _array(dones), self._advance()

    def reset(self, EnvData: Any, ResetMask: np.ndarray, rng: np.random.Generator) -> Tuple[Any, LoggedSignals]:  # type: ignore[override]
        if EnvData is not self.current and EnvData is not None:
            self._put_back(EnvData)
        mask = np.asarray(ResetMask, dtype=bool).reshape(self.num_envs)
        words = np.zeros((2, self.num_envs))
        for k in np.flatnonzero(mask):
            words[:, k] = seed_words(rng)
        job = _session.values.pack({"mask": mask.reshape(1, -1), "words": words}, "reset")
        status, reply = self.session.call(_session.BATCH_RESET, job, "reset")
        if status == _session.OK:
            data = self._doubles(reply, self.num_envs * self.nobs).reshape(self.num_envs, self.nobs)
            return self._observations(data), self._advance()
        outs = self._off_layout(status, reply, self.num_envs)
        filler = [np.zeros(dims) for _, dims, _, _ in self.obs_layout]
        kept = [o if m else (filler if len(filler) > 1 else filler[0]) for o, m in zip(outs, mask)]
        return self._stacked(kept), self._advance()

    def _observations(self, data: np.ndarray) -> Any:
        parts, at = [], 0
        for n, dims, dtype, _ in self.obs_layout:
            parts.append(_per_instance(data[:, at : at + n], dims).astype(dtype))
            at += n
        return parts[0] if len(parts) == 1 else parts

    def _stacked(self, values: List[Any]) -> Any:
        """Per-instance outputs as Octave gave them -> one batch (per channel), for the facade to judge."""
        if len(self.obs_layout) == 1:
            return _array(values)
        channels = [
            [v[i] if isinstance(v, list) and i < len(v) else v for v in values] for i in range(len(self.obs_layout))
        ]
        return [_array(c) for c in channels]


def _array(values: List[Any]) -> Any:
    try:
        return np.stack([np.asarray(v) for v in values])
    except ValueError:  # instances of different sizes: the facade's decoder names the size it wanted
        return np.asarray(values, dtype=object)
