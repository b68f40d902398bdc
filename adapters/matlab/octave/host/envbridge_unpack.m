function [v, p] = envbridge_unpack (b, p)
  % The value that starts at byte p of b (the layout of envbridge_pack), and the byte after it.
  % The bytes come from this session's Python side, which wrote them with values.py.
  persistent classes = {"double", "single", "logical", "char", "int8", "uint8", "int16", ...
                        "uint16", "int32", "uint32", "int64", "uint64", "struct", "cell"};
  persistent sizes = [8 4 1 1 1 1 2 2 4 4 8 8];
  code = double (b(p));
  nd = double (typecast (b(p+1:p+4), "uint32"));
  sz = double (typecast (b(p+5:p+4+4*nd), "uint32"))(:)';
  p = p + 5 + 4*nd;
  n = prod (sz);
  if (code == 2)
    v = reshape (logical (b(p:p+n-1)), sz);
    p = p + n;
  elseif (code == 3)
    v = reshape (char (b(p:p+n-1)), sz);
    p = p + n;
  elseif (code < 12)
    bytes = n * sizes(code+1);
    v = reshape (typecast (b(p:p+bytes-1), classes{code+1}), sz);
    p = p + bytes;
  elseif (code == 12)
    nf = double (typecast (b(p:p+3), "uint32"));
    p = p + 4;
    names = cell (1, nf);
    for i = 1:nf
      len = double (typecast (b(p:p+3), "uint32"));
      names{i} = char (b(p+4:p+3+len))(:)';
      p = p + 4 + len;
    endfor
    s = struct ();
    for i = 1:nf
      s.(names{i}) = [];
    endfor
    v = repmat (s, sz);
    for k = 1:n
      for i = 1:nf
        [v(k).(names{i}), p] = envbridge_unpack (b, p);
      endfor
    endfor
  else
    v = cell (sz);
    for k = 1:n
      [v{k}, p] = envbridge_unpack (b, p);
    endfor
  endif
endfunction
