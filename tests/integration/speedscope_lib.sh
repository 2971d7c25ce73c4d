# SPDX-License-Identifier: BSD-2-Clause
# Sourced by the tests that open schedprof's output in speedscope (the npm package, its web
# app run from the local files in headless Chromium, offline): speedscope_chromium.sh
# (-f trace-event) and speedscope_folded.sh (-f folded). The caller sets $tmp, a directory
# it removes.
# speedscope is looked for in SPEEDSCOPE_DIR (default ~/.cache/schedprof/speedscope, where
# scripts/setup.sh --tests installs it); when it is missing, npm installs it there.
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# exit 77 (meson's skip), or fail under CI=true
skip() {
	[ "${CI:-}" = true ] && fail "$*"
	echo "SKIP: $*" >&2
	exit 77
}

SPEEDSCOPE_VERSION=1.25.0
SPEEDSCOPE_DIR=${SPEEDSCOPE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/schedprof/speedscope}

# Sets CHROMIUM and index (speedscope's page), installing speedscope when it is missing.
speedscope_setup() {
	CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
	[ -n "$CHROMIUM" ] || skip "chromium not found (install Debian's chromium)"
	index=$SPEEDSCOPE_DIR/node_modules/speedscope/dist/release/index.html
	if [ ! -f "$index" ]; then
		command -v npm >/dev/null || skip "speedscope is not in $SPEEDSCOPE_DIR and npm is missing"
		mkdir -p "$SPEEDSCOPE_DIR" &&
			npm install --prefix "$SPEEDSCOPE_DIR" --no-audit --no-fund --loglevel=error \
				"speedscope@$SPEEDSCOPE_VERSION" >"$tmp/npm.log" 2>&1 ||
			skip "npm could not install speedscope: $(tail -3 "$tmp/npm.log")"
		[ -f "$index" ] || fail "npm installed speedscope without $index"
	fi
}

# chrome ARGS... URL: headless, offline, a throw-away profile; stdout in $tmp/out
chrome() {
	HOME="$tmp" timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --disable-extensions --user-data-dir="$(mktemp -d "$tmp/profile.XXXXXX")" \
		"$@" >"$tmp/out" 2>"$tmp/chrome.log" ||
		fail "chromium $* exited $?: $(tail -5 "$tmp/chrome.log")"
}

# The import as speedscope's own command line does it: a script that hands the file, in
# base64, to speedscope.loadFileFromBase64(), named in the page's #localProfilePath=.
# loader FILE LOADER.js
loader() {
	python3 - "$1" "$2" <<'PY' || fail "cannot write the loader"
import base64, json, os, sys
data = base64.b64encode(open(sys.argv[1], "rb").read()).decode()
name = os.path.basename(sys.argv[1])
open(sys.argv[2], "w").write("speedscope.loadFileFromBase64(%s, %s)\n" % (json.dumps(name), json.dumps(data)))
PY
}
