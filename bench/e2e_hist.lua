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
-- With E2E_REQLOG_FILE=FILE (diagnostics: it costs wrk a Lua call and a header
-- parse per request) every request also gets an id (?r=N) that nginx
-- echoes in an X-Req header (e2e_pairs.sh E2E_REQLOG=1), and each response
-- appends "end_us latency_us" (CLOCK_MONOTONIC) to FILE, so that requests
-- can be matched with what ran on the CPUs at the time (e2e_coincide.py).
local pace = tonumber(os.getenv("E2E_PACE_MS") or "")
if pace and pace > 0 then function delay() return pace end end

local reqlog = os.getenv("E2E_REQLOG_FILE")
if reqlog and reqlog ~= "" then
  local ffi = require("ffi")
  ffi.cdef[[
  typedef struct { long tv_sec; long tv_nsec; } e2e_ts;
  int clock_gettime(int clk, e2e_ts *tp);
  ]]
  local ts = ffi.new("e2e_ts")
  local function now_us()
    ffi.C.clock_gettime(1, ts)   -- CLOCK_MONOTONIC, perf -k CLOCK_MONOTONIC's clock
    return tonumber(ts.tv_sec) * 1000000 + tonumber(ts.tv_nsec) / 1000
  end
  local n, start, buf = 0, {}, {}
  local out = assert(io.open(reqlog, "a"))
  function request()
    n = n + 1
    start[n] = now_us()
    return wrk.format("GET", wrk.path .. "?r=" .. n)
  end
  function response(status, headers, body)
    local t = now_us()
    local id = tonumber(headers["X-Req"] or "")
    local t0 = id and start[id]
    if t0 then
      start[id] = nil
      buf[#buf + 1] = string.format("%.1f %.1f", t, t - t0)
      if #buf >= 256 then out:write(table.concat(buf, "\n"), "\n"); out:flush(); buf = {} end
    end
  end
end

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
