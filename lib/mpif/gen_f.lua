-- lib/mpif/gen_f.lua: the Fortran side of the bindings, for gen.lua: mpif.h and the
-- constants, interfaces and procedures that fill the templates mpi.f90.in and mpi_f08.f90.in.
return function(G)
	local problem, bindings, HANDLES, routines = G.problem, G.bindings, G.HANDLES, G.routines
	local has_choice, f08_name, T, mpi_h = G.has_choice, G.f08_name, G.T, G.mpi_h
	local consts, consts_all, cvalue, value, handle_of = G.consts, G.consts_all, G.cvalue, G.value, G.handle_of

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
	-- constants Fortran types INTEGER(KIND=MPI_OFFSET_KIND) (file displacements)
	local OFFSET = {MPI_DISPLACEMENT_CURRENT = true}
	for _, c in ipairs(fconsts) do
		mf(string.format("      INTEGER%s %s", OFFSET[c[1]] and "(KIND=MPI_OFFSET_KIND)" or "", c[1]))
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
		mconst[#mconst + 1] = string.format("  INTEGER%s, PARAMETER :: %s = %d",
			OFFSET[c[1]] and "(KIND=MPI_OFFSET_KIND)" or "", c[1], c[2])
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
			f08const[#f08const + 1] = string.format("  INTEGER%s, PARAMETER :: %s = %d",
				OFFSET[c[1]] and "(KIND=MPI_OFFSET_KIND)" or "", c[1], c[2])
		end
	end


	return {mpif = mpif, mconst = mconst, f08const = f08const, f77_ifaces = f77_ifaces,
		f08_ifaces = f08_ifaces, f08_procs = f08_procs}
end
