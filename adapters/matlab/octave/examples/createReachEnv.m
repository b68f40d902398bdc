function env = createReachEnv()
% Creates the reach task: two observation channels, State [2 1] and Goal [1 1], and a force.
StateInfo = rlNumericSpec([2 1]);
StateInfo.Name = "State";
GoalInfo = rlNumericSpec([1 1], "LowerLimit", -1, "UpperLimit", 1);
GoalInfo.Name = "Goal";
ActionInfo = rlNumericSpec([1 1], "LowerLimit", -1, "UpperLimit", 1);
ActionInfo.Name = "Force";
env = rlFunctionEnv([StateInfo, GoalInfo], ActionInfo, @reach_step, @reach_reset);
end
