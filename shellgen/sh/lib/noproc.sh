# noproc.sh: what the scripts do where the host has no /proc (macOS, the
# BSDs, a chroot that never mounted it) and ps has to answer instead,
# when that takes more than a line beside the /proc way.

# bg_wrapperps DIR: bg_wrapperof where the host has no /proc, from the
# command lines ps lists once a scan, with their users' ids. ps joins the
# arguments with spaces: the path is what lies between "/bin/sh " and
# the first "/ID/job.sh " followed by run or pty.
bg_wrapperps() {
	if [ -z "${bg_wscan-}" ]; then
		bg_wscan=1
		bg_wps=$(ps -ww -A -o pid= -o uid= -o args= 2>/dev/null)
		bg_wuid=$(id -u)
	fi
	# shellcheck disable=SC2016 # an awk program, not expanded
	bg_wx=$(printf '%s\n' "$bg_wps" | awk -v u="$bg_wuid" -v id="/${1##*/}/job.sh " '
		$2 == u && $3 == "/bin/sh" {
			a = $0; sub(/^ *[0-9]+ +[0-9]+ +\/bin\/sh /, "", a)
			i = index(a, id)
			if (i == 0 || substr(a, i + length(id)) !~ /^(run|pty)( |$)/) next
			print $1 " " substr(a, 1, i + length(id) - 2)
		}')
	while read -r bg_wp bg_wa; do
		# shellcheck disable=SC3013 # as in bg_wrapperof
		if [ "$bg_wa" = "$1/job.sh" ] || [ "$bg_wa" -ef "$1/job.sh" ]; then
			bg_w=$bg_wp
			return 0
		fi
	done <<EOF
$bg_wx
EOF
	return 1
}
