# bgjob shell library: functions shared by every generated script.
# Variables are prefixed bg_ because POSIX sh has no locals, and each
# function names its temporaries with a prefix of its own (bg_m* in
# bg_members, ...), so that a caller's loop variables survive the call.

# bg_line FILE: set bg_l to the first line of FILE; fail when FILE is missing.
bg_line() {
	bg_l=
	[ -e "$1" ] || return 1
	IFS= read -r bg_l 2>/dev/null <"$1" || :
	return 0
}

# bg_proc PID: set bg_s to the start time of process PID and bg_pg to its
# process group ("" when there is no such live process).
bg_proc() {
	bg_s= bg_pg=
	if [ -r /proc/self/stat ]; then
		IFS= read -r bg_s 2>/dev/null <"/proc/$1/stat" || { bg_s=; return 0; }
		bg_s=${bg_s##*) }
		set -- $bg_s
		if [ "$1" = Z ] || [ "$1" = X ]; then bg_s=; return 0; fi
		bg_pg=$3 bg_s=${20}
	else
		bg_s=$(ps -o stat= -o pgid= -o lstart= -p "$1" 2>/dev/null) || { bg_s=; return 0; }
		set -- $bg_s
		case $1 in Z*|'') bg_s=; return 0 ;; esac
		bg_pg=$2
		shift 2
		bg_s="$*"
	fi
}

# bg_members PGID EXCLUDE...: set bg_ms to the live processes of group PGID,
# leaving out the pids given after it.
bg_members() {
	bg_ms= bg_g=$1
	shift
	bg_ex=" $* "
	if [ -r /proc/self/stat ]; then
		for bg_mf in /proc/[0-9]*/stat; do
			IFS= read -r bg_mx 2>/dev/null <"$bg_mf" || continue
			bg_mx=${bg_mx##*) }
			set -- $bg_mx
			[ "$3" = "$bg_g" ] || continue
			[ "$1" = Z ] && continue
			bg_mp=${bg_mf#/proc/}
			bg_mp=${bg_mp%/stat}
			case $bg_ex in *" $bg_mp "*) continue ;; esac
			bg_ms="$bg_ms $bg_mp"
		done
	else
		bg_mx=$(ps -A -o pid= -o pgid= -o stat= 2>/dev/null)
		set -f
		set -- $bg_mx
		set +f
		while [ $# -ge 3 ]; do
			if [ "$2" = "$bg_g" ]; then
				case $3 in Z*) ;; *) case $bg_ex in *" $1 "*) ;; *) bg_ms="$bg_ms $1" ;; esac ;; esac
			fi
			shift 3
		done
	fi
}

