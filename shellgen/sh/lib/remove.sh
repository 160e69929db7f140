# remove.sh: removing ended jobs' directories, the files bgjob wrote and
# nothing else (bgjob rm, prune, run's pass).

# bg_rm DIR...: remove the jobs in the DIRs, printing for each an R
# record as soon as it is removed (a removal cut short by its caller's
# time has told of every job it removed), then, in their order, an E
# record for each that stays, saying why. A job with live
# processes is refused (rm.sh stops it first when forced). Only the files
# bgjob writes are deleted, then the directory, then the reservation of
# its port (bg_unport); links are never followed. All the jobs are
# looked at first, against one scan of the host's processes (bg_busy);
# then one rm and one find remove all that passed, a batch of up to 32 KiB
# of paths at a time, where one rm and one rmdir per job made removing
# 300 jobs cost 600 processes. Of removers of the same job at once (two
# prunes), only the one whose unlink of its directory succeeded reports
# it removed (bg_rmflush). A DIR given twice is looked at once: the
# second is not found once the first is removed.
bg_rm() {
	bg_rcall=$((${bg_rcall:-0} + 1))
	bg_rn=0 bg_rq=
	for bg_rd in "$@"; do
		bg_rn=$((bg_rn + 1))
		eval "bg_rd_$bg_rn=\$bg_rd"
		bg_rmcheck "$bg_rd" "$bg_rn"
		eval "bg_rk_$bg_rn=\$bg_rk bg_ra_$bg_rn=\$bg_ra"
		[ -n "$bg_rk" ] || bg_rq="$bg_rq $bg_rn"
	done
	# A wrapper that is just recording its status can change a directory
	# meanwhile: those still there are looked at again, a few times.
	bg_ri=0
	while :; do
		bg_rmround
		[ -n "$bg_rq" ] || break
		bg_ri=$((bg_ri + 1))
		if [ "$bg_ri" -ge 5 ]; then
			for bg_rj in $bg_rq; do eval "bg_rk_$bg_rj=notempty bg_ra_$bg_rj=\$bg_re_$bg_rj"; done
			break
		fi
		bg_nap
	done
	bg_rj=0
	while [ "$bg_rj" -lt "$bg_rn" ]; do
		bg_rj=$((bg_rj + 1))
		eval "bg_rk=\$bg_rk_$bg_rj bg_ra=\$bg_ra_$bg_rj"
		case $bg_rk in
		R) ;;
		=*)
			# The second of one DIR: as its first, unless that was removed.
			eval "bg_rk=\$bg_rk_${bg_rk#=} bg_ra=\$bg_ra_${bg_rk#=}"
			if [ "$bg_rk" = R ]; then
				eval "bg_ra=\$bg_re_$bg_rj"
				printf 'E\tnotfound\t%s\n' "${bg_ra##*/}"
			else
				printf 'E\t%s\t%s\n' "$bg_rk" "$bg_ra"
			fi
			;;
		*) printf 'E\t%s\t%s\n' "$bg_rk" "$bg_ra" ;;
		esac
	done
}

