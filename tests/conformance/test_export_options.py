"""The runtime table is the only list of export options: every export (scalar and batched) of
every runtime installed here takes exactly the options its row declares, with the catalogue's
meaning and default, and refuses any other by name, before it builds anything."""

from __future__ import annotations

import inspect
import os

import pytest
from support import raises_exactly

import bridge
from bridge import runtimes
from bridge.errors import SpecError
from bridge.examples import CartPoleVector, GridWorld
from bridge.options import OPTIONS, RUNTIME_PRECISION

# parameters of a runtime's own API that share a catalogue name and its meaning (SB3's make_vec_env
# seeds the first reset, env i with seed + i, as the catalogue's seed does)
OWN = {"make_vec_env": {"seed"}}
EXPORTS = [
    (row.name, name, kind)
    for row in runtimes.RUNTIMES.values()
    for name, kind in ((row.export, "scalar"), (row.batch_export, "batch"))
    if name is not None
]


def _declared(row: runtimes.Runtime, kind: str):
    return row.options if kind == "scalar" else row.batch_options


def test_every_declared_option_is_in_the_one_catalogue_and_every_export_in_the_table():
    for row in runtimes.RUNTIMES.values():
        for name in row.options + row.batch_options + tuple(row.refusals):
            assert name in OPTIONS, (row.name, name)
        assert not set(row.refusals) & set(row.options), row.name  # a refusal is for what it cannot honour
        for name in filter(None, (row.export, row.batch_export)):
            assert name in row.exports, (row.name, name)


def test_the_float_policy_has_one_default_the_runtimes_precision():
    assert OPTIONS["float64_as_float32"].default is RUNTIME_PRECISION
    assert {r.name for r in runtimes.RUNTIMES.values() if r.float32} == {"sb3", "rllib", "dreamerv2"}


@pytest.mark.parametrize("runtime, name, kind", EXPORTS, ids=[f"{r}-{n}" for r, n, _ in EXPORTS])
def test_an_export_takes_exactly_its_declared_options(runtime, name, kind):
    if runtimes.probe(runtime):
        pytest.skip(f"{runtime} is not installed here (not this era)")
    row = runtimes.get(runtime)
    export = runtimes.load(row.exports[name])
    declared = _declared(row, kind)
    source = (lambda: CartPoleVector(num_envs=2)) if kind == "batch" else (lambda: GridWorld())
    for option in OPTIONS.values():
        if option.name in declared or option.name in OWN.get(name, ()):
            continue
        subject = "rllib.register" if name == "register_rllib" else name
        fix = row.refusals.get(option.name) or (
            f"Drop {option.name} (an argument of the env's own goes in env_kwargs={{{option.name!r}: ...}})"
        )
        listed = list(declared)
        if name == "make_vec_env":  # it takes scalar sources too: an option neither export honours is refused first
            union = row.options + tuple(n for n in row.batch_options if n not in row.options)
            listed = list(union) if option.name not in union else listed
        text = f"{subject} option must be one of {listed}, got {option.name!r}. {fix}."
        env = source()
        with raises_exactly(SpecError, text):
            export(env, **{option.name: option.default if option.default is not RUNTIME_PRECISION else True})
        env.close()
    # every declared option at its documented default builds the export
    defaults = {n: (row.float32 if OPTIONS[n].default is RUNTIME_PRECISION else OPTIONS[n].default) for n in declared}
    built = export(source(), **defaults)
    assert {k: built.options[k] for k in declared} == defaults if hasattr(built, "options") else True
    built.close()


@pytest.mark.parametrize("runtime, name, kind", EXPORTS, ids=[f"{r}-{n}" for r, n, _ in EXPORTS])
def test_a_wrong_value_is_refused_before_anything_is_built(runtime, name, kind):
    if runtimes.probe(runtime):
        pytest.skip(f"{runtime} is not installed here (not this era)")
    row = runtimes.get(runtime)
    export = runtimes.load(row.exports[name])
    built = []

    def factory():
        built.append(1)
        return CartPoleVector(num_envs=2) if kind == "batch" else GridWorld()

    with raises_exactly(SpecError, f"{name} check_actions must be True or False, got 1. Pass a bool."):
        export(factory, check_actions=1)
    assert built == []


def test_no_export_function_spells_out_an_option_of_its_own():
    # options reach the bases through **options, so the catalogue's meaning is the only one
    for row in runtimes.RUNTIMES.values():
        if runtimes.probe(row.name):
            continue
        for name in filter(None, (row.export, row.batch_export)):
            params = inspect.signature(runtimes.load(row.exports[name])).parameters
            spelled = set(params) & set(OPTIONS) - OWN.get(name, set())
            assert not spelled, (name, sorted(spelled))


def test_star_import_works_and_lazy_names_are_listed():
    namespace: dict = {}
    exec("from bridge import *", namespace)
    assert {"Env", "make", "check", "VectorEnv"} <= set(namespace)
    lazy = {n for r in runtimes.RUNTIMES.values() for n in r.exports}
    assert lazy <= set(dir(bridge)) and not lazy & set(bridge.__all__)


def options_table() -> str:
    """docs/options.md's table: every export x every option, with its default or why it is refused."""
    exports = [(r, n, k) for r, n, k in EXPORTS if n != "register_rllib"]
    head = "| option | " + " | ".join(f"`{n}`" for _, n, _ in exports) + " |"
    rule = "|---|" + "---|" * len(exports)
    rows = [head, rule]
    for option in OPTIONS.values():
        cells = []
        for runtime, _, kind in exports:
            row = runtimes.get(runtime)
            if option.name in _declared(row, kind):
                default = row.float32 if option.default is RUNTIME_PRECISION else option.default
                cells.append(f"`{default!r}`")
            else:
                cells.append("refused")
        rows.append(f"| `{option.name}` | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def test_docs_options_table_is_the_runtime_tables():
    docs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "options.md")
    with open(docs, encoding="utf-8") as f:
        text = f.read()
    assert options_table() in text, "docs/options.md's table differs: paste options_table() from this test"
    for option in OPTIONS.values():
        assert f"`{option.name}`: {option.meaning}" in text, option.name


SCALAR = [(r, n) for r, n, kind in EXPORTS if kind == "scalar" and n != "register_rllib"]


@pytest.mark.parametrize("runtime, name", SCALAR, ids=[n for _, n in SCALAR])
def test_a_typo_of_an_option_is_refused_by_name_with_the_option_it_was_meant_to_be(runtime, name):
    # a keyword that is neither an option nor an argument of the env's constructor: never the env's TypeError
    if runtimes.probe(runtime):
        pytest.skip(f"{runtime} is not installed here (not this era)")
    row = runtimes.get(runtime)
    export = runtimes.load(row.exports[name])
    text = (
        f"{name} keyword must be one of its options {list(row.options)} or an argument of the env, "
        "got 'check_action'. Did you mean check_actions?"
    )
    for source in ("envbridge/GridWorld-v0", GridWorld):
        with raises_exactly(SpecError, text):
            export(source, check_action=True)
    export("envbridge/GridWorld-v0", render_mode=None).close()  # an argument of the env's own is the env's
