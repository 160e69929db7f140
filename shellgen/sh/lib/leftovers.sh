# leftovers.sh: the record that an ended job left no processes behind
# (leftovers, holding 0), written once two scans found none, which spares
# later looks at the job the scan of the host's processes (procs.sh); and
# with it the end's time (ended_at), which spares them a date.

# bg_leftovers: record the ended jobs that bg_live found without processes
# once two scans, each made after their exit_code was written and the
# second after the first had ended, found none: bg_lun1 lists those one
# such scan found without (bg_live's own), bg_lun2 those whose scan was
# made before bg_live saw them ended. A scan is no snapshot: a process
# forked after the scan listed the processes, by a parent that exits
# before the scan reads it, is missed; the next scan sees the child. The
# record is a file, leftovers, holding 0, and a look at the job
# (bg_recorded) no longer scans: none of its processes can appear later,
# as each would descend from one alive then. The hole left: a chain of
# processes each of which forks the next and exits within one scan.
bg_leftovers() {
	[ -n "${bg_lun1-}${bg_lun2-}" ] || return 0
	bg_lrescan=1
	bg_pgs=
	bg_scan
	bg_lnone "$bg_lun1"
	bg_lrec=$bg_lz
	bg_lnone "$bg_lun2"
	if [ -n "$bg_lz" ]; then
		bg_pgs=
		bg_scan
		bg_lnone "$bg_lz"
		bg_lrec=$bg_lrec$bg_lz
	fi
	set -f
	bg_oifs=$IFS
	IFS=$bg_nl
	# shellcheck disable=SC2086 # the directories are lines on purpose
	set -- $bg_lrec
	IFS=$bg_oifs
	set +f
	# Not into a job being removed (its meta.json goes first): the record
	# would keep its directory, which a removal had emptied, alive. One
	# written while a removal began is taken back.
	for bg_lv in "$@"; do
		[ -e "$bg_lv/meta.json" ] || continue
		{ printf '0\n' >"$bg_lv/leftovers.tmp$$" && mv -f "$bg_lv/leftovers.tmp$$" "$bg_lv/leftovers"; } 2>/dev/null || rm -f "$bg_lv/leftovers.tmp$$"
		# The end's time, once, where the wrapper left it to exit_code's
		# (bg_mtime, a date started): later looks read ended_at, as one
		# an older wrapper wrote, and start nothing.
		if [ ! -e "$bg_lv/ended_at" ] && bg_exit "$bg_lv" && bg_mtime "$bg_lv/exit_code"; then
			{ printf '%s\n' "$bg_ts" >"$bg_lv/ended_at.tmp" && mv -f "$bg_lv/ended_at.tmp" "$bg_lv/ended_at"; } 2>/dev/null || rm -f "$bg_lv/ended_at.tmp"
		fi
		[ -e "$bg_lv/meta.json" ] || rm -f "$bg_lv/leftovers"
	done
	bg_lun1= bg_lun2= bg_lrescan=
}

# bg_lnone DIRS: set bg_lz to those of DIRS (lines) that bg_live finds
# without processes in the current scan.
bg_lnone() {
	bg_lz=
	set -f
	bg_oifs=$IFS
	IFS=$bg_nl
	# shellcheck disable=SC2086 # the directories are lines on purpose
	set -- $1
	IFS=$bg_oifs
	set +f
	for bg_lv in "$@"; do
		bg_live "$bg_lv"
		[ "$bg_lc" != 0 ] || bg_lblank || bg_lz=$bg_lz$bg_lv$bg_nl
	done
}

# bg_lblank: succeed when bg_blanks holds a process of this user started
# since the job bg_live last looked at (bg_st; any, when that is not a
# number) that is still there: one whose environment read empty may be
# one of the job's, caught in an exec, and the job is not recorded as
# leaving nothing.
bg_lblank() {
	for bg_lk in $bg_blanks; do
		case $bg_st in '' | *[!0-9]*) ;; *) [ "${bg_lk#*:}" -ge "$bg_st" ] || continue ;; esac
		[ ! -O "/proc/${bg_lk%%:*}" ] || return 0
	done
	return 1
}
