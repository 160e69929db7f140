# queue.sh: a job's turn (run --slots, --after, --after-ok), kept by the
# wrappers themselves, with no daemon. The workspace's .queue directory
# holds the queue of slotted jobs: w.SEQ.ID while one waits (SEQ, ten
# digits, given under the lock .queue/lock when it is queued, so the
# names sort in queue order; the entry holds its wrapper's pid, boot id
# and start time), r.ID while it runs (it holds a slot), and a.REF.ID
# while job ID waits for job REF to end. A waiting wrapper sleeps
# on a FIFO in its job directory, wake; whoever may have made its turn
# come (a job that ends, frees a slot, or leaves the queue) writes a line
# into it. A wake lost to a wrapper killed by SIGKILL is made up by a look
# every 60 s.

# bg_qenter: the job of this wrapper (bg_d, bg_id) starts to wait: its
# wake FIFO open on fd 7, the queued file saying what it waits for, its
# a.REF.ID entries and, for a slotted job (bg_slots > 0), its place at the
# end of the queue, w.SEQ.ID, under the queue's lock. All before meta.json
# is written, so that no look sees a queued job as running, and so that a
# job is in the queue before it can be named: a run --after resolves its
# refs by their meta.json, so a job it waits for holds an older place
# than its own, and a job at the head never waits for one behind it.
# Until meta.json is there the entry's wrapper (bg_qlive) says the job is
# alive; a run that returned was queued before the next one.
bg_qenter() {
	bg_qdir=${bg_d%/*}/.queue
	[ -d "$bg_qdir" ] || mkdir "$bg_qdir" 2>/dev/null
	bg_qtick= bg_qtst= bg_qfifo=
	if mkfifo -m 600 "$bg_d/wake" && exec 7<>"$bg_d/wake"; then bg_qfifo=1; fi
	bg_qwhat=slot
	[ -z "$bg_after$bg_afterok" ] || bg_qwhat="after ${bg_after%% *}${bg_afterok%% *}"
	printf '%s\n' "$bg_qwhat" >"$bg_d/queued"
	for bg_qx in $bg_after $bg_afterok; do : >"$bg_qdir/a.$bg_qx.$bg_id"; done
	[ "$bg_slots" -gt 0 ] || return 0
	bg_proc $$
	bg_qme="$$ ${bg_boot:--} $bg_s"
	bg_qlock
	bg_qn=0
	bg_line "$bg_qdir/seq" && case $bg_l in '' | *[!0-9]*) ;; *) bg_qn=$bg_l ;; esac
	bg_qn=$((bg_qn + 1))
	printf '%s\n' "$bg_qn" >"$bg_qdir/seq.tmp" && mv -f "$bg_qdir/seq.tmp" "$bg_qdir/seq"
	bg_qseq=$(printf '%010d' "$bg_qn")
	printf '%s\n' "$bg_qme" >"$bg_qdir/w.$bg_qseq.$bg_id"
	bg_dirunlock "$bg_qdir/lock"
}

# bg_qlock: take the queue's lock (bg_dirlock), as this wrapper.
bg_qlock() {
	bg_proc $$
	bg_dirlock "$bg_qdir/lock" "$$ $bg_s" 0
}

# bg_qlook: one look at the job's turn. Returns 0 when it has come: the
# job has left the queue (a slotted job holds its slot, r.ID, until
# bg_qdone); 1 when the job is to end without running, a stop having come
# first (the stop file) or a job of bg_afterok not having exited 0
# (bg_qwhy says which): it has left the queue; 2 while it waits on. The
# queued file stays: bg_qstart or bg_qend removes it once the job's next
# state is recorded, so that no look sees the job running in between.
bg_qlook() {
	if [ -e "$bg_d/stop" ]; then
		bg_qleave
		return 1
	fi
	if bg_qafter && bg_qslot; then
		bg_qleave
		return 0
	fi
	if [ -n "$bg_qwhy" ]; then
		bg_qleave
		return 1
	fi
	return 2
}

# bg_qwait: look (bg_qlook) until the job's turn has come (0) or the job
# is to end without running (1), sleeping on the FIFO in between.
bg_qwait() {
	bg_qtick= bg_qtst=
	while :; do
		bg_qlook
		case $? in 0) return 0 ;; 1) return 1 ;; esac
		if [ -z "$bg_qfifo" ]; then
			# No FIFO (a file system without them): a look a second.
			bg_nap 1000
			continue
		fi
		# A tick every 60 s makes up a wake lost to a SIGKILL. The wrapper
		# reaps an ended tick whenever it waits for a child (bash at once),
		# and its pid may be another process's by the next look: the tick
		# is there only while its pid has the tick's start time (bg_ours).
		if [ -z "$bg_qtick" ] || ! bg_ours "$bg_qtick" "$bg_qtst"; then
			setsid sh -c 'sleep 60; printf "t\n"' >&7 2>/dev/null &
			bg_qtick=$!
			bg_proc "$bg_qtick"
			bg_qtst=$bg_s
		fi
		read -r bg_qx <&7 || :
	done
}

# bg_qstart: the job's turn has come and its command starts: started_at
# records when (the host's clock, as ended_at), then the queued file goes.
bg_qstart() {
	if bg_stamp; then printf '%s\n' "$bg_ts" >"$bg_d/started_at.tmp" && mv -f "$bg_d/started_at.tmp" "$bg_d/started_at"; fi
	rm -f "$bg_d/queued"
}

# bg_qend: the job ends without its command having run (a stop came
# first, or bg_qwhy says why it is not run): its status is recorded (the
# stop's signal, or 125 and not_run), and only then does the queued file
# of a queued job go, so that no look sees it running meanwhile; the jobs
# that wait for it are woken.
bg_qend() {
	[ "$bg_stdin" != 1 ] || bg_unkeep
	if [ -n "$bg_qwhy" ]; then
		printf '%s\n' "$bg_qwhy" >"$bg_d/not_run"
		bg_rc=125
	else
		bg_stopped || bg_rc=143
	fi
	bg_exitrec
	[ -z "$bg_queue" ] || {
		rm -f "$bg_d/queued"
		bg_qdone
	}
}

# bg_qafter: succeed when every job of bg_after and bg_afterok has ended:
# exit_code (or exit_code.tmp) written, the wrapper gone (lost), or the
# directory removed. A
# job of bg_afterok that did not exit 0 sets bg_qwhy and fails.
bg_qafter() {
	for bg_qx in $bg_after $bg_afterok; do
		bg_qj=${bg_d%/*}/$bg_qx
		if [ -d "$bg_qj" ] && ! bg_exit "$bg_qj" && bg_running "$bg_qj"; then
			printf 'after %s\n' "$bg_qx" >"$bg_d/queued.tmp" && mv -f "$bg_d/queued.tmp" "$bg_d/queued"
			return 1
		fi
	done
	for bg_qx in $bg_afterok; do
		bg_qj=${bg_d%/*}/$bg_qx
		if [ ! -d "$bg_qj" ]; then
			bg_qwhy="job $bg_qx was removed"
		elif [ -e "$bg_qj/not_run" ]; then
			bg_qwhy="job $bg_qx was not run"
		elif bg_exit "$bg_qj" || { bg_tmpcode "$bg_qj" && bg_xl=$bg_l; }; then
			bg_l=${bg_xl%% *}
			# exit_code.tmp alone: a stop killed the wrapper's rename, and
			# its status stands, as for every reader (docs/format.md).
			[ "$bg_l" = 0 ] || bg_qwhy="job $bg_qx exited $bg_l"
		else
			bg_qwhy="job $bg_qx was lost"
		fi
		[ -z "$bg_qwhy" ] || return 1
	done
	return 0
}

# bg_qslot: succeed when the job may start as far as slots go: it has
# none (bg_slots 0), or, under the queue's lock, it is the oldest waiting
# job and fewer than bg_slots slotted jobs run; then it takes a slot
# (w.SEQ.ID becomes r.ID) and wakes the next in the queue. Entries of
# jobs that have ended, or whose wrapper is gone, are removed on the way.
bg_qslot() {
	[ "$bg_slots" -gt 0 ] || return 0
	printf 'slot\n' >"$bg_d/queued.tmp" && mv -f "$bg_d/queued.tmp" "$bg_d/queued"
	# Without the lock first: a job behind a live head waits on.
	for bg_qx in "$bg_qdir"/w.*; do
		[ -e "$bg_qx" ] || break
		bg_qh=${bg_qx##*.}
		[ "$bg_qh" = "$bg_id" ] || ! bg_qlive "$bg_qx" || return 1
		break
	done
	bg_qlock
	bg_qok=
	bg_qhead
	if [ "$bg_qh" = "$bg_id" ]; then
		bg_qr=0
		for bg_qx in "$bg_qdir"/r.*; do
			[ -e "$bg_qx" ] || continue
			if bg_running "${bg_d%/*}/${bg_qx##*/r.}"; then bg_qr=$((bg_qr + 1)); else rm -f "$bg_qx"; fi
		done
		if [ "$bg_qr" -lt "$bg_slots" ]; then
			mv -f "$bg_qdir/w.$bg_qseq.$bg_id" "$bg_qdir/r.$bg_id"
			bg_qok=1
			bg_qhead
		fi
	fi
	bg_dirunlock "$bg_qdir/lock"
	[ -n "$bg_qok" ] || return 1
	[ -z "$bg_qh" ] || bg_qwake "${bg_d%/*}/$bg_qh"
	return 0
}

