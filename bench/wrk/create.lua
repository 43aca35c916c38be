-- POST /v3/beneficiaries: a realistic body, a fresh e-mail address and Idempotency-Key each time.
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")
local first_names = { "Maria", "Giuseppe", "Anna", "Luca", "Sofia", "Marco", "Giulia", "Paolo" }
local last_names = { "Rossi", "Russo", "Ferrari", "Esposito", "Bianchi", "Romano", "Colombo" }
local cities = { "Roma", "Milano", "Napoli", "Torino", "Bologna", "Firenze" }
local run = tostring(os.time())
local n = 0

local headers = {}
for name, value in pairs(bench_headers) do headers[name] = value end
headers["Content-Type"] = "application/json"

function init(args)
  math.randomseed(os.time())
end

function request()
  n = n + 1
  local first = first_names[math.random(#first_names)]
  local last = last_names[math.random(#last_names)]
  local body = string.format(
    '{"first_name":"%s","last_name":"%s","email":"%s.%s.%s.%d@example.org",' ..
    '"phone":"+39 3%02d %07d","date_of_birth":"19%02d-%02d-%02d",' ..
    '"address":{"street":"Via Roma %d","city":"%s","postal_code":"%05d","country":"IT"},' ..
    '"metadata":{"source":"bench","campaign_id":"c-%d"}}',
    first, last, string.lower(first), string.lower(last), run, n,
    math.random(10, 99), math.random(0, 9999999), math.random(30, 99), math.random(1, 12),
    math.random(1, 28), math.random(1, 200), cities[math.random(#cities)],
    math.random(10, 98000), math.random(1, 50))
  headers["Idempotency-Key"] = "bench-" .. run .. "-" .. n
  return wrk.format("POST", "/v3/beneficiaries", headers, body)
end
