"""The "rllib" conformance view: a tape replayed through the env RLlib itself builds.

The view registers the env (:func:`~bridge.adapters.rllib.export.register`), builds a
``SingleAgentEnvRunner`` with one sub-env inside a Ray actor, and drives the runner's own vector env
(``DictInfoToList`` over Gymnasium's ``SyncVectorEnv`` over ``gym.make``'s wrappers over the
export): what RLlib's sampling loop steps. Neutral actions are encoded and observations decoded
inside the actor with the export's own lowerings. Episode ends follow RLlib's next-step autoreset:
the step after an end is the reset, so a tape's unseeded reset is that step.

One actor per Ray session hosts the views' runners (each view builds and stops its own runner
there): a new actor per view is a new worker process importing torch and RLlib, ~5 s a view.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any, Optional

import numpy as np
from bridge.adapters.rllib.export import register
from bridge.adapters.rllib.lowering import lower, needs_flatten
from bridge.adapters.rllib.session import ensure_ray

from bridge import errors
from bridge.conformance.replay import StepOut, View
from bridge.env import Env

__all__ = ["RLlibView"]

_COUNT = itertools.count()
_HOSTS: dict = {}  # Ray job id -> the runner-hosting actor of that session


class _RunnerHost:
    """The actor that holds the views' env runners, each under its own key."""

    def __init__(self) -> None:
        self.runners: dict = {}

    def open(self, key: str, config: Any) -> Any:
        from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

        try:  # worker_index 1: built as a remote env runner is, the one that samples
            self.runners[key] = SingleAgentEnvRunner(config=config, worker_index=1, num_workers=1)
        except Exception as e:
            return "raised", (type(e).__name__, str(e))
        return "ok", None

    def apply(self, key: str, what: str, *args: Any) -> Any:
        return _remote(self.runners[key], what, *args)

    def close(self, key: str) -> None:
        runner = self.runners.pop(key, None)
        if runner is not None:
            runner.stop()


def _host(ray: Any) -> Any:
    """This Ray session's runner host, started on first use (Ray ends it with the session)."""
    job = ray.get_runtime_context().get_job_id()
    if job not in _HOSTS:
        _HOSTS.clear()  # handles of an ended session
        _HOSTS[job] = ray.remote(num_cpus=0)(_RunnerHost).remote()
    return _HOSTS[job]


class _Given:
    """A source that is one env instance (pickled into the creator): each call is a fresh copy of it,
    since RLlib may build an env, close it, and build again (a closed env stays closed)."""

    def __init__(self, env: Env) -> None:
        self.env = env

    def __call__(self) -> Env:
        return copy.deepcopy(self.env)


def _export(runner: Any) -> Any:
    return runner.env.unwrapped.envs[0].unwrapped


def _remote(runner: Any, what: str, *args: Any) -> Any:
    """One call inside the actor; an exception comes back as a value (RLlib's ``apply`` would
    end the actor and lose the message)."""
    try:
        return "ok", _CALLS[what](runner, *args)
    except Exception as e:
        return "raised", (type(e).__name__, str(e))


def _first(batch: Any) -> Any:
    """Slot 0 of a batch (a one-level Dict of batches for Dict and Tuple spaces)."""
    return {k: v[0] for k, v in batch.items()} if isinstance(batch, dict) else batch[0]


def _batch_of_one(value: Any) -> Any:
    return {k: np.asarray([v]) for k, v in value.items()} if isinstance(value, dict) else np.asarray([value])


def _reset(runner: Any, seed: Optional[int]) -> Any:
    obs, _ = runner.env.reset(seed=seed)
    return _export(runner).observation_lowering.decode(_first(obs))


def _step(runner: Any, action: Any) -> Any:
    export = _export(runner)
    # the autoreset step (action None): RLlib sends an action there too; the env ignores it
    runtime = export.action_space.sample() if action is None else export.action_lowering.encode(action)
    obs, rewards, terminated, truncated, _ = runner.env.step(_batch_of_one(runtime))
    decoded = export.observation_lowering.decode(_first(obs))
    return decoded, float(rewards[0]), bool(terminated[0]), bool(truncated[0])


def _clone(runner: Any) -> Any:
    return _export(runner).clone_state(), runner.env.unwrapped._autoreset_envs.copy()


def _restore(runner: Any, snapshot: Any) -> None:
    _export(runner).restore_state(snapshot[0])
    runner.env.unwrapped._autoreset_envs = snapshot[1].copy()


def flatten_connector(env: Any = None, spaces: Any = None, device: Any = None) -> Any:
    """RLlib's own ``FlattenObservations`` env-to-module connector."""
    from ray.rllib.connectors.env_to_module import FlattenObservations

    return FlattenObservations()


_CALLS = {"reset": _reset, "step": _step, "clone": _clone, "restore": _restore}


class RLlibView(View):
    """One env inside a remote SingleAgentEnvRunner, stepped through the runner's vector env."""

    name = "rllib"
    both_flags = True  # Gymnasium's 5-tuple, as RLlib's episodes keep it

    def __init__(self, env: Env) -> None:
        from ray.rllib.algorithms.ppo import PPOConfig

        self.determinism = env.determinism
        # the export's refusals, here (inside the actor they would only end it); the runner's
        # export computes the same lowerings from the same spaces
        self._lowering = lower(env.observation_space, path="observation", options={})
        lower(env.action_space, path="action", options={})
        ray = ensure_ray()
        self._ray = ray
        name = register(_Given(env), name=f"envbridge-view-{next(_COUNT)}")
        config = (
            PPOConfig()
            .environment(name)
            .env_runners(num_env_runners=1, num_envs_per_env_runner=1)
            .fault_tolerance(restart_failed_env_runners=False)
        )
        if needs_flatten(self._lowering.space):  # what an RLlib user adds so the runner's module builds
            config.env_runners(env_to_module_connector=flatten_connector)
        self._key = name
        self.actor = _host(ray)
        self._answer(self.actor.open.remote(name, config))  # the runner builds its own copy of env
        env.close()  # after the copy was pickled: a copy of a closed env is closed too
        self._pending = False  # the last step ended an episode: the next step is RLlib's reset

    def _call(self, what: str, *args: Any) -> Any:
        return self._answer(self.actor.apply.remote(self._key, what, *args))

    def _answer(self, pending: Any) -> Any:
        status, value = self._ray.get(pending)
        if status == "ok":
            return value
        kind, text = value
        cls = getattr(errors, kind, None)
        raise (cls(text) if isinstance(cls, type) and issubclass(cls, errors.BridgeError) else RuntimeError(text))

    def expected(self, obs: Any) -> Any:
        return self._lowering.expected(obs)

    def reset(self, seed: Optional[int]) -> Any:
        if seed is None and self._pending:
            self._pending = False
            return self._call("step", None)[0]
        self._pending = False
        return self._call("reset", seed)

    def step(self, action: Any) -> StepOut:
        obs, reward, terminated, truncated = self._call("step", action)
        self._pending = terminated or truncated
        return obs, reward, terminated, truncated

    def clone_state(self) -> Any:
        if self.determinism == "none":
            raise NotImplementedError("this env declares no snapshots")
        return self._call("clone"), self._pending

    def restore_state(self, snapshot: Any) -> None:
        self._call("restore", snapshot[0])
        self._pending = snapshot[1]

    def close(self) -> None:
        self._ray.get(self.actor.close.remote(self._key))
