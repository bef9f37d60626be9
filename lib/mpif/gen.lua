-- lib/mpif/gen.lua: generate lamkit's Fortran bindings from include/mpi.h and bindings.lua.
--
-- usage: lua gen.lua MPI_H BINDINGS_LUA TEMPLATE_DIR OUT_DIR
-- Writes into OUT_DIR: mpif_gen.c (the C side of every binding: mpi_x_/pmpi_x_ for mpif.h and
-- use mpi, MPI_X_f08/PMPI_X_f08 for use mpi_f08), mpif_custom.h (prototypes of the hand-written
-- bodies), mpif.h, mpi.f90 and mpi_f08.f90 (the module sources, from TEMPLATE_DIR/*.f90.in).
-- Fails (exit 1, one line per problem) when a routine of mpi.h has no entry in the table, an
-- entry does not match its C prototype, or a constant of mpi.h has no Fortran form.
local mpi_h, bindings, tdir, odir = ...
if not odir then
	io.stderr:write("usage: lua gen.lua MPI_H BINDINGS_LUA TEMPLATE_DIR OUT_DIR\n")
	os.exit(100)
end

local problems = {}
local function problem(fmt, ...)
	problems[#problems + 1] = string.format(fmt, ...)
end

local function slurp(path)
	local f = assert(io.open(path, "rb"))
	local s = f:read("a")
	f:close()
	return s
end

local function spew(path, s)
	local tmp = path .. ".tmp"
	local f = assert(io.open(tmp, "wb"))
	f:write(s)
	f:close()
	assert(os.rename(tmp, path))
end

-- ---- mpi.h: prototypes and constants ----
local header = slurp(mpi_h)
local src = header:gsub("/%*.-%*/", " ")

local cproto = {} -- name -> {ret = "int", params = {"const void *buf", ...}}
local corder = {}
local function add_proto(name, ret, plist)
	if cproto[name] then
		return
	end
	local params = {}
	plist = plist:gsub("^%(", ""):gsub("%)$", "")
	plist = plist:gsub("%s+", " ")
	if plist ~= "void" and plist:match("%S") then
		for p in (plist .. ","):gmatch("%s*([^,]-)%s*,") do
			if p ~= "..." then
				params[#params + 1] = p
			end
		end
	end
	cproto[name] = {ret = ret, params = params}
	corder[#corder + 1] = name
end
for name, plist in src:gmatch("LK_MPI_FN%(%s*([%w_]+)%s*,%s*(%b())%s*%)") do
	add_proto(name, "int", plist)
end
for ret, name, plist in src:gmatch("\n([%w_]+)%s+MPI_([%w_]+)%s*(%b())%s*;") do
	add_proto(name, ret, plist)
end
for kind in src:gmatch("\nLK_MPI_F2C%(%s*([%w_]+)%s*,") do
	add_proto(kind .. "_c2f", "MPI_Fint", "(h)")
	add_proto(kind .. "_f2c", "handle", "(h)")
end

-- constants: every #define MPI_X (and OMPI_X) with an integer value
local consts, cvalue, consts_all = {}, {}, {}
local T = dofile(bindings)
for line in header:gmatch("[^\n]+") do
	local name, val = line:match("^#define%s+([%w_]+)%s+(.-)%s*$")
	if name then
		consts_all[#consts_all + 1] = name
	end
	if name and (name:match("^MPI_") or name:match("^OMPI_")) and not name:match("%(") then
		val = val:gsub("/%*.*", ""):gsub("%s+$", "")
		local v = val:match("^%(?%s*(%-?%d+)%s*%)?$") or val:match("^%(%(MPI_%w+%)(%-?%d+)%)$")
		if v then
			cvalue[name] = tonumber(v)
			consts[#consts + 1] = name
		elseif val:match("^MPI_[%w_]+$") or val:match("^OMPI_[%w_]+$") then
			consts[#consts + 1] = name
			cvalue[name] = {alias = val}
		elseif not T.not_int[name] and name ~= "MPI_F_STATUS_SIZE" then
			problem("%s: constant %s = %s has no Fortran form: give it an integer value or list it in not_int of %s",
				mpi_h, name, val, bindings)
		end
	end
end
local function value(name, seen)
	local v = cvalue[name]
	if type(v) == "table" then
		seen = seen or {}
		if seen[name] or not cvalue[v.alias] then
			problem("%s: %s aliases %s, which has no integer value", mpi_h, name, v.alias)
			return 0
		end
		seen[name] = true
		return value(v.alias, seen)
	end
	return v
end

-- which constants are handles (mpi_f08 types)
local handle_of = {}
for ty, spec in pairs(T.handles) do
	if spec.section then
		local a = header:find(spec.section[1], 1, true)
		local b = a and header:find(spec.section[2], a, true)
		if not (a and b) then
			problem("%s: the section %s ... %s of handles %s is not there", mpi_h, spec.section[1],
				spec.section[2], ty)
		else
			for name in header:sub(a, b):gmatch("#define%s+(MPI_[%w_]+)") do
				handle_of[name] = ty
			end
		end
	else
		for _, name in ipairs(spec) do
			handle_of[name] = ty
		end
	end
end

-- ---- argument kinds ----
local HANDLES = {Comm = 1, Datatype = 1, Group = 1, Op = 1, Info = 1, Errhandler = 1, Win = 1,
	Request = 1, File = 1}

-- Fortran argument names that are not good C identifiers here (a macro, a builtin)
local C_RESERVED = {assert = true, index = true}

-- Parse "name:kind" into {name, kind, base, arr, out, len, size, cnt, typ, fn}
local function parse_arg(tok, rname)
	if tok == "-" then
		return {name = "-", kind = "-", c = "-", base = "-"}
	end
	local name, kind = tok:match("^([%w_]+):(.+)$")
	if not name then
		problem("%s: %s: bad argument '%s' (want name:kind)", bindings, rname, tok)
		return {name = "x", kind = "-"}
	end
	local a = {name = name, kind = kind, c = C_RESERVED[name] and name .. "_" or name}
	if kind:sub(-1) == "?" then
		kind = kind:sub(1, -2)
		a.kind, a.loose = kind, true
	end
	local k = kind
	if k:match("^fn:") then
		a.base, a.fn = "fn", k:sub(4)
		return a
	end
	if k:match("^str%*:") then
		a.base, a.out, a.size = "str", true, k:sub(6)
		return a
	end
	local buf, cnt, typ = k:match("^(a?c?buf)/([%w_]+)/([%w_]+)$")
	if buf then
		a.base, a.cnt, a.typ = buf, cnt, typ
		return a
	end
	if k:sub(-1) == "*" then
		a.out = true
		k = k:sub(1, -2)
	elseif k:sub(-1) == "&" then -- in and out (a request the call may complete)
		a.out, a.inout = true, true
		k = k:sub(1, -2)
	end
	local b, len = k:match("^([%w_]+)%[(.-)%]$")
	if b then
		a.arr = true
		a.len = len ~= "" and len or nil
		k = b
	end
	a.base = k
	return a
end

-- Whether C parameter text p fits argument a; returns the C type text (name removed).
local function ctype_of(p)
	-- strip the parameter name: the last identifier, keeping [] and * parts
	local t = p:gsub("%s*%*%s*", " * ")
	local arr = ""
	t = t:gsub("(%[.-%])", function(x)
		arr = arr .. x
		return ""
	end)
	t = t:gsub("%s+$", "")
	local base = t:match("^(.-)%s*[%w_]+$")
	if not base or base == "" or base == "const" then
		base = t -- no name (void) or only a type
	end
	base = base:gsub("%s+", " "):gsub(" %*", "*"):gsub("%* ", "*")
	return base .. arr
end

local fits = {
	["-"] = function() return true end,
	int = function(t, a) return a.arr and (t:match("^c?o?n?s?t? ?int%[%]$") or t == "int[]")
		or (not a.arr and (a.out and t == "int*" or not a.out and (t == "int" or t == "const int"))) end,
	log = function(t, a) return a.arr and t:match("int%[%]$") or (a.out and t == "int*")
		or (not a.out and not a.arr and t == "int") end,
	aint = function(t, a) return a.arr and t:match("MPI_Aint%[%]$")
		or (a.out and t == "MPI_Aint*") or (not a.out and not a.arr and t == "MPI_Aint") end,
	buf = function(t) return t == "void*" end,
	abuf = function(t) return t == "void*" end,
	cbuf = function(t) return t == "const void*" end,
	acbuf = function(t) return t == "const void*" end,
	loc = function(t) return t == "const void*" or t == "void*" end,
	status = function(t, a) return (a.out or a.arr) and t == "MPI_Status*" or t == "const MPI_Status*" end,
	str = function(t, a) return a.out and t == "char*" or (t == "const char*" or t == "const char[]") end,
	idx = function(t, a) return a.arr and t == "int[]" or t == "int*" end,
	errs = function(t) return t == "int[]" end,
	wts = function(t, a) return a.out and t == "int[]" or t == "const int[]" end,
	ranges = function(t) return t == "int[][3]" end,
	ptr = function(t) return t == "void*" end,
	attr = function(t) return t == "void*" end,
	iattr = function(t) return t == "void*" end,
	extra = function(t) return t == "void*" end,
	iextra = function(t) return t == "void*" end,
	argv = function(t) return t == "char*[]" end,
	strs = function(t) return t == "char*[]" end,
	argvs = function(t) return t == "char**[]" end,
	bufaddr = function(t) return t == "void*" end,
}
fits.iaint = fits.aint
fits.off = function(t, a) return a.out and t == "MPI_Offset*" or (not a.out and t == "MPI_Offset") end
fits.cnt = function(t, a) return a.out and t == "MPI_Count*" or (not a.out and t == "MPI_Count") end
local function fit(a, t)
	if a.base == "fn" then
		return t == "MPI_" .. a.fn .. "*"
	end
	if HANDLES[a.base] then
		local h = "MPI_" .. a.base
		if a.arr then
			return t == h .. "[]" or t == "const " .. h .. "[]"
		end
		return a.out and t == h .. "*" or (not a.out and t == h)
	end
	local f = fits[a.base]
	return f and f(t, a)
end

-- ---- the routines ----
local routines, byname = {}, {}
for _, e in ipairs(T.routines) do
	if byname[e.name] then
		problem("%s: %s is listed twice", bindings, e.name)
	end
	byname[e.name] = e
	local cp = cproto[e.name]
	if not cp then
		problem("%s: %s has an entry but include/mpi.h declares no MPI_%s", bindings, e.name, e.name)
	elseif not e.opt.c_only then
		local text = e.args
		e.args = {}
		for tok in text:gmatch("%S+") do
			e.args[#e.args + 1] = parse_arg(tok, e.name)
		end
		if #e.args ~= #cp.params then
			problem("%s: %s has %d arguments, MPI_%s in mpi.h %d", bindings, e.name, #e.args, e.name,
				#cp.params)
		else
			for i, a in ipairs(e.args) do
				a.ctype = ctype_of(cp.params[i])
				if not fit(a, a.ctype) then
					problem("%s: %s argument %d (%s:%s) does not fit C's '%s'", bindings, e.name, i,
						a.name, a.kind, cp.params[i])
				end
			end
		end
		e.cret = cp.ret
		routines[#routines + 1] = e
	end
end
for _, name in ipairs(corder) do
	if not byname[name] then
		problem("%s: MPI_%s has no Fortran binding: add an entry to %s (a routine without one is a build error)",
			mpi_h, name, bindings)
	end
end

local function has_choice(e)
	for _, a in ipairs(e.args) do
		local b = a.base
		if b == "buf" or b == "cbuf" or b == "abuf" or b == "acbuf" or b == "loc" or b == "bufaddr" then
			return true
		end
	end
	return false
end
-- The specific name of an mpi_f08 routine: MPI_X_f08ts with a choice buffer (TS 29113), else
-- MPI_X_f08, as MPI-3.1 17.1.5 names them (also the C symbols, BIND(C) labels).
local function f08_name(e, p)
	return p .. "_" .. e.name .. (has_choice(e) and "_f08ts" or "_f08")
end

-- ---- C wrappers ----
local function lower(s)
	return s:lower()
end

-- C code for one argument of routine e in mode m ("f77" or "f08"): fills w (params, hidden,
-- pre, post, call expressions).
local function carg(e, a, m, w, pairs_used)
	local n = a.c
	local b = a.base
	local function param(s)
		w.params[#w.params + 1] = s
	end
	local function pre(s)
		w.pre[#w.pre + 1] = "\t" .. s
	end
	local function post(s)
		w.post[#w.post + 1] = "\t" .. s
	end
	local function len_expr(len)
		if len == "#cartdim" then
			return "mpif_cartdim(*comm)"
		end
		local la = w.byarg[len]
		if not la then
			problem("%s: %s: length %s of %s is not an argument", bindings, e.name, len, n)
			return "0"
		end
		return "*" .. la.c
	end
	if b == "-" then
		w.call[#w.call + 1] = "NULL"
	elseif b == "int" or b == "idx" and not a.out then
		param("MPI_Fint *" .. n)
		w.call[#w.call + 1] = (a.arr or a.out) and n or "*" .. n
	elseif b == "idx" then
		param("MPI_Fint *" .. n)
		if a.arr then
			w.call[#w.call + 1] = n
			post(string.format("mpif_idx_out(%s, %s);", n, len_expr(a.len)))
		else
			pre("int c_" .. n .. " = MPI_UNDEFINED;")
			w.call[#w.call + 1] = "&c_" .. n
			post(string.format("*%s = c_%s >= 0 ? c_%s + 1 : c_%s;", n, n, n, n))
		end
	elseif b == "log" then
		param("MPI_Fint *" .. n)
		if a.arr then
			local len = len_expr(a.len)
			pre(string.format("int s_%s[16], *c_%s = mpif_logs_in(%s, %s, s_%s, %s);", n, n, n, len, n,
				a.out and "0" or "1"))
			w.call[#w.call + 1] = "c_" .. n
			w.nomem[#w.nomem + 1] = "c_" .. n
			if a.out then
				post(string.format("mpif_logs_out(%s, c_%s, %s);", n, n, len))
			end
			post(string.format("mpif_free(c_%s, s_%s);", n, n))
		elseif a.out then
			pre("int c_" .. n .. " = 0;")
			w.call[#w.call + 1] = "&c_" .. n
			post(string.format("*%s = c_%s ? MPIF_TRUE : MPIF_FALSE;", n, n))
		else
			w.call[#w.call + 1] = "(*" .. n .. " != 0)"
		end
	elseif b == "aint" then
		param("MPI_Aint *" .. n)
		w.call[#w.call + 1] = (a.arr or a.out) and n or "*" .. n
	elseif b == "off" or b == "cnt" then
		param((b == "off" and "MPI_Offset *" or "MPI_Count *") .. n)
		w.call[#w.call + 1] = a.out and n or "*" .. n
	elseif b == "iaint" then
		param("MPI_Fint *" .. n)
		if a.arr then
			local len = len_expr(a.len)
			pre(string.format("MPI_Aint s_%s[16], *c_%s = mpif_iaints_in(%s, %s, s_%s);", n, n, n, len, n))
			w.call[#w.call + 1] = "c_" .. n
			w.nomem[#w.nomem + 1] = "c_" .. n
			post(string.format("mpif_free(c_%s, s_%s);", n, n))
		elseif a.out then
			pre("MPI_Aint c_" .. n .. " = 0;")
			w.call[#w.call + 1] = "&c_" .. n
			post(string.format("*%s = (MPI_Fint)c_%s;", n, n))
		else
			w.call[#w.call + 1] = "(MPI_Aint)*" .. n
		end
	elseif HANDLES[b] then
		param("MPI_Fint *" .. n)
		if b == "Request" then
			if a.arr then
				local len = len_expr(a.len)
				pre(string.format("MPI_Request s_%s[16], *c_%s = mpif_reqs_in(%s, %s, s_%s);", n, n, n,
					len, n))
				w.call[#w.call + 1] = "c_" .. n
				w.nomem[#w.nomem + 1] = "c_" .. n
				post(string.format("mpif_reqs_out(%s, c_%s, %s, s_%s);", n, n, len, n))
			elseif a.out then
				pre(string.format("MPI_Request c_%s = %s;", n,
					a.inout and "mpii_req_f2c(*" .. n .. ")" or "MPI_REQUEST_NULL"))
				w.call[#w.call + 1] = "&c_" .. n
				post(string.format("*%s = mpif_req_c2f(c_%s);", n, n))
			else
				w.call[#w.call + 1] = "mpii_req_f2c(*" .. n .. ")"
			end
		else
			w.call[#w.call + 1] = (a.arr or a.out) and n or "(MPI_" .. b .. ")*" .. n
		end
	elseif b == "buf" or b == "cbuf" or b == "abuf" or b == "acbuf" or b == "loc" or b == "bufaddr" then
		if b == "bufaddr" then
			param("void *" .. n)
			pre("void *c_" .. n .. " = NULL;")
			w.call[#w.call + 1] = "&c_" .. n
			pre("(void)" .. n .. ";")
		elseif m == "f77" then
			param("void *" .. n)
			w.call[#w.call + 1] = b == "loc" and n or "mpif_buf(" .. n .. ")"
		else
			param("CFI_cdesc_t *" .. n)
			if b == "loc" then
				w.call[#w.call + 1] = n .. "->base_addr"
			elseif a.cnt and pairs_used[a.cnt] == 1 and pairs_used[a.typ] == 1 then
				pre(string.format("int c_%s = *%s;", a.cnt, a.cnt))
				pre(string.format("MPI_Datatype c_%s = (MPI_Datatype)*%s, t_%s = MPI_DATATYPE_NULL;",
					a.typ, a.typ, n))
				pre(string.format("void *c_%s = mpif_cdesc(%s, &c_%s, &c_%s, &t_%s, &rc);", n, n, a.cnt,
					a.typ, n))
				w.override[a.cnt] = "c_" .. a.cnt
				w.override[a.typ] = "c_" .. a.typ
				w.call[#w.call + 1] = "c_" .. n
				post(string.format("if (t_%s != MPI_DATATYPE_NULL)\n\t\tPMPI_Type_free(&t_%s);", n, n))
			else
				pre(string.format("void *c_%s = mpif_cdesc(%s, NULL, NULL, NULL, &rc);", n, n))
				w.call[#w.call + 1] = "c_" .. n
			end
		end
	elseif b == "status" then
		param("MPI_Fint *" .. n)
		if a.arr then
			pre(string.format("MPI_Status *c_%s = mpif_sts(%s, %s);", n, n, len_expr(a.len)))
			w.call[#w.call + 1] = "c_" .. n
			w.nomem[#w.nomem + 1] = "c_" .. n
			post(string.format("mpif_sts_done(%s, c_%s, %s);", n, n, len_expr(a.len)))
		else
			pre(string.format("MPI_Status t_%s, *c_%s = mpif_st(%s, &t_%s, %d);", n, n, n, n,
				a.out and 0 or 1))
			w.call[#w.call + 1] = "c_" .. n
			if a.out then
				post(string.format("mpif_st_done(%s, c_%s, &t_%s);", n, n, n))
			end
		end
	elseif b == "str" then
		local lenx
		if m == "f77" then
			param("char *" .. n)
			w.hidden[#w.hidden + 1] = "size_t " .. n .. "_len"
			lenx = n .. "_len"
		else
			param("CFI_cdesc_t *d_" .. n)
			pre(string.format("char *%s = d_%s->base_addr;", n, n))
			pre(string.format("size_t %s_len = d_%s->elem_len;", n, n))
			lenx = n .. "_len"
		end
		if a.out then
			local size = a.size
			if w.byarg[size] then
				pre(string.format("char *c_%s = mpif_str_buf(*%s);", n, w.byarg[size].c))
			else
				pre(string.format("char s_%s[%s + 1] = \"\", *c_%s = s_%s;", n, size, n, n))
			end
			w.call[#w.call + 1] = "c_" .. n
			w.nomem[#w.nomem + 1] = "c_" .. n
			-- with a flag out (MPI_INFO_GET), the string is written only when flag is true
			local cond = w.byarg.flag and w.byarg.flag.base == "log" and "rc == MPI_SUCCESS && c_flag ? MPI_SUCCESS : MPI_ERR_OTHER" or "rc"
			post(string.format("mpif_str_out(%s, %s, c_%s, %s);", n, lenx, n, cond))
			if w.byarg[size] then
				post("free(c_" .. n .. ");")
			end
		else
			-- MPI_INFO_*: leading and trailing blanks of keys and values are not part of them
			local lead = e.name:match("^Info_") and 1 or 0
			pre(string.format("char s_%s[256], *c_%s = mpif_str_in(%s, %s, s_%s, sizeof s_%s, %d);", n, n,
				n, lenx, n, n, lead))
			w.call[#w.call + 1] = "c_" .. n
			w.nomem[#w.nomem + 1] = "c_" .. n
			post(string.format("mpif_free(c_%s, s_%s);", n, n))
		end
	elseif b == "errs" then
		param("MPI_Fint *" .. n)
		w.call[#w.call + 1] = "mpif_errs(" .. n .. ")"
	elseif b == "wts" then
		param("MPI_Fint *" .. n)
		w.call[#w.call + 1] = "mpif_wts(" .. n .. ")"
	elseif b == "ranges" then
		param("MPI_Fint *" .. n)
		w.call[#w.call + 1] = "(int(*)[3])" .. n
	elseif b == "ptr" then
		param("MPI_Aint *" .. n)
		w.call[#w.call + 1] = "(void *)" .. n
	elseif b == "attr" or b == "extra" then
		param("MPI_Aint *" .. n)
		w.call[#w.call + 1] = a.out and "(void *)" .. n or "(void *)*" .. n
	elseif b == "iattr" or b == "iextra" then
		param("MPI_Fint *" .. n)
		w.call[#w.call + 1] = a.out and "(void *)" .. n or "(void *)(intptr_t)*" .. n
	elseif b == "fn" then
		param("MPI_" .. a.fn .. " *" .. n)
		w.call[#w.call + 1] = n
	elseif b == "argv" or b == "argvs" or b == "strs" then
		if m == "f77" then
			param("char *" .. n)
			w.hidden[#w.hidden + 1] = "size_t " .. n .. "_len"
			w.call[#w.call + 1] = n .. ", " .. n .. "_len"
		else
			param("CFI_cdesc_t *" .. n)
			w.call[#w.call + 1] = n .. "->base_addr, " .. n .. "->elem_len"
		end
	else
		problem("%s: %s: unknown kind %s", bindings, e.name, a.kind)
	end
end

-- The C prototype of a custom body mpif_<Name> (C types, raw where the kind is special).
local function custom_proto(e)
	local ps = {}
	for i, a in ipairs(e.args) do
		if a.base == "argv" or a.base == "argvs" or a.base == "strs" then
			ps[#ps + 1] = "const char *" .. a.c .. ", size_t " .. a.c .. "_len"
		elseif a.base == "-" then
			ps[#ps + 1] = "void *unused" .. i
		else
			local p = cproto[e.name].params[i]
			-- keep the C declaration, renamed to the Fortran argument
			local t = ctype_of(p)
			local arr = t:match("(%[.*%])$") or ""
			t = t:gsub("%[.*%]$", "")
			if arr ~= "" then
				ps[#ps + 1] = t .. " " .. a.c .. arr
			elseif t:sub(-1) == "*" then
				ps[#ps + 1] = t:sub(1, -2) .. " *" .. a.c
			else
				ps[#ps + 1] = t .. " " .. a.c
			end
		end
	end
	if #ps == 0 then
		ps[1] = "void"
	end
	local ret = e.opt.ret == "double" and "double" or e.opt.ret == "aint" and "MPI_Aint" or "int"
	return string.format("%s mpif_%s(%s)", ret, e.name, table.concat(ps, ", "))
end

local function cwrapper(e, m)
	local w = {params = {}, hidden = {}, pre = {}, post = {}, call = {}, override = {}, byarg = {},
		nomem = {}}
	local pairs_used = {}
	for _, a in ipairs(e.args) do
		w.byarg[a.name] = a
		if a.cnt then
			pairs_used[a.cnt] = (pairs_used[a.cnt] or 0) + 1
			pairs_used[a.typ] = (pairs_used[a.typ] or 0) + 1
		end
	end
	for _, a in ipairs(e.args) do
		carg(e, a, m, w, pairs_used)
	end
	for i, a in ipairs(e.args) do
		if w.override[a.name] then
			w.call[i] = w.override[a.name]
		end
	end
	local fname
	if m == "f77" then
		fname = "pmpi_" .. lower(e.name) .. "_"
	else
		fname = f08_name(e, "PMPI")
	end
	local ret = e.opt.ret == "double" and "double" or e.opt.ret == "aint" and "MPI_Aint" or "void"
	local params = {}
	for _, p in ipairs(w.params) do
		params[#params + 1] = p
	end
	if not e.opt.ret and not e.opt.noerr then
		params[#params + 1] = "MPI_Fint *ierror"
	end
	for _, h in ipairs(w.hidden) do
		params[#params + 1] = h
	end
	if #params == 0 then
		params[1] = "void"
	end
	local out = {}
	local function o(s)
		out[#out + 1] = s
	end
	local proto = string.format("%s %s(%s)", ret, fname, table.concat(params, ", "))
	o(proto .. ";")
	o(string.format("MPIF_WEAK(%s, %s)", m == "f77" and ("mpi_" .. lower(e.name) .. "_")
		or f08_name(e, "MPI"), fname))
	o(proto)
	o("{")
	local target = e.opt.custom and ("mpif_" .. e.name) or ("PMPI_" .. e.name)
	local callx = string.format("%s(%s)", target, table.concat(w.call, ", "))
	if e.opt.ret then
		o("\treturn " .. callx .. ";")
		o("}")
		return table.concat(out, "\n") .. "\n"
	end
	local needrc = not e.opt.noerr
	if needrc then
		o("\tint rc = MPI_SUCCESS;")
	end
	for _, s in ipairs(w.pre) do
		o(s)
	end
	local cond = {}
	if #w.nomem > 0 then
		for _, v in ipairs(w.nomem) do
			cond[#cond + 1] = v
		end
		o("\tif (!(" .. table.concat(cond, " && ") .. "))")
		o("\t\trc = mpif_nomem(\"MPI_" .. e.name .. "\");")
	end
	if needrc then
		o("\tif (rc == MPI_SUCCESS)")
		o("\t\trc = " .. callx .. ";")
	else
		o("\t(void)" .. callx .. ";")
	end
	for _, s in ipairs(w.post) do
		o(s)
	end
	if needrc then
		if m == "f77" then
			o("\t*ierror = rc;")
		else
			o("\tif (ierror)")
			o("\t\t*ierror = rc;")
		end
	end
	o("}")
	return table.concat(out, "\n") .. "\n"
end

local cgen = {
	"/* mpif_gen.c: generated by lib/mpif/gen.lua from include/mpi.h and lib/mpif/bindings.lua;",
	" * do not edit. The C side of every Fortran binding: pmpi_x_ (mpif.h, use mpi) with mpi_x_",
	" * a weak alias, and PMPI_X_f08 (use mpi_f08) with MPI_X_f08 a weak alias. */",
	"#include \"mpifi.h\"",
	"#include \"mpif_custom.h\"",
	"",
}
local custom_h = {
	"/* mpif_custom.h: generated by lib/mpif/gen.lua: the hand-written bodies (mpif_custom.c) of",
	" * the routines the table marks custom, as the generated bindings call them. */",
	"#ifndef LAMKIT_MPIF_CUSTOM_H",
	"#define LAMKIT_MPIF_CUSTOM_H",
	"#include \"mpifi.h\"",
}
for _, e in ipairs(routines) do
	if e.opt.custom then
		custom_h[#custom_h + 1] = custom_proto(e) .. ";"
	end
	cgen[#cgen + 1] = cwrapper(e, "f77")
	if not e.opt.old then
		cgen[#cgen + 1] = cwrapper(e, "f08")
	end
end
custom_h[#custom_h + 1] = "#endif"

-- ---- Fortran declarations ----
local function fdecl(e, a, m)
	local n, b = a.name, a.base
	local intent_in = (not a.out) and ", INTENT(IN)" or ""
	local dim = a.arr and "(*)" or ""
	if b == "int" or b == "idx" or b == "errs" or b == "wts" or b == "iaint" or b == "iattr"
		or b == "iextra" then
		if b == "errs" or b == "wts" then
			dim = "(*)"
		end
		if a.loose and m == "f77" then -- ignored with MPI_IN_PLACE: a scalar is accepted
			return "!GCC$ ATTRIBUTES NO_ARG_CHECK :: " .. n .. "\n" ..
				string.format("INTEGER%s :: %s%s", intent_in, n, dim)
		end
		return string.format("INTEGER%s :: %s%s", intent_in, n, dim)
	elseif b == "log" then
		return string.format("LOGICAL%s :: %s%s", intent_in, n, dim)
	elseif b == "aint" or b == "attr" or b == "extra" then
		return string.format("INTEGER(KIND=MPI_ADDRESS_KIND)%s :: %s%s", intent_in, n, dim)
	elseif b == "off" or b == "cnt" then
		return string.format("INTEGER(KIND=MPI_%s_KIND)%s :: %s", b == "off" and "OFFSET" or "COUNT",
			intent_in, n)
	elseif HANDLES[b] then
		if m == "f77" then
			if a.loose then
				return "!GCC$ ATTRIBUTES NO_ARG_CHECK :: " .. n .. "\n" ..
					string.format("INTEGER%s :: %s%s", intent_in, n, dim)
			end
			return string.format("INTEGER%s :: %s%s", intent_in, n, dim)
		end
		return string.format("TYPE(MPI_%s)%s :: %s%s", b, intent_in, n, dim)
	elseif b == "buf" or b == "cbuf" or b == "abuf" or b == "acbuf" or b == "loc" or b == "bufaddr" then
		local intent = (b == "cbuf" or b == "acbuf") and ", INTENT(IN)" or ""
		if m == "f77" then
			return "!GCC$ ATTRIBUTES NO_ARG_CHECK :: " .. n .. "\n" ..
				string.format("TYPE(*), DIMENSION(*)%s :: %s", intent, n)
		end
		local async = (b == "abuf" or b == "acbuf") and ", ASYNCHRONOUS" or ""
		return string.format("TYPE(*), DIMENSION(..)%s%s :: %s", intent, async, n)
	elseif b == "status" then
		if m == "f77" then
			return string.format("INTEGER%s :: %s(MPI_STATUS_SIZE%s)", intent_in, n, a.arr and ", *" or "")
		end
		return string.format("TYPE(MPI_Status)%s :: %s%s", intent_in, n, dim)
	elseif b == "str" then
		return string.format("CHARACTER(LEN=*)%s :: %s", intent_in, n)
	elseif b == "argv" or b == "strs" then
		return string.format("CHARACTER(LEN=*), INTENT(IN) :: %s(*)", n)
	elseif b == "argvs" then
		return string.format("CHARACTER(LEN=*), INTENT(IN) :: %s(count, *)", n)
	elseif b == "ranges" then
		return string.format("INTEGER, INTENT(IN) :: %s(3, *)", n)
	elseif b == "ptr" then
		if m == "f77" then
			return string.format("INTEGER(KIND=MPI_ADDRESS_KIND) :: %s", n)
		end
		return string.format("TYPE(C_PTR) :: %s", n)
	elseif b == "fn" then
		if m == "f77" then
			return "EXTERNAL :: " .. n
		end
		return string.format("PROCEDURE(MPI_%s) :: %s", a.fn, n)
	end
	problem("%s: %s: no Fortran declaration for kind %s", bindings, e.name, a.kind)
	return "! ?"
end

local function fargs(e)
	local names = {}
	for _, a in ipairs(e.args) do
		if a.base ~= "-" then
			names[#names + 1] = a.name
		end
	end
	if not e.opt.ret and not e.opt.noerr then
		names[#names + 1] = "ierror"
	end
	return names
end

-- Wrap a Fortran line at 100 columns with free-form continuations.
local function fwrap(line, indent)
	local out = {}
	while #line > 100 do
		local cut = line:sub(1, 98):match("^.*(), ")
		if not cut then
			break
		end
		out[#out + 1] = line:sub(1, cut) .. " &"
		line = indent .. "    " .. line:sub(cut + 2)
	end
	out[#out + 1] = line
	return table.concat(out, "\n")
end

-- use mpi: an interface body per routine (MPI_X and PMPI_X), external procedures mpi_x_
local function f77_iface(e, prefix)
	local s = {}
	local names = fargs(e)
	local head
	if e.opt.ret == "double" then
		head = string.format("DOUBLE PRECISION FUNCTION %s_%s(%s)", prefix, e.name, table.concat(names, ", "))
	elseif e.opt.ret == "aint" then
		head = string.format("INTEGER(KIND=MPI_ADDRESS_KIND) FUNCTION %s_%s(%s)", prefix, e.name,
			table.concat(names, ", "))
	else
		head = string.format("SUBROUTINE %s_%s(%s)", prefix, e.name, table.concat(names, ", "))
	end
	s[#s + 1] = fwrap("    " .. head, "    ")
	s[#s + 1] = "      IMPORT"
	s[#s + 1] = "      IMPLICIT NONE"
	for _, a in ipairs(e.args) do
		if a.base ~= "-" then
			for l in (fdecl(e, a, "f77") .. "\n"):gmatch("(.-)\n") do
				s[#s + 1] = "      " .. l
			end
		end
	end
	if not e.opt.ret and not e.opt.noerr then
		s[#s + 1] = "      INTEGER :: ierror"
	end
	s[#s + 1] = "    END " .. (e.opt.ret and "FUNCTION" or "SUBROUTINE")
	return table.concat(s, "\n")
end

-- mpi_f08: a BIND(C) interface per routine; routines with callbacks get a module procedure
-- that passes C_FUNLOC of each (a BIND(C) interface cannot take a Fortran procedure).
local function has_fn(e)
	for _, a in ipairs(e.args) do
		if a.base == "fn" then
			return true
		end
	end
	return false
end

local function f08_iface(e, prefix, cname, name, funptr)
	local s = {}
	local names = fargs(e)
	local head
	if e.opt.ret == "double" then
		head = string.format("FUNCTION %s(%s) RESULT(res) BIND(C, name=\"%s\")", name, table.concat(names, ", "), cname)
	elseif e.opt.ret == "aint" then
		head = string.format("FUNCTION %s(%s) RESULT(res) BIND(C, name=\"%s\")", name, table.concat(names, ", "), cname)
	else
		head = string.format("SUBROUTINE %s(%s) BIND(C, name=\"%s\")", name, table.concat(names, ", "), cname)
	end
	s[#s + 1] = fwrap("    " .. head, "    ")
	s[#s + 1] = "      IMPORT"
	s[#s + 1] = "      IMPLICIT NONE"
	for _, a in ipairs(e.args) do
		if a.base ~= "-" then
			if a.base == "fn" and funptr then
				s[#s + 1] = "      TYPE(C_FUNPTR), VALUE :: " .. a.name
			else
				s[#s + 1] = "      " .. fdecl(e, a, "f08")
			end
		end
	end
	if e.opt.ret == "double" then
		s[#s + 1] = "      DOUBLE PRECISION :: res"
	elseif e.opt.ret == "aint" then
		s[#s + 1] = "      INTEGER(KIND=MPI_ADDRESS_KIND) :: res"
	elseif not e.opt.noerr then
		s[#s + 1] = "      INTEGER, OPTIONAL, INTENT(OUT) :: ierror"
	end
	s[#s + 1] = "    END " .. (e.opt.ret and "FUNCTION" or "SUBROUTINE")
	return table.concat(s, "\n")
end

local f77_ifaces, f08_ifaces, f08_procs = {}, {}, {}
for _, e in ipairs(routines) do
	for _, p in ipairs({"MPI", "PMPI"}) do
		f77_ifaces[#f77_ifaces + 1] = "  INTERFACE\n" .. f77_iface(e, p) .. "\n  END INTERFACE"
		if not e.opt.old then
			local cname = f08_name(e, p)
			if has_fn(e) then
				-- generic -> module procedure -> BIND(C) interface lkf08_X
				local inner = (p == "MPI" and "lkf08_" or "lkf08p_") .. e.name
				f08_ifaces[#f08_ifaces + 1] = string.format("  INTERFACE %s_%s\n    MODULE PROCEDURE %s\n  END INTERFACE",
					p, e.name, cname)
				f08_ifaces[#f08_ifaces + 1] = "  INTERFACE\n" .. f08_iface(e, p, cname, inner, true) ..
					"\n  END INTERFACE"
				local names = fargs(e)
				local callargs = {}
				for _, a in ipairs(e.args) do
					if a.base == "fn" then
						callargs[#callargs + 1] = "C_FUNLOC(" .. a.name .. ")"
					elseif a.base ~= "-" then
						callargs[#callargs + 1] = a.name
					end
				end
				callargs[#callargs + 1] = "ierror"
				local s = {}
				s[#s + 1] = fwrap(string.format("  SUBROUTINE %s(%s)", cname, table.concat(names, ", ")), "  ")
				for _, a in ipairs(e.args) do
					if a.base ~= "-" then
						s[#s + 1] = "    " .. fdecl(e, a, "f08")
					end
				end
				s[#s + 1] = "    INTEGER, OPTIONAL, INTENT(OUT) :: ierror"
				s[#s + 1] = fwrap(string.format("    CALL %s(%s)", inner, table.concat(callargs, ", ")), "    ")
				s[#s + 1] = "  END SUBROUTINE"
				f08_procs[#f08_procs + 1] = table.concat(s, "\n")
			else
				f08_ifaces[#f08_ifaces + 1] = string.format("  INTERFACE %s_%s\n%s\n  END INTERFACE", p,
					e.name, f08_iface(e, p, cname, cname, false))
			end
		end
	end
end

-- ---- constants ----
-- mpif.h: fixed form and free form alike (statements in columns 7-72, '!' comments)
local mpif = {
	"! mpif.h: lamkit's MPI for Fortran, fixed or free form. Generated",
	"! by lib/mpif/gen.lua from include/mpi.h; do not edit.",
}
local function mf(s)
	if #s > 72 then
		problem("mpif.h: line longer than 72 columns: %s", s)
	end
	mpif[#mpif + 1] = s
end
local fconsts = {} -- {name, value, handle type or nil}
for _, name in ipairs(consts) do
	fconsts[#fconsts + 1] = {name, value(name), handle_of[name]}
end
local extra_consts = {
	{"MPI_STATUS_SIZE", 6}, {"MPI_SOURCE", 1}, {"MPI_TAG", 2}, {"MPI_ERROR", 3},
	{"MPI_ADDRESS_KIND", 8}, {"MPI_OFFSET_KIND", 8}, {"MPI_COUNT_KIND", 8},
	{"MPI_INTEGER_KIND", 4},
}
for _, c in ipairs(extra_consts) do
	if cvalue[c[1]] then
		problem("%s defines %s, which Fortran gets from gen.lua", mpi_h, c[1])
	end
	mf(string.format("      INTEGER %s", c[1]))
	mf(string.format("      PARAMETER (%s=%d)", c[1], c[2]))
end
for _, c in ipairs(fconsts) do
	mf(string.format("      INTEGER %s", c[1]))
	mf(string.format("      PARAMETER (%s=%d)", c[1], c[2]))
end
mf("      LOGICAL MPI_SUBARRAYS_SUPPORTED")
mf("      PARAMETER (MPI_SUBARRAYS_SUPPORTED=.FALSE.)")
mf("      LOGICAL MPI_ASYNC_PROTECTS_NONBLOCKING")
mf("      PARAMETER (MPI_ASYNC_PROTECTS_NONBLOCKING=.FALSE.)")
-- the sentinels: common blocks whose addresses the C side knows (mpif.c)
local sentinels = {
	{"MPI_BOTTOM", "INTEGER", "", "lamkit_bottom"},
	{"MPI_IN_PLACE", "INTEGER", "", "lamkit_in_place"},
	{"MPI_STATUS_IGNORE", "INTEGER", "(MPI_STATUS_SIZE)", "lamkit_status_ignore"},
	{"MPI_STATUSES_IGNORE", "INTEGER", "(MPI_STATUS_SIZE,1)", "lamkit_statuses_ignore"},
	{"MPI_ERRCODES_IGNORE", "INTEGER", "(1)", "lamkit_errcodes_ignore"},
	{"MPI_UNWEIGHTED", "INTEGER", "(1)", "lamkit_unweighted"},
	{"MPI_WEIGHTS_EMPTY", "INTEGER", "(1)", "lamkit_weights_empty"},
	{"MPI_ARGV_NULL", "CHARACTER(LEN=1)", "(1)", "lamkit_argv_null"},
	{"MPI_ARGVS_NULL", "CHARACTER(LEN=1)", "(1,1)", "lamkit_argvs_null"},
}
for _, s in ipairs(sentinels) do
	mf(string.format("      %s %s%s", s[2], s[1], s[3]))
	mf(string.format("      COMMON /%s/ %s", s[4], s[1]))
	mf(string.format("      SAVE /%s/", s[4]))
end
-- the predefined callbacks: the constants of mpi.h not_int calls "callback" (EXTERNAL procedures
-- of libmpifort: mpif.c)
local callbacks = {}
for _, name in ipairs(consts_all) do
	if T.not_int[name] == "callback" then
		callbacks[#callbacks + 1] = name
	end
end
for _, c in ipairs(callbacks) do
	mf("      EXTERNAL " .. c)
end
-- MPI_WTIME and MPI_WTICK are declared (as MPICH's mpif.h does; programs written for it use
-- them undeclared); MPI_AINT_ADD and MPI_AINT_DIFF are not (as MPICH: programs declare them).
for _, p in ipairs({"MPI", "PMPI"}) do
	mf(string.format("      DOUBLE PRECISION %s_WTIME, %s_WTICK", p, p))
	mf(string.format("      EXTERNAL %s_WTIME, %s_WTICK", p, p))
end

-- use mpi: the same constants as named constants, the sentinels in the same common blocks
local mconst = {}
for _, c in ipairs(extra_consts) do
	mconst[#mconst + 1] = string.format("  INTEGER, PARAMETER :: %s = %d", c[1], c[2])
end
for _, c in ipairs(fconsts) do
	mconst[#mconst + 1] = string.format("  INTEGER, PARAMETER :: %s = %d", c[1], c[2])
end
for _, s in ipairs(sentinels) do
	local ty = s[2]
	mconst[#mconst + 1] = string.format("  %s :: %s%s", ty, s[1], s[3])
	mconst[#mconst + 1] = string.format("  COMMON /%s/ %s", s[4], s[1])
	mconst[#mconst + 1] = string.format("  SAVE :: /%s/", s[4])
end
for _, c in ipairs(callbacks) do
	mconst[#mconst + 1] = "  EXTERNAL :: " .. c
end

-- mpi_f08: handles as TYPE(MPI_x) constants, the rest as integers
local f08const = {}
for _, c in ipairs(extra_consts) do
	f08const[#f08const + 1] = string.format("  INTEGER, PARAMETER :: %s = %d", c[1], c[2])
end
for _, c in ipairs(fconsts) do
	if c[3] then
		f08const[#f08const + 1] = string.format("  TYPE(MPI_%s), PARAMETER :: %s = MPI_%s(%d)", c[3], c[1],
			c[3], c[2])
	else
		f08const[#f08const + 1] = string.format("  INTEGER, PARAMETER :: %s = %d", c[1], c[2])
	end
end

local function fill(template, subs)
	local t = slurp(tdir .. "/" .. template)
	return (t:gsub("@([%u_]+)@", function(k)
		if not subs[k] then
			problem("%s: unknown placeholder @%s@", template, k)
			return ""
		end
		return subs[k]
	end))
end

if #problems > 0 then
	for _, p in ipairs(problems) do
		io.stderr:write("gen.lua: " .. p .. "\n")
	end
	os.exit(1)
end

spew(odir .. "/mpif_gen.c", table.concat(cgen, "\n"))
spew(odir .. "/mpif_custom.h", table.concat(custom_h, "\n") .. "\n")
spew(odir .. "/mpif.h", table.concat(mpif, "\n") .. "\n")
spew(odir .. "/mpi.f90", fill("mpi.f90.in", {
	CONSTANTS = table.concat(mconst, "\n"),
	INTERFACES = table.concat(f77_ifaces, "\n"),
}))
spew(odir .. "/mpi_f08.f90", fill("mpi_f08.f90.in", {
	CONSTANTS = table.concat(f08const, "\n"),
	INTERFACES = table.concat(f08_ifaces, "\n"),
	PROCEDURES = table.concat(f08_procs, "\n\n"),
}))
if #problems > 0 then
	for _, p in ipairs(problems) do
		io.stderr:write("gen.lua: " .. p .. "\n")
	end
	os.exit(1)
end
