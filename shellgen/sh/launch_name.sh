# launch_name.sh: before launch.sh when the job has a name (bg_name) and
# is not run with --replace (then launch_replace.sh comes instead): the
# bg_samename that launch.sh calls before it makes the job's directory.
# It looks at the job the name index names (launch.sh keeps it: the newest
# job of the name) alone, so that a run costs no scan of the host's
# processes: when its wrapper runs, an H held record and its observation
# (the CLI warns).
bg_samename() {
	bg_line "$bg_ws/.names/$bg_name" || return 0
	bg_isid "$bg_l" || return 0
	bg_nx=$bg_ws/$bg_l
	bg_running "$bg_nx" || return 0
	case $bg_l in *"\"name\":\"$bg_name\""*) ;; *) return 0 ;; esac
	bg_esc "$bg_nx"
	printf 'H\theld\t%s\n' "$bg_e"
	bg_obsrec "$bg_nx"
}
