function envbridge_host (in_path, out_path, host_dir)
  % The Octave side of an rlFunctionEnv whose step and reset are .m functions
  % (bridge/adapters/matlab/octave/session.py starts it and is the only peer).
  %
  % Python's messages start with a block of 1 + na doubles (na: the action's element count, 1
  % before bind): a step is [1; the action's doubles]; any other command is [code; byte count;
  % zeros], then that many payload bytes (one read per step). Python sends:
  %   1 step   payload: the action's doubles      2 reset  payload: value (seed words or [])
  %   3 bind   payload: value (functions, path, workspace, the specs' sizes and classes)
  %   4 get    (LoggedSignals and the generators' states)   5 set  payload: value as get gives it
  %   6 undo   (LoggedSignals back to before the last step) 7 close
  %   8 create payload: value (folder, name): run a .m function that creates an env, with
  %            stand-ins for rlNumericSpec, rlFiniteSetSpec and rlFunctionEnv (shims/)
  %   9 step all   payload: the actions' doubles, instance by instance (rlFunctionVectorEnv)
  %  10 reset some payload: value (mask, seed words per instance)
  %  11 outputs   (the last step's outputs as the step function gave them: Python found IsDone
  %               other than 0 or 1 in a fast-layout reply, and takes the facade's refusal from them)
  % Octave answers [double status; double byte count; payload] with status 0 (ok: a step's doubles [obs; reward; isdone], a reset's [obs], or a
  % value), 1 (the user's function raised: message and where), 2 (outputs off the fast layout:
  % the outputs themselves, for Python's own checks and refusals) or 3 (a refused bind or set).
  in = fopen (in_path, "r");
  out = fopen (out_path, "w");
  send_value (out, 0, struct ("protocol", 1, "octave", version ()));
  stepfn = []; resetfn = []; L = []; Lprev = [];
  nenv = 1; Ls = {[]}; Lsprev = Ls;  % the instances of an rlFunctionVectorEnv
  nobs = 0; ochannels = 1; oclass = {}; odims = {}; adims = [1 1]; aclass = "double"; na = 1; adouble = true;
  oclass1 = "double"; otemplate1 = 0; head0 = [0; 16]; odouble1 = false;
  nhead = 2; scalar = true;  % 1 + na; the action is one double
  o = []; r = []; d = [];
  while (true)
    [head, count] = fread (in, nhead, "double");
    if (count < nhead)
      break;  % Python went away
    endif
    if (head(1) == 1)
      if (scalar)
        Action = head(2);
      else
        Action = head(2:end);
        if (na > 1)
          Action = reshape (Action, adims);
        endif
        if (! adouble)
          Action = cast (Action, aclass);
        endif
      endif
      Lprev = L;  % one step of undo (a refused output); L changes only if the call returns
      try
        [o, r, d, L] = stepfn (Action, L);
      catch err
        send_error (out, err, host_dir);
        continue;
      end_try_catch
      % the fast layout: each channel of its spec's class and size, a real double Reward, a
      % logical (or 0/1 numeric) IsDone. Every builtin call costs ~19k instructions here (callgrind;
      % the cart-pole step is ~950k), so the common case (one double column channel) concatenates
      % first and tests the result: a single or integer part makes it another class, a complex part complex,
      % a cell or struct part an error; then the two sizes. IsDone is then a logical or a real
      % double: Python tests its value (0 or 1; else it asks for the outputs, code 11).
      % isequal is an m-file, ~20x a builtin.
      if (odouble1)
        try
          reply = [head0; o; r; d];  % a part that is not a column: an error (caught)
          if (isa (reply, "double") && isreal (reply) && size_equal (o, otemplate1) && size_equal (r, d, 1))
            fwrite (out, reply, "double");
            fflush (out);
            continue;
          endif
        catch
        end_try_catch
      elseif (ochannels == 1)
        if (isa (o, oclass1) && size_equal (o, otemplate1) && isa (r, "double") && isreal (r) && size_equal (r, d, 1) ...
            && (islogical (d) || (isnumeric (d) && (d == 0 || d == 1))))
          fwrite (out, [head0; double(o(:)); r; double(d)], "double");
          fflush (out);
          continue;
        endif
      else
        [ok, column] = on_layout (o, r, d, oclass, otemplate);
        if (ok)
          fwrite (out, [head0; column], "double");
          fflush (out);
          continue;
        endif
      endif
      send_value (out, 2, {o, r, d});
      continue;
    endif
    % every other command: [code; byte count; padding], then a packed value (maybe unused)
    code = head(1);
    payload = fread (in, head(2), "uint8=>uint8");
    if (code == 11)
      send_value (out, 2, {o, r, d});
    elseif (code == 2)
      seed = envbridge_unpack (payload, 1);
      if (! isempty (seed))
        rand ("state", seed); randn ("state", seed); rande ("state", seed);
        randg ("state", seed); randp ("state", seed);
      endif
      try
        [o, Lnew] = resetfn ();
      catch err
        send_error (out, err, host_dir);
        continue;
      end_try_catch
      Lprev = L;
      L = Lnew;
      ok = ochannels == 1 && isa (o, oclass1) && size_equal (o, otemplate1);
      if (ok)
        fwrite (out, [0; 8 * nobs; double(o(:))], "double");
        fflush (out);
      else
        send_value (out, 2, {o});
      endif
    elseif (code == 3)
      spec = envbridge_unpack (payload, 1);
      try
        if (! isempty (spec.path))
          addpath (spec.path{:});
        endif
        stepfn = envbridge_handle (spec.step, spec.workspace);
        resetfn = envbridge_handle (spec.reset, spec.workspace);
        ochannels = numel (spec.obs_class);
        oclass = spec.obs_class; odims = spec.obs_dims; nobs = spec.nobs; head0 = [0; 8 * (nobs + 2)];
        otemplate = cellfun (@(dims) zeros (dims), odims, "UniformOutput", false);
        oclass1 = oclass{1}; otemplate1 = otemplate{1};
        % one double column channel: the step's fast layout concatenates o as it comes (o(:) costs 7k)
        odouble1 = ochannels == 1 && strcmp (oclass1, "double") && iscolumn (otemplate1);
        nenv = spec.num_envs; Ls = cell (1, nenv); Lsprev = Ls;
        aclass = spec.act_class; adims = spec.act_dims; na = prod (adims);
        adouble = strcmp (aclass, "double");
        nhead = na + 1; scalar = na == 1 && adouble;
        send_value (out, 0, struct ("step", signature (stepfn, spec.step), "reset", signature (resetfn, spec.reset)));
      catch err
        send_value (out, 3, err.message);
      end_try_catch
    elseif (code == 4)
      try
        send_value (out, 0, struct ("Info", {L}, "rng", generators ()));
      catch err
        send_value (out, 3, err.message);
      end_try_catch
    elseif (code == 5)
      state = envbridge_unpack (payload, 1);
      try
        if (isfield (state, "rng"))
          rand ("state", state.rng.rand); randn ("state", state.rng.randn); rande ("state", state.rng.rande);
          randg ("state", state.rng.randg); randp ("state", state.rng.randp);
        endif
        L = state.Info;
        Lprev = L;
        send_value (out, 0, []);
      catch err
        send_value (out, 3, err.message);
      end_try_catch
    elseif (code == 6)
      L = Lprev;
      Ls = Lsprev;
      send_value (out, 0, []);
    elseif (code == 9)
      As = typecast (payload, "double");
      buf = zeros (nobs + 2, nenv);
      outs = cell (3, nenv);
      Lsprev = Ls;
      ok = true;
      failed = false;
      for k = 1:nenv
        Action = As((k - 1) * na + 1 : k * na);
        if (na > 1)
          Action = reshape (Action, adims);
        endif
        if (! adouble)
          Action = cast (Action, aclass);
        endif
        try
          [o, r, d, Ls{k}] = stepfn (Action, Ls{k});
        catch err
          Ls = Lsprev;
          send_error (out, err, host_dir);
          failed = true;
          break;
        end_try_catch
        outs(:, k) = {o; r; d};
        if (ok)
          [ok, column] = on_layout (o, r, d, oclass, otemplate);
          if (ok)
            buf(:, k) = column;
          endif
        endif
      endfor
      if (failed)
        continue;
      endif
      if (ok)
        fwrite (out, [0; 8 * numel(buf); buf(:)], "double");
        fflush (out);
      else
        send_value (out, 2, outs(:)');  % a row: {o1, r1, d1, o2, ...}
      endif
    elseif (code == 10)
      job = envbridge_unpack (payload, 1);
      buf = zeros (nobs, nenv);
      outs = cell (1, nenv);
      Lsprev = Ls;
      ok = true;
      failed = false;
      for k = find (job.mask(:)')
        seed = job.words(:, k);
        rand ("state", seed); randn ("state", seed); rande ("state", seed);
        randg ("state", seed); randp ("state", seed);
        try
          [o, Ls{k}] = resetfn ();
        catch err
          Ls = Lsprev;
          send_error (out, err, host_dir);
          failed = true;
          break;
        end_try_catch
        outs{k} = o;
        if (ok)
          [ok, column] = on_layout (o, 0, false, oclass, otemplate);
          if (ok)
            buf(:, k) = column(1:nobs);
          endif
        endif
      endfor
      if (failed)
        continue;
      endif
      if (ok)
        fwrite (out, [0; 8 * numel(buf); buf(:)], "double");
        fflush (out);
      else
        send_value (out, 2, outs);
      endif
    elseif (code == 8)
      job = envbridge_unpack (payload, 1);
      addpath (fullfile (host_dir, "shims"), job.folder);
      try
        made = feval (job.name);
        rmpath (fullfile (host_dir, "shims"));
        send_value (out, 0, made);
      catch err
        rmpath (fullfile (host_dir, "shims"));
        send_error (out, err, host_dir);
      end_try_catch
    else
      break;  % close
    endif
  endwhile
  fclose (in);
  fclose (out);
endfunction

function [ok, column] = on_layout (o, r, d, oclass, otemplate)
  % The step's fast layout for one instance of a batch (the single env's step tests it inline:
  % a call costs as much as the tests); column = [obs; Reward; IsDone] when ok.
  column = [];
  if (numel (oclass) == 1)
    ok = isa (o, oclass{1}) && size_equal (o, otemplate{1});
  else
    ok = iscell (o) && numel (o) == numel (oclass);
    for i = 1:numel (oclass)
      ok = ok && isa (o{i}, oclass{i}) && size_equal (o{i}, otemplate{i});
    endfor
  endif
  ok = ok && isa (r, "double") && isreal (r) && isscalar (r) && isscalar (d) ...
       && (islogical (d) || (isnumeric (d) && (d == 0 || d == 1)));
  if (! ok)
    return;
  elseif (numel (oclass) == 1)
    column = [double(o(:)); r; double(d)];
  else
    parts = cellfun (@(x) double (x(:)), o(:), "UniformOutput", false);
    column = [vertcat(parts{:}); r; double(d)];
  endif
endfunction

function s = generators ()
  s = struct ("rand", rand ("state"), "randn", randn ("state"), "rande", rande ("state"), ...
              "randg", randg ("state"), "randp", randp ("state"));
endfunction

function s = signature (fh, text)
  % nargin and nargout of a function by name (of the handle's own text for an anonymous one);
  % -1 for varargin/varargout or when Octave cannot tell.
  name = func2str (fh);
  s = struct ("nargin", -1, "nargout", -1, "file", "", "anonymous", text(1) == "@");
  try
    s.nargin = nargin (fh);
  end_try_catch
  if (! s.anonymous)
    s.file = which (name);
    try
      s.nargout = nargout (name);
    end_try_catch
  endif
endfunction

function send_value (out, status, v)
  b = envbridge_pack (v);
  fwrite (out, [status; numel(b)], "double");
  fwrite (out, b, "uint8");
  fflush (out);
endfunction

function send_error (out, err, host_dir)
  % the innermost frame of the user's code: the host's own frames are skipped
  where = struct ("name", "", "file", "", "line", -1);
  for k = 1:numel (err.stack)
    f = err.stack(k);
    if (! isempty (f.file) && isempty (strfind (f.file, host_dir)))
      where = struct ("name", f.name, "file", f.file, "line", f.line);
      break;
    endif
  endfor
  send_value (out, 1, struct ("message", err.message, "identifier", err.identifier, "where", where));
endfunction
