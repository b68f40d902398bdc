"""The neutral env over a foreign one (Gymnasium 1.x, gym 0.21-0.26): what every importer returns.

Episode ends: a 5-tuple passes as it is; gym's 4-tuple ``done`` is read through
``info["TimeLimit.truncated"]`` (and envbridge's own ``info["is_terminal"]``, which to_gym writes):
done with a time-out is truncated, any other done is terminated (docs/episode-ends.md). Those two
keys are consumed; any other info key passes through unchanged, except that a key an export writes
itself is refused (it would be overwritten without a word).

Seeding: ``reset(seed=s)`` seeds the foreign env as its own API does (``reset(seed=)``, or gym
0.21's ``seed()`` then ``reset()``), and the neutral env's Generator *is* the foreign env's, so a
neutral tape equals the native run step for step and snapshots carry the foreign RNG.

Snapshots: ``determinism="weak"`` by default, over a pickled copy of the foreign env (its state,
nothing promised about replays); ``"strong"`` only when declared with ``snapshot="deepcopy"`` (the
checker then replays it in a fresh instance) or ``snapshot=(get_state, set_state)`` hooks of the
user's, called with the foreign env. A pickled copy is signed with a key that lives only in this
process's memory (HMAC-SHA256) and unpickled only when its signature matches: a snapshot from a file
or a peer that this process did not take is refused before anything is unpickled or changed, so a
stranger's bytes never run code. Snapshots meant to travel use the hooks (plain data).
"""

from __future__ import annotations

import hmac
import pickle
import secrets
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np
from bridge.adapters.importers.spaces import raise_space

from bridge import runtimes, values
from bridge.env import DETERMINISM, Env
from bridge.errors import ContractError, SpecError, close_beside, error

__all__ = ["ForeignEnv", "ForeignSpec", "RESERVED_INFO_KEYS", "snapshot_hooks"]

# info keys the exports write themselves (to_gym, SB3's VecEnvs); a foreign env's own would be lost
RESERVED_INFO_KEYS = frozenset(("TimeLimit.truncated", "is_terminal", "terminal_observation"))
_GYM_END_KEYS = ("TimeLimit.truncated", "is_terminal")

# the key of this process's pickled snapshots: made here, never written anywhere, so only bytes this
# process pickled itself carry a signature that matches (forked children share it: our own processes)
_KEY = secrets.token_bytes(32)
_STATE_KEYS = {"env", "signature"}
_TRAVEL_FIX = (
    "Restore a pickled snapshot only in the process that took it; for snapshots that go through a file "
    "or another process, pass snapshot=(get_state, set_state) hooks that return plain data"
)


def _signature(raw: bytes) -> str:
    return hmac.new(_KEY, raw, "sha256").hexdigest()


def snapshot_hooks(snapshot: Any, determinism: str, subject: str) -> Any:
    """The checked ``snapshot`` option: None (pickle, weak only), "deepcopy" or (get_state, set_state)."""
    if determinism not in DETERMINISM:
        raise error(
            SpecError,
            f"{subject} determinism",
            f"be one of {list(DETERMINISM)}",
            repr(determinism),
            "Pass e.g. determinism='weak'",
        )
    hooks = isinstance(snapshot, tuple) and len(snapshot) == 2 and all(callable(f) for f in snapshot)
    if snapshot is not None and snapshot != "deepcopy" and not hooks:
        fix = "Pass snapshot='deepcopy' or snapshot=(get_state, set_state), two functions of the env"
        raise error(
            SpecError, f"{subject} snapshot", "be 'deepcopy' or a (get_state, set_state) pair", repr(snapshot), fix
        )
    if determinism == "strong" and snapshot is None:
        fix = "Pass snapshot='deepcopy' (the checker replays it in a fresh instance) or snapshot=(get_state, set_state)"
        raise error(SpecError, f"{subject} determinism='strong'", "come with a snapshot", "snapshot=None", fix)
    return snapshot


class ForeignSpec:
    """The name of a foreign env that no registry knows (built from its class): ``id`` is the class
    name, so reports and messages say ``NewCorridor``, not ``ForeignEnv``. It builds nothing."""

    def __init__(self, id: str) -> None:
        self.id, self.max_episode_steps, self.kwargs = id, None, {}

    def __repr__(self) -> str:
        return f"ForeignSpec({self.id!r})"


