function env = createCartPoleEnv()
% Creates the cart-pole environment from its step and reset functions, as a MATLAB user does;
% envbridge runs this file as an env source: envbridge check path/to/createCartPoleEnv.m
ObservationInfo = rlNumericSpec([4 1]);
ObservationInfo.Name = "CartPole States";
ActionInfo = rlFiniteSetSpec([-10 10]);
ActionInfo.Name = "CartPole Action";
env = rlFunctionEnv(ObservationInfo, ActionInfo, "cartpole_step", "cartpole_reset");
end
