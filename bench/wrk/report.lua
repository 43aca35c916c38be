-- Shared by every scenario: the bearer token, and one JSON line with the figures at the end.
-- Environment: BENCH_TOKEN (optional).
local token = os.getenv("BENCH_TOKEN")

bench_headers = { ["Accept"] = "application/json" }
if token ~= nil and token ~= "" then
  bench_headers["Authorization"] = "Bearer " .. token
end

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    "BENCH_RESULT {\"requests\":%d,\"duration_us\":%d,\"bytes\":%d," ..
    "\"p50_us\":%d,\"p90_us\":%d,\"p99_us\":%d,\"max_us\":%d,\"mean_us\":%.1f," ..
    "\"non2xx\":%d,\"connect_errors\":%d,\"read_errors\":%d,\"write_errors\":%d,\"timeouts\":%d}\n",
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    latency.mean, errors.status, errors.connect, errors.read, errors.write, errors.timeout))
end