class ForeignEnv(Env):
    """A foreign env as a :class:`bridge.Env` (built by ``from_gymnasium`` / ``from_gym``).

    Attributes:
        env: the foreign env, as given or built (wrappers kept).
        import_options: the importer's options it was imported with (``wrappers`` already applied).
        api: ``"gymnasium"`` or ``"gym"`` (0.21-0.26: its reset's and step's shapes are read
            from what they return, so every gym API passes through the same code).
    """

    def __init__(
        self,
        env: Any,
        fw: Any,
        *,
        api: str,
        seed_by_reset: bool,
        drop_keys: Sequence[str] = (),
        determinism: str = "weak",
        snapshot: Any = None,
        subject: str = "from_gymnasium",
        wrappers: Sequence[Any] = (),
    ) -> None:
        self._snapshot = snapshot_hooks(snapshot, determinism, subject)
        # how it was imported (``env`` is already wrapped): what an export's spec rebuilds it with
        self.import_options = {
            "drop_keys": tuple(drop_keys),
            "wrappers": tuple(wrappers),
            "determinism": determinism,
            "snapshot": snapshot,
        }
        self.observation_space, self._obs_in, _ = raise_space(
            env.observation_space, "observation_space", fw.spaces, drop_keys
        )
        self.action_space, _, self._act_out = raise_space(env.action_space, "action_space", fw.spaces)
        self.env, self.api, self._seed_by_reset = env, api, seed_by_reset
        self.determinism = determinism
        self.portable_snapshots = isinstance(self._snapshot, tuple)  # the user's hooks give plain data
        self.render_mode = getattr(env, "render_mode", None)
        self.metadata = dict(getattr(env, "metadata", None) or {})
        # the foreign registry's step cap (gymnasium.make's TimeLimit), for bridge.env.episode_bound
        foreign_spec = getattr(env, "spec", None)
        self.max_episode_steps = getattr(foreign_spec, "max_episode_steps", None)
        # reports and messages name the foreign env: its registry spec (kept, so a Gymnasium export
        # can rebuild the round trip), else its class
        named = isinstance(getattr(foreign_spec, "id", None), str)
        self.spec = foreign_spec if named else ForeignSpec(type(env.unwrapped).__name__)
        self._subject = subject
        # where a value came from, for the one rule of incoming values (bridge/values.py)
        self._at_reset, self._at_step = f"{subject} env's reset()", f"{subject} env's step()"
        self._returns_info: Optional[bool] = None  # gym 0.22-0.25 reset: obs or (obs, info); found at the first reset

    # -- the Env API ---------------------------------------------------------------------------
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[Any, dict]:
        super().reset(seed=seed)
        env = self.env
        out = env.reset(seed=seed, options=options) if self.api == "gymnasium" else self._reset_gym(seed, options)
        if type(out) is not tuple or len(out) != 2:
            got = f"a tuple of {len(out)}" if type(out) is tuple else type(out).__name__
            raise error(ContractError, self._at_reset, "return (observation, info)", got, values.ENV_FIX)
        obs, info = out
        if type(info) is not dict:
            raise error(ContractError, f"{self._at_reset} info", "be a dict", type(info).__name__, values.ENV_FIX)
        rng = getattr(env.unwrapped, "np_random", None)
        if isinstance(rng, np.random.Generator):
            self._np_random = rng  # one Generator: the foreign env's, which its reset just seeded
        self._check_info(info, "reset")
        return (obs if self._obs_in is None else self._obs_in(obs, self._at_reset)), info

    def _reset_gym(self, seed: Optional[int], options: Optional[dict]) -> Tuple[Any, dict]:
        env, kwargs = self.env, {} if options is None else {"options": options}
        if not self._seed_by_reset:
            if seed is not None:
                env.seed(seed)
            out = env.reset(**kwargs)
        else:
            out = env.reset(seed=seed, **kwargs)
        if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], dict):
            if not self.env.observation_space.contains(out):
                return out
        return out, {}

    def step(self, action: Any) -> Tuple[Any, float, bool, bool, Dict[str, Any]]:
        out = self.env.step(action if self._act_out is None else self._act_out(action))
        # the common case in a few identity tests, no calls; anything else is read (or refused) by _exact
        try:
            obs, reward, terminated, truncated, info = out
        except (TypeError, ValueError):  # gym's 4-tuple, or not a step's output at all
            obs, reward, terminated, truncated, info = self._exact(out)
        else:
            if (terminated is not True and terminated is not False) or (
                truncated is not True and truncated is not False
            ):
                obs, reward, terminated, truncated, info = self._exact(out)
            elif type(reward) is not float or type(info) is not dict:
                obs, reward, terminated, truncated, info = self._exact(out)
        if info and not RESERVED_INFO_KEYS.isdisjoint(info):
            self._check_info(info, "step")
        return (obs if self._obs_in is None else self._obs_in(obs, self._at_step)), reward, terminated, truncated, info

    def _exact(self, out: Any) -> Tuple[Any, float, bool, bool, Dict[str, Any]]:
        """A step's output as exactly what the API says (the one rule of bridge/values.py), either
        shape: Gymnasium's and gym 0.26's 5-tuple, gym 0.21-0.25's 4-tuple (``done`` split by the
        end keys of its info, which are consumed); anything else is refused."""
        at = self._at_step
        size = len(out) if type(out) is tuple or type(out) is list else 0
        if size != 5 and size != 4:
            got = f"a {type(out).__name__} of {size}" if size else type(out).__name__
            expectation = "return (observation, reward, terminated, truncated, info), or gym's 4-tuple"
            raise error(ContractError, at, expectation, got, values.ENV_FIX)
        info = out[-1]
        if type(info) is not dict:
            raise error(ContractError, f"{at} info", "be a dict", type(info).__name__, values.ENV_FIX)
        if size == 5:
            obs, reward, terminated, truncated, _ = out
            terminated = values.flag(terminated, f"{at} terminated", values.ENV_FIX)
            truncated = values.flag(truncated, f"{at} truncated", values.ENV_FIX)
        else:
            obs, reward, done, _ = out
            terminated, truncated = _gym_end(values.flag(done, f"{at} done", values.ENV_FIX), info, at)
            if "TimeLimit.truncated" in info or "is_terminal" in info:
                info = {k: v for k, v in info.items() if k not in _GYM_END_KEYS}
        return obs, values.real(reward, f"{at} reward", values.ENV_FIX), terminated, truncated, info

    def _check_info(self, info: Any, where: str) -> None:
        clash = sorted(RESERVED_INFO_KEYS & set(info)) if isinstance(info, dict) else []
        if clash:
            fix = "Rename the key in the env (or drop the wrapper that writes it): the exports write it themselves"
            raise error(
                ContractError,
                f"{self._subject} env's {where}() info",
                f"not use the keys {sorted(RESERVED_INFO_KEYS)}",
                f"the keys {clash}",
                fix,
            )

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    # -- snapshots -----------------------------------------------------------------------------
    def get_state(self) -> Any:
        if isinstance(self._snapshot, tuple):
            return self._snapshot[0](self.env)
        try:
            # pickled twice: the first pickle of an object depends on how it was built (memo
            # order); the pickle of an unpickled copy is canonical, so equal states give equal bytes.
            # The loads reads bytes this line has just made in this process: nobody else's.
            raw = pickle.dumps(pickle.loads(pickle.dumps(self.env)))
        except Exception as e:
            fix = "Pass snapshot=(get_state, set_state) hooks, or determinism='none'"
            raise error(
                ContractError, f"{self._subject} snapshot", "pickle the env", f"{type(e).__name__}: {e}", fix
            ) from e
        # plain data (an ndarray and a str survive the snapshot codecs), signed with this process's key
        return {"env": np.frombuffer(raw, np.uint8).copy(), "signature": _signature(raw)}

    def check_state(self, state: Any) -> None:
        """Refuse, before anything is unpickled or changed, a pickled state this process did not sign."""
        if isinstance(self._snapshot, tuple):
            return  # the user's hooks take plain data of their own
        subject = f"{self._subject} snapshot state"
        expectation = "be a dict of 'env' (the env pickled, a 1-D uint8 array) and 'signature' (a str)"
        if type(state) is not dict or set(state) != _STATE_KEYS:
            got = f"a dict with the keys {sorted(state, key=repr)}" if type(state) is dict else type(state).__name__
            raise error(ContractError, subject, expectation, got, _TRAVEL_FIX)
        env, signature = state["env"], state["signature"]
        if not (isinstance(env, np.ndarray) and env.dtype == np.uint8 and env.ndim == 1 and type(signature) is str):
            kind = type(env).__name__
            if isinstance(env, np.ndarray):
                kind = f"array of dtype {env.dtype}, shape {env.shape}"
            got = f"'env' {kind} and 'signature' {type(signature).__name__}"
            raise error(ContractError, subject, expectation, got, _TRAVEL_FIX)
        if not (signature.isascii() and hmac.compare_digest(_signature(env.tobytes()), signature)):
            expectation = "carry the signature of this process (it unpickles only the snapshots it took)"
            got = "a signature made elsewhere (another process, or changed bytes); nothing was unpickled"
            raise error(ContractError, subject, expectation, got, _TRAVEL_FIX)

    def set_state(self, state: Any) -> None:
        if isinstance(self._snapshot, tuple):
            self._snapshot[1](self.env, state)
            return
        self.check_state(state)
        # the one pickle.loads of a snapshot: its signature was just checked against this process's
        # key, so these are bytes this process pickled itself (get_state), never a stranger's
        env = pickle.loads(state["env"].tobytes())
        # keep the one Generator object: the base class writes the snapshot's RNG state into it
        # (the private field: Gymnasium's np_random setter also forgets the seed it was made from)
        if isinstance(getattr(env.unwrapped, "_np_random", None), np.random.Generator):
            env.unwrapped._np_random = self.np_random
        self.env = env

    def __repr__(self) -> str:
        return f"<ForeignEnv {self.env!r}>"


