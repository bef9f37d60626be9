-- lib/mpif/gen.lua: generate lamkit's Fortran bindings from include/mpi.h and bindings.lua.
--
-- usage: lua gen.lua MPI_H BINDINGS_LUA TEMPLATE_DIR OUT_DIR   (gen_c.lua and gen_f.lua, next to
-- it, make the C and the Fortran side)
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

-- the two halves: gen_c.lua and gen_f.lua, next to this file
local here = arg[0]:match("^(.*/)") or "./"
local G = {problem = problem, bindings = bindings, HANDLES = HANDLES, cproto = cproto,
	ctype_of = ctype_of, routines = routines, has_choice = has_choice, f08_name = f08_name, T = T,
	mpi_h = mpi_h, consts = consts, consts_all = consts_all, cvalue = cvalue, value = value,
	handle_of = handle_of}
local cgen, custom_h = dofile(here .. "gen_c.lua")(G)
local F = dofile(here .. "gen_f.lua")(G)

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
spew(odir .. "/mpif.h", table.concat(F.mpif, "\n") .. "\n")
spew(odir .. "/mpi.f90", fill("mpi.f90.in", {
	CONSTANTS = table.concat(F.mconst, "\n"),
	INTERFACES = table.concat(F.f77_ifaces, "\n"),
}))
spew(odir .. "/mpi_f08.f90", fill("mpi_f08.f90.in", {
	CONSTANTS = table.concat(F.f08const, "\n"),
	INTERFACES = table.concat(F.f08_ifaces, "\n"),
	PROCEDURES = table.concat(F.f08_procs, "\n\n"),
}))
if #problems > 0 then
	for _, p in ipairs(problems) do
		io.stderr:write("gen.lua: " .. p .. "\n")
	end
	os.exit(1)
end
