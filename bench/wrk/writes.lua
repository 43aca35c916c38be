-- The writes of the mixed scenario: a create (create.lua) and an update (update.lua) in turn.
local dir = os.getenv("BENCH_LUA_DIR")
dofile(dir .. "/create.lua")
local create_init, create_request = init, request
dofile(dir .. "/update.lua")
local update_request = request
local creating = false

function init(args)
  create_init(args)
end

function request()
  creating = not creating
  if creating then return create_request() end
  return update_request()
end