def _gym_end(done: bool, info: Dict[str, Any], at: str) -> Tuple[bool, bool]:
    """(terminated, truncated) of gym's one ``done``: termination wins where both were true. The
    info flags follow the one rule for values (a bool, never ``bool("False")``)."""
    if not done:
        return False, False
    if "is_terminal" in info:  # envbridge's own to_gym says it exactly
        terminal = values.flag(info["is_terminal"], f"{at} info['is_terminal']", values.ENV_FIX)
        return terminal, not terminal
    timed_out = values.flag(info.get("TimeLimit.truncated", False), f"{at} info['TimeLimit.truncated']", values.ENV_FIX)
    return not timed_out, timed_out


def _made(framework: Any, env_id: str, make_kwargs: Dict[str, Any], subject: str, registry: str, fix: str) -> Any:
    """``framework.make(env_id, **make_kwargs)``, its failures as SpecErrors that say which part was
    wrong: the id, the module an id names before ':', or the keyword arguments (or the constructor)."""
    name = framework.__name__
    try:
        return framework.make(env_id, **make_kwargs)
    except framework.error.Error as e:
        raise error(SpecError, f"{subject} id", f"be registered with {registry}", f"{env_id!r} ({e})", fix) from e
    except ImportError as e:  # "module:Id-v0" whose module does not import
        module = env_id.partition(":")[0] if ":" in env_id else env_id
        fix = f"Install the package that provides {module!r}, or check the module name before ':'"
        if runtimes.missing_package(e) in runtimes.ENV_EXTRAS:  # e.g. minigrid: its extra, into this interpreter
            fix = runtimes.env_package_hint(runtimes.missing_package(e))
        got = f"{type(e).__name__}: {str(e).split('. ')[0]}"  # gymnasium appends advice of its own
        raise error(SpecError, f"{subject} id {env_id!r}", "name a module that imports", got, fix) from e
    except Exception as e:  # the make kwargs (gymnasium's TimeLimit asserts) or the env's constructor
        shown = ", ".join([repr(env_id)] + [f"{k}={v!r}" for k, v in make_kwargs.items()])
        fix = "Check the keyword arguments (names and values) against the env's constructor and " + name + ".make"
        got = f"{type(e).__name__}: {e}"
        raise error(SpecError, f"{subject}: {name}.make({shown})", "build the env", got, fix) from e


