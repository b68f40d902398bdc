"""The episode loop of :func:`bridge.adapters.matlab.workflow.training.train`, on SB3 (imported only by ``train``).

An SB3 callback plays MATLAB's Episode Manager: it keeps each episode's reward, steps and Q0 in
the order episodes end, checks the stop and save criteria after every episode and stops SB3 at
exactly the episode where the stop criterion is first met (or at ``MaxEpisodes``).
"""

from __future__ import annotations

import os
import time
from typing import Any, List, Optional, Tuple

import numpy as np
from bridge.adapters.matlab.workflow.agent_files import save
from bridge.adapters.matlab.workflow.agents import Agent, sb3
from bridge.adapters.matlab.workflow.progress import TrainingProgress

sb3("train (the MATLAB facade trains with SB3)")
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402

__all__ = ["run", "EpisodeManager", "met"]


def met(criterion: str, value: float, row: List[float]) -> bool:
    """Whether ``criterion`` (an rlTrainingOptions name) holds for one statistics row."""
    index, reward, steps, average_reward, average_steps, total, q0 = row
    measured = {
        "AverageReward": average_reward,
        "EpisodeReward": reward,
        "AverageSteps": average_steps,
        "EpisodeSteps": steps,
        "EpisodeCount": index,
        "GlobalStepCount": total,
        "EpisodeQ0": q0,
    }.get(criterion)
    return measured is not None and measured >= value


class EpisodeManager(BaseCallback):
    """Statistics per episode, the criteria, the progress files; stops SB3 at the right episode."""

    def __init__(self, agent: Agent, opts: Any, progress: TrainingProgress) -> None:
        super().__init__()
        self.agent, self.opts, self.progress = agent, opts, progress
        self.rows: List[List[float]] = []
        self.reason = "MaxEpisodes"
        self._returns: Any = None

    def _on_training_start(self) -> None:
        n = self.training_env.num_envs
        self._returns, self._lengths = np.zeros(n), np.zeros(n, dtype=np.int64)
        self._q0 = [self._value(self.model._last_obs, i) for i in range(n)]

    def _value(self, observations: Any, i: int) -> float:
        obs = {k: v[i] for k, v in observations.items()} if isinstance(observations, dict) else observations[i]
        return self.agent.q0_encoded(obs)

    def _on_step(self) -> bool:
        schedule = getattr(self.model, "exploration_schedule", None)
        if hasattr(schedule, "t"):  # MATLAB's per-step epsilon decay
            schedule.t += self.training_env.num_envs
        self._returns += self.locals["rewards"]
        self._lengths += 1
        for i in np.flatnonzero(self.locals["dones"]):
            if not self._episode(int(i)):
                return False
        return True

    def _episode(self, i: int) -> bool:
        opts, window = self.opts, self.opts.ScoreAveragingWindowLength
        k = len(self.rows) + 1
        recent = self.rows[-(window - 1) :] if window > 1 else []
        reward, steps = float(self._returns[i]), int(self._lengths[i])
        average_reward = float(np.mean([r[1] for r in recent] + [reward]))
        average_steps = float(np.mean([r[2] for r in recent] + [steps]))
        row = [k, reward, steps, average_reward, average_steps, self.num_timesteps, self._q0[i]]
        self.rows.append(row)
        self._returns[i], self._lengths[i] = 0.0, 0
        self._q0[i] = self._value(self.locals["new_obs"], i)  # same-step autoreset: the next episode's first
        if met(opts.SaveAgentCriteria, opts.SaveAgentValue, row):
            os.makedirs(opts.SaveAgentDirectory, exist_ok=True)
            save(os.path.join(opts.SaveAgentDirectory, f"Agent{k}.zip"), self.agent)
        if met(opts.StopTrainingCriteria, opts.StopTrainingValue, row):
            self.reason = opts.StopTrainingCriteria
        stop = self.reason != "MaxEpisodes" or k >= opts.MaxEpisodes
        self.progress.episode(row, final=stop)
        return not stop


def run(agent: Agent, env: Any, opts: Any, seed: Optional[int]) -> Tuple[List[List[float]], str, float]:
    """Train ``agent`` on ``env`` (already limited to MaxStepsPerEpisode); the rows, the reason, seconds."""
    import torch
    from bridge.adapters.sb3.export import make_vec_env

    started = time.time()
    torch.set_num_threads(1)  # small nets train faster on one thread than on contended ones (2-core CI); reproducible
    vec_env = make_vec_env(env, n_envs=1, seed=seed)
    model = agent.use_env(vec_env, seed)
    if seed is not None:
        model.set_random_seed(seed)
    if opts.Verbose:
        from bridge.adapters.sb3.lowering import POLICY_REASONS

        why = POLICY_REASONS[agent.policy]
        print(f"{agent.kind}: SB3 {agent.algorithm} with {agent.policy!r} ({why})", flush=True)
    progress = TrainingProgress(agent.kind, repr(env), opts, started)
    manager = EpisodeManager(agent, opts, progress)
    budget = (opts.MaxEpisodes + vec_env.num_envs) * opts.MaxStepsPerEpisode
    try:
        model.learn(total_timesteps=budget, callback=manager, reset_num_timesteps=True)
    finally:
        progress.close(manager.reason)
    return manager.rows, manager.reason, time.time() - started
