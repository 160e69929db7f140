# observe.sh: the observation of a job, the records (J, M, P, X, T, S, Y,
# L) from which Go derives its status (see records.go).

# bg_obs DIR [strict]: print the observation records of the job in DIR;
# fail, printing nothing, when DIR is gone (the job was just removed) or
# is a symbolic link (not a job: never followed).
# Without a meta.json only the J record is printed (the job is
# unreadable), or with strict nothing, and it fails.
# The wrapper is looked at before exit_code is read, so a job that ends in
# between is seen as ended, never as lost. A complete exit_code.tmp counts
# too: the wrapper's mv may have been killed by a stop after it wrote it.
# Last comes the L record of its live processes (bg_live), unless
# bg_obslive is 0 (the launcher's report of a job it has just started).
bg_obs() {
	[ ! -L "$1" ] || return 1
	if ! bg_metaline "$1"; then
		# A launch cut short, or a removal under way: reported as is,
		# unless the caller saw a meta.json (strict): then the job is being
		# removed.
		[ -d "$1" ] && [ "${2-}" != strict ] || return 1
		bg_esc "$1"
		printf 'J\t%s\n' "$bg_e"
		return 0
	fi
	bg_esc "$1"
	if [ -n "$bg_mbig" ]; then
		printf 'J\t%s\nV\t%s\n' "$bg_e" "$bg_metamax"
	else
		printf 'J\t%s\nM\t%s\n' "$bg_e" "$bg_l"
	fi
	if bg_pick; then
		bg_proc "$bg_w"
		printf 'P\t%s\n' "$bg_s"
	fi
	if bg_line "$1/exit_code"; then
		printf 'X\t%s\n' "$bg_l"
	elif bg_tmpcode "$1"; then
		printf 'X\t%s\n' "$bg_l"
	fi
	if bg_line "$1/ended_at"; then printf 'T\t%s\n' "$bg_l"; fi
	if bg_line "$1/stop"; then printf 'S\t%s\n' "$bg_l"; fi
	if bg_line "$1/stdout.dropped"; then printf 'Y\tstdout\t%s\n' "$bg_l"; fi
	if bg_line "$1/stderr.dropped"; then printf 'Y\tstderr\t%s\n' "$bg_l"; fi
	if [ "${bg_obslive-1}" = 1 ]; then
		bg_live "$1"
		printf 'L\t%s\t%s\n' "$bg_lc" "$bg_pm"
	fi
	return 0
}

# bg_tmpcode DIR: succeed when DIR/exit_code.tmp holds a status (the
# launcher makes it blank; the wrapper writes the status, then renames it),
# its first line in bg_l.
bg_tmpcode() {
	bg_line "$1/exit_code.tmp" || return 1
	case ${bg_l%% *} in '' | *[!0-9]*) return 1 ;; esac
}
