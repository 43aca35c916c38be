-- GET /v3/beneficiaries/{id} with a uniformly random id in 1..BENCH_MAX_ID.
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")
local max_id = tonumber(os.getenv("BENCH_MAX_ID") or "1000")

function init(args)
  math.randomseed(os.time())
end

function request()
  return wrk.format("GET", "/v3/beneficiaries/" .. math.random(1, max_id), bench_headers)
end
