function spec = rlFiniteSetSpec (Elements, varargin)
  % envbridge's stand-in for MATLAB's rlFiniteSetSpec (see rlNumericSpec.m beside it).
  spec = envbridge_spec ("finite");
  spec.Elements = Elements;
  for k = 1:2:numel (varargin)
    spec.(varargin{k}) = varargin{k + 1};
  endfor
endfunction
