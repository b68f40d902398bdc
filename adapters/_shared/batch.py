"""The base of every batched export: :class:`BatchExport`, over a :class:`bridge.VectorEnv`.

It owns, once, as :class:`~bridge.adapters._shared.export.Export` does for a single env: the
options (the row's batched ones), the source, the lowerings, and the per-step path as plain
methods: the autoreset-mode rule (the export owns the VectorEnv and presents the mode its runtime
reads; the VectorEnv base refuses a change while episodes run), the whole-batch action check in the
runtime's terms before any sub-env moves (:func:`bridge.vector.batches.refuse_batch`: the one
check, skipped but for the batch size with ``check_actions=False``), the decode of the batch, the
VectorEnv's step without a second check (``step_validated``) and the encode of the observations.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

from bridge.adapters._shared.lowering import Lowering

from bridge.errors import SpecError, error
from bridge.loading import resolve
from bridge.options import declared
from bridge.vector import VectorEnv
from bridge.vector.batches import as_batch, ignored_rows, refuse_batch

__all__ = ["BatchExport"]


class BatchExport:
    """The base of every batched export (see the module doc).

    Class attributes a runtime declares: ``runtime``, ``export_name`` and ``lower`` (as on
    :class:`~bridge.adapters._shared.export.Export`) and ``autoreset_mode``: the mode its runtime
    reads (None: the ``autoreset_mode`` option, else the VectorEnv's own).
    """

    runtime = ""
    export_name = ""
    autoreset_mode: Optional[str] = None
    lower: Callable[..., Lowering]

    neutral: VectorEnv
    options: Dict[str, Any]
    observation_lowering: Lowering
    action_lowering: Lowering

    def __init__(self, vector_env: Any, **given: Any) -> None:
        options, kwargs = declared(self.runtime, self.export_name, given, batch=True)
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
        self.observation_lowering = self.lower(vector_env.single_observation_space, path="observation", options=options)
        self.action_lowering = self.lower(vector_env.single_action_space, path="actions", options=options)
        mode = options.get("autoreset_mode") or self.autoreset_mode
        if mode is not None:
            vector_env.autoreset_mode = mode  # the base refuses it while episodes run
        vector_env.strict = options.get("strict", False)
        self.num_envs = vector_env.num_envs
        self._encode = self.observation_lowering.encode_batch
        self._decode = self.action_lowering.decode_batch
        check = options.get("check_actions", True)
        self._invalid = self.action_lowering.invalid_batch if check else None
        self._invalid_one = self.action_lowering.invalid if check else None  # the rows a next-step autoreset keeps
        self.present()

    def present(self) -> None:
        """Set the runtime's own attributes (batched spaces, metadata) once the lowerings exist."""

    # -- the per-step path --------------------------------------------------------------------
    def check_batch(self, actions: Any) -> None:
        """Misuse first, then the whole batch (one action per env; every slot unless
        ``check_actions=False``): raises before any sub-env moves."""
        self.neutral.check_running()
        # Gymnasium ignores the actions of the sub-envs a next-step autoreset resets: so do we
        refuse_batch(
            self._invalid, actions, self.num_envs, ignored=ignored_rows(self.neutral), invalid_one=self._invalid_one
        )

    def step_batch(self, actions: Any) -> Tuple[Any, Any, Any, Any, Dict[str, Any]]:
        """Check, decode and step the batch; the observations come back encoded (infos as the base gives them)."""
        actions = as_batch(actions)
        self.check_batch(actions)
        obs, rewards, terminated, truncated, infos = self.neutral.step_validated(self._decode(actions))
        return self._encode(obs), rewards, terminated, truncated, infos

    def reset_batch(self, seed: Any = None, options: Optional[dict] = None) -> Tuple[Any, Dict[str, Any]]:
        obs, infos = self.neutral.reset(seed=seed, options=options)
        return self._encode(obs), infos

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
