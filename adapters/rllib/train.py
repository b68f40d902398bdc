"""RLlib configs for a registered envbridge env, a greedy policy from a trained algorithm, and
evaluation on the RLlib export (what ``envbridge train rllib`` and the tests use).

:func:`config_for` builds the AlgorithmConfig an RLlib user would write: the env registered with
:func:`~bridge.adapters.rllib.export.register`, ``num_env_runners`` runners of
``num_envs_per_env_runner`` sub-envs, RLlib's ``FlattenObservations`` connector where the exported
observation needs it, a tiny default net, a seed. Training goes through
:func:`bridge.adapters.rllib.faults.train_iteration` so env faults stay readable.
"""

from __future__ import annotations

import os
import re
import warnings
from typing import Any, Callable, Dict, Optional, Sequence

import numpy as np
from bridge.adapters._shared.curves import plot, require_cli_extras
from bridge.adapters.rllib.export import register, to_rllib
from bridge.adapters.rllib.faults import train_iteration
from bridge.adapters.rllib.lowering import lower, needs_flatten
from bridge.adapters.rllib.session import ensure_ray
from bridge.adapters.rllib.view import flatten_connector

from bridge.config import Key, check_keys, count, fraction, number
from bridge.config import read as read_config
from bridge.errors import SpecError, message
from bridge.loading import resolve
from bridge.vector import VectorEnv

__all__ = [
    "ALGORITHMS",
    "TUNED",
    "CONFIG_KEYS",
    "config_for",
    "greedy_policy",
    "random_policy",
    "evaluate",
    "train_command",
]

ALGORITHMS = {
    "PPO": "ray.rllib.algorithms.ppo:PPOConfig",
    "DQN": "ray.rllib.algorithms.dqn:DQNConfig",
    "SAC": "ray.rllib.algorithms.sac:SACConfig",
}
# small batches for small envs on a few cores (RLlib's PPO default: 4000-step batches, 30 epochs)
TUNED = {"PPO": {"train_batch_size_per_learner": 1000, "minibatch_size": 128, "num_epochs": 6, "lr": 1e-3}}
Policy = Callable[[Any], Any]


def config_for(
    source: Any,
    algo: str = "PPO",
    *,
    env_runners: int = 2,
    envs_per_runner: int = 1,
    vectorize_mode: str = "sync",
    seed: int = 0,
    env_config: Optional[Dict[str, Any]] = None,
    hiddens: Any = (32, 32),
    imports: Sequence[str] = (),
    **training: Any,
) -> Any:
    """An RLlib AlgorithmConfig of ``algo`` on ``source`` (registered here; see module doc).

    ``training`` goes to ``config.training(...)``; a ``vectorize_mode`` of "vector_entry_point"
    steps a batched export per runner (a bridge.VectorEnv class, or the scalar source vectorized).
    """
    from bridge import runtimes

    if algo not in ALGORITHMS:
        known = ", ".join(ALGORITHMS)
        raise SpecError(message("RLlib algorithm", f"be one of {known}", repr(algo), "Pass e.g. --algo PPO"))
    name = register(source, imports=imports)
    config = (
        runtimes.load(ALGORITHMS[algo])()
        .environment(name, env_config=dict(env_config or {}))
        .env_runners(
            num_env_runners=env_runners,
            num_envs_per_env_runner=envs_per_runner,
            gym_env_vectorize_mode=vectorize_mode,
        )
        .rl_module(model_config={"fcnet_hiddens": list(hiddens)})
        .debugging(seed=seed)
    )
    if training:
        config.training(**training)
    if needs_flatten(_exported_observation_space(source, env_config)):
        config.env_runners(env_to_module_connector=flatten_connector)
    return config


def _exported_observation_space(source: Any, env_config: Optional[Dict[str, Any]]) -> Any:
    """The observation space one env runner's export presents (one sub-env of it)."""
    env, built = resolve(source, env_config, subject="rllib env", batch=True, num_envs=1)
    try:
        space = env.single_observation_space if isinstance(env, VectorEnv) else env.observation_space
        return lower(space, path="observation", options={}).space
    finally:
        if built:
            env.close()


def greedy_policy(algo: Any) -> Policy:
    """The trained module's deterministic action for one observation of the export (no connectors:
    for observations RLlib's default encoders read directly)."""
    import torch

    module = algo.get_module()
    dist_cls = module.get_inference_action_dist_cls()

    def act(obs: Any) -> Any:
        with torch.no_grad():
            out = module.forward_inference({"obs": torch.as_tensor(np.asarray(obs)[None])})
            if "actions" in out:  # DQN's module picks its greedy action itself
                action = out["actions"][0].numpy()
            else:
                action = dist_cls.from_logits(out["action_dist_inputs"]).to_deterministic().sample()[0].numpy()
            return action.item() if action.ndim == 0 else action

    return act


def random_policy(env: Any, seed: int = 0) -> Policy:
    space = env.action_space
    space.seed(seed)
    return lambda obs: space.sample()


