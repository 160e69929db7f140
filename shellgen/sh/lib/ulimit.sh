# ulimit.sh: the resource limits of run --ulimit, set by the subshell that
# becomes the job's command (bg_command), so that neither the wrapper nor
# its helpers are bound by them. ulimit's -H, -S and options are not
# POSIX, but dash, busybox ash and bash have those used here.
# shellcheck disable=SC3045

# bg_ulset: set the limit of ulimit option $1 to soft $2 and hard $3 (in
# the shell's units, or "unlimited") in the calling shell. Both at once
# when they are equal; otherwise the soft limit first (it must be under
# the hard one as it is), then, where that order fails, the hard first.
bg_ulset() {
	if [ "$2" = "$3" ]; then
		ulimit "-$1" "$2"
		return
	fi
	{ ulimit -S "-$1" "$2" && ulimit -H "-$1" "$3"; } 2>/dev/null ||
		{ ulimit -H "-$1" "$3" && ulimit -S "-$1" "$2"; }
}

# bg_ulimits: set the limits of bg_ul, four words each: NAME=SOFT:HARD as
# the user gave it, the ulimit option, and the soft and hard limits in the
# shell's units (shellgen converts Docker's bytes), then, where they can
# be set, nothing more. A limit the shell cannot set ends the job before
# its command runs: not_run says which and why, the message goes to the
# job's stderr too, and the subshell exits 125 (wrapper.sh records it).
# dash names the limit of processes -p (it has no -u; bash's -p is the
# pipe size, which no one sets), so -u falls back to -p where the shell
# refuses it.
bg_ulimits() {
	set -f
	set -- $bg_ul
	set +f
	while [ $# -ge 4 ]; do
		bg_uf=$2
		if [ "$bg_uf" = u ] && ! (ulimit -u) >/dev/null 2>&1; then bg_uf=p; fi
		# A try in a subshell first: its message says why a limit fails.
		if ! bg_ue=$(bg_ulset "$bg_uf" "$3" "$4" 2>&1) || ! bg_ulset "$bg_uf" "$3" "$4" 2>/dev/null; then
			bg_ue=${bg_ue%%"
"*}
			bg_ue=${bg_ue##*ulimit: }
			bg_ue="ulimit $1: cannot be set on this host by its sh (ulimit -$bg_uf: ${bg_ue:-failed})"
			printf 'bgjob: %s\n' "$bg_ue" >&2
			printf '%s\n' "$bg_ue" >"$bg_d/not_run.tmp" && mv -f "$bg_d/not_run.tmp" "$bg_d/not_run"
			exit 125
		fi
		shift 4
	done
}
