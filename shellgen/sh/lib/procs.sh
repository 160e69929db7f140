# procs.sh: a job's processes. One process by its pid (start time and
# group), the wrapper (running, tied to the job, ended), and the scan: one
# look at all the host's processes (bg_scan) from which bg_live counts a
# job's live processes, however they left its group.

# bg_proc PID: set bg_s to the start time of process PID and bg_pg to its
# process group ("" when there is no such live process).
bg_proc() {
	bg_s= bg_pg=
	if [ -r /proc/self/stat ]; then
		IFS= read -r bg_s 2>/dev/null <"/proc/$1/stat" || {
			bg_s=
			return 0
		}
		bg_s=${bg_s##*) }
		set -- $bg_s
		if [ "$1" = Z ] || [ "$1" = X ]; then
			bg_s=
			return 0
		fi
		bg_pg=$3 bg_s=${20}
	else
		bg_s=$(ps -o stat= -o pgid= -o lstart= -p "$1" 2>/dev/null) || {
			bg_s=
			return 0
		}
		set -- $bg_s
		case $1 in Z* | '')
			bg_s=
			return 0
			;;
		esac
		bg_pg=$2
		shift 2
		bg_s="$*"
	fi
}

# bg_ours PID START: succeed while PID is a live process that started at
# START, bg_proc's start time read when this shell forked it ("" when it
# could not be read: while PID is a live process). A shell reaps any
# child that has ended whenever it waits, for whatever it waits, and a
# reaped child's pid may be handed to another process: a child that may
# have ended a while ago is signalled, or taken to be alive, only while
# this succeeds (kill -0 would find its successor alive).
bg_ours() {
	bg_proc "$1"
	[ -n "$bg_s" ] || return 1
	[ -z "$2" ] || [ "$bg_s" = "$2" ]
}

# bg_tied DIR: succeed when the process group recorded in DIR/meta.json can
# be tied to the job, so that it is safe to signal: same boot, and the pid
# has not been handed to an unrelated process that leads a group of its own.
bg_tied() {
	bg_meta "$1" || return 1
	[ "$bg_w" -gt 1 ] || return 1
	[ -z "$bg_boot" ] || [ "$bg_b" = "$bg_boot" ] || return 1
	bg_proc "$bg_w"
	if [ -n "$bg_s" ] && [ "$bg_s" != "$bg_st" ] && [ "$bg_pg" = "$bg_w" ]; then
		return 1
	fi
	return 0
}

# bg_running DIR: succeed while the wrapper of the job in DIR is alive.
bg_running() {
	bg_meta "$1" || return 1
	bg_exit "$1" && return 1
	[ -z "$bg_boot" ] || [ "$bg_b" = "$bg_boot" ] || return 1
	bg_proc "$bg_w"
	[ -n "$bg_s" ] && [ "$bg_s" = "$bg_st" ]
}

# bg_busy DIR: succeed while any process of the job in DIR is alive: its
# wrapper, or one that bg_live finds in the host's scan (made on the first
# call: a job with no live process at that moment can get none later).
bg_busy() {
	bg_running "$1" && return 0
	bg_live "$1"
	[ "$bg_lc" -gt 0 ]
}

# bg_scan: look at the host's processes once. Sets bg_pgs (1: the scan is
# made), bg_g_PGID for each process group with live (not zombie) members,
# "PID,PID,...", and bg_pm to the method: proc (/proc: groups and
# environments) or ps (groups only). On /proc it reads only the stat
# files (one grep, one awk, whatever the number of processes); the
# environments are read later, by bg_scanenv, and only of the processes
# started since the job bg_live looks at: one started before cannot be
# its escapee. grep, not cat, reads the stat files: GNU cat maps and
# unmaps a 128 KiB buffer for each file, four to six times slower
# (docs/benchmarks.md). What the scan found is kept in variables named
# after the group (and, by bg_scanenv, the job id) that awk writes and the
# shell evaluates: looking one up costs the same among 20 processes as
# among 2,000, where cutting it out of one long string (a pattern that
# starts with *) took the shells time that grows with the square of its
# length, a third of a second at 2,000 processes.
bg_scan() {
	# Those of the last scan go first: a group gone since must not stay.
	# shellcheck disable=SC2086 # the names are words on purpose
	[ -z "${bg_snames-}" ] || unset $bg_snames
	bg_snames= bg_since= bg_sext=0 bg_blanks=' ' bg_wscan=
	# One program for both ways; on /proc it keeps, for bg_scanenv, each
	# process's pid, start and group (bg_pold).
	# shellcheck disable=SC2016 # an awk program, not expanded
	bg_sa='
		m == "proc" {
			r = $0; sub(/.*\) /, "", r); split(r, f, " ")
			if (f[1] == "Z" || f[1] == "X") next
			g[f[3]] = g[f[3]] "," $1
			o = o " " $1 ":" f[20] ":" f[3]
			next
		}
		$3 !~ /^Z/ { g[$2] = g[$2] "," $1 }
		END {
			for (x in g) if (x ~ /^[0-9]+$/) {
				print "bg_g_" x "=" substr(g[x], 2)
				n = n " bg_g_" x
			}
			print "bg_snames='"'"'" n "'"'"'"
			print "bg_pold='"'"'" o " '"'"'"
		}'
	if [ -r /proc/self/stat ]; then
		bg_pm=proc
		bg_mx=$(grep -a -h -s '' /proc/[0-9]*/stat 2>/dev/null | awk -v m=proc "$bg_sa")
	else
		bg_pm='ps'
		bg_mx=$(ps -A -o pid= -o pgid= -o stat= 2>/dev/null | awk -v m=ps "$bg_sa")
	fi
	# (An awk that printed nothing leaves no process unread behind.)
	bg_pold=' '
	eval "$bg_mx"
	bg_pgs=1
}