# bg_rmcheck DIR N: look at the job in DIR, the Nth of bg_rm's, before
# anything is removed: set bg_rk to why it stays (an E record's kind,
# with bg_ra its argument; "=K" for the same DIR as the Kth), or to ""
# when it can go; bg_re_N is DIR escaped. bg_rs_N set (by rm.sh) says
# that rm --force has just stopped the job.
bg_rmcheck() {
	bg_rk= bg_ra=
	bg_esc "$1"
	eval "bg_re_$2=\$bg_e"
	if [ -L "$1" ]; then
		bg_rk=symlink bg_ra=${bg_e##*/}
		return 0
	fi
	if bg_isid "${1##*/}"; then
		bg_rx=${1##*/}
		eval "bg_rx=\${bg_ru_${bg_rx%-*}_${bg_rx#*-}-}"
		case $bg_rx in "$bg_rcall:"*":$1")
			bg_rx=${bg_rx#*:}
			bg_rk="=${bg_rx%%:*}"
			return 0
			;;
		esac
		bg_rx=${1##*/}
		eval "bg_ru_${bg_rx%-*}_${bg_rx#*-}=\$bg_rcall:\$2:\$1"
	fi
	# A launch or a removal under way (bg_launching) is its launcher's or
	# its remover's: not found here, as ls does not list it; not one rm
	# --force has just stopped (bg_rs_N), whose wrapper has just written
	# its end there.
	eval "bg_rx=\${bg_rs_$2-}"
	if [ ! -d "$1" ] || { [ -z "$bg_rx" ] && bg_launching "$1"; }; then
		bg_rk=notfound bg_ra=${bg_e##*/}
		return 0
	fi
	case ${1%/*} in "$bg_root"/*) ;; *)
		bg_rk=outside bg_ra=$bg_e
		return 0
		;;
	esac
	if bg_busy "$1"; then
		bg_rk=busy bg_ra=${bg_e##*/}
		return 0
	fi
	if [ ! -w "$1" ] || [ ! -w "${1%/*}" ]; then
		if [ -d "$1" ]; then bg_rk=readonly bg_ra=$bg_e; else bg_rk=notfound bg_ra=${bg_e##*/}; fi
		return 0
	fi
	# The port the job was given (run --port), whose reservation goes with
	# it (bg_rp_N): meta.json's "port", which comes before its labels
	# (whose values are strings) and which no string can hold unescaped.
	bg_rx=
	if bg_metaline "$1"; then
		case $bg_l in *'"port":'[0-9]*)
			bg_rx=${bg_l#*\"port\":}
			bg_rx=${bg_rx%%[!0-9]*}
			;;
		esac
	fi
	eval "bg_rp_$2=\$bg_rx"
}

# bg_rmround: one look at each job of bg_rm's left in bg_rq (indexes),
# then the removal of those whose directories hold only what bgjob
# writes; bg_rq keeps those whose directories are still there.
bg_rmround() {
	bg_rx=$bg_rq
	bg_rq= bg_rf= bg_rl= bg_rdl= bg_rb= bg_rodd=
	for bg_rj in $bg_rx; do
		eval "bg_rd=\$bg_rd_$bg_rj"
		bg_rmlist "$bg_rd" || {
			eval "bg_rk_$bg_rj=notempty bg_ra_$bg_rj=\$bg_re_$bg_rj"
			continue
		}
		bg_rdl=$bg_rdl$bg_nl$bg_rd bg_rb="$bg_rb $bg_rj"
		[ "${#bg_rf}" -lt 32768 ] || bg_rmflush
	done
	bg_rmflush
}

# bg_rmlist DIR: fail when DIR holds anything bgjob did not write: the
# whole job then stays, as all is checked before anything is deleted.
# Else add its files to bg_rf (lines; its meta.json first, so that a
# removal under way looks like one, bg_launching), its lock directories
# to bg_rl, and DIR to bg_rodd when a file's name holds a newline
# (bg_rmflush removes those by pattern, files only: every directory was
# checked here).
bg_rmlist() {
	bg_rmeta= bg_r1=
	for bg_rx in "$1"/* "$1"/.[!.]* "$1"/..?*; do
		[ -e "$bg_rx" ] || [ -L "$bg_rx" ] || continue
		case ${bg_rx##*/} in
		meta.json | meta.json.tmp | job.sh | command.sh | stdout.log | stderr.log | exit_code | exit_code.tmp | exit_code.pty | \
			ended_at | ended_at.tmp | started_at | started_at.tmp | leftovers | leftovers.tmp* | queued | queued.tmp | not_run | not_run.tmp | wake | stop | stop.tmp | stdin | stdin.keeper | cursor-* | std???.dropped | std???.dropped.tmp* | std???.pipe | terminal | terminal.tmp | logs_full | ready_at | ready_at.tmp) ;;
		*) return 1 ;;
		esac
		# The one directory bgjob makes in a job: a reader's cursor lock
		# (cursor-READER.lock.d; cursor-READER.lock of earlier versions),
		# holding its owner files alone, named as readers are (no
		# newline). Any other directory is not bgjob's, whatever its name.
		if [ -d "$bg_rx" ] && [ ! -L "$bg_rx" ]; then
			case ${bg_rx##*/} in
			*"$bg_nl"*) return 1 ;;
			cursor-*.lock | cursor-*.lock.d)
				bg_rmlockd "$bg_rx" || return 1
				bg_rl=$bg_rl$bg_nl$bg_rx
				continue
				;;
			*) return 1 ;;
			esac
		fi
		case ${bg_rx##*/} in
		*"$bg_nl"*) bg_rodd=$bg_rodd$bg_nl$1 ;;
		meta.json) bg_rmeta=$bg_nl$bg_rx ;;
		*) bg_r1=$bg_r1$bg_nl$bg_rx ;;
		esac
	done
	bg_rf=$bg_rf$bg_rmeta$bg_r1
}

