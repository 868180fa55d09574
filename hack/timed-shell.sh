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
	# The CPU the line's processes used (user + system, from bash's
	# times: "0m1.250s 0m0.310s" for the children): on two cores a line
	# whose CPU is twice its time is compiling, one whose CPU is far below
	# its time is waiting (tests that sleep, Wine).
	# times runs in this shell (a pipe's subshell would see no children).
	times >"${TMPDIR:-/tmp}/timed-shell.$$"
	cpu=$(tail -n 1 "${TMPDIR:-/tmp}/timed-shell.$$" | awk '{ n = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); n += p[1] * 60 + p[2] } printf "%.0f", n }')
	rm -f "${TMPDIR:-/tmp}/timed-shell.$$"
	line=${*: -1}
	line=${line//$'\n'/ }
	printf '[make %s] %6ss cpu %4ss rc=%d: %.110s\n' "$(date +%H:%M:%S)" "$secs" "$cpu" "$rc" "$line" >&2
fi
exit $rc
