function envbridge_fh__ = envbridge_handle (envbridge_text__, envbridge_workspace__)
  % A handle from a function name ("myStepFunction") or MATLAB handle text
  % ("@(Action,LoggedSignals) myStepFunction(Action,LoggedSignals,EnvConstants)"), the handle
  % text seeing the workspace variables (EnvConstants, ...) as an anonymous function captures them.
  if (envbridge_text__(1) != "@")
    if (! any (exist (envbridge_text__) == [2 3 5]))
      error ("envbridge:notfound", "%s is not a function on Octave's path", envbridge_text__);
    endif
    envbridge_fh__ = str2func (envbridge_text__);
    return;
  endif
  for envbridge_name__ = fieldnames (envbridge_workspace__)'
    eval (sprintf ("%s = envbridge_workspace__.(envbridge_name__{1});", envbridge_name__{1}));
  endfor
  envbridge_fh__ = eval (envbridge_text__);
endfunction
