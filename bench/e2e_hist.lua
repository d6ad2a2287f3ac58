-- bench/e2e_hist.lua: wrk script of bench/e2e_pairs.sh. With E2E_PACE_MS set,
-- each connection waits that long between its requests (the paced load).
-- At the end it writes the phase's latency histogram to $E2E_HIST: a
-- header "# requests N duration_us D errors E", then "latency_us count"
-- lines (wrk's own histogram, the one its --latency percentiles come from,
-- coordinated-omission correction included), so that many short phases
-- can be merged into one histogram and its p99 read from all of them.
-- latency(i) (i = 1..#latency) is wrk's (value, count) of the i-th
-- non-empty bin; each call scans from the minimum, fine for the ms ranges
-- of this bench.
local pace = tonumber(os.getenv("E2E_PACE_MS") or "")
if pace and pace > 0 then function delay() return pace end end
function done(summary, latency, requests)
  local f = assert(io.open(os.getenv("E2E_HIST"), "w"))
  f:write(string.format("# requests %d duration_us %d errors %d\n", summary.requests, summary.duration,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout))
  local n = #latency
  for i = 1, n do
    local v, c = latency(i)
    f:write(string.format("%d %d\n", v, c))
  end
  f:close()
end
