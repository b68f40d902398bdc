"""A Python module of the same name as counter_step.m: the bare name still runs the .m file."""


def counter_step(Action, Info):
    raise AssertionError("the .m function wins for a bare name")