# bg_meta DIR: read DIR/meta.json and set bg_w (the wrapper's pid, also the
# job's process group), bg_st (its start time) and bg_b (the boot id).
bg_meta() {
	bg_line "$1/meta.json" && bg_pick
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

# bg_kill SIGNAL PID...: send SIGNAL; a negative PID names a group.
bg_kill() {
	bg_k=$1
	shift
	kill -s "$bg_k" -- "$@" 2>/dev/null || kill -s "$bg_k" "$@" 2>/dev/null
}

# bg_nap: sleep a tenth of a second (a whole one where sleep takes integers only).
bg_nap() {
	sleep 0.1 2>/dev/null || sleep 1
}

# bg_stop DIR SIGNAL GRACE REASON SELF [nowait]: stop the job in DIR. Record
# the stop (unless the job has already ended), send SIGNAL to its group,
# wait up to GRACE tenths of a second, then SIGKILL what is left, one by
# one; return once the group is gone and the wrapper has recorded the
# status. The wrapper traps the signals sent to the group and is never sent
# KILL, so it outlives the command and records its real status. SELF is
# left out. With nowait (the wrapper's own timer), do not wait for that
# record. Sets bg_o to what happened.
bg_stop() {
	bg_sd=$1 bg_sig=$2 bg_sn=$3 bg_r=$4 bg_self=$5 bg_nowait=${6-}
	if ! bg_tied "$bg_sd"; then
		bg_o=untied
		return 0
	fi
	if [ ! -e "$bg_sd/exit_code" ] && [ ! -e "$bg_sd/stop" ]; then
		printf '%s %s\n' "$bg_r" "$bg_sig" >"$bg_sd/stop.tmp" && mv -f "$bg_sd/stop.tmp" "$bg_sd/stop"
	fi
	bg_members "$bg_w" "$bg_w" "$bg_self"
	# A wrapper that has only just started may not have forked its command.
	bg_si=0
	while [ -z "$bg_ms" ] && [ "$bg_si" -lt 20 ] && bg_running "$bg_sd"; do
		bg_nap
		bg_members "$bg_w" "$bg_w" "$bg_self"
		bg_si=$((bg_si + 1))
	done
	if [ -z "$bg_ms" ]; then
		bg_o=gone
	else
		bg_o=stopped
		case $bg_sig in
		TERM | INT | QUIT | HUP | USR1 | USR2 | ALRM) bg_kill "$bg_sig" "-$bg_w" ;;
		*) bg_kill "$bg_sig" $bg_ms ;;
		esac
		bg_si=0
		while [ "$bg_si" -lt "$bg_sn" ]; do
			bg_members "$bg_w" "$bg_w" "$bg_self"
			[ -n "$bg_ms" ] || break
			bg_nap
			bg_si=$((bg_si + 1))
		done
		bg_si=0
		while [ "$bg_si" -lt 100 ]; do
			bg_members "$bg_w" "$bg_w" "$bg_self"
			[ -n "$bg_ms" ] || break
			bg_kill KILL $bg_ms
			bg_nap
			bg_si=$((bg_si + 1))
		done
	fi
	[ -z "$bg_nowait" ] || return 0
	bg_si=0
	while [ ! -e "$bg_sd/exit_code" ] && [ ! -s "$bg_sd/exit_code.tmp" ] && [ "$bg_si" -lt 50 ]; do
		bg_proc "$bg_w"
		[ -n "$bg_s" ] && [ "$bg_s" = "$bg_st" ] || break
		bg_nap
		bg_si=$((bg_si + 1))
	done
}

# bg_pick: from the meta.json line in bg_l, set bg_w, bg_st and bg_b.
bg_pick() {
	bg_w= bg_st= bg_b=
	case $bg_l in *'"pid":'*) ;; *) return 1 ;; esac
	bg_w=${bg_l##*\"pid\":}
	bg_w=${bg_w%%[!0-9]*}
	bg_st=${bg_l##*\"proc_start\":\"}
	bg_st=${bg_st%%\"*}
	bg_b=${bg_l##*\"boot_id\":\"}
	bg_b=${bg_b%%\"*}
	[ -n "$bg_w" ]
}

# bg_obs DIR: print the observation records of the job in DIR; fail,
# printing nothing, when its meta.json is gone (the job was just removed).
# The wrapper is looked at before exit_code is read, so a job that ends in
# between is seen as ended, never as lost. A complete exit_code.tmp counts
# too: the wrapper's mv may have been killed by a stop after it wrote it.
bg_obs() {
	bg_line "$1/meta.json" || return 1
	printf 'J\t%s\nM\t%s\n' "$1" "$bg_l"
	if bg_pick; then
		bg_proc "$bg_w"
		printf 'P\t%s\n' "$bg_s"
	fi
	if bg_line "$1/exit_code"; then
		printf 'X\t%s\n' "$bg_l"
	elif [ -e "$1/exit_code.tmp" ] && IFS= read -r bg_l 2>/dev/null <"$1/exit_code.tmp"; then
		printf 'X\t%s\n' "$bg_l"
	fi
	if bg_line "$1/ended_at"; then printf 'T\t%s\n' "$bg_l"; fi
	if bg_line "$1/stop"; then printf 'S\t%s\n' "$bg_l"; fi
	if bg_line "$1/stdout.dropped"; then printf 'Y\tstdout\t%s\n' "$bg_l"; fi
	if bg_line "$1/stderr.dropped"; then printf 'Y\tstderr\t%s\n' "$bg_l"; fi
	return 0
}

# bg_running DIR: succeed while the wrapper of the job in DIR is alive.
bg_running() {
	bg_meta "$1" || return 1
	[ -e "$1/exit_code" ] && return 1
	[ -z "$bg_boot" ] || [ "$bg_b" = "$bg_boot" ] || return 1
	bg_proc "$bg_w"
	[ -n "$bg_s" ] && [ "$bg_s" = "$bg_st" ]
}

# bg_busy DIR: succeed while any process of the job in DIR is alive.
bg_busy() {
	bg_running "$1" && return 0
	bg_tied "$1" || return 1
	bg_members "$bg_w"
	[ -n "$bg_ms" ]
}

# bg_find WSDIR REF: set bg_d to the job directory REF names in WSDIR: the
# job with that id, else the newest job with that name: the one the name
# index WSDIR/.names/REF names, else the newest 20 jobs are read by the
# shell and older ones searched with grep.
bg_find() {
	bg_d=
	if [ -e "$1/$2/meta.json" ]; then
		bg_d=$1/$2
		return 0
	fi
	bg_fw=$1 bg_fn=$2
	# The name index holds the id of the newest job launched with the name;
	# the job's own meta.json must agree, else the directories are searched.
	if bg_line "$1/.names/$2"; then
		case $bg_l in
		'' | *[!0-9a-zT-]*) ;;
		*)
			bg_fx=$1/$bg_l
			if bg_line "$bg_fx/meta.json"; then
				case $bg_l in *"\"name\":\"$bg_fn\""*)
					bg_d=$bg_fx
					return 0
					;;
				esac
			fi
			;;
		esac
	fi
	set -- "$1"/[0-9]*
	bg_fi=$# bg_fk=0
	while [ "$bg_fi" -gt 0 ] && [ "$bg_fk" -lt 20 ]; do
		eval "bg_fx=\${$bg_fi}"
		if bg_line "$bg_fx/meta.json"; then
			case $bg_l in *"\"name\":\"$bg_fn\""*)
				bg_d=$bg_fx
				return 0
				;;
			esac
		fi
		bg_fi=$((bg_fi - 1))
		bg_fk=$((bg_fk + 1))
	done
	[ "$bg_fi" -gt 0 ] || return 1
	# Older jobs: let grep read their meta.json, the newest match last.
	bg_fx=$(printf '%s\0' "$bg_fw"/[0-9]*/meta.json | xargs -0 grep -l -F -e "\"name\":\"$bg_fn\"" 2>/dev/null | tail -n 1)
	[ -n "$bg_fx" ] || return 1
	bg_d=${bg_fx%/meta.json}
}

