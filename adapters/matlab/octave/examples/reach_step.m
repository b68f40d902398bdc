function [NextObs, Reward, IsDone, LoggedSignals] = reach_step(Action, LoggedSignals)
% Step function of the reach task: the force Action (in [-1, 1] N) pushes a 1 kg mass with
% viscous friction; the reward is minus the distance to the goal minus a small effort cost.
% The episode ends at the goal (within 5 cm, nearly at rest) or off the rail (|x| > 2 m).
Ts = 0.05;
Friction = 0.5;
State = LoggedSignals.State;
Position = State(1);
Velocity = State(2);
Acceleration = Action - Friction * Velocity;
Velocity = Velocity + Ts * Acceleration;
Position = Position + Ts * Velocity;
LoggedSignals.State = [Position; Velocity];
LoggedSignals.Steps = LoggedSignals.Steps + 1;
Distance = abs(Position - LoggedSignals.Goal);
Reward = -Distance - 0.01 * Action^2;
AtGoal = Distance < 0.05 && abs(Velocity) < 0.1;
IsDone = AtGoal || abs(Position) > 2;
if AtGoal
    Reward = Reward + 10;
end
NextObs = {LoggedSignals.State, LoggedSignals.Goal};
end
