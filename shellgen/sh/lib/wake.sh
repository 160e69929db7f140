# wake.sh: the nap of a follow or a wait between its looks, and the
# trigger that ends it early where the host has GNU tail: a look as soon as
# a log grows or a job's exit_code appears, not at every tenth of a second.

# bg_wakeup -f|-F FILE...: where the host has GNU tail and mkfifo, start
# the trigger that ends bg_fnap as soon as one of FILEs grows (-f) or
# appears (-F, by name: a job's logs and its exit_code): GNU tail (which
# watches with inotify) copies what is appended, and a ticker a newline
# every bg_ftick seconds (3; 1 where unset: for a job whose wrapper died
# and wrote no exit_code), into a pipe this shell reads (fd 7). The pipe is a FIFO made,
# opened and removed at once; this shell keeps a writing end (fd 5) for a
# tail started again (bg_wtail). Once this shell is gone tail ends (--pid)
# and the ticker (which looks at every tick) too. Elsewhere bg_fnap naps a
# tenth of a second. A script calls it before its first nap, unless bg_wup
# says it did: one that needs no nap (the job had ended, the line was
# there) starts none of this.
bg_wakeup() {
	bg_wup=1 bg_wt=
	case $(tail --version 2>/dev/null) in *GNU*) ;; *) return 0 ;; esac
	bg_wf=${TMPDIR:-/tmp}/bgjob-wake.$$
	# FIFOs of scripts killed between their mkfifo and rm (a runtime that
	# kills a script's group at once) go: theirs, and their pids gone; so
	# does a regular file of the name, which one such script made (below).
	# A pid is gone when /proc has no entry for it, or, without /proc, when
	# kill -0 finds no process of this user there.
	for bg_wx in "${bg_wf%.*}".*; do
		if { [ -p "$bg_wx" ] || [ -f "$bg_wx" ]; } && [ -O "$bg_wx" ]; then
			if [ -d /proc/self ]; then [ ! -d "/proc/${bg_wx##*.}" ]; else ! kill -0 "${bg_wx##*.}" 2>/dev/null; fi && rm -f "$bg_wx"
		fi
	done
	# A FIFO of this name is left by a script of this pid that was killed
	# in between (bg_watchin removes it first, but for a moment): stale.
	mkfifo -m 600 "$bg_wf" 2>/dev/null || { rm -f "$bg_wf" && mkfifo -m 600 "$bg_wf"; } 2>/dev/null || return 0
	# Read-write first, which does not wait for the other end; then a
	# reading and a writing end, and the first goes. The FIFO may go
	# before it is opened (another script's sweep, a cleaner of the
	# temporary directory), and <> and > create a regular file of a name
	# that is not there: only a FIFO is opened, and a file made of the
	# name meanwhile is closed and removed at once, with no trigger.
	# shellcheck disable=SC2094 # one FIFO, opened three ways on purpose
	if ! [ -p "$bg_wf" ] || ! { command exec 6<>"$bg_wf" 7<"$bg_wf" 5>"$bg_wf"; } 2>/dev/null || ! [ -p "$bg_wf" ]; then
		exec 5>&- 6<&- 7<&-
		rm -f "$bg_wf"
		return 0
	fi
	exec 6<&-
	rm -f "$bg_wf"
	bg_wm=$1 bg_wfiles=
	shift
	for bg_wx in "$@"; do bg_wfiles=$bg_wfiles$bg_nl$bg_wx; done
	bg_wtail
	# bg_range reads with dd's byte offsets where that dd has them (GNU's,
	# busybox's; GNU tail may come with another dd).
	bg_wdd=
	if dd if=/dev/null of=/dev/null count=0 iflag=skip_bytes,count_bytes 2>/dev/null; then bg_wdd=1; fi
	(
		trap '' PIPE
		while sleep "${bg_ftick:-1}" && kill -0 $$ 2>/dev/null && printf '\n'; do :; done
	) >&5 2>/dev/null 5>&- 7<&- &
	bg_wtk=$!
}

# bg_wtail: start the tail of bg_wakeup (bg_wm, -f or -F, on the files of
# bg_wfiles, one a line), from the files' ends, writing into the trigger's
# FIFO; it ends itself once this shell is gone (--pid). bg_wgrown counts
# what it has had to copy since (bg_fnap).
bg_wtail() {
	set -f
	bg_oifs=$IFS
	IFS=$bg_nl
	# shellcheck disable=SC2086 # one file a line
	set -- $bg_wfiles
	IFS=$bg_oifs
	set +f
	tail -q -c 0 -s 0.1 --pid=$$ "$bg_wm" "$@" >&5 2>/dev/null 5>&- 7<&- &
	bg_wt=$! bg_wgrown=0
}

