function [NextObs, Reward, IsDone, LoggedSignals] = probe_step(Action, LoggedSignals, Mode)
% The counter's step; Mode (an extra parameter, bound by handle text) picks a misbehaviour.
LoggedSignals.Position = LoggedSignals.Position + Action;
LoggedSignals.Count = LoggedSignals.Count + 1;
LoggedSignals.History{end + 1} = Action;
LoggedSignals.Noise = rand();
NextObs = [LoggedSignals.Position; double(LoggedSignals.Count)];
Reward = -abs(LoggedSignals.Position);
IsDone = abs(LoggedSignals.Position) > 5;
switch Mode
  case 'raise'
    error('probe:failed', 'the probe failed at count %d', LoggedSignals.Count);
  case 'row'
    NextObs = NextObs';
  case 'text'
    NextObs = 'ab';
  case 'nan'
    Reward = NaN;
  case 'half'
    IsDone = 0.5;
  case 'exit'
    exit(3);
  case 'hang'
    pause(600);
end
end
