function [NextObs, Reward, IsDone] = three_outputs_step(Action, LoggedSignals)
NextObs = [0; 0];
Reward = 0;
IsDone = false;
end
