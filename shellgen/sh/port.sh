# port.sh: take a TCP port for the job bg_id, about to be launched in
# bg_workspace (run --port): bg_port, or with bg_port 0 the first free
# one from bg_pfrom on, through bg_plo..bg_phi (wrapping). A port is free
# when nothing on the host listens on it (bg_listening) and no
# reservation of another job holds it: the file $bg_root/.ports/PORT,
# "WS/ID SECONDS", holds it while the job WS/ID runs or its launch is
# under way (its directory without meta.json, for a minute), or for a
# minute after SECONDS while the job's directory is not there yet (its
# launch before its mkdir). A reservation that holds its port no longer
# is removed when a run looks at it; rm and prune remove a job's with the
# job (bg_unport), and a refused launch its own (unport.sh). Ports are
# taken under one lock, .ports/.lock (bg_dirlock): two runs never take
# the same one. A port held by a job of the workspace named bg_pname (run
# --replace, which stops those jobs and waits until their processes are
# gone before it launches) is taken over. Prints an n PORT record, or
# refuses with E porttaken "PORT HOLDER" (HOLDER what listens on it,
# bg_portholder, or the job whose reservation holds it) or E noport
# LOW-HIGH (none free).
bg_makeroot
bg_pd=$bg_root/.ports
[ -d "$bg_pd" ] || mkdir "$bg_pd" 2>/dev/null || [ -d "$bg_pd" ] || bg_err io "cannot create $bg_pd"
bg_proc $$
bg_dirlock "$bg_pd/.lock" "$$ $bg_s" 300
case $? in
0) ;;
2) bg_err io "cannot create the lock of the ports in $bg_pd (is the file system read-only or full?)" ;;
*) bg_err io "the lock of the ports in $bg_pd is held by another run" ;;
esac
bg_listening
bg_now
# bg_held PORT: succeed when the reservation of another job holds PORT,
# that job's id in bg_hj; remove one that holds it no longer.
bg_held() {
	bg_hj=
	bg_line "$bg_pd/$1" || return 1
	bg_hp=$1
	# shellcheck disable=SC2086 # the reservation's words on purpose
	set -- $bg_l
	[ "${1-}" != "$bg_workspace/$bg_id" ] || return 1
	bg_hj=${1##*/}
	if [ -n "${1-}" ] && [ -d "$bg_root/$1" ]; then
		# Running, or its launch under way (no meta.json yet, for under a
		# minute, bg_launching): an ended job's port is free.
		bg_running "$bg_root/$1" && return 0
		bg_launching "$bg_root/$1" && return 0
	else
		case ${2-} in '' | *[!0-9]*) ;; *) [ $((bg_nw - $2)) -ge 60 ] || return 0 ;; esac
	fi
	rm -f "$bg_pd/$bg_hp"
	return 1
}
# bg_replaced ID: succeed when the job ID of the workspace has the name
# bg_pname: run --replace stops it before the launch.
bg_replaced() {
	[ -n "$bg_pname" ] && [ -n "$1" ] && bg_isid "$1" && bg_metaline "$bg_ws/$1" || return 1
	case $bg_l in *"\"name\":\"$bg_pname\""*) return 0 ;; esac
	return 1
}
if [ "$bg_port" != 0 ]; then
	bg_p=$bg_port
	case $bg_pl in *" $bg_p "*)
		bg_portholder "$bg_p"
		if ! bg_replaced "$bg_phj"; then
			bg_dirunlock "$bg_pd/.lock"
			bg_err porttaken "$bg_p $bg_ph"
		fi
		;;
	esac
	if bg_held "$bg_p" && ! bg_replaced "$bg_hj"; then
		bg_dirunlock "$bg_pd/.lock"
		bg_err porttaken "$bg_p job $bg_hj"
	fi
else
	bg_p=$bg_pfrom bg_pn=$((bg_phi - bg_plo + 1))
	while :; do
		case $bg_pl in *" $bg_p "*) ;; *) bg_held "$bg_p" || break ;; esac
		bg_pn=$((bg_pn - 1))
		if [ "$bg_pn" -le 0 ]; then
			bg_dirunlock "$bg_pd/.lock"
			bg_err noport "$bg_plo-$bg_phi"
		fi
		bg_p=$((bg_p + 1))
		[ "$bg_p" -le "$bg_phi" ] || bg_p=$bg_plo
	done
fi
if ! { printf '%s %s\n' "$bg_workspace/$bg_id" "$bg_nw" >"$bg_pd/$bg_p"; } 2>/dev/null; then
	bg_dirunlock "$bg_pd/.lock"
	bg_err io "cannot write $bg_pd/$bg_p"
fi
bg_dirunlock "$bg_pd/.lock"
printf 'n\t%s\n' "$bg_p"
