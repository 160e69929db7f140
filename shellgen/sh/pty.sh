# pty.sh: "job.sh pty", run by script(1) on the pseudo-terminal of a job
# started with --pty, as the leader of the terminal's session (wrapper.sh
# starts script). It gives the terminal its size (bg_cols by bg_rows),
# runs the command as its foreground child (bg_command), so that a Ctrl-C
# sent to the terminal reaches the command, and records the command's
# status in exit_code.pty for the wrapper ("run PID START" until then,
# its own pid and start time): script's own
# status is not the command's when script is signalled. Like the wrapper
# it survives the signals a stop sends (they are trapped, so the command
# gets the default action) and ignores HUP; it carries no job id, so a
# stop signals only the command, and it ends once the command has. Its
# process group has no parent in the session (script is outside it), so
# the kernel discards the terminal's stop signals: a Ctrl-Z cannot leave
# it stopped. It records the terminal's device in the file terminal.
if [ "${1-}" = pty ]; then
	trap : TERM INT QUIT USR1 USR2 ALRM
	# Its pid and start time: the command's process group is its, so a
	# stop finds the command's processes there too, also one that dropped
	# the job's id from its environment (bg_live).
	IFS= read -r bg_ps </proc/$$/stat
	bg_ps=${bg_ps##*) }
	# shellcheck disable=SC2086 # the words on purpose
	set -- $bg_ps
	printf 'run %s %s\n' "$$" "${20}" >"$bg_d/exit_code.pty"
	if [ -n "${BGJOB_SHELL-}" ]; then SHELL=$BGJOB_SHELL; else unset SHELL; fi
	unset BGJOB_SHELL
	[ -n "${TERM-}" ] || TERM=xterm-256color
	BGJOB_JOB_ID=$bg_id
	export BGJOB_JOB_ID TERM
	stty cols "$bg_cols" rows "$bg_rows" 2>/dev/null
	# The terminal, "DEVICE COLS ROWS", for resize.sh (bgjob attach), which
	# keeps the size current; written whole (tmp + rename).
	if bg_t=$(tty 2>/dev/null); then
		printf '%s %s %s\n' "$bg_t" "$bg_cols" "$bg_rows" >"$bg_d/terminal.tmp" &&
			mv -f "$bg_d/terminal.tmp" "$bg_d/terminal"
	fi
	bg_umask=
	(bg_command)
	printf '%s\n' "$?" >"$bg_d/exit_code.pty"
	exit 0
fi
