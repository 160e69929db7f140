# begin.sh: the start of every script. The configuration block Go writes
# before it sets bg_root (may be empty: the host's default) and
# bg_workspace (may be empty: no workspace, e.g. list --all-workspaces).
# bgjob's files are private; the launcher keeps the caller's umask
# (bg_umask) for the command: read from the second line of
# /proc/PID/status (Linux 4.7 and later), not by $(umask), a fork; "": the
# command keeps the wrapper's.
if [ "${bg_keepumask-}" = 1 ]; then
	bg_umask=
	if [ -r /proc/$$/status ]; then
		{ IFS= read -r bg_umask && IFS= read -r bg_umask; } </proc/$$/status 2>/dev/null
		case $bg_umask in Umask:*) bg_umask=${bg_umask#Umask:} bg_umask=${bg_umask#"${bg_umask%%[0-7]*}"} ;; *) bg_umask= ;; esac
	fi
	[ -n "$bg_umask" ] || bg_umask=$(umask)
fi
umask 077
# What this script starts is not a process of the job that may have run
# bgjob (the wrapper exports these into the job's environment).
unset BGJOB_JOB_ID BGJOB_JOB_DIR
printf '\n@@bgjob-begin@@\n'
[ -n "$bg_root" ] || bg_root=/tmp/bgjob-$(id -u)
bg_nl='
'
bg_tab='	'
bg_boot=
if [ -r /proc/sys/kernel/random/boot_id ]; then IFS= read -r bg_boot </proc/sys/kernel/random/boot_id; fi
printf 'B\t%s\n' "$bg_boot"
bg_ws=
[ -z "$bg_workspace" ] || bg_ws=$bg_root/$bg_workspace
