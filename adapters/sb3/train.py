"""Training on neutral envs with SB3: ``envbridge demo`` and ``envbridge train sb3``.

The demo trains PPO on GridWorld through the export, compares the trained policy with random
play over 100 episodes each, prints a table and writes a learning-curve PNG. Its PPO settings and
step budget are tuned to reach a success rate of at least 0.9 in about two minutes on 2 CPU cores.
"""

from __future__ import annotations

import ast
import os
import re
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
from bridge.adapters._shared.curves import plot as _plot
from bridge.adapters._shared.curves import require_cli_extras as _require_cli_extras
from bridge.adapters.sb3.export import make_vec_env, to_sb3
from bridge.adapters.sb3.lowering import POLICY_REASONS, cnn_refusal, policy_for
from bridge.compat import optional_import

from bridge import arguments
from bridge.config import Key, check_keys, count, fraction, number
from bridge.config import read as read_config
from bridge.errors import SpecError, message
from bridge.registry import load_entry_point

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
    "CONFIG_KEYS",
    "policy_kwargs_from",
]

DEMO_ENV = "envbridge/GridWorld-v0"
DEMO_STEPS = 40_960  # 40 rollouts of 8 envs x 128 steps: PPO learns in whole rollouts
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


def random_return(vec_env: Any, episodes: int = 10, seed: int = 12345) -> float:
    """Mean return of uniform actions over ``episodes`` finished episodes of an SB3 VecEnv (scalar
    envs under Monitor or a batched VecEnv: both report ``info["episode"]``)."""
    space = vec_env.action_space
    space.seed(seed)
    vec_env.reset()
    returns: List[float] = []
    while len(returns) < episodes:
        _, _, _, infos = vec_env.step(np.stack([space.sample() for _ in range(vec_env.num_envs)]))
        returns += [float(info["episode"]["r"]) for info in infos if "episode" in info]
    return float(np.mean(returns[:episodes]))


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
    os.makedirs(args.logdir, exist_ok=True)
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
    png = os.path.join(args.logdir, "learning_curve.png")
    _plot(plt, recorder.episodes, rows[0][1]["return"], png, f"PPO on {DEMO_ENV} (envbridge export)")
    model.save(os.path.join(args.logdir, "ppo_gridworld.zip"))
    print(f"trained in {trained_for:.1f} s; total {time.time() - started:.1f} s; learning curve: {png}")
    return 0


def _few_threads() -> None:
    """Small nets train faster on one torch thread than on contended ones."""
    import torch

    torch.set_num_threads(1)


# --config keys of `envbridge train sb3`: SB3's hyperparameters, each with its type and range
_ON_POLICY = {
    "n_steps": Key(count(1), "env steps per env and rollout"),
    "n_epochs": Key(count(1), "optimisation passes over a rollout (PPO)"),
    "gae_lambda": Key(fraction, "GAE lambda"),
    "ent_coef": Key(number(0.0), "entropy bonus"),
    "vf_coef": Key(number(0.0), "value loss weight"),
    "clip_range": Key(number(0.0, open_low=True), "PPO's clip range"),
}
_OFF_POLICY = {
    "buffer_size": Key(count(1, 10_000_000), "replay buffer size"),
    "learning_starts": Key(count(0), "env steps before learning starts"),
    "tau": Key(number(0.0, 1.0, open_low=True), "target network soft-update rate"),
    "train_freq": Key(count(1), "env steps between updates"),
    "gradient_steps": Key(count(1), "gradient steps per update"),
}
_RATE = {"learning_rate": Key(number(0.0, open_low=True), "optimiser step size"), "gamma": Key(fraction, "discount")}
_BATCH = {"batch_size": Key(count(1), "minibatch size")}
_CLIP = {"max_grad_norm": Key(number(0.0, open_low=True), "gradient clip norm")}
CONFIG_KEYS = {
    "PPO": {**_RATE, **_BATCH, **_CLIP, **_ON_POLICY},
    "A2C": {**_RATE, **_CLIP, **{k: _ON_POLICY[k] for k in ("n_steps", "gae_lambda", "ent_coef", "vf_coef")}},
    "DQN": {
        **_RATE,
        **_BATCH,
        **_CLIP,
        **_OFF_POLICY,
        "exploration_fraction": Key(fraction, "share of training with a decaying epsilon"),
        "exploration_final_eps": Key(fraction, "final epsilon"),
        "target_update_interval": Key(count(1), "env steps between target updates"),
    },
    "SAC": {**_RATE, **_BATCH, **_OFF_POLICY},
    "TD3": {**_RATE, **_BATCH, **_OFF_POLICY, "policy_delay": Key(count(1), "critic updates per actor update")},
}