# bg_wakeon FILE...: the trigger of bg_wakeup -F watches FILEs from now
# on, instead of those it watched: its tail starts again on them (a
# watch of events whose jobs changed). Without the trigger, nothing.
bg_wakeon() {
	[ -n "$bg_wt" ] || return 0
	kill "$bg_wt" 2>/dev/null
	bg_wfiles=
	for bg_wx in "$@"; do bg_wfiles=$bg_wfiles$bg_nl$bg_wx; done
	bg_wtail
}

# bg_fnap: the nap of a follow, or of a wait, between its looks: after
# bg_wakeup, until a log grows or a second passes, but at least bg_ffloor
# milliseconds (attach's 20, at most 50 looks a second however fast the
# job writes; else 200, at most 5); without the trigger a tenth of a
# second. The clock of a wait (bg_deadline) ends it early. The read of
# the trigger comes first, and the floor's sleep only when the read took
# less (the host's uptime, bg_uptime, says): a quiet job's look, woken by
# the ticker, starts one process to nap, not two. Without the uptime the
# floor's sleep comes first. A job that writes faster than the floor
# (the read took less) is hot: while each look finds new bytes (the
# script sets bg_fnew to how many) the nap is the floor's sleep alone, as
# the read would end at once, and it doubles at each such nap up to
# bg_fceil milliseconds (a second; attach's stays 20): a job that writes
# all the time is looked at about once a second. A look that finds none
# ends it (the next read may find what the trigger copied meanwhile: one
# look more). A read that ends when the file bg_fend names (a job's
# exit_code) is whole is not followed by the floor's sleep: the look after
# it is the last.
#
# tail copies into the FIFO all that a log grows by, 64 KiB at most
# waiting there: after a burst it would keep the trigger readable, and the
# follow looking at the floor's pace, until the FIFO had carried all of
# it, 64 KiB a read. Once the looks have found more than 32 KiB since tail
# started, the first nap that would read the trigger starts tail again
# from the logs' ends instead, and naps the floor's sleep only: the look
# after it reads what was appended meanwhile, and the one after that what
# the old tail had left in the FIFO.
bg_fnap() {
	if [ -z "$bg_wt" ]; then
		bg_dlnap
		return
	fi
	bg_fl=${bg_ffloor:-200}
	bg_wgrown=$((bg_wgrown + ${bg_fnew:-0}))
	if [ -n "${bg_fhot-}" ] && [ -n "${bg_fnew-}" ]; then
		bg_fnew=
		bg_fhot=$((bg_fhot * 2))
		[ "$bg_fhot" -le "${bg_fceil:-$bg_fl}" ] || bg_fhot=${bg_fceil:-$bg_fl}
		bg_dlnap "$bg_fhot"
		return
	fi
	bg_fnew= bg_fhot=
	if [ "$bg_wgrown" -gt 32768 ]; then
		kill "$bg_wt" 2>/dev/null
		bg_wtail
		bg_dlnap "$bg_fl"
		return
	fi
	if ! bg_uptime; then
		bg_dlnap "$bg_fl"
		bg_fl=0
	fi
	[ -z "${bg_dlup-}" ] || return 0
	bg_ft=$bg_up
	# Not holding the writing end this shell keeps (fd 5): a reader that
	# held one would wait for ever once this shell is killed in its nap.
	dd bs=65536 count=1 of=/dev/null <&7 5>&- 7<&- 2>/dev/null &
	bg_fw=$!
	[ -n "${bg_dlup-}" ] || wait "$bg_fw"
	kill "$bg_fw" 2>/dev/null
	[ "$bg_fl" -gt 0 ] && [ -z "${bg_dlup-}" ] && bg_uptime || return 0
	# Woken by the job's end (bg_fend, its exit_code, whole: bg_exit):
	# no floor.
	[ -z "${bg_fend-}" ] || ! bg_exit "${bg_fend%/*}" || return 0
	bg_fl=$((bg_fl - (bg_up - bg_ft)))
	[ "$bg_fl" -gt 0 ] || return 0
	bg_fhot=${bg_ffloor:-200}
	bg_dlnap "$bg_fl"
}

# bg_uptime: set bg_up to the host's uptime in milliseconds, read from
# /proc/uptime (to the hundredth of a second) by the shell, no process
# started; fail where there is none.
bg_uptime() {
	bg_up=
	[ -r /proc/uptime ] && IFS=' .' read -r bg_up bg_ux bg_x 2>/dev/null </proc/uptime || return 1
	case $bg_up$bg_ux in '' | *[!0-9]*) return 1 ;; esac
	case $bg_ux in ??) ;; *) return 1 ;; esac
	bg_up=${bg_up}${bg_ux}0
	bg_up=${bg_up#"${bg_up%%[!0]*}"}
	bg_up=${bg_up:-0}
}

# bg_wakedown: end the trigger of bg_wakeup.
bg_wakedown() {
	[ -n "$bg_wt" ] || return 0
	kill "$bg_wt" "$bg_wtk" 2>/dev/null
	exec 7<&- 5>&-
	bg_wt= bg_wdd=
}
