"""GNU Octave runs MATLAB users' ``.m`` step and reset functions for ``rlFunctionEnv``.

:mod:`names` (the MATLAB path, what a function's text names), :mod:`values` (MATLAB values <->
plain data), :mod:`session` (one supervised ``octave-cli`` process and its wire), :mod:`runner`
(the facade's step/reset over a session, LoggedSignals kept in Octave), ``host/`` (the Octave side).
"""
