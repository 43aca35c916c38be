-- GET of one fixed list path (BENCH_PATH, with its query string): first page, search, filters,
-- deep page.
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")
local path = os.getenv("BENCH_PATH") or "/v3/beneficiaries"

function request()
  return wrk.format("GET", path, bench_headers)
end
