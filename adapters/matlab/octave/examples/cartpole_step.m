function [NextObs, Reward, IsDone, LoggedSignals] = cartpole_step(Action, LoggedSignals)
% Step function of the cart-pole: applies the force Action (-10 or 10 N) for one sample
% time and returns the next observation, the reward and whether the pole fell.

% Environment constants
Gravity = 9.8;              % m/s^2
CartMass = 1.0;             % kg
PoleMass = 0.1;             % kg
HalfPoleLength = 0.5;       % m
MaxForce = 10;              % N
Ts = 0.02;                  % s
AngleThreshold = 12 * pi / 180;
DisplacementThreshold = 2.4;
RewardForNotFalling = 1;
PenaltyForFalling = -10;

if ~ismember(Action, [-MaxForce, MaxForce])
    error('Action must be %g for going left and %g for going right.', -MaxForce, MaxForce);
end
Force = Action;

% The state from the logged signals
State = LoggedSignals.State;
XDot = State(2);
Theta = State(3);
ThetaDot = State(4);

% The equations of motion
CosTheta = cos(Theta);
SinTheta = sin(Theta);
SystemMass = CartMass + PoleMass;
temp = (Force + PoleMass * HalfPoleLength * ThetaDot * ThetaDot * SinTheta) / SystemMass;
ThetaDotDot = (Gravity * SinTheta - CosTheta * temp) / ...
    (HalfPoleLength * (4.0 / 3.0 - PoleMass * CosTheta * CosTheta / SystemMass));
XDotDot = temp - PoleMass * HalfPoleLength * ThetaDotDot * CosTheta / SystemMass;

% Euler integration
LoggedSignals.State = State + Ts .* [XDot; XDotDot; ThetaDot; ThetaDotDot];
NextObs = LoggedSignals.State;

% Terminal condition and reward
X = NextObs(1);
Theta = NextObs(3);
IsDone = abs(X) > DisplacementThreshold || abs(Theta) > AngleThreshold;
if ~IsDone
    Reward = RewardForNotFalling;
else
    Reward = PenaltyForFalling;
end
end
