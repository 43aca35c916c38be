-- PUT /v3/beneficiaries/{id}: a new phone number for a random id in 1..BENCH_MAX_ID, so that
-- every request changes the record (and writes its history entry).
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")
local max_id = tonumber(os.getenv("BENCH_MAX_ID") or "1000")

local headers = {}
for name, value in pairs(bench_headers) do headers[name] = value end
headers["Content-Type"] = "application/json"

function init(args)
  math.randomseed(os.time())
end

function request()
  local body = string.format('{"phone":"+39 3%02d %07d"}', math.random(10, 99),
    math.random(0, 9999999))
  return wrk.format("PUT", "/v3/beneficiaries/" .. math.random(1, max_id), headers, body)
end
