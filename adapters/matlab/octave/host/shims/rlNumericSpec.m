function spec = rlNumericSpec (Dimension, varargin)
  % envbridge's stand-in for MATLAB's rlNumericSpec while a .m file that creates an env runs in
  % Octave: a struct Python reads back (bridge/adapters/matlab/octave/source.py).
  spec = envbridge_spec ("numeric");
  spec.Dimension = Dimension;
  for k = 1:2:numel (varargin)
    spec.(varargin{k}) = varargin{k + 1};
  endfor
endfunction
