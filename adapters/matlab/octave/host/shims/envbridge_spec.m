function spec = envbridge_spec (kind)
  % The fields both spec stand-ins share, in one order, so [obsInfo1, obsInfo2] concatenates.
  spec.Kind = kind;
  spec.Dimension = [1 1];
  spec.LowerLimit = -Inf;
  spec.UpperLimit = Inf;
  spec.DataType = "double";
  spec.Elements = [];
  spec.Name = "";
  spec.Description = "";
endfunction