def evaluate(env: Any, policy: Policy, episodes: int = 100, seed: int = 1000) -> Dict[str, Any]:
    """Play ``episodes`` on an RLlib export: how episodes ended (shares terminated and truncated),
    the success rate where the env reports ``info["is_success"]`` (else None: a termination is not
    a success by itself), mean return and length. A float action is clipped to the Box (as RLlib
    does before the env)."""
    space = env.action_space
    clip = (lambda a: np.clip(a, space.low, space.high)) if hasattr(space, "low") else (lambda a: a)
    ended, cut, successes, reported, returns, lengths = 0, 0, 0, 0, [], []
    obs, _ = env.reset(seed=seed)
    for _ in range(episodes):
        total, steps, terminated, truncated, info = 0.0, 0, False, False, {}
        while not (terminated or truncated):
            obs, reward, terminated, truncated, info = env.step(clip(policy(obs)))
            total, steps = total + reward, steps + 1
        ended, cut = ended + int(terminated), cut + int(truncated and not terminated)
        if "is_success" in info:
            reported, successes = reported + 1, successes + int(bool(info["is_success"]))
        returns.append(total)
        lengths.append(steps)
        obs, _ = env.reset()
    return {
        "terminated": ended / episodes,
        "truncated": cut / episodes,
        "success": successes / reported if reported else None,
        "return": float(np.mean(returns)),
        "length": float(np.mean(lengths)),
    }


def _summary(name: str, result: Dict[str, Any], episodes: int) -> str:
    success = "" if result["success"] is None else f"success {result['success']:.2f}, "
    return (
        f"{name}: {success}mean return {result['return']:.3f}, mean length {result['length']:.1f}, "
        f"terminated {result['terminated']:.2f} / truncated {result['truncated']:.2f} over {episodes} episodes"
    )


# --config keys of `envbridge train rllib`: RLlib's training settings, each with its type and range
CONFIG_KEYS = {
    "lr": Key(number(0.0, open_low=True), "learning rate"),
    "gamma": Key(fraction, "discount factor"),
    "train_batch_size_per_learner": Key(count(1), "env steps per training batch"),
    "minibatch_size": Key(count(1), "SGD minibatch size"),
    "num_epochs": Key(count(1), "passes over a batch"),
    "entropy_coeff": Key(number(0.0), "entropy bonus (PPO)"),
    "clip_param": Key(number(0.0, open_low=True), "PPO's clip range"),
    "vf_loss_coeff": Key(number(0.0), "value loss weight (PPO)"),
    "lambda_": Key(fraction, "GAE lambda (PPO)"),
}


def train_command(args: Any) -> int:
    """``envbridge train rllib --env ENV --algo PPO --env-runners N --steps S [--address ADDR]``:
    train until S env steps, with a progress bar; plot the learning curve (RLlib's mean episode
    return per iteration, the random policy's as the line to beat); print greedy vs random play."""
    progress = not args.no_progress
    if not args.verbose:  # RLlib's own deprecation notices are not the user's to act on
        warnings.filterwarnings("ignore", category=DeprecationWarning)
    plt = require_cli_extras(progress)
    training = {**TUNED.get(args.algo, {}), **check_keys(read_config(args.config), CONFIG_KEYS)}
    from bridge.cli import env_of

    source = env_of(args)
    probe = to_rllib(source)  # refused here, before Ray starts
    random = evaluate(probe, random_policy(probe), episodes=20)
    ensure_ray(address=args.address, verbose=args.verbose)
    config = config_for(
        source,  # resolved in every env runner, after it imports args.imports
        args.algo,
        imports=args.imports,
        env_runners=args.env_runners,
        envs_per_runner=args.envs_per_runner,
        seed=args.seed,
        **training,
    )
    algo = config.build_algo()
    curve, sampled = [], 0
    bar = _bar(args.steps) if progress else None
    try:
        while sampled < args.steps:
            result = train_iteration(algo)
            now = int(result["env_runners"].get("num_env_steps_sampled_lifetime", sampled))
            mean = result["env_runners"].get("episode_return_mean")
            if mean is not None and np.isfinite(mean):
                curve.append((now, float(mean), 0))
            if bar is not None:
                bar.update(min(now, args.steps) - min(sampled, args.steps))
            sampled = now
        flat = needs_flatten(probe.observation_space)  # the module reads FlattenObservations' output
        greedy = None if flat else evaluate(probe, greedy_policy(algo), 20)
    finally:
        if bar is not None:
            bar.close()
        algo.stop()
    os.makedirs(args.logdir, exist_ok=True)
    png = os.path.join(args.logdir, f"rllib_{args.algo.lower()}_{re.sub(r'[^A-Za-z0-9_.-]+', '_', args.env)}.png")
    plot(plt, curve, random["return"], png, f"RLlib {args.algo} on {args.env} (envbridge export)", means=True)
    runners = f"{args.env_runners} env runner{'s' if args.env_runners != 1 else ''}"
    print(f"{args.algo} on {args.env}: {sampled} steps on {runners}; learning curve {png}")
    print(_summary("random", random, 20))
    if greedy is not None:
        print(_summary(f"{args.algo} (greedy)", greedy, 20))
    else:
        print(
            f"{args.algo} (greedy): not played here: its observations reach the module through RLlib's "
            "FlattenObservations connector; the learning curve above is RLlib's own episode return"
        )
    return 0


def _bar(total: int) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, unit="step", desc="RLlib")