# bg_err KIND MESSAGE: report an error record and end the script.
bg_err() {
	printf 'E\t%s\t%s\n' "$1" "$2"
	bg_end
	exit 0
}

# bg_end: write the end marker.
bg_end() {
	printf '\n@@bgjob-end@@\n'
}

# bg_readroot: check the root before reading from it.
bg_readroot() {
	if [ -L "$bg_root" ]; then bg_err root "root $bg_root is a symbolic link"; fi
	if [ -d "$bg_root" ] && [ ! -O "$bg_root" ]; then bg_err root "root $bg_root is owned by another user"; fi
	if [ -n "${bg_ws-}" ] && [ -L "$bg_ws" ]; then bg_err root "workspace $bg_ws is a symbolic link"; fi
}

# bg_makeroot: create the root (mode 0700) or check that it is safe.
bg_makeroot() {
	bg_readroot
	if [ ! -d "$bg_root" ]; then
		mkdir -p -m 700 "$bg_root" 2>/dev/null || bg_err root "cannot create root $bg_root"
	fi
	[ -O "$bg_root" ] || bg_err root "root $bg_root is owned by another user"
	# The mode is checked the first time a root is used; .bgjob-root, a
	# file only its owner can have created there, records that it passed.
	if [ ! -O "$bg_root/.bgjob-root" ]; then
		case $(ls -ld "$bg_root" 2>/dev/null) in
		d????w* | d???????w*) bg_err root "root $bg_root is writable by other users (want mode 0700)" ;;
		esac
		: >"$bg_root/.bgjob-root"
	fi
}

# bg_chunk STREAM FILE FROM TO: print a D record and bytes FROM..TO of FILE.
# When the job has ended (bg_live=0) and TO is the file's end (bg_sz), one
# tail reads the range from the end.
bg_chunk() {
	printf 'D\t%s\t%s\t%s\n' "$1" "$3" $(($4 - $3))
	[ "$4" -gt "$3" ] || return 0
	if [ "${bg_live-1}" = 0 ] && [ "$4" = "${bg_sz-}" ]; then
		tail -c $(($4 - $3)) "$2"
	else
		tail -c +$(($3 + 1)) "$2" | head -c $(($4 - $3))
	fi
}