# bg_scanenv SINCE: read the environments of the processes of the scan
# (bg_pold, " PID:START:PGID ...", those not read yet) started at or
# after SINCE (clock ticks since boot; 0: all), and add those that carry
# a job id (the wrapper exports BGJOB_JOB_ID) to bg_e_ID (the id's "-" a
# "_"), " PID:START:PGID ...". bg_since is the oldest start read so far.
# The third call reads all that is left: a look at many jobs (ls, stop,
# prune) reads the environments at most three times, not once per job.
# One awk, and a grep for each 1,000 processes read. For bg_leftovers
# (bg_lrescan set) it also adds to bg_blanks, " PID:START ...", the
# processes whose environment read empty: a process in the middle of an
# exec (the kernel shows its new environment only once the exec has laid
# it out), or one that has none; such a one cannot be told not to be a
# job's (a grep more for each 1,000).
bg_scanenv() {
	bg_sext=$((bg_sext + 1))
	bg_sx=$1
	[ "$bg_sext" -lt 3 ] || bg_sx=0
	bg_mx=$(printf '%s\n' $bg_pold | bg_pat="BGJOB_JOB_ID=$bg_idre" awk -F: -v s="$bg_sx" -v bl="${bg_lrescan-}" '
		$1 == "" { next }
		$2 + 0 < s + 0 { k = k " " $0; next }
		{ n++; p[n] = $1; st[$1] = $2; pg[$1] = $3 }
		END {
			for (i = 1; i <= n; i += 1000) {
				f = ""
				for (j = i; j <= n && j < i + 1000; j++) f = f " /proc/" p[j] "/environ"
				c = "grep -a -o -s -H -e \"$bg_pat\"" f
				while ((c | getline e) > 0) {
					q = e; sub(/^\/proc\//, "", q); sub(/\/.*/, "", q)
					d = e; sub(/.*BGJOB_JOB_ID=/, "", d); sub(/-/, "_", d)
					if (d !~ /^[0-9a-zT_]+$/ || q !~ /^[0-9]+$/) continue
					o[d] = o[d] " " q ":" st[q] ":" pg[q]
				}
				close(c)
				if (bl != "") {
					c = "grep -a -L -s -e \"\"" f
					while ((c | getline e) > 0) {
						q = e; sub(/^\/proc\//, "", q); sub(/\/.*/, "", q)
						b = b " " q ":" st[q]
					}
					close(c)
				}
			}
			for (d in o) {
				print "bg_e_" d "=\"${bg_e_" d "-}\"'"'"'" o[d] "'"'"'"
				m = m " bg_e_" d
			}
			print "bg_pold='"'"'" k " '"'"'"
			print "bg_blanks=\"$bg_blanks\"'"'"'" b " '"'"'"
			print "bg_snames=\"$bg_snames\"'"'"'" m "'"'"'"
		}')
	bg_pold=' '
	eval "$bg_mx"
	bg_since=$bg_sx
}

# bg_live DIR: set bg_lp to the live processes of the job in DIR but its
# wrapper and this script, " PID PID ...", and bg_lc to their number, from
# the host's scan (bg_scan, made on the first call): bg_lgm the members of
# its process group, when the group can be tied to the job, and, on Linux,
# bg_lesc those outside it whose environment carries the job's id (a
# setsid or double-forked daemon), of the same user, started after the job
# on the same boot; and, on a PTY job, the other members of the process
# group of the terminal's shell. A process that cleared its environment
# and left those groups is not found.
bg_live() {
	bg_lp= bg_lc=0 bg_lgm= bg_lesc=
	# A look (bg_recorded 1: status, ls, wait) at an ended job that a look
	# recorded without processes (bg_leftovers) takes it at its word; stop,
	# rm and prune, which act on processes, always scan.
	# For stop, rm and prune the record says that the job's process group
	# was found empty after its wrapper had ended: the group is gone, and a
	# group of that id now (a process given the wrapper's pid that made a
	# group and left members in it, such as a daemon's double fork) is
	# another's. Its processes that carry the job's id still count.
	bg_lend= bg_lgone=
	if bg_exit "$1"; then
		if bg_line "$1/leftovers" && [ "$bg_l" = 0 ]; then
			if [ "${bg_recorded-}" = 1 ]; then
				bg_pm=proc
				return 0
			fi
			bg_lgone=1
		elif [ "${bg_recorded-}" = 1 ]; then
			bg_lend=1
		fi
	fi
	if [ -z "${bg_pgs-}" ]; then
		bg_scan
	elif [ -z "${bg_lrescan-}" ]; then
		# The scan was made before the job was seen ended: it proves
		# nothing about what is left (bg_leftovers scans again).
		[ -z "$bg_lend" ] || bg_lend=late
	fi
	# The id first: listing the group's members below sets the arguments.
	bg_lid=${1##*/} bg_ldir=$1
	bg_ltied=
	if [ -z "$bg_lgone" ] && bg_tied "$1"; then
		bg_ltied=1
	elif bg_meta "$1"; then
		[ -z "$bg_boot" ] || [ "$bg_b" = "$bg_boot" ] || return 0
	else
		# An unreadable job (meta.json missing, cut short or not bgjob's):
		# no start to go by, but its command's processes still carry its
		# id: all of them count, whenever they started; and its wrapper,
		# found by its command line (bg_wrapperof), ties its group, for a
		# command that cleared its environment.
		bg_w= bg_st= bg_b=
		if [ -z "$bg_lgone" ] && bg_wrapperof "$1"; then bg_ltied=1; fi
	fi
	# The environments of the processes started since the job (all, when
	# its start is unknown), unless read already.
	if [ "$bg_pm" = proc ]; then
		bg_lx=0
		case $bg_st in '' | *[!0-9]*) ;; *) bg_lx=$bg_st ;; esac
		if [ -z "$bg_since" ] || [ "$bg_lx" -lt "$bg_since" ]; then bg_scanenv "$bg_lx"; fi
	fi
	if [ -n "$bg_ltied" ]; then
		bg_lx=
		case $bg_w in '' | *[!0-9]*) ;; *) eval "bg_lx=\${bg_g_$bg_w-}" ;; esac
		bg_oifs=$IFS
		IFS=,
		set -- $bg_lx
		IFS=$bg_oifs
		for bg_lx in "$@"; do
			[ "$bg_lx" = "$bg_w" ] || [ "$bg_lx" = $$ ] || bg_lgm="$bg_lgm $bg_lx"
		done
	fi
	bg_lx=
	if bg_isid "$bg_lid"; then eval "bg_lx=\${bg_e_${bg_lid%-*}_${bg_lid#*-}-}"; fi
	for bg_le in $bg_lx; do
		bg_lq=${bg_le%%:*}
		bg_le=${bg_le#*:}
		bg_ls=${bg_le%%:*}
		if [ -n "$bg_ltied" ] && [ "${bg_le#*:}" = "$bg_w" ]; then continue; fi
		if [ "$bg_lq" = "$bg_w" ] || [ "$bg_lq" = $$ ] || [ ! -O "/proc/$bg_lq" ]; then continue; fi
		case $bg_st in '' | *[!0-9]*) ;; *) [ "$bg_ls" -ge "$bg_st" ] || continue ;; esac
		case "$bg_lesc " in *" $bg_lq "*) continue ;; esac
		bg_lesc="$bg_lesc $bg_lq"
	done
	# A PTY job's command runs in the process group of the terminal's
	# shell, "job.sh pty", whose pid and start time exit_code.pty holds
	# while the command runs: its other members are the job's too, each
	# signalled alone (the shell must live to record the status).
	if [ -n "$bg_ltied" ] && bg_line "$bg_ldir/exit_code.pty"; then
		case $bg_l in 'run '[0-9]*' '[0-9]*)
			bg_lx=${bg_l#run }
			bg_lq=${bg_lx%% *}
			bg_ls=${bg_lx#* }
			case $bg_lq in *[!0-9]*) bg_lq=0 ;; esac
			bg_lx=
			eval "bg_lx=\${bg_g_$bg_lq-}"
			case $bg_lx in ?*)
				if [ "$(sed 's/.*) //' "/proc/$bg_lq/stat" 2>/dev/null | cut -d' ' -f20)" = "$bg_ls" ]; then
					bg_oifs=$IFS
					IFS=,
					set -- $bg_lx
					IFS=$bg_oifs
					for bg_lx in "$@"; do
						if [ "$bg_lx" = "$bg_lq" ] || [ "$bg_lx" = $$ ]; then continue; fi
						case "$bg_lesc " in *" $bg_lx "*) continue ;; esac
						bg_lesc="$bg_lesc $bg_lx"
					done
				fi
				;;
			esac
			;;
		esac
	fi
	bg_lp=$bg_lgm$bg_lesc
	# shellcheck disable=SC2086 # the pids are words on purpose
	set -- $bg_lp
	bg_lc=$#
	[ "$bg_lc" = 0 ] && [ "$bg_pm" = proc ] && [ -z "${bg_lrescan-}" ] || return 0
	case $bg_lend in
	1) bg_lun1=${bg_lun1-}$bg_ldir$bg_nl ;;
	late) bg_lun2=${bg_lun2-}$bg_ldir$bg_nl ;;
	esac
}

