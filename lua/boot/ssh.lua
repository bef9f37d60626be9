-- lua/boot/ssh.lua: the ssh boot module (OpenSSH client; user, port, identity and extra options
-- from the schema's `ssh = {...}`). variant("rsh") builds the rsh module from the same code.
-- The universe key travels on the client's stdin, never in its argv.
local common = require("boot.common")
local shell = require("boot.shell")

local function expand_home(p)
  if p:sub(1, 2) == "~/" then
    local home = lamkit.getenv("HOME")
    if home and home ~= "" then return home .. p:sub(2) end
  end
  return p
end

local function port_opt(v)
  local n = math.tointeger(v)
  if type(v) == "string" and v:match("^%d+$") then n = math.tointeger(tonumber(v)) end
  if n and n >= 1 and n <= 65535 then return n end
  return nil, "must be a port number 1-65535, not " .. tostring(v)
end

local function user_opt(v)
  if type(v) == "string" and v:match("^[%w_][%w%._%-]*%$?$") then return v end
  return nil, "must be a user name, not " .. tostring(v)
end

-- variant(client, priority, is_ssh) -> a boot module table.
local function variant(client, priority, is_ssh)
  local M = { name = client, remote = true }
  local spec = { command = common.string_opt, user = user_opt, options = common.strings_opt }
  if is_ssh then
    spec.port = port_opt
    spec.identity = common.string_opt
    spec.batch = common.bool_opt
    spec.kex = function(v)
      if v == false then return v end
      return common.string_opt(v)
    end
  end
  spec.verify = common.bool_opt

  -- Usable when the schema lists nodes and the client program exists.
  function M.init(_where, schema)
    if not schema or #schema.nodes == 0 then return nil, "the schema lists no nodes" end
    local cmd = ((schema.options or {})[client] or {}).command or client
    if type(cmd) ~= "string" or not common.in_path(cmd) then
      return nil, "no '" .. tostring(cmd) .. "' client found in PATH"
    end
    return priority
  end

  function M.parse_options(schema)
    local o = common.check_options(schema, client, spec)
    o.command = o.command or client
    o.options = o.options or {}
    if o.batch == nil then o.batch = true end
    -- The post-quantum hybrid key exchange OpenSSH 9 picks first (sntrup761x25519) costs
    -- ~80 ms of CPU per connection here, more than the rest of a launch; the launch channel
    -- carries one agent command and a key that lives as long as the universe. Put the classic
    -- curve25519 exchange first ('^' = at the head of the client's default list, OpenSSH >= 8.7);
    -- ssh.kex = false keeps the client's default, a string is passed as given.
    if is_ssh and o.kex == nil then o.kex = "^curve25519-sha256" end
    if o.identity then o.identity = expand_home(o.identity) end
    return o
  end

  function M.allocate_nodes(_schema, _o) end

  -- verify = false: host names only the client's own configuration knows (ssh_config Host
  -- aliases) are passed on unresolved.
  function M.verify_nodes(schema, o, collect)
    if o.verify == false then return {} end
    return common.resolve_all(schema, collect, client .. ".verify = false")
  end

  function M.prepare_boot(schema, o)
    if o.identity and not lamkit.file_exists(o.identity) then
      error(common.at(schema, client) .. client .. ".identity '" .. o.identity ..
        "' does not exist", 0)
    end
  end

  -- The client argv that runs agent_argv on node.host; remote words are quoted for sh.
  function M.start_rte_proc(node, agent_argv, o)
    local argv = { o.command }
    local function add(...)
      for _, w in ipairs({ ... }) do argv[#argv + 1] = w end
    end
    if is_ssh then
      if o.batch then add("-o", "BatchMode=yes") end
      if o.kex then add("-o", "KexAlgorithms=" .. o.kex) end
      add("-T")
      if o.port then add("-p", tostring(o.port)) end
    end
    local user = node.user or o.user
    if user then add("-l", user) end
    if is_ssh and o.identity then add("-i", o.identity) end
    add(table.unpack(o.options))
    add(node.host)
    add(shell.quote_path(agent_argv[1]))
    for k = 2, #agent_argv do add(shell.quote(agent_argv[k])) end
    return argv
  end

  -- ssh exits 255 when it cannot reach or log in to the host; 126/127 come from the remote
  -- shell when the program cannot run, 97 from lua/boot/fetch.lua's script when no lamkit of
  -- this build is there.
  function M.classify(ev)
    if ev.ok then return true, true end
    if is_ssh and ev.exit == 255 then return false, false end
    if ev.exit == 126 or ev.exit == 127 or ev.exit == 97 then return true, false end
    if ev.stage == "connect" or ev.stage == "auth" then return true, true end
    return nil, nil
  end

  function M.deallocate_nodes(_schema, _o) end

  return M
end

local M = variant("ssh", 40, true)
M.variant = variant
return M