# bg_utf8end FILE SIZE: set bg_to to SIZE less an incomplete UTF-8 sequence
# at the end of the first SIZE bytes of FILE.
bg_utf8end() {
	bg_to=$2
	bg_k=3
	[ "$2" -ge 3 ] || bg_k=$2
	[ "$bg_k" -gt 0 ] || return 0
	set -- $(tail -c +$(($2 - bg_k + 1)) "$1" | head -c "$bg_k" | od -An -tu1)
	bg_have=0
	while [ $# -gt 0 ]; do
		eval "bg_c=\${$#}"
		bg_have=$((bg_have + 1))
		if [ "$bg_c" -lt 128 ]; then return 0; fi
		if [ "$bg_c" -ge 192 ]; then
			bg_need=2
			[ "$bg_c" -lt 224 ] || bg_need=3
			[ "$bg_c" -lt 240 ] || bg_need=4
			[ "$bg_have" -ge "$bg_need" ] || bg_to=$((bg_to - bg_have))
			return 0
		fi
		# drop the last positional parameter
		bg_a=
		bg_uj=1
		for bg_ux in "$@"; do
			[ "$bg_uj" -lt $# ] && bg_a="$bg_a $bg_ux"
			bg_uj=$((bg_uj + 1))
		done
		set -- $bg_a
	done
}

# bg_rm DIR FORCE GRACE: remove the job in DIR, printing an R record, or an
# E record saying why not. A job with live processes is refused unless
# FORCE is 1, which stops it first. Only the files bgjob writes are deleted,
# then the directory; links are never followed.
bg_rm() {
	if [ -L "$1" ] || [ ! -d "$1" ]; then printf 'E\tnotfound\t%s\n' "${1##*/}"; return 0; fi
	case ${1%/*} in "$bg_root"/*) ;; *) printf 'E\toutside\t%s\n' "$1"; return 0 ;; esac
	if bg_busy "$1"; then
		if [ "$2" != 1 ]; then
			printf 'E\tbusy\t%s\n' "${1##*/}"
			return 0
		fi
		bg_stop "$1" TERM "$3" stop $$
	fi
	# Anything bgjob did not write stays, and so does the whole job.
	for bg_rx in "$1"/* "$1"/.[!.]* "$1"/..?*; do
		[ -e "$bg_rx" ] || [ -L "$bg_rx" ] || continue
		case ${bg_rx##*/} in
		meta.json | meta.json.tmp | job.sh | stdout.log | stderr.log | exit_code | exit_code.tmp | \
			ended_at | stop | stop.tmp | stdin | stdin.keeper | cursor-* | std???.dropped | std???.dropped.tmp) ;;
		*)
			printf 'E\tnotempty\t%s\n' "$1"
			return 0
			;;
		esac
	done
	rm -f "$1/meta.json" "$1/meta.json.tmp" "$1/job.sh" "$1/stdout.log" "$1/stderr.log" \
		"$1/exit_code" "$1/exit_code.tmp" "$1/ended_at" "$1/stop" "$1/stop.tmp" \
		"$1/stdin" "$1/stdin.keeper" "$1"/cursor-* "$1"/std???.dropped "$1"/std???.dropped.tmp
	if rmdir "$1" 2>/dev/null; then printf 'R\t%s\n' "$1"; else printf 'E\tnotempty\t%s\n' "$1"; fi
}

# bg_autoprune KEEP BEFORE MAX: remove up to MAX of the oldest ended jobs
# of the workspace that are beyond the newest KEEP or started before the id
# prefix BEFORE. Jobs whose meta.json cannot be read, or that still have
# live processes, are left alone.
bg_autoprune() {
	bg_keep=$1 bg_before=$2 bg_max=$3
	set -- "$bg_ws"/[0-9]*
	bg_an=$# bg_aj=0 bg_gone=0
	for bg_ax in "$@"; do
		bg_aj=$((bg_aj + 1))
		[ "$bg_gone" -lt "$bg_max" ] || break
		if [ $((bg_an - bg_aj)) -lt "$bg_keep" ] && ! [ "${bg_ax##*/}" \< "$bg_before" ]; then break; fi
		bg_meta "$bg_ax" || continue
		bg_busy "$bg_ax" && continue
		bg_rm "$bg_ax" 0 0 >/dev/null
		bg_gone=$((bg_gone + 1))
	done
}
