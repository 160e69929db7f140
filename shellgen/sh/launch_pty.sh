# launch_pty.sh: before launch.sh for a job started with --pty, check that
# the host can run it, so that a host that cannot gets no job: script from
# util-linux 2.35 or later (-E; busybox's has no -e, BSD's takes other
# arguments), asked for its version (a trial run would take 20 ms: script
# drains the terminal for that long as it ends); setsid; and /proc, where
# a stop finds the command in the terminal's session.
bg_x="--pty needs script from util-linux 2.35 or later"
command -v script >/dev/null 2>&1 || bg_err nopty "the host has no script command: $bg_x"
bg_v=$(script -V 2>&1 </dev/null)
bg_v=${bg_v%%"$bg_nl"*}
case $bg_v in
*"util-linux "[0-9]*.[0-9]*)
	bg_n=${bg_v##*util-linux }
	bg_m=${bg_n#*.}
	bg_m=${bg_m%%[!0-9]*}
	bg_n=${bg_n%%.*}
	case $bg_n$bg_m in *[!0-9]*) bg_err nopty "the host's script says '$bg_v': $bg_x" ;; esac
	[ "$bg_n" -gt 2 ] || { [ "$bg_n" -eq 2 ] && [ "$bg_m" -ge 35 ]; } || bg_err nopty "the host's script is too old ('$bg_v', without -E): $bg_x"
	;;
*) bg_err nopty "the host's script is not util-linux's (script -V: ${bg_v:-nothing}): $bg_x" ;;
esac
command -v setsid >/dev/null 2>&1 || bg_err nopty "the host has no setsid command: --pty needs it (util-linux)"
[ -r /proc/self/stat ] || bg_err nopty "the host has no /proc: --pty needs it to find the command's terminal session"
