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
# list gets /dev/null, so through fd 3), its pid in bg_cat: between looks
# the script calls bg_present, and bg_unwatch before it ends on its own.
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
		# The FIFO of bg_wakeup goes first: a KILL between its mkfifo and
		# its rm would leave it.
		rm -f "${TMPDIR:-/tmp}/bgjob-wake.$$"
		kill -s KILL "$bg_wk"
	) >/dev/null 2>&1 &
	bg_cat=$!
	exec 3<&-
}

# bg_present: go on while the caller is there; once it went away (the
# watcher of bg_watchin is gone), end the script at once, printing nothing
# more. A waiting loop calls it before each nap.
bg_present() {
	kill -0 "$bg_cat" 2>/dev/null || exit 0
}

# bg_unwatch: the script is ending on its own: end, quietly, the watcher
# of bg_watchin and the clock of its wait (bg_dl of bg_deadline), if any.
bg_unwatch() {
	kill "$bg_cat" ${bg_dl:+"$bg_dl"} 2>/dev/null
}
