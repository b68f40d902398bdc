"""The steps every env-family test module runs (issue 30, "Must show"): check -> train -> conform,
each with the real runtime of this era and a tiny budget. A step whose runtime is not in this era
skips outside it and fails inside it (``support.require``)."""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, Optional

import bridge
from bridge import runtimes
from bridge.conformance import record
from bridge.conformance.replay import verify

# PPO with a 32-step rollout and one epoch: two updates in 64 steps
SB3_TINY = ["--steps", "64", "--config", "n_steps=32", "--config", "batch_size=32", "--config", "n_epochs=1"]


def check_passes(make: Callable[[], Any], options: Optional[Dict[str, Dict[str, Any]]] = None) -> Any:
    """``bridge.check`` on every runtime installed here: no error (warnings and advice allowed)."""
    report = bridge.check(make, options=options)
    assert report.targets == ["core"] + runtimes.available()
    assert report.ok, "\n" + str(report)
    return report


def train_sb3_cli(entry: str, logdir: str, *flags: str) -> str:
    """``envbridge train sb3 --env ENTRY`` in-process: exit 0, the model zip and the curve PNG written."""
    from support import require

    require("stable_baselines3")
    from bridge.cli import main

    assert main(["train", "sb3", "--env", entry, "--logdir", logdir, "--no-progress", *SB3_TINY, *flags]) == 0
    written = sorted(os.listdir(logdir))
    assert [n for n in written if n.endswith(".zip")] and [n for n in written if n.endswith(".png")], written
    return logdir


def train_matlab_default_agent(make: Callable[[], Any], kind: str, policy: str) -> Any:
    """The MATLAB default agent built from the env's own specs, trained for two episodes."""
    from support import require

    require("stable_baselines3")
    from bridge.adapters import matlab

    env = make()
    agent = getattr(matlab, kind)(
        matlab.getObservationInfo(env),
        matlab.getActionInfo(env),
        matlab.rlAgentInitializationOptions(NumHiddenUnit=8),
        *([matlab.rlPPOAgentOptions(ExperienceHorizon=8, MiniBatchSize=8)] if kind == "rlPPOAgent" else []),
        seed=0,
    )
    assert agent.policy == policy
    opts = matlab.rlTrainingOptions(MaxEpisodes=2, MaxStepsPerEpisode=8, Plots="none")
    stats = matlab.train(agent, env, opts, seed=0)
    assert len(stats.EpisodeIndex) == 2 and stats.StopReason == "MaxEpisodes"
    return agent


def conform(make: Callable[[], Any], steps: int = 40, refused: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """A recorded tape replayed through every view of this era (with a snapshot detour): each agrees,
    or is one of the ``refused`` views, refused with the export's own message starting as given."""
    tape = record(make, seed=0, steps=steps)
    results = verify(make, tape, None, snapshot_at=steps // 3)
    for view, verdict in results.items():
        if verdict.kind == "unavailable":  # only a runtime of another era
            assert view in runtimes.RUNTIMES and runtimes.probe(view), (view, str(verdict))
        elif view in (refused or {}):
            assert verdict.kind == "refused" and verdict.detail.startswith(refused[view]), (view, str(verdict))
        else:
            assert verdict.kind == "agrees", (view, str(verdict))
    assert any(v.kind == "agrees" for v in results.values())
    return results
