"""The one home of the toy envs the tests share (``tests/`` is on pytest's ``pythonpath``).

* :mod:`toy_envs.lowering`: envs whose spaces need lowering (Discrete start, n-D MultiDiscrete,
  Tuple and image observations, hybrid actions) and the step counters CapEnv / CapVector;
* :mod:`toy_envs.scripted`: envs that end exactly as scripted (the episode-end tests);
* :mod:`toy_envs.workers`: Ticker, which fails on cue inside a worker process;
* :mod:`toy_envs.broken`: an env with many defects at once (the CLI's check tests);
* :mod:`toy_envs.matrix`: the sources of the export matrix (MATLAB cart-poles, a finite-set env,
  a 16x16 image env with a Discrete(start=1) action).
"""
