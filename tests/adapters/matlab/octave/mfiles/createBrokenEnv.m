function env = createBrokenEnv()
ObservationInfo = rlNumericSpec([2 1]);
env = rlFunctionEnv(ObservationInfo, ActionInfo, "counter_step", "probe_reset");
end