def imported(
    framework: Any,
    env_or_id: Any,
    make_kwargs: Dict[str, Any],
    *,
    subject: str,
    registry: str,
    registry_fix: str,
    seed_by_reset: Any,
    wrappers: Sequence[Any] = (),
    **options: Any,
) -> ForeignEnv:
    """``env_or_id`` (an id made with ``framework.make`` or an instance), wrapped by ``wrappers``
    (innermost first), as a :class:`ForeignEnv`; an env built here is closed again when the import
    is refused. ``seed_by_reset(env)`` tells whether its reset takes ``seed=``."""
    name = framework.__name__
    if isinstance(env_or_id, str):
        env = _made(framework, env_or_id, make_kwargs, subject, registry, registry_fix)
        built = True
    elif isinstance(env_or_id, framework.Env):
        if make_kwargs:
            fix = "Build the env with them yourself, or pass its id"
            raise error(SpecError, f"{subject} make kwargs", "go with an id", sorted(make_kwargs), fix)
        env, built = env_or_id, False
    else:
        fix = f"Pass e.g. {subject}('CartPole-v1') or {subject}({name}.make(...))"
        raise error(SpecError, f"{subject} env", f"be a {registry} id or {name}.Env", type(env_or_id).__name__, fix)
    try:
        for wrapper in wrappers:
            env = _wrapped(wrapper, env, subject)
        return ForeignEnv(
            env, framework, api=name, seed_by_reset=seed_by_reset(env), subject=subject, wrappers=wrappers, **options
        )
    except BaseException as refusal:
        if built:  # a refused import leaves nothing open; a close error goes beside the refusal
            close_beside(refusal, env.close, f"the {name} env {env_or_id!r}")
        raise


def _wrapped(wrapper: Any, env: Any, subject: str) -> Any:
    """``wrapper(env)``; what the wrapper raises is named, its traceback chained."""
    named = getattr(wrapper, "__qualname__", None) or type(wrapper).__name__
    try:
        return wrapper(env)
    except Exception as e:
        fix = "Check that the wrapper fits the env (and the order: innermost first); the traceback is chained"
        got = f"{type(e).__name__}: {e}"
        raise error(ContractError, f"{subject} wrapper {named}", "wrap the env without raising", got, fix) from e
