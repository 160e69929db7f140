# time.sh: time on the host. Naps (bg_nap), the clock of a wait
# (bg_deadline: a wait is measured by the clock, never by counting naps),
# and dates: a UTC stamp to seconds since 1970, the host's clock.
#
# One unit for durations: milliseconds, in every variable Go writes
# (bg_limit, bg_grace, bg_rgrace, bg_timeout) and every argument (bg_nap,
# bg_deadline, bg_stop's GRACE); bg_secs writes them as sleep(1) takes
# them. Dates and ages are whole seconds since 1970 (bg_epoch, bg_now,
# bg_age), the resolution of date(1) everywhere.

# bg_secs MS: set bg_sec to MS milliseconds in seconds, as sleep(1) takes
# them: 1500 is 1.5, 20 is 0.02, 2000 is 2.
bg_secs() {
	bg_sec=$((1000 + $1 % 1000))
	bg_sec=${bg_sec#1}
	bg_sec=${bg_sec%0}
	bg_sec=${bg_sec%0}
	bg_sec=${bg_sec%0}
	bg_sec=$(($1 / 1000))${bg_sec:+.$bg_sec}
}

# bg_nap [MS]: sleep a tenth of a second, or MS milliseconds (a whole
# second where sleep takes integers only; not when a signal ended the
# sleep early, as the wrapper's TERM to its timer's group does).
# shellcheck disable=SC2120 # the callers that pass MS are in other files
bg_nap() {
	bg_secs "${1:-100}"
	sleep "$bg_sec" 2>/dev/null || [ $? -gt 128 ] || sleep 1
}

# bg_deadline MS: start the clock of a wait, a sleep of MS milliseconds
# in the background that wakes this shell (USR1, trapped) when
# it ends; bg_intime succeeds until then, and bg_dlnap naps a tenth of a
# second, less when the clock ends meanwhile. A wait is measured by this
# clock, never by counting naps, so it takes as long as it says however
# long each look takes. Ended early (kill "$bg_dl"), it ends its sleep.
bg_deadline() {
	bg_dlup=
	trap 'bg_dlup=1' USR1
	bg_dlme=$$
	(
		trap 'kill "$bg_dlx" 2>/dev/null; exit 0' TERM
		bg_secs "$1"
		sleep "$bg_sec" &
		bg_dlx=$!
		wait "$bg_dlx" && kill -s USR1 "$bg_dlme"
	) >/dev/null 2>&1 &
	bg_dl=$!
	bg_proc "$bg_dl"
	bg_dls=$bg_s
}

# bg_intime: succeed while the clock of bg_deadline runs.
bg_intime() {
	[ -z "$bg_dlup" ] || return 1
	bg_proc "$bg_dl"
	[ -n "$bg_s" ] && [ "$bg_s" = "$bg_dls" ]
}

# bg_dlnap [MS]: bg_nap [MS], cut short when the clock of bg_deadline ends
# (a trapped signal ends a wait). One process, the sleep itself (a
# function in the background would be a subshell more): a sleep that
# refuses the fraction (it exits 1 to 128, not ended by a signal) is
# followed by a whole second's.
bg_dlnap() {
	bg_secs "${1:-100}"
	for bg_dlsec in "$bg_sec" 1; do
		sleep "$bg_dlsec" >/dev/null 2>&1 &
		bg_dln=$! bg_dlr=0
		[ -n "${bg_dlup-}" ] || wait "$bg_dln" || bg_dlr=$?
		kill "$bg_dln" 2>/dev/null
		[ "$bg_dlr" -gt 0 ] && [ "$bg_dlr" -le 128 ] && [ -z "${bg_dlup-}" ] || return 0
	done
}

# bg_epoch STAMP: set bg_ep to the seconds since 1970 of STAMP, a UTC time
# written as in a job id (YYYYmmddTHHMMSS...) or in ended_at
# (YYYY-mm-ddTHH:MM:SSZ, or with a fraction of a second, YYYY-mm-ddTHH:MM:SS.fffZ:
# its whole seconds); fail on anything else. Shell arithmetic only, so
# that it works with any date(1).
bg_epoch() {
	bg_ep=
	case $1 in
	[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].*[0-9]Z)
		bg_ef=${1#*.}
		case ${bg_ef%Z} in *[!0-9]*) return 1 ;; esac
		bg_epoch "${1%%.*}Z"
		return
		;;
	[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z)
		bg_oifs=$IFS
		IFS=-T:Z
		set -- $1
		IFS=$bg_oifs
		;;
	[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]T[0-9][0-9][0-9][0-9][0-9][0-9]*)
		bg_ed=${1%%T*} bg_et=${1#*T}
		bg_et=${bg_et%"${bg_et#??????}"}
		set -- "${bg_ed%????}" "${bg_ed#????}" "$bg_et"
		set -- "$1" "${2%??}" "${2#??}" "${3%????}" "${3#??}" "${3#????}"
		set -- "$1" "$2" "$3" "$4" "${5%??}" "$6"
		;;
	*) return 1 ;;
	esac
	bg_ey=$1 bg_em=${2#0} bg_eday=${3#0}
	[ "$bg_em" -gt 2 ] || bg_ey=$((bg_ey - 1))
	if [ "$bg_em" -gt 2 ]; then bg_em=$((bg_em - 3)); else bg_em=$((bg_em + 9)); fi
	bg_eera=$((bg_ey / 400))
	bg_ey=$((bg_ey - bg_eera * 400))
	bg_eday=$((bg_eera * 146097 + bg_ey * 365 + bg_ey / 4 - bg_ey / 100 + (153 * bg_em + 2) / 5 + bg_eday - 1 - 719468))
	bg_ep=$((bg_eday * 86400 + ${4#0} * 3600 + ${5#0} * 60 + ${6#0}))
}

# bg_stamp: set bg_ts to the host's clock as ended_at holds it: UTC,
# YYYY-mm-ddTHH:MM:SS.fffZ (milliseconds, as started_at) from the shell's
# EPOCHREALTIME (bash 5, busybox ash: no process started) or date(1)
# where it knows %N, else to the second (busybox and BSD dates print it
# as it is); fail, bg_ts "", when date prints no time at all. A shell's
# EPOCHREALTIME ignores an assignment; one that takes it (dash) had a
# plain variable from the environment, which is put back.
bg_stamp() {
	bg_ts= bg_tf=
	if [ -n "${EPOCHREALTIME-}" ]; then
		bg_ts=$EPOCHREALTIME
		EPOCHREALTIME=
		if [ -n "$EPOCHREALTIME" ]; then
			bg_ts=$EPOCHREALTIME
			bg_tf=${bg_ts#*[.,]}
			bg_ts=${bg_ts%%[.,]*}
			case $bg_ts in '' | *[!0-9]*) bg_ts= ;; *) bg_civil "$bg_ts" ;; esac
		else
			EPOCHREALTIME=$bg_ts
			bg_ts=
		fi
	fi
	if [ -z "$bg_ts" ]; then
		bg_ts=$(date -u '+%Y-%m-%dT%H:%M:%S.%N' 2>/dev/null) || bg_ts=
		bg_tf=${bg_ts#*.}
		bg_ts=${bg_ts%%.*}
	fi
	bg_stampof
}

# bg_mtime FILE: set bg_ts to the time FILE was last written, as bg_stamp
# writes it (date -r: GNU, busybox, BSD; the file system's clock, which
# counts in ticks of the kernel's); fail, bg_ts "", where date cannot
# tell.
bg_mtime() {
	bg_ts=$(date -u -r "$1" '+%Y-%m-%dT%H:%M:%S.%N' 2>/dev/null) || bg_ts=
	bg_tf=${bg_ts#*.}
	bg_ts=${bg_ts%%.*}
	bg_stampof
}

# bg_stampof: bg_stamp's end: bg_ts, a UTC time to the second, and bg_tf,
# its fraction, made into ended_at's form; fail, bg_ts "", when bg_ts is
# no such time.
bg_stampof() {
	case $bg_ts in
	[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]) ;;
	*)
		bg_ts=
		return 1
		;;
	esac
	case $bg_tf in
	[0-9][0-9][0-9]*) case $bg_tf in *[!0-9]*) ;; *) bg_ts=$bg_ts.${bg_tf%"${bg_tf#???}"} ;; esac ;;
	esac
	bg_ts=${bg_ts}Z
}

