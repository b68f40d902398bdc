"""Training on neutral envs with SB3: ``envbridge demo`` and ``envbridge train sb3``.

The demo trains PPO on GridWorld through the export, compares the trained policy with random
play over 100 episodes each, prints a table and writes a learning-curve PNG. Its PPO settings and
step budget are tuned to reach a success rate of at least 0.9 in about two minutes on 2 CPU cores.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
from bridge.adapters._shared.curves import plot as _plot
from bridge.adapters._shared.curves import require_cli_extras as _require_cli_extras
from bridge.adapters.sb3.export import make_vec_env, to_sb3
from bridge.adapters.sb3.lowering import cnn_refusal, policy_for
from bridge.compat import optional_import

from bridge.errors import SpecError, message
from bridge.loading import env_source

stable_baselines3 = optional_import("stable_baselines3", "envbridge train sb3")
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402

__all__ = [
    "DEMO_ENV",
    "DEMO_STEPS",
    "DEMO_PPO",
    "EpisodeRecorder",
    "evaluate",
    "random_policy",
    "model_policy",
    "demo_command",
    "train_command",
]

DEMO_ENV = "envbridge/GridWorld-v0"
DEMO_STEPS = 40_000
DEMO_N_ENVS = 8
# tuned on GridWorld 5x5 (measured: see docs/gymnasium-sb3.md); small nets, short rollouts
DEMO_PPO: Dict[str, Any] = {
    "n_steps": 128,
    "batch_size": 256,
    "n_epochs": 4,
    "learning_rate": 1e-3,
    "gamma": 0.98,
    "gae_lambda": 0.95,
    "ent_coef": 0.01,
    "policy_kwargs": {"net_arch": [64, 64]},
}
ALGOS = ("PPO", "A2C", "DQN", "SAC", "TD3")
_DISCRETE_ONLY, _BOX_ONLY = ("DQN",), ("SAC", "TD3")


class EpisodeRecorder(BaseCallback):
    """Keeps ``(timestep, return, length)`` of every finished episode (from Monitor's info)."""

    def __init__(self) -> None:
        super().__init__()
        self.episodes: List[Tuple[int, float, int]] = []

    def _on_step(self) -> bool:
        for info in self.locals.get("infos", []):
            episode = info.get("episode")
            if episode is not None:
                self.episodes.append((self.num_timesteps, float(episode["r"]), int(episode["l"])))
        return True


Policy = Callable[[Any], Any]


def random_policy(env: Any) -> Policy:
    """Uniform actions drawn from a Generator seeded apart from the env's."""
    space = env.action_space
    space.seed(12345)
    return lambda obs: space.sample()


def model_policy(model: Any) -> Policy:
    """The model's deterministic action for one observation."""
    return lambda obs: model.predict(obs, deterministic=True)[0]


def evaluate(env: Any, policy: Policy, episodes: int = 100, seed: int = 1000) -> Dict[str, float]:
    """Play ``episodes``: success rate (``info["is_success"]`` at the end, else terminated), mean return, length."""
    successes, returns, lengths = 0, [], []
    obs, _ = env.reset(seed=seed)
    for _ in range(episodes):
        total, steps, done = 0.0, 0, False
        while not done:
            obs, reward, terminated, truncated, info = env.step(policy(obs))
            total, steps, done = total + reward, steps + 1, terminated or truncated
        successes += int(bool(info.get("is_success", terminated)))  # goal envs report success
        returns.append(total)
        lengths.append(steps)
        obs, _ = env.reset()
    return {"success": successes / episodes, "return": float(np.mean(returns)), "length": float(np.mean(lengths))}


def _table(rows: List[Tuple[str, Dict[str, float]]], episodes: int) -> str:
    lines = [f"{'policy':<8} {'episodes':>8} {'success':>8} {'mean return':>12} {'mean length':>12}"]
    for name, r in rows:
        lines.append(f"{name:<8} {episodes:>8d} {r['success']:>8.2f} {r['return']:>12.3f} {r['length']:>12.1f}")
    return "\n".join(lines)


def demo_command(args: Any) -> int:
    """Train PPO on GridWorld through the export; compare with random play; plot; save."""
    from stable_baselines3 import PPO

    progress = not getattr(args, "no_progress", False)
    plt = _require_cli_extras(progress)
    _few_threads()
    steps = args.steps if args.steps is not None else DEMO_STEPS
    os.makedirs(args.out, exist_ok=True)
    started = time.time()
    vec_env = make_vec_env(DEMO_ENV, n_envs=DEMO_N_ENVS, seed=args.seed)
    model = PPO("MlpPolicy", vec_env, seed=args.seed, verbose=0, **DEMO_PPO)
    recorder = EpisodeRecorder()
    print(f"envbridge demo: PPO on {DEMO_ENV} through to_gymnasium, {steps} steps, {DEMO_N_ENVS} envs")
    model.learn(total_timesteps=steps, callback=recorder, progress_bar=progress)
    trained_for = time.time() - started
    env = to_sb3(DEMO_ENV)
    rows = [("random", evaluate(env, random_policy(env))), ("PPO", evaluate(env, model_policy(model)))]
    print(_table(rows, 100))
    png = os.path.join(args.out, "learning_curve.png")
    _plot(plt, recorder.episodes, rows[0][1]["return"], png, f"PPO on {DEMO_ENV} (envbridge export)")
    model.save(os.path.join(args.out, "ppo_gridworld.zip"))
    print(f"trained in {trained_for:.1f} s; total {time.time() - started:.1f} s; learning curve: {png}")
    return 0


def _few_threads() -> None:
    """Small nets train faster on one torch thread than on contended ones."""
    import torch

    torch.set_num_threads(1)


def train_command(args: Any) -> int:
    """``envbridge train sb3 --algo A --env ID --steps N``: train, save the zip, print mean return."""
    from stable_baselines3.common.evaluation import evaluate_policy

    progress = not getattr(args, "no_progress", False)
    if progress:
        optional_import("tqdm", "the progress bar")
        optional_import("rich", "the progress bar")
    _few_threads()
    source = env_source(args.env)
    model = train(args.algo, source, args.steps, seed=args.seed, n_envs=args.n_envs, progress=progress)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{args.algo.lower()}_{re.sub(r'[^A-Za-z0-9_.-]+', '_', args.env)}.zip")
    model.save(path)
    mean, std = evaluate_policy(model, model.get_env(), n_eval_episodes=10, deterministic=True)
    print(
        f"{args.algo} on {args.env}: {args.steps} steps, mean return {mean:.3f} +/- {std:.3f} "
        f"over 10 episodes; saved {path}"
    )
    return 0


def train(
    algo: str,
    env: Any,
    steps: int,
    *,
    seed: int = 0,
    n_envs: int = 1,
    progress: bool = False,
    callback: Optional[Any] = None,
    **algo_kwargs: Any,
) -> Any:
    """Train SB3's ``algo`` on ``env`` through the export and return the model.

    ``env`` is what :func:`make_vec_env` takes: a registered id, a class or factory of bridge.Env,
    or a VectorEnv (class).

    The policy follows the exported observation (Mlp / Cnn / MultiInput); a goal env trained with
    an off-policy algorithm uses SB3's ``HerReplayBuffer``. ``algo_kwargs`` go to the algorithm.
    An image SB3's default CNN cannot convolve is a ConversionError (the "sb3" check profile's).
    """
    if algo not in ALGOS:
        raise SpecError(message("--algo", f"be one of {ALGOS}", algo, "Pick one"))
    vec_env = make_vec_env(env, n_envs=n_envs, seed=seed)
    _check_algo(algo, vec_env.action_space)
    cls = getattr(stable_baselines3, algo)
    kwargs: Dict[str, Any] = {"seed": seed, "verbose": 0}
    if algo in ("DQN", "SAC", "TD3") and _is_goal_env(vec_env):
        from stable_baselines3 import HerReplayBuffer

        kwargs.update(
            replay_buffer_class=HerReplayBuffer,
            replay_buffer_kwargs={"n_sampled_goal": 4, "goal_selection_strategy": "future"},
        )
    kwargs.update(algo_kwargs)
    policy = policy_for(vec_env.observation_space)
    too_small = cnn_refusal(vec_env.observation_space, policy, kwargs.get("policy_kwargs"))
    if too_small is not None:  # else torch fails deep inside the model's constructor
        vec_env.close()
        raise too_small
    model = cls(policy, vec_env, **kwargs)
    model.learn(total_timesteps=steps, progress_bar=progress, callback=callback)
    return model


def _is_goal_env(vec_env: Any) -> bool:
    try:
        vec_env.get_attr("compute_reward", indices=[0])
    except AttributeError:
        return False
    return True


def _check_algo(algo: str, action_space: Any) -> None:
    import gymnasium

    if algo in _DISCRETE_ONLY and not isinstance(action_space, gymnasium.spaces.Discrete):
        raise SpecError(
            message(
                f"the action space for {algo}",
                "be Discrete",
                repr(action_space),
                "Use PPO or A2C, or SAC/TD3 for a Box",
            )
        )
    if algo in _BOX_ONLY and not isinstance(action_space, gymnasium.spaces.Box):
        raise SpecError(
            message(
                f"the action space for {algo}",
                "be a Box",
                repr(action_space),
                "Use PPO, A2C or DQN for discrete actions",
            )
        )
