# begin.sh: the start of every script. The configuration block Go writes
# before it sets bg_root (may be empty: the host's default) and
# bg_workspace (may be empty: no workspace, e.g. list --all-workspaces).
# bgjob's files are private; the launcher keeps the caller's umask
# (bg_umask) for the command. It and the uid of the default root come
# from /proc/self/status (its Umask line is Linux 4.7's), read up to the
# Uid line, not from $(umask) and $(id -u): each a fork. self, not $$: in
# a PID namespace whose /proc is its parent's, /proc/$$ is another
# process (pid 1 there is the host's init), while self is always the
# reader, this shell (no shell forks for a loop's redirection, and a child
# would have the same umask and uid).
bg_bu= bg_bi=
if [ "${bg_keepumask-}" = 1 ] || [ -z "$bg_root" ]; then
	if [ -r /proc/self/status ]; then
		while IFS= read -r bg_bl; do
			case $bg_bl in
			Umask:*) bg_bu=${bg_bl#Umask:} bg_bu=${bg_bu#"${bg_bu%%[0-7]*}"} ;;
			Uid:*)
				# Real, effective, saved, file system: id -u is the effective.
				bg_bi=${bg_bl#Uid:} bg_bi=${bg_bi#"${bg_bi%%[0-9]*}"}
				bg_bi=${bg_bi#*[!0-9]} bg_bi=${bg_bi#"${bg_bi%%[0-9]*}"} bg_bi=${bg_bi%%[!0-9]*}
				break
				;;
			esac
		done </proc/self/status 2>/dev/null
	fi
	if [ "${bg_keepumask-}" = 1 ]; then bg_umask=${bg_bu:-$(umask)}; fi
fi
umask 077
# What this script starts is not a process of the job that may have run
# bgjob (the wrapper exports these into the job's environment).
unset BGJOB_JOB_ID BGJOB_JOB_DIR
printf '\n@@bgjob-begin@@\n'
[ -n "$bg_root" ] || bg_root=/tmp/bgjob-${bg_bi:-$(id -u)}
bg_nl='
'
bg_tab='	'
bg_boot=
if [ -r /proc/sys/kernel/random/boot_id ]; then IFS= read -r bg_boot </proc/sys/kernel/random/boot_id; fi
printf 'B\t%s\n' "$bg_boot"
bg_ws=
[ -z "$bg_workspace" ] || bg_ws=$bg_root/$bg_workspace