# bg_civil SECONDS: set bg_ts to SECONDS since 1970 as a UTC date,
# YYYY-mm-ddTHH:MM:SS (the inverse of bg_epoch; the days to a date as in
# Howard Hinnant's civil_from_days).
bg_civil() {
	bg_cz=$(($1 / 86400 + 719468))
	bg_cs=$(($1 % 86400))
	bg_cera=$((bg_cz / 146097))
	bg_cdoe=$((bg_cz - bg_cera * 146097))
	bg_cyoe=$(((bg_cdoe - bg_cdoe / 1460 + bg_cdoe / 36524 - bg_cdoe / 146096) / 365))
	bg_cdoy=$((bg_cdoe - (365 * bg_cyoe + bg_cyoe / 4 - bg_cyoe / 100)))
	bg_cmp=$(((5 * bg_cdoy + 2) / 153))
	bg_cd=$((100 + bg_cdoy - (153 * bg_cmp + 2) / 5 + 1))
	if [ "$bg_cmp" -lt 10 ]; then bg_cm=$((103 + bg_cmp)); else bg_cm=$((91 + bg_cmp)); fi
	bg_cy=$((bg_cyoe + bg_cera * 400))
	[ "$bg_cm" -gt 102 ] || bg_cy=$((bg_cy + 1))
	bg_ch=$((100 + bg_cs / 3600)) bg_cmi=$((100 + bg_cs / 60 % 60)) bg_cse=$((100 + bg_cs % 60))
	bg_ts=$bg_cy-${bg_cm#1}-${bg_cd#1}T${bg_ch#1}:${bg_cmi#1}:${bg_cse#1}
}

# bg_now: set bg_nw to the host's clock, in seconds since 1970.
bg_now() {
	bg_epoch "$(date -u '+%Y-%m-%dT%H:%M:%SZ')"
	bg_nw=$bg_ep
}
