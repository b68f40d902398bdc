"""The batched counterpart of the single-env port, and the base of every batched export.

:class:`BatchPort` joins a :class:`bridge.VectorEnv` and the runtime's two lowerings. It owns, once:
the autoreset-mode rule (the export owns the VectorEnv and presents the mode its runtime reads;
the VectorEnv base refuses a change while episodes run), the whole-batch action check in the
runtime's terms before any sub-env moves (:func:`bridge.vector.batches.batch_problem`: one fix
text), the decode of the batch and the encode of the observations. :class:`BatchExport` declares a
batched export on it as :class:`~bridge.adapters._shared.export.Export` declares a single one.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from bridge.adapters._shared.export import declared_options
from bridge.adapters._shared.lowering import Lowering

from bridge.errors import SpecError, error
from bridge.loading import resolve
from bridge.options import split
from bridge.vector import VectorEnv
from bridge.vector.batches import as_batch, ignored_rows, refuse_batch

__all__ = ["BatchPort", "BatchExport"]


class BatchPort:
    """The port between one VectorEnv and one batched export (see the module doc)."""

    def __init__(
        self,
        vector_env: VectorEnv,
        observation: Lowering,
        action: Lowering,
        *,
        check_actions: bool,
        strict: bool,
        autoreset_mode: Optional[str],
    ) -> None:
        if autoreset_mode is not None:
            vector_env.autoreset_mode = autoreset_mode  # the base refuses it while episodes run
        vector_env.strict = strict
        self.vec, self.num_envs = vector_env, vector_env.num_envs
        self.encode = observation.encode_batch
        self.decode = action.decode_batch
        self.invalid = action.invalid_batch if check_actions else None
        self.invalid_one = action.invalid if check_actions else None  # the rows a next-step autoreset keeps

    def check(self, actions: Any) -> None:
        """Misuse first, then the whole batch: raises before any sub-env moves."""
        self.vec.check_running()
        # Gymnasium ignores the actions of the sub-envs a next-step autoreset resets: so do we
        refuse_batch(self.invalid, actions, self.num_envs, ignored=ignored_rows(self.vec), invalid_one=self.invalid_one)

    def step(self, actions: Any) -> Tuple[Any, Any, Any, Any, Dict[str, Any]]:
        """Check, decode and step the batch; the observations come back encoded (infos as the base gives them)."""
        actions = as_batch(actions)
        self.check(actions)
        obs, rewards, terminated, truncated, infos = self.vec.step_validated(self.decode(actions))
        return self.encode(obs), rewards, terminated, truncated, infos

    def reset(self, seed: Any = None, options: Optional[dict] = None) -> Tuple[Any, Dict[str, Any]]:
        obs, infos = self.vec.reset(seed=seed, options=options)
        return self.encode(obs), infos

    def close(self) -> None:
        self.vec.close()


class BatchExport:
    """The base of every batched export (see the module doc).

    Class attributes a runtime declares: ``runtime``, ``export_name`` (as on :class:`Export`) and
    ``autoreset_mode``: the mode its runtime reads (None: the ``autoreset_mode`` option, else the
    VectorEnv's own).
    """

    runtime = ""
    export_name = ""
    autoreset_mode: Optional[str] = None

    neutral: VectorEnv
    options: Dict[str, Any]
    observation_lowering: Lowering
    action_lowering: Lowering
    port: BatchPort

    def __init__(self, vector_env: Any, **given: Any) -> None:
        options, kwargs = split(given)
        options = declared_options(self.runtime, self.export_name, options, batch=True)
        vector_env, owned = resolve(vector_env, kwargs, subject=f"{self.export_name} env", batch=True)
        try:
            if not isinstance(vector_env, VectorEnv):
                raise _not_a_vector_env(self.export_name, vector_env)
            self._build(vector_env, options)
        except BaseException:
            if owned:
                vector_env.close()
            raise

    def _build(self, vector_env: VectorEnv, options: Dict[str, Any]) -> None:
        self.neutral, self.options = vector_env, options
        self.observation_lowering, self.action_lowering = self.lowerings(vector_env, options)
        mode = options.get("autoreset_mode") or self.autoreset_mode
        self.port = BatchPort(
            vector_env,
            self.observation_lowering,
            self.action_lowering,
            check_actions=options.get("check_actions", True),
            strict=options.get("strict", False),
            autoreset_mode=mode,
        )
        self.num_envs = vector_env.num_envs
        self.present()

    def lowerings(self, vector_env: VectorEnv, options: Dict[str, Any]) -> Tuple[Lowering, Lowering]:
        """The runtime's (observation, action) lowerings of one sub-env's spaces."""
        raise NotImplementedError(f"{type(self).__name__}.lowerings")

    def present(self) -> None:
        """Set the runtime's own attributes (batched spaces, metadata) after the port exists."""

    def exported(self) -> Tuple[VectorEnv, Dict[str, Dict[str, Any]]]:
        """The VectorEnv and, per check target, this export's options (``bridge.check(export)``)."""
        return self.neutral, {self.runtime: dict(self.options)}


def _not_a_vector_env(export: str, env: Any) -> Exception:
    return error(
        SpecError,
        f"{export} env",
        "be a bridge.VectorEnv",
        type(env).__name__,
        "Vectorize with bridge.vectorize or subclass bridge.VectorEnv",
    )
