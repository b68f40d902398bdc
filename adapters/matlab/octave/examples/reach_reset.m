function [InitialObservation, LoggedSignals] = reach_reset()
% Reset function of the reach task: a mass on a rail starts at rest at a random position in
% [-1, 1] m; the goal is drawn in [-1, 1] m too. Two observation channels: {State, Goal}.
Position = 2 * rand() - 1;
Goal = 2 * rand() - 1;
LoggedSignals.State = [Position; 0];
LoggedSignals.Goal = Goal;
LoggedSignals.Steps = 0;
InitialObservation = {LoggedSignals.State, Goal};
end