# bg_rmlockd DIR: fail when the lock directory DIR (a reader's cursor
# lock, bg_dirlock's) holds anything but its owner files, which alone its
# removal (rm -rf) may take.
bg_rmlockd() {
	for bg_rlf in "$1"/* "$1"/.[!.]* "$1"/..?*; do
		[ -e "$bg_rlf" ] || [ -L "$bg_rlf" ] || continue
		case ${bg_rlf##*/} in
		owner | owner.*) [ ! -d "$bg_rlf" ] || [ -L "$bg_rlf" ] || return 1 ;;
		*) return 1 ;;
		esac
	done
}

# bg_rmflush: remove what bg_rmround gathered: the files (bg_rf), the lock
# directories (bg_rl), then the directories (bg_rdl) of the jobs bg_rb
# (indexes): those this remover removed are removed (R), those still
# there go back to bg_rq, those another remover removed first are not
# found. One find removes the directories and prints each it removed (its
# -delete unlinks each once, so of two removers of one job only one is
# told); where find has no -delete (busybox's), each goes by an rmdir of
# its own, whose success tells the same.
bg_rmflush() {
	[ -n "$bg_rb" ] || return 0
	# Told first: a removal cut short before it could tell which went
	# (find's output, the R records) has said which may be gone.
	for bg_rj in $bg_rb; do
		eval "bg_ra=\$bg_re_$bg_rj"
		printf 'd\t%s\n' "$bg_ra"
	done
	set -f
	bg_oifs=$IFS
	IFS=$bg_nl
	# shellcheck disable=SC2086 # the paths are lines on purpose
	{
		[ -z "$bg_rf" ] || rm -f $bg_rf
		[ -z "$bg_rodd" ] || bg_rmodd $bg_rodd
		[ -z "$bg_rl" ] || rm -rf $bg_rl
		bg_rgone=$(find $bg_rdl -maxdepth 0 -delete -print)
	} 2>/dev/null
	IFS=$bg_oifs
	set +f
	for bg_rj in $bg_rb; do
		eval "bg_rx=\$bg_rd_$bg_rj"
		case $bg_nl$bg_rgone$bg_nl in
		*"$bg_nl$bg_rx$bg_nl"*) ;;
		*)
			if rmdir "$bg_rx" 2>/dev/null; then
				:
			elif [ -d "$bg_rx" ]; then
				bg_rq="$bg_rq $bg_rj"
				continue
			else
				eval "bg_rk_$bg_rj=notfound bg_ra_$bg_rj=\${bg_re_$bg_rj##*/}"
				continue
			fi
			;;
		esac
		eval "bg_rk_$bg_rj=R bg_ra=\$bg_re_$bg_rj bg_rx2=\${bg_rp_$bg_rj-}"
		[ -z "$bg_rx2" ] || bg_unport "$bg_rx2" "${bg_rx#"$bg_root"/}"
		# Told at once: a removal cut short (its time up, its caller
		# gone) has reported every job it removed.
		printf 'R\t%s\n' "$bg_ra"
	done
	bg_rf= bg_rl= bg_rdl= bg_rb= bg_rodd= bg_rgone=
}

# bg_rmodd DIR...: remove the files of the DIRs whose names hold a newline,
# by the patterns of bg_rmlist's that can match one.
bg_rmodd() {
	set +f
	IFS=$bg_oifs
	for bg_rx in "$@"; do
		rm -f "$bg_rx"/cursor-* "$bg_rx"/leftovers.tmp* "$bg_rx"/std???.dropped "$bg_rx"/std???.dropped.tmp* "$bg_rx"/std???.pipe
	done
	set -f
	IFS=$bg_nl
}