# bg_qhead: set bg_qh to the id of the oldest job waiting in the queue
# ("" when none), removing the entries of those that have ended or whose
# wrapper is gone. The caller holds the lock.
bg_qhead() {
	bg_qh=
	for bg_qx in "$bg_qdir"/w.*; do
		[ -e "$bg_qx" ] || continue
		bg_qh=${bg_qx##*.}
		[ "$bg_qh" = "$bg_id" ] && return 0
		bg_qlive "$bg_qx" && return 0
		rm -f "$bg_qx"
		bg_qh=
	done
}

# bg_qlive ENTRY: succeed while the job of the queue entry w.SEQ.ID is
# alive: its wrapper runs (bg_running), or, before its meta.json is
# written, the wrapper the entry names (pid, boot id, start time; an
# entry of an earlier version is empty) is there.
bg_qlive() {
	bg_running "${bg_d%/*}/${1##*.}" && return 0
	bg_line "$1" || return 1
	bg_qp=${bg_l%% *} bg_qb=${bg_l#* }
	bg_qs=${bg_qb#* } bg_qb=${bg_qb%% *}
	[ -n "$bg_qp" ] && [ "$bg_qp" != "$bg_l" ] && [ -n "$bg_qs" ] && [ "$bg_qs" != "$bg_qb" ] || return 1
	[ "$bg_qb" = - ] || [ -z "$bg_boot" ] || [ "$bg_qb" = "$bg_boot" ] || return 1
	bg_ours "$bg_qp" "$bg_qs"
}

# bg_qwake DIR: wake the wrapper of the job in DIR if it waits (a line
# into its FIFO, opened read-write so that it never blocks).
bg_qwake() {
	[ -p "$1/wake" ] || return 0
	{ printf 'w\n' 1<>"$1/wake"; } 2>/dev/null
}

# bg_qleave: the job leaves the waiting room: its tick (while it is the
# tick, bg_ours), FIFO and a.REF.ID entries go (the queued file stays for
# bg_qstart or bg_qend); a slotted job that got no slot leaves the queue
# and wakes the next.
bg_qleave() {
	[ -z "$bg_qtick" ] || ! bg_ours "$bg_qtick" "$bg_qtst" ||
		kill -s TERM -- "-$bg_qtick" 2>/dev/null || kill "$bg_qtick" 2>/dev/null
	[ -z "$bg_qfifo" ] || exec 7>&-
	rm -f "$bg_d/wake" "$bg_d/queued.tmp"
	for bg_qx in $bg_after $bg_afterok; do rm -f "$bg_qdir/a.$bg_qx.$bg_id"; done
	if [ "$bg_slots" -gt 0 ] && [ -e "$bg_qdir/w.$bg_qseq.$bg_id" ]; then
		bg_qlock
		rm -f "$bg_qdir/w.$bg_qseq.$bg_id"
		bg_qhead
		bg_dirunlock "$bg_qdir/lock"
		[ -z "$bg_qh" ] || bg_qwake "${bg_d%/*}/$bg_qh"
	fi
}

# bg_qdone: the job has ended (its exit_code is written): it gives back
# its slot and wakes the next in the queue, and wakes the jobs that wait
# for it. Any job's wrapper calls it: one run without --slots may be
# waited for too.
bg_qdone() {
	bg_qdir=${bg_d%/*}/.queue
	[ -d "$bg_qdir" ] || return 0
	if [ -e "$bg_qdir/r.$bg_id" ]; then
		bg_qlock
		rm -f "$bg_qdir/r.$bg_id"
		bg_qhead
		bg_dirunlock "$bg_qdir/lock"
		[ -z "$bg_qh" ] || bg_qwake "${bg_d%/*}/$bg_qh"
	fi
	for bg_qx in "$bg_qdir/a.$bg_id".*; do
		[ -e "$bg_qx" ] && bg_qwake "${bg_d%/*}/${bg_qx##*.}"
	done
	return 0
}
