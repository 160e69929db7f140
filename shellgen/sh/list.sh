# list.sh: print the observations of the workspace's jobs, or with
# bg_allws=1 of every workspace's, newest first; only jobs whose id sorts
# before bg_before ("": all), at most bg_max (0: no limit), then an N
# record if more are left. It reads directory names, the sizes of the
# meta.json files (bg_mzscan), and the files only of the jobs it prints. Entries whose names are not a workspace and a job id
# are not jobs, and are passed over. With bg_owned=1 only the jobs whose
# meta.json records an owner are printed.
bg_readroot
# An ended job recorded without leftovers is not scanned for (bg_live).
bg_recorded=1
bg_n=0
LC_ALL=C
bg_one() {
	bg_isid "${1##*/}" || return 0
	if [ -n "$bg_before" ] && ! [ "${1##*/}" \< "$bg_before" ]; then return 0; fi
	[ -d "$1" ] && [ ! -L "$1" ] || return 0
	# A launch under way is not a job yet.
	! bg_launching "$1" || return 0
	if [ "$bg_max" -gt 0 ] && [ "$bg_n" -ge "$bg_max" ]; then
		printf 'N\tmore\n'
		return 1
	fi
	if [ "$bg_owned" = 1 ]; then
		bg_metaline "$1" || return 0
		case $bg_l in *'"owner":{"kind":'*) ;; *) return 0 ;; esac
	fi
	bg_obs "$1" || return 0
	bg_n=$((bg_n + 1))
}
if [ "$bg_allws" = 1 ]; then
	bg_mzscan "$bg_root" './*/[0-9]*/meta.json'
	bg_all=$(for bg_x in "$bg_root"/*/[0-9]*; do
		bg_w=${bg_x%/*}
		case ${bg_w##*/} in '' | *[!A-Za-z0-9._@:+-]*) continue ;; esac
		[ ! -L "$bg_w" ] && [ ! -L "$bg_x" ] && [ -d "$bg_x" ] && printf '%s %s\n' "${bg_x##*/}" "$bg_x"
	done | LC_ALL=C sort -r)
	while IFS=' ' read -r bg_id bg_x; do
		[ -n "$bg_x" ] || continue
		bg_one "$bg_x" || break
	done <<bg_EOF
$bg_all
bg_EOF
elif [ "$bg_owned" = 1 ]; then
	bg_mzscan "$bg_ws" './[0-9]*/meta.json'
	# One grep reads every meta.json: most jobs have no owner.
	bg_all=$(bg_metagrep "$bg_ws" '"owner":{"kind":' | LC_ALL=C sort -r)
	while IFS= read -r bg_x; do
		[ -n "$bg_x" ] || continue
		bg_one "${bg_x%/meta.json}" || break
	done <<bg_EOF
$bg_all
bg_EOF
else
	bg_mzscan "$bg_ws" './[0-9]*/meta.json'
	set -- "$bg_ws"/[0-9]*
	bg_j=$#
	while [ "$bg_j" -gt 0 ]; do
		eval "bg_x=\${$bg_j}"
		bg_j=$((bg_j - 1))
		bg_one "$bg_x" || break
	done
fi
# Record the ended jobs seen without processes (bg_leftovers).
bg_leftovers
