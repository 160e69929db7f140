# caller.sh: the caller of a script that waits (wait, wait --for, logs
# --follow). The caller is there while the script's stdin is open; once it
# ends (the caller went away, or gave up at its deadline) the script ends,
# printing nothing more, and so does every process it started.

# bg_watchin: end this script with KILL once its stdin ends (the caller
# went away, or gave up at its deadline), and with it every process it
# started (its pipelines, a grep that takes its time): the whole process
# group, when the script leads it, as the runtimes start scripts (locally
# in a group of their own; over SSH sshd gives each session its own and
# the login shell execs the script's sh). Under any other runner only the
# script itself. A watcher in the background holds stdin (an asynchronous
# list gets /dev/null, so through fd 3); kill "$bg_cat" before the script
# ends on its own, and it goes quietly.
bg_watchin() {
	bg_wk=$$
	bg_proc $$
	[ "$bg_pg" != $$ ] || bg_wk=0
	exec 3<&0
	(
		trap 'kill "$bg_wc" 2>/dev/null; exit 0' TERM
		cat <&3 >/dev/null 2>&1 &
		bg_wc=$!
		wait "$bg_wc"
		kill -s KILL "$bg_wk"
	) >/dev/null 2>&1 &
	bg_cat=$!
	exec 3<&-
}
