function env = createProbeEnv()
% The probe counter, its step given as an anonymous function capturing Mode.
ObservationInfo = rlNumericSpec([2 1]);
ActionInfo = rlFiniteSetSpec([-1 1]);
Mode = 'ok';
env = rlFunctionEnv(ObservationInfo, ActionInfo, @(Action, LoggedSignals) probe_step(Action, LoggedSignals, Mode), @probe_reset);
end
