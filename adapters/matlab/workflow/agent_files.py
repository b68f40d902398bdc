"""``save`` / ``load``: a facade agent in one SB3 zip file (the model, the specs and the options).

Loading unpickles (SB3's own format): load your own files.
"""

from __future__ import annotations

import os

from bridge.adapters.matlab.workflow.agent_options import OPTIONS_OF, sb3_settings
from bridge.adapters.matlab.workflow.agents import _META, Agent, _check_agent, sb3

from bridge.errors import SpecError, error

__all__ = ["save", "load"]


def save(filename: str, agent: Agent) -> str:
    """``save(filename, "agent")``: one SB3 zip holding the model, the specs and the options."""
    agent = _check_agent(agent, "save agent")
    setattr(agent.model, _META, agent._meta())
    agent.model.save(filename)
    return filename if filename.endswith(".zip") else filename + ".zip"


def _what_is(path: str) -> str:
    if os.path.isdir(path):
        return "a folder"
    return "not a regular file" if os.path.exists(path) else "no such file"


def load(filename: str) -> Agent:
    """``load(filename)``: the agent :func:`save` wrote (the file is unpickled: load your own files)."""
    sb3("load of an agent")
    import zipfile

    from stable_baselines3.common.save_util import load_from_zip_file

    if isinstance(filename, str) and not os.path.isfile(filename) and os.path.isfile(filename + ".zip"):
        filename += ".zip"  # as save named it
    if not isinstance(filename, str) or not os.path.isfile(filename):
        raise error(
            SpecError,
            "load file",
            "be an existing file written by save(filename, agent)",
            repr(filename) if not isinstance(filename, str) else f"{filename!r} ({_what_is(filename)})",
            "Pass the path save returned (it ends in .zip)",
        )
    try:
        data, _, _ = load_from_zip_file(filename, device="cpu")
    except (zipfile.BadZipFile, ValueError, KeyError, EOFError) as e:
        raise error(
            SpecError,
            "load file",
            "be an agent written by save(filename, agent)",
            f"{filename!r} ({type(e).__name__}: {e})",
            "Load a file this facade saved",
        ) from None
    meta = (data or {}).get(_META)
    if not isinstance(meta, dict):
        raise error(
            SpecError,
            "load file",
            "be an agent written by save(filename, agent)",
            filename,
            "Load it with stable_baselines3 directly, or save the agent with this facade",
        )
    agent = Agent.__new__(Agent)
    agent.kind = meta["kind"]
    agent.algorithm = OPTIONS_OF[agent.kind][1]
    agent.AgentOptions, agent.InitializationOptions = meta["AgentOptions"], meta["InitializationOptions"]
    agent._specs(meta["ObservationInfo"], meta["ActionInfo"])
    kwargs, extras = sb3_settings(agent.kind, agent.AgentOptions, agent.InitializationOptions, agent._half_range())
    agent.model = agent._build(kwargs, extras, None)  # the export, the settings; then the saved weights and state
    agent.model = getattr(sb3(agent.kind), agent.algorithm).load(filename, env=agent._export, device="cpu")
    return agent
