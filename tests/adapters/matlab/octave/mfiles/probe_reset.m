function [InitialObservation, LoggedSignals] = probe_reset()
% A counter on a line, with LoggedSignals of several MATLAB classes (for the snapshot tests).
LoggedSignals.Position = 0;
LoggedSignals.Count = int32(0);
LoggedSignals.Name = 'probe';
LoggedSignals.History = {};
LoggedSignals.Flags = [true, false];
LoggedSignals.Noise = 0;
InitialObservation = [0; 0];
end
