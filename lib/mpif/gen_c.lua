-- lib/mpif/gen_c.lua: the C side of the bindings, for gen.lua: mpif_gen.c (pmpi_x_ and
-- PMPI_X_f08 per routine, with their weak MPI names) and mpif_custom.h.
return function(G)
	local problem, bindings, HANDLES, cproto, ctype_of = G.problem, G.bindings, G.HANDLES, G.cproto, G.ctype_of
	local routines, f08_name = G.routines, G.f08_name

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

	return cgen, custom_h
end
