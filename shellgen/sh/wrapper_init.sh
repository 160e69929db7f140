# wrapper_init.sh: the start of job.sh, before the library's functions
# (shellgen's assembleHead), its helpers and wrapper.sh: what it does is
# done before the shell has parsed them, about half a millisecond of a
# dash's time.
bg_d=${0%/*}
if [ "${1-}" = run ]; then
	bg_umask=${2-}
	# The wrapper's own files are private whatever umask it was started
	# with (launch.sh's is 077, a launch made in Go keeps the caller's):
	# the caller's, bg_umask, is the command's.
	umask 077
	trap '' HUP
	# PIPE too: the launcher that reads the wrapper's report may have been
	# killed (an interrupted run) after meta.json was written; the
	# report's write then fails, and the job runs on. Trapped, not
	# ignored, so the command gets the default action.
	trap : TERM INT QUIT USR1 USR2 ALRM PIPE
	: >>"$bg_d/stdout.log"
	: >>"$bg_d/stderr.log"
	# A launch made in Go starts the wrapper as "job.sh run UMASK gate",
	# its fd 3 a pipe from the launcher, and writes meta.json for it: the
	# wrapper says "ready" once its signals are trapped and its logs made
	# (a stop that finds meta.json finds a wrapper that records its end),
	# then, in wrapper.sh, reads on fd 3 whether meta.json was written.
	[ "${3-}" != gate ] || printf 'ready\n'
fi
