function [InitialObservation, LoggedSignals] = cartpole_reset()
% Reset function of the cart-pole (the style of MATLAB's "function names" example):
% the pole starts at a random angle in [-0.05, 0.05] rad, everything else at rest.

% Pole angle, drawn uniformly
Theta0 = 2 * 0.05 * rand() - 0.05;
% Pole angular velocity, cart position, cart velocity
ThetaDot0 = 0;
X0 = 0;
XDot0 = 0;

% The simulation state is kept in the logged signals
LoggedSignals.State = [X0; XDot0; Theta0; ThetaDot0];
InitialObservation = LoggedSignals.State;
end
