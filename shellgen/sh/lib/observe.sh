# observe.sh: the observation of a job, the records (J, M, P, X, T, S, Y,
# Q, s, U, I, r, L, p) from which Go derives its status (see records.go).

# bg_obs DIR [strict]: print the observation records of the job in DIR;
# fail, printing nothing, when DIR is gone (the job was just removed) or
# is a symbolic link (not a job: never followed).
# Without a meta.json only the J record is printed (the job is
# unreadable), or with strict nothing, and it fails.
# The wrapper is looked at before exit_code is read, so a job that ends in
# between is seen as ended, never as lost; an exit_code not yet whole
# (bg_exit) is not read. A complete exit_code.tmp counts too: the
# wrapper's mv may have been killed by a stop after it wrote it.
# The files are all read before anything is printed: a removal deletes
# meta.json first, so a meta.json gone by then means the files read may
# have vanished under the reads (an exit_code read as "", a job seen as
# lost): the job is reported as one without a meta.json.
# Last comes the L record of its live processes (bg_live), but with
# bg_countrun=0 not for a job whose wrapper runs, then with bg_withports=1
# the p records of the ports they listen on (bg_ports); bg_obsrec leaves
# them out.
bg_obs() {
	bg_ofull=
	# The wrapper's last steps (the queue's wake-ups) are its own, not the job's: a look (bg_recorded) at a job
	# whose wrapper still runs though exit_code is written, and whose
	# leftovers are not recorded, waits for it to end, a tenth of a second
	# at most, then reads the job and scans after it.
	if [ "${bg_recorded-}" = 1 ] && [ -z "${bg_lrescan-}" ] && bg_exit "$1" &&
		! { bg_line "$1/leftovers" && [ "$bg_l" = 0 ]; } && bg_finishing "$1"; then
		bg_pgs=
	fi
	bg_op= bg_ox= bg_ou=
	bg_obsrec "$1" "${2-}" || return 1
	[ -n "$bg_ofull" ] || return 0
	# A job whose wrapper runs on this boot, without an exit code, is not
	# counted where nothing shows the count (bg_countrun=0: ls's table).
	if [ "${bg_countrun-1}" = 0 ] && [ -z "$bg_ox$bg_ou" ] && [ -n "${bg_op#x}" ] &&
		[ "${bg_op#x}" = "$bg_st" ] && [ -n "$bg_boot" ] && [ "$bg_b" = "$bg_boot" ]; then
		return 0
	fi
	bg_live "$1"
	printf 'L\t%s\t%s\n' "$bg_lc" "$bg_pm"
	# With bg_withports=1 (a look that shows or waits for ports), the p
	# records of the ports its live processes listen on.
	[ "${bg_withports-0}" = 0 ] || bg_ports "$bg_lp"
}

# bg_obsrec DIR [strict]: bg_obs without the L record, for a report that
# does not count processes (a launcher's of the job it has just started, a
# read's), and without the process scan's functions in its script. Sets
# bg_ofull when it printed more than the J record.
bg_obsrec() {
	[ ! -L "$1" ] || return 1
	if ! bg_metaline "$1"; then
		bg_obsnometa "$1" "${2-}"
		return
	fi
	# Each value read is kept behind an x; an empty one was not there.
	bg_om=$bg_l bg_op= bg_ox= bg_ot= bg_os= bg_oy1= bg_oy2=
	if bg_pick; then
		bg_proc "$bg_w"
		bg_op=x$bg_s
	fi
	# The end's time: ended_at where a wrapper before this one wrote it,
	# else the time the status was written (bg_mtime of exit_code, or of
	# the exit_code.tmp that holds it).
	bg_oxf=
	if bg_exit "$1"; then
		bg_ox=x$bg_xl bg_oxf=exit_code
	elif bg_tmpcode "$1"; then
		bg_ox=x$bg_l bg_oxf=exit_code.tmp
	fi
	if bg_line "$1/ended_at"; then
		bg_ot=x$bg_l
	elif [ -n "$bg_oxf" ] && bg_mtime "$1/$bg_oxf"; then
		bg_ot=x$bg_ts
	fi
	if bg_line "$1/stop"; then bg_os=x$bg_l; fi
	if bg_line "$1/stdout.dropped"; then bg_oy1=x$bg_l; fi
	if bg_line "$1/stderr.dropped"; then bg_oy2=x$bg_l; fi
	bg_oq= bg_oa= bg_ou=
	if bg_line "$1/queued"; then bg_oq=x$bg_l; fi
	if bg_line "$1/started_at"; then bg_oa=x$bg_l; fi
	if bg_line "$1/not_run"; then bg_ou=x$bg_l; fi
	bg_of= bg_or=
	if bg_line "$1/logs_full"; then bg_of=x$bg_l; fi
	if bg_line "$1/ready_at"; then bg_or=x$bg_l; fi
	if [ ! -e "$1/meta.json" ]; then
		bg_obsnometa "$1" "${2-}"
		return
	fi
	bg_esc "$1"
	if [ -n "$bg_mbig" ]; then
		printf 'J\t%s\nV\t%s\n' "$bg_e" "$bg_metamax"
	else
		printf 'J\t%s\nM\t%s\n' "$bg_e" "$bg_om"
	fi
	[ -z "$bg_op" ] || printf 'P\t%s\n' "${bg_op#x}"
	[ -z "$bg_ox" ] || printf 'X\t%s\n' "${bg_ox#x}"
	[ -z "$bg_ot" ] || printf 'T\t%s\n' "${bg_ot#x}"
	[ -z "$bg_os" ] || printf 'S\t%s\n' "${bg_os#x}"
	[ -z "$bg_oy1" ] || printf 'Y\tstdout\t%s\n' "${bg_oy1#x}"
	[ -z "$bg_oy2" ] || printf 'Y\tstderr\t%s\n' "${bg_oy2#x}"
	[ -z "$bg_oq" ] || printf 'Q\t%s\n' "${bg_oq#x}"
	[ -z "$bg_oa" ] || printf 's\t%s\n' "${bg_oa#x}"
	[ -z "$bg_ou" ] || printf 'U\t%s\n' "${bg_ou#x}"
	[ -z "$bg_of" ] || printf 'I\t%s\n' "${bg_of#x}"
	[ -z "$bg_or" ] || printf 'r\t%s\n' "${bg_or#x}"
	bg_ofull=1
	return 0
}

# bg_obsnometa DIR [strict]: the observation of a job without a meta.json:
# a launch cut short, or a removal under way, reported as is (J alone,
# and for bg_obs the L record of the processes that carry its id),
# unless the caller saw a meta.json (strict): then the job is being
# removed, and it fails.
bg_obsnometa() {
	[ -d "$1" ] && [ "$2" != strict ] || return 1
	bg_esc "$1"
	printf 'J\t%s\n' "$bg_e"
	bg_ofull=1
}

# bg_tmpcode DIR: succeed when DIR/exit_code.tmp holds a status (the
# launcher makes it blank; the wrapper writes the status, then renames it),
# its first line in bg_l.
bg_tmpcode() {
	bg_line "$1/exit_code.tmp" || return 1
	case ${bg_l%% *} in '' | *[!0-9]*) return 1 ;; esac
}
