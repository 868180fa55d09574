#!/usr/bin/env bash
# The Makefile's SHELL: runs each recipe line with bash, as before, and
# says on stderr how long a line took when it took 5 s or more, so a CI
# log tells where its minutes went (issue 26: CI in 15 minutes) without
# anyone timing steps by hand. The line's own exit status is kept.
start=$(date +%s.%N)
bash "$@"
rc=$?
end=$(date +%s.%N)
secs=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", e - s }')
if awk -v d="$secs" 'BEGIN { exit !(d >= 5) }'; then
	line=${*: -1}
	line=${line//$'\n'/ }
	printf '[make %s] %6ss rc=%d: %.110s\n' "$(date +%H:%M:%S)" "$secs" "$rc" "$line" >&2
fi
exit $rc
