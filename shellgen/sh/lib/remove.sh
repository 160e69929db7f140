# remove.sh: removing one ended job's directory, the files bgjob wrote
# and nothing else (bgjob rm, prune, run's pass).

# bg_rm DIR: remove the job in DIR, printing an R record, or an E record
# saying why not. A job with live processes is refused (rm.sh stops it
# first when forced). Only the files bgjob writes are deleted, then the
# directory, then the reservation of its port (bg_unport); links are
# never followed.
bg_rm() {
	bg_esc "$1"
	if [ -L "$1" ]; then
		printf 'E\tsymlink\t%s\n' "${bg_e##*/}"
		return 0
	fi
	# A launch or a removal under way (bg_launching) is its launcher's or
	# its remover's: not found here, as ls does not list it; not one rm
	# --force has just stopped (bg_rmstopped), whose wrapper has just
	# written its end there.
	if [ ! -d "$1" ] || { [ -z "${bg_rmstopped-}" ] && bg_launching "$1"; }; then
		printf 'E\tnotfound\t%s\n' "${bg_e##*/}"
		return 0
	fi
	case ${1%/*} in "$bg_root"/*) ;; *)
		printf 'E\toutside\t%s\n' "$bg_e"
		return 0
		;;
	esac
	if bg_busy "$1"; then
		printf 'E\tbusy\t%s\n' "${bg_e##*/}"
		return 0
	fi
	if [ ! -w "$1" ] || [ ! -w "${1%/*}" ]; then
		if [ -d "$1" ]; then printf 'E\treadonly\t%s\n' "$bg_e"; else printf 'E\tnotfound\t%s\n' "${bg_e##*/}"; fi
		return 0
	fi
	# The port the job was given (run --port), whose reservation goes with
	# it: meta.json's "port", which comes before its labels (whose values
	# are strings) and which no string can hold unescaped.
	bg_rport=
	if bg_metaline "$1"; then
		case $bg_l in *'"port":'[0-9]*)
			bg_rport=${bg_l#*\"port\":}
			bg_rport=${bg_rport%%[!0-9]*}
			;;
		esac
	fi
	# Anything bgjob did not write stays, and so does the whole job: all is
	# checked before anything is deleted. A wrapper that is just recording
	# its status, or a concurrent rm, can change the directory meanwhile:
	# look again, a few times.
	bg_ri=0
	while :; do
		for bg_rx in "$1"/* "$1"/.[!.]* "$1"/..?*; do
			[ -e "$bg_rx" ] || [ -L "$bg_rx" ] || continue
			case ${bg_rx##*/} in
			meta.json | meta.json.tmp | job.sh | command.sh | stdout.log | stderr.log | exit_code | exit_code.tmp | exit_code.pty | \
				ended_at | ended_at.tmp | started_at | started_at.tmp | leftovers | leftovers.tmp* | queued | queued.tmp | not_run | not_run.tmp | wake | stop | stop.tmp | stdin | stdin.keeper | cursor-* | std???.dropped | std???.dropped.tmp* | std???.pipe | terminal | terminal.tmp | logs_full | ready_at | ready_at.tmp) ;;
			*)
				printf 'E\tnotempty\t%s\n' "$bg_e"
				return 0
				;;
			esac
		done
		rm -f "$1/meta.json" "$1/meta.json.tmp" "$1/job.sh" "$1/command.sh" "$1/stdout.log" "$1/stderr.log" \
			"$1/exit_code" "$1/exit_code.tmp" "$1/exit_code.pty" "$1/ended_at" "$1/ended_at.tmp" "$1/started_at" "$1/started_at.tmp" "$1/leftovers" "$1"/leftovers.tmp* "$1/queued" "$1/queued.tmp" "$1/not_run" "$1/not_run.tmp" "$1/wake" "$1/stop" "$1/stop.tmp" \
			"$1/stdin" "$1/stdin.keeper" "$1"/cursor-* "$1"/std???.dropped "$1"/std???.dropped.tmp* "$1"/std???.pipe "$1/terminal" "$1/terminal.tmp" "$1/logs_full" "$1/ready_at" "$1/ready_at.tmp" 2>/dev/null
		# Lock directories: cursor-READER.lock.d, and cursor-READER.lock of
		# earlier versions.
		for bg_rx in "$1"/cursor-*.lock "$1"/cursor-*.lock.d; do [ ! -d "$bg_rx" ] || rm -rf "$bg_rx"; done
		if rmdir "$1" 2>/dev/null; then
			[ -z "$bg_rport" ] || bg_unport "$bg_rport" "${1#"$bg_root"/}"
			printf 'R\t%s\n' "$bg_e"
			return 0
		fi
		if [ ! -d "$1" ]; then
			printf 'E\tnotfound\t%s\n' "${bg_e##*/}"
			return 0
		fi
		bg_ri=$((bg_ri + 1))
		if [ "$bg_ri" -ge 5 ]; then
			printf 'E\tnotempty\t%s\n' "$bg_e"
			return 0
		fi
		bg_nap
	done
}
