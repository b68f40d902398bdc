function [NextObs, Reward, IsDone, LoggedSignals] = counter_step(Action, LoggedSignals)
% The counter's step with MATLAB's two inputs.
[NextObs, Reward, IsDone, LoggedSignals] = probe_step(Action, LoggedSignals, 'ok');
end