# bg_wrapperof DIR: set bg_w to the pid of a live process of this user
# whose command line is "/bin/sh DIR/job.sh run ..." (the wrapper of the
# job in DIR) or "/bin/sh DIR/job.sh pty" (its terminal's shell),
# whatever its meta.json says, DIR/job.sh spelled as given or naming the
# same file (a root reached through another path); a viewer of the file
# (tail -f DIR/job.sh) is not it. Fail when there is none (or DIR holds
# a newline). The command lines of the host's processes are read once a
# scan (bg_scan), by one grep for the arguments that end in ID/job.sh,
# kept by id (bg_c_ID: pids); each of those is checked whole. Without
# /proc, by one ps (bg_wrapperps).
bg_wrapperof() {
	bg_w=
	bg_isid "${1##*/}" || return 1
	case $1 in *"$bg_nl"*) return 1 ;; esac
	if [ ! -r /proc/self/stat ]; then
		bg_wrapperps "$1"
		return
	fi
	if [ -z "${bg_wscan-}" ]; then
		bg_wscan=1
		bg_mx=$(grep -a -o -s -H -e "/$bg_idre/job\\.sh" /proc/[0-9]*/cmdline 2>/dev/null | awk '
			{
				q = $0; sub(/^\/proc\//, "", q); sub(/\/.*/, "", q)
				d = $0; sub(/\/job\.sh$/, "", d); sub(/.*\//, "", d); sub(/-/, "_", d)
				if (d !~ /^[0-9a-zT_]+$/ || q !~ /^[0-9]+$/) next
				print "bg_c_" d "=\"${bg_c_" d "-} " q "\""
				m = m " bg_c_" d
			}
			END { print "bg_snames=\"$bg_snames\"'"'"'" m "'"'"'" }')
		eval "$bg_mx"
	fi
	bg_wx=${1##*/}
	eval "bg_wx=\${bg_c_${bg_wx%-*}_${bg_wx#*-}-}"
	for bg_wp in $bg_wx; do
		[ -O "/proc/$bg_wp" ] || continue
		# Its arguments a line each (a newline within one made \001).
		bg_wc=$(tr '\n\0' '\001\n' <"/proc/$bg_wp/cmdline" 2>/dev/null) || continue
		case $bg_wc in "/bin/sh$bg_nl"*"$bg_nl"*) ;; *) continue ;; esac
		bg_wc=${bg_wc#*"$bg_nl"}
		bg_wa=${bg_wc%%"$bg_nl"*}
		bg_wc=${bg_wc#*"$bg_nl"}
		case ${bg_wc%%"$bg_nl"*} in run | pty) ;; *) continue ;; esac
		# -ef is not POSIX; bash, dash and busybox sh have it (tested), and
		# a shell without it fails the test: the same path still matches.
		# shellcheck disable=SC3013
		if [ "$bg_wa" = "$1/job.sh" ] || [ "$bg_wa" -ef "$1/job.sh" ]; then
			bg_w=$bg_wp
			return 0
		fi
	done
	return 1
}

# bg_finishing DIR: wait while the wrapper of the job in DIR (on this
# boot, the live process of its recorded start time) runs, a tenth of a
# second at most; succeed when it was running.
bg_finishing() {
	bg_meta "$1" || return 1
	[ -z "$bg_boot" ] || [ "$bg_b" = "$bg_boot" ] || return 1
	bg_lw=0
	while bg_proc "$bg_w" && [ -n "$bg_s" ] && [ "$bg_s" = "$bg_st" ]; do
		[ "$bg_lw" -lt 10 ] || return 0
		bg_nap 10
		bg_lw=$((bg_lw + 1))
	done
	[ "$bg_lw" -gt 0 ]
}

# bg_ended DIR: succeed when the job in DIR has ended: exit_code written,
# or its meta.json read and its wrapper gone (lost).
bg_ended() {
	bg_exit "$1" && return 0
	bg_meta "$1" || return 1
	! bg_running "$1"
}
