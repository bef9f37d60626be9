-- lua/boot/rsh.lua: the rsh boot module: the ssh module's code with the rsh client (only `user`,
-- `command` and `options` apply). Chosen only when forced or when ssh is missing.
return require("boot.ssh").variant("rsh", 10, false)