def policy_kwargs_from(text: Optional[str]) -> Optional[Dict[str, Any]]:
    """``--policy-kwargs``: a Python dict literal (no code runs: ``ast.literal_eval``) or
    ``module:attr`` naming a dict in the user's module (for a features extractor class)."""
    if text is None:
        return None
    if not text.lstrip().startswith("{") and ":" in text:
        value = load_entry_point(text)
    else:
        if len(text) > 10_000:
            raise SpecError(
                message(
                    "--policy-kwargs",
                    "be at most 10000 characters",
                    f"{len(text)}",
                    "Name a dict in a module: MODULE:ATTR",
                )
            )
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError) as e:
            fix = "Pass a dict literal, e.g. \"{'net_arch': [64, 64]}\", or MODULE:ATTR for one with classes"
            raise SpecError(message("--policy-kwargs", "be a dict literal or MODULE:ATTR", repr(text), fix)) from e
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        fix = "Pass a dict of SB3 policy_kwargs, e.g. \"{'net_arch': [64, 64]}\""
        raise SpecError(message("--policy-kwargs", "be a dict with str keys", type(value).__name__, fix))
    return value


def train_command(args: Any) -> int:
    """``envbridge train sb3 --algo A --env ENV --steps N``: train, save the zip and a learning
    curve in ``--logdir``, print mean return."""
    from stable_baselines3.common.evaluation import evaluate_policy

    from bridge.cli import env_of

    progress = not args.no_progress
    plt = _require_cli_extras(progress)
    hyper = check_keys(read_config(args.config), CONFIG_KEYS[args.algo])
    policy_kwargs = policy_kwargs_from(args.policy_kwargs)
    if policy_kwargs is not None:
        hyper["policy_kwargs"] = policy_kwargs
    _few_threads()
    recorder = EpisodeRecorder()
    model = train(
        args.algo,
        env_of(args),
        args.steps,
        seed=args.seed,
        n_envs=args.n_envs,
        progress=progress,
        callback=recorder,
        policy=args.policy,
        **hyper,
    )
    os.makedirs(args.logdir, exist_ok=True)
    name = f"{args.algo.lower()}_{re.sub(r'[^A-Za-z0-9_.-]+', '_', args.env)}"
    path = os.path.join(args.logdir, f"{name}.zip")
    model.save(path)
    mean, std = evaluate_policy(model, model.get_env(), n_eval_episodes=10, deterministic=True)
    random = random_return(model.get_env(), episodes=10)
    png = os.path.join(args.logdir, f"{name}.png")
    _plot(plt, recorder.episodes, random, png, f"{args.algo} on {args.env} (envbridge export)")
    print(
        f"{args.algo} on {args.env}: {args.steps} steps, mean return {mean:.3f} +/- {std:.3f} over 10 "
        f"episodes (random: {random:.3f}); saved {path}; learning curve {png}"
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
    policy: Optional[str] = None,
    **algo_kwargs: Any,
) -> Any:
    """Train SB3's ``algo`` on ``env`` through the export and return the model.

    ``env`` is what :func:`make_vec_env` takes: a registered id, a class or factory of bridge.Env,
    or a VectorEnv (class).

    The policy follows the exported observation (Mlp / Cnn / MultiInput); a goal env trained with
    an off-policy algorithm uses SB3's ``HerReplayBuffer``. ``algo_kwargs`` go to the algorithm.
    An image SB3's default CNN cannot convolve is a ConversionError (the "sb3" check profile's).
    ``policy`` overrides the policy the observation calls for.
    """
    if algo not in ALGOS:
        raise SpecError(message("--algo", f"be one of {ALGOS}", algo, "Pick one"))
    steps = arguments.count(steps, "sb3 train steps", low=1, example="steps=20000")  # SB3 ran 2.5 steps
    seed = arguments.seed(seed, "sb3 train seed", optional=False, high=2**32 - 1)  # numpy's legacy seed
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
    needed = policy_for(vec_env.observation_space)
    # SB3's constructor raises for any other pairing (a Dict needs MultiInputPolicy, CnnPolicy an
    # image); MlpPolicy flattens an image, which is the one substitute that trains
    if policy is not None and policy != needed and (policy, needed) != ("MlpPolicy", "CnnPolicy"):
        vec_env.close()
        raise SpecError(
            message(
                "policy",
                f"be {needed!r} for {POLICY_REASONS[needed]} ({vec_env.observation_space!r})",
                repr(policy),
                f"Pass {needed} (envbridge train sb3 --policy {needed}), or leave the policy out: envbridge picks it",
            )
        )
    policy = policy or needed
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
