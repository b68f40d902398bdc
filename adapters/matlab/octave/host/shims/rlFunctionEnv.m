function env = rlFunctionEnv (ObservationInfo, ActionInfo, StepFcn, ResetFcn)
  % envbridge's stand-in for MATLAB's rlFunctionEnv while a .m file that creates an env runs in
  % Octave: the specs, each function as text (a name, or an anonymous function's text), and the
  % variables the anonymous functions captured (EnvConstants, ...), for Python to build the env.
  env.Kind = "rlFunctionEnv";
  env.ObservationInfo = ObservationInfo;
  env.ActionInfo = ActionInfo;
  [env.StepFcn, captured] = as_text (StepFcn);
  [env.ResetFcn, more] = as_text (ResetFcn);
  for name = fieldnames (more)'
    captured.(name{1}) = more.(name{1});
  endfor
  env.Workspace = captured;
endfunction

function [text, captured] = as_text (fcn)
  captured = struct ();
  if (ischar (fcn) || isa (fcn, "string"))
    text = char (fcn);
    return;
  endif
  text = func2str (fcn);
  info = functions (fcn);
  if (isfield (info, "workspace") && ! isempty (info.workspace))
    captured = info.workspace{1};
  endif
endfunction
