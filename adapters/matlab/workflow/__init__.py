"""MATLAB's training workflow on SB3: default agents and their options, ``rlTrainingOptions`` and
``train`` (with its progress display), ``sim``.

Beside the facade itself (specs, ``rlFunctionEnv``, the vector env, the lowering and the export):
importing needs numpy and bridge only (both eras); building an agent or training needs SB3.
The public names are re-exported by :mod:`bridge.adapters.matlab`.
"""
