function b = envbridge_pack (v)
  % The bytes of a plain MATLAB value (numeric, logical, char, struct, cell: any shape, nested) in
  % envbridge's value layout, read by bridge/adapters/matlab/octave/values.py:
  %   uint8 class code, uint32 ndims, uint32 dims (column-major), then the data:
  %   numeric: the raw elements; logical, char: one byte each; struct: uint32 field count, each
  %   name as uint32 length + bytes, then every element's fields in order; cell: every element.
  persistent classes = {"double", "single", "logical", "char", "int8", "uint8", "int16", ...
                        "uint16", "int32", "uint32", "int64", "uint64", "struct", "cell"};
  code = find (strcmp (classes, class (v)), 1) - 1;
  if (isempty (code))
    error ("envbridge:plain", "a value of class %s cannot cross to Python (plain data only: numeric, logical, char, struct, cell)", class (v));
  endif
  if (isnumeric (v) && ! isreal (v))
    error ("envbridge:plain", "a complex value cannot cross to Python (real numbers only)");
  endif
  sz = size (v);
  parts = {uint8(code); typecast(uint32 ([numel(sz), sz])(:), "uint8")};
  if (code == 2 || code == 3)
    parts{end+1} = uint8 (v(:));
  elseif (code < 12)
    parts{end+1} = typecast (v(:), "uint8")(:);
  elseif (code == 12)
    names = fieldnames (v);
    parts{end+1} = typecast (uint32 (numel (names)), "uint8")(:);
    for i = 1:numel (names)
      parts{end+1} = typecast (uint32 (numel (names{i})), "uint8")(:);
      parts{end+1} = uint8 (names{i})(:);
    endfor
    for k = 1:numel (v)
      for i = 1:numel (names)
        parts{end+1} = envbridge_pack (v(k).(names{i}));
      endfor
    endfor
  else
    for k = 1:numel (v)
      parts{end+1} = envbridge_pack (v{k});
    endfor
  endif
  b = vertcat (parts{:});
endfunction
