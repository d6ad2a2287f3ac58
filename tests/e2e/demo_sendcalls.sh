#!/usr/bin/env bash
# The demo's claims (tests/e2e/demo.sh) with every recorder at
# --send-calls, the default before 2026-11-28: the client's request lines
# and request starts come from its send calls instead of its servers'
# recordings and its sockets (demo.sh runs the defaults).
DEMO_NPREC_ARGS="--send-calls ${DEMO_NPREC_ARGS:-}" exec bash "$(dirname "$0")/demo.sh"
