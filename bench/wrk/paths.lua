-- GET of the paths in a file (BENCH_PATHS_FILE, one per line, made by bench/list-shapes.ts from
-- a seed), in order and round again at the end; each thread starts at its own offset.
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")
local paths = {}
for line in io.lines(os.getenv("BENCH_PATHS_FILE")) do
  if line ~= "" then paths[#paths + 1] = line end
end
if #paths == 0 then error("BENCH_PATHS_FILE holds no path") end

local threads = 0
function setup(thread)
  thread:set("thread_number", threads)
  threads = threads + 1
end

local next_path = 1

function init(args)
  -- thread_number is set by setup() in this thread's own Lua state before init runs.
  next_path = ((thread_number or 0) * 7919) % #paths + 1
end

function request()
  local path = paths[next_path]
  next_path = next_path % #paths + 1
  return wrk.format("GET", path, bench_headers)
end
