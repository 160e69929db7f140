# command.sh: the job's command as the wrapper runs it (wrapper.sh, and
# pty.sh on a terminal): its --env variables, umask, --ulimit limits, line buffering and
# words, laid out from the configuration of job.sh.

# bg_command: run the job's command with its --env variables, umask and
# buffering, in the calling subshell (wrapper.sh, pty.sh), from the
# configuration of job.sh. It first lays out, in its arguments, the
# variables to export, "--" and the command's words, so that no variable
# of the wrapper's is read once a variable from --env may have replaced it.
# An argv's words come quoted in bg_cmd, laid out by one eval: a loop that
# added them one at a time would copy the list each time.
bg_command() {
	# A stop whose look for the job's processes came before this fork
	# reached nothing, but its mark (DIR/stop) came before that look: a
	# process forked after the look finds it here, and the command does
	# not run. One forked before it the look finds and signals.
	if bg_stopped; then exit "$bg_rc"; fi
	# A bash started with SSH_CLIENT set and a shell level below 2 reads
	# ~/.bashrc as if sshd had started it (Debian's bash does): over SSH,
	# where the launch's exec left SHLVL at 0, the job's bash would run
	# the login's .bashrc, its PATH over --env's. At 1 the job's bash is
	# at 2; an SHLVL from --env, exported after, wins.
	case ${SHLVL-} in [1-9]*) ;; *) export SHLVL=1 ;; esac
	set --
	[ "$bg_lb" != 1 ] || set -- PYTHONUNBUFFERED=1
	bg_i=1
	while [ "$bg_i" -le "$bg_envc" ]; do
		eval "set -- \"\$@\" \"\$bg_env$bg_i\""
		bg_i=$((bg_i + 1))
	done
	# A PATH from --env is the command's: the shell and stdbuf that run it
	# are the wrapper's, found in its PATH first and named by their files.
	bg_penv=
	for bg_a in "$@"; do
		case $bg_a in PATH=*) bg_penv=1 ;; esac
	done
	set -- "$@" --
	[ -z "$bg_umask" ] || umask "$bg_umask"
	[ -z "$bg_ul" ] || bg_ulimits
	if [ "$bg_lb" = 1 ] && command -v stdbuf >/dev/null 2>&1; then
		bg_p=stdbuf
		[ -z "$bg_penv" ] || bg_path stdbuf
		set -- "$@" "$bg_p" -oL -eL
	fi
	if [ "$bg_argc" -gt 0 ]; then
		eval "set -- \"\$@\" $bg_cmd"
	else
		if [ -z "$bg_sh" ]; then
			# shellcheck disable=SC2209 # sh is the name of the shell
			bg_sh=sh
			command -v bash >/dev/null 2>&1 && bg_sh=bash
		fi
		[ -z "$bg_penv" ] || ! bg_path "$bg_sh" || bg_sh=$bg_p
		if [ "$bg_cmdfile" = 1 ]; then
			set -- "$@" "$bg_sh" "$bg_d/command.sh"
		else
			set -- "$@" "$bg_sh" -c "$bg_cmd"
		fi
	fi
	while [ "$1" != -- ]; do
		# shellcheck disable=SC2163 # $1 is NAME=VALUE
		export "$1"
		shift
	done
	shift
	# The subshell becomes the command where it is a program (one process,
	# as a subshell's last command would be); a builtin such as exit runs
	# in it. The shell that runs a script is a program even where command
	# -v names no file for it: a busybox ash built to prefer its applets
	# says "sh" for sh. A subshell left waiting for it would die of the
	# signal a stop sends, and its 128+N would be the job's status, not
	# the status the script's own trap gives.
	[ "$bg_argc" -gt 0 ] || exec "$@"
	case $(command -v -- "$1" 2>/dev/null) in */*) exec "$@" ;; esac
	# Nor does it name a file for its other applets (sh -c …, sleep):
	# command -V says "NAME is NAME" for those, and names a builtin, which
	# exec cannot run, otherwise.
	case $(command -V -- "$1" 2>/dev/null) in "$1 is $1") exec "$@" ;; esac
	command "$@"
}

# bg_path NAME: set bg_p to the file PATH names for the program NAME (NAME
# itself when it has a slash), as command -v would, without a fork; fail
# when PATH has none (a shell's own applet, say).
bg_path() {
	bg_p=$1
	case $1 in */*) return 0 ;; esac
	bg_pl=$PATH:
	while [ -n "$bg_pl" ]; do
		bg_p=${bg_pl%%:*}
		bg_pl=${bg_pl#*:}
		bg_p=${bg_p:-.}/$1
		if [ -f "$bg_p" ] && [ -x "$bg_p" ]; then return 0; fi
	done
	bg_p=$1
	return 1
}

# bg_stopped: succeed when a stop (or a timeout) has marked the job in
# bg_d (its stop file), with bg_rc the status its signal gives a command
# it ends (128+N, bg_signum).
bg_stopped() {
	bg_rec "$bg_d/stop" || return 1
	bg_signum "${bg_l#* }"
	bg_rc=$((128 + bg_n))
}
