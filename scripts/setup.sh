#!/usr/bin/env bash
# Idempotent setup: installs what this machine lacks, and nothing twice.
#   - uv, then the locked Python environment in .venv
#   - Debian's chromium and bubblewrap (as root; otherwise says what to install)
#   - the pinned npm toolchain in toolchain/ (ESLint, TypeScript, jscpd, html-validate, esbuild)
#   - the pinned agent CLIs in toolchain/agents/ (Claude Code, Codex; ~760 MB, skipped with
#     BENCH_SKIP_AGENT_CLIS=1)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1;34m[setup]\033[0m %s\n' "$*" >&2; }
is_root() { [ "$(id -u)" = 0 ]; }

apt_updated=0
apt_install() {
  if ! is_root; then
    say "missing: $* — install it with: sudo apt-get install -y $*"
    return 1
  fi
  if [ "$apt_updated" = 0 ]; then
    say "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    apt_updated=1
  fi
  say "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# 1. uv and the Python environment (pinned by uv.lock).
if command -v uv >/dev/null 2>&1; then
  uv=(uv)
else
  # `python3 -m uv` works wherever pip put it (pyenv shims, --user bins) without a PATH change.
  python3 -m uv --version >/dev/null 2>&1 || {
    say "installing uv with pip"
    python3 -m pip install --quiet --disable-pip-version-check uv
  }
  uv=(python3 -m uv)
fi
# --compile-bytecode: these machines (like many containers) set PYTHONDONTWRITEBYTECODE=1, so
# without installed .pyc files every bench command, test subprocess and Dagster run worker
# compiles the ~850 modules it imports from source (docs: benchmarks/bytecode.py). uv compiles
# only what it installs, so an unchanged environment costs nothing here.
"${uv[@]}" sync --frozen --quiet --compile-bytecode
# The project's own modules live in the checkout (an editable install), which uv does not
# compile: compileall writes only the .pyc files whose source changed since the last setup.
.venv/bin/python -m compileall -q -j 0 bench_pipeline assets resources benchmarks tests >/dev/null

# 2. System tools: the browser the bot drives and the sandbox builds run in.
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
# The bot's sandboxed file server and the sandbox's egress bridge run under the system
# Python as an unprivileged uid.
[ -x /usr/bin/python3 ] || missing+=(python3)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ "${#missing[@]}" -gt 0 ]; then
  apt_install "${missing[@]}" || say "continuing without: ${missing[*]} (tests that need them will say so)"
fi
if [ ! -x /usr/bin/chromium ] && [ -z "${BENCH_CHROMIUM:-}" ]; then
  # No Debian Chromium (e.g. macOS or no root): Playwright's own download is the fallback.
  say "no system Chromium: trying 'playwright install chromium'"
  .venv/bin/playwright install chromium || say "playwright install failed: set BENCH_CHROMIUM to a Chromium binary"
fi

# 3. The pinned npm toolchain, reinstalled only when its lock file changed.
if command -v npm >/dev/null 2>&1; then
  stamp=toolchain/node_modules/.package-lock.json
  if [ ! -f "$stamp" ] || [ toolchain/package-lock.json -nt "$stamp" ]; then
    say "npm ci (toolchain/)"
    npm ci --prefix toolchain --no-audit --no-fund --loglevel=error >/dev/null
  fi
  # 4. The agent CLIs the claude-code and codex harnesses run, pinned by toolchain/agents/
  # package-lock.json; the adapters find them there without any PATH change. Claude Code's
  # postinstall copies its native binary out of the platform package, so scripts must run.
  # Claude Code declares Node >= 22 but only its install script runs under node (the CLI is
  # a native binary): the engine warning on Node 20 is expected.
  stamp=toolchain/agents/node_modules/.package-lock.json
  if [ -n "${BENCH_SKIP_AGENT_CLIS:-}" ]; then
    say "BENCH_SKIP_AGENT_CLIS set: not installing the agent CLIs (claude-code/codex agents need them)"
  elif [ ! -f "$stamp" ] || [ toolchain/agents/package-lock.json -nt "$stamp" ]; then
    say "npm ci (toolchain/agents/: Claude Code, Codex; ~760 MB the first time)"
    npm ci --prefix toolchain/agents --no-audit --no-fund --loglevel=error >/dev/null
    # npm 11 warns that Claude Code's install script is "not yet covered by allowScripts"
    # but still runs it; should a later npm skip it, the CLI would be a stub: say so here.
    toolchain/agents/node_modules/.bin/claude --version >/dev/null 2>&1 \
      || say "claude does not run: its postinstall did not copy the native binary (see npm's install-scripts warning)"
  fi
fi
say "ready"
