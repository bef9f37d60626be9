-- lua/boot/fetch.lua: how a remote node finds the agent binary, or receives it from boot.
-- The launch command itself is a short sh script (no extra round trip): it runs the origin's
-- own path when that is the same build (`lamkit version --build` prints the same line), else
-- `lamkit` from the node's PATH when that is the same build, else a copy boot shipped earlier
-- into the per-user cache (checked against its sha256 before it runs). When none is there it
-- exits 97, and boot starts it once more with the binary after the key on its stdin ("recv"):
-- the script reads the key line, the binary (its exact size), checks the sha256, installs it
-- 0700 under the cache and runs it with the key. doc/BOOT-LUA.md, "Finding the agent".
-- A helper, not a boot module.
local M = {}

M.NEED_SHIP = 97 -- exit status: "nothing of this build here, send it"
M.SHIP_FAILED = 96 -- exit status: receiving or installing the shipped copy failed

-- Positional parameters: $1 mode (auto|always|never|recv), $2 the origin's path, $3 its build
-- line, $4 its sha256, $5 its size in bytes; the agent's argv follows. Stderr lines start with
-- "lamkit: <step>:" so the launch's last line names the step that failed.
M.script = table.concat({
  'm=$1 p=$2 b=$3 s=$4 n=$5; shift 5',
  'e() { echo "lamkit: $*" >&2; }',
  'same() { [ -x "$1" ] && [ "$("$1" version --build 2>/dev/null)" = "$b" ]; }',
  'if [ -n "${XDG_CACHE_HOME:-}" ]; then c=$XDG_CACHE_HOME/lamkit/bin;',
  'elif [ -n "${HOME:-}" ]; then c=$HOME/.cache/lamkit/bin; else c=; fi',
  'f=$c/$s/lamkit',
  'ck() { command -v sha256sum >/dev/null 2>&1 || { e "verify: no sha256sum on this node";' ..
    ' exit 96; }; h=$(sha256sum <"$1") && [ "${h%% *}" = "$s" ]; }',
  'if [ "$m" != recv ]; then',
  '  if [ "$m" != always ]; then',
  '    same "$p" && exec "$p" "$@"',
  '    q=$(command -v lamkit 2>/dev/null)',
  '    if [ "$m" = never ]; then [ -n "$q" ] && exec "$q" "$@";',
  '      e "find: no lamkit of this build at $p and none in PATH (ship = never)"; exit 127; fi',
  '    [ -n "$q" ] && same "$q" && exec "$q" "$@"',
  '  fi',
  '  if [ -n "$c" ] && [ -f "$f" ]; then',
  '    ck "$f" && exec "$f" "$@"',
  '    e "verify: cached $f fails its sha256 check: removed, shipping a fresh copy"',
  '    rm -f "$f"',
  '  fi',
  '  exit 97',
  'fi',
  '[ -n "$c" ] || { e "ship: neither HOME nor XDG_CACHE_HOME is set"; exit 96; }',
  'IFS= read -r k || { e "ship: stdin closed early"; exit 96; }',
  'umask 077',
  'mkdir -p "$c/$s" || { e "ship: cannot create $c/$s"; exit 96; }',
  't=$c/$s/.in.$$',
  'head -c "$n" >"$t" || { rm -f "$t"; e "ship: cannot write $t"; exit 96; }',
  'ck "$t" || { rm -f "$t"; e "ship: the copy received fails its sha256 check"; exit 96; }',
  'chmod 700 "$t" && mv -f "$t" "$f" || { rm -f "$t"; e "ship: cannot install $f"; exit 96; }',
  'printf "%s\\n" "$k" | "$f" "$@"',
}, "\n")

-- wrap(agent_argv, mode, opts) -> the argv that runs the script on the node, finding (or with
-- mode "recv" receiving) the binary opts.self (opts.build, opts.self_sha256, opts.self_size).
function M.wrap(agent_argv, mode, opts)
  local argv = { "sh", "-c", M.script, "lamkit-launch", mode, opts.self, opts.build or "",
    opts.self_sha256 or "-", tostring(opts.self_size or 0) }
  for k = 2, #agent_argv do argv[#argv + 1] = agent_argv[k] end
  return argv
end

-- Can this boot find-or-ship for node? Remote modules only, without an explicit program or
-- prefix (ship = "always" ships even then), and only when boot knows its own binary.
function M.applies(node, mod, opts, ship)
  if not mod.remote or mod.same_path or not opts.self then return false end
  if ship == "always" then return opts.self_sha256 ~= nil end
  return not node.program and not node.prefix
end

return M
