# jobs.sh: finding jobs and reading their files: what a job id looks
# like, the first line of a file, meta.json (bounded by bg_metamax, its
# process fields picked without a JSON parser), and the job a reference
# names (an id, else the newest job of a name).

# bg_isid NAME: succeed when NAME has the form of a job id: only such
# entries of a workspace are jobs.
bg_isid() {
	# shellcheck disable=SC2254 # bg_idpat is a pattern (jobdir.IDPattern)
	case $1 in $bg_idpat) return 0 ;; esac
	return 1
}

# bg_launching DIR: succeed when DIR, a job directory, has no meta.json
# and changed (an entry made, removed or renamed in it) within the last
# minute (bg_stale): a launch under way, not yet a job, which ls does not
# list. The launch writes meta.json moments after it makes the directory,
# so a directory without one that has not changed for longer is a launch
# cut short, which ls shows and prune removes (bg_prunable). The host's
# clock on both sides: not the time the id names, which is the caller's
# clock, and which a launch that first stops the jobs of its name
# (--replace) or waits for their lock leaves minutes behind. A removal
# under way (meta.json goes first) looks the same, and is left to its
# remover. rm (bg_rm) and stop --all leave it to them; a stop of its id
# marks it (bg_stop), so that its command never runs.
bg_launching() {
	[ ! -e "$1/meta.json" ] && ! bg_stale "$1"
}

# bg_stale DIR: succeed when DIR last changed more than a minute ago by
# the host's clock (find -mmin; busybox's counts whole minutes, so two).
# A find that cannot tell (no -mmin, DIR gone) says it has not: nothing
# is removed on a guess.
bg_stale() {
	case $1 in /*) bg_sx=$1 ;; *) bg_sx=./$1 ;; esac
	[ -n "$(find "$bg_sx" -prune -mmin +1 2>/dev/null)" ]
}

# bg_line FILE: set bg_l to the first line of FILE; fail when FILE is
# missing. A FIFO (bgjob makes none under these names) reads as "", as
# a directory does: opened to read, it would wait for a writer for ever.
bg_line() {
	bg_l=
	[ -e "$1" ] || return 1
	[ ! -p "$1" ] || return 0
	IFS= read -r bg_l 2>/dev/null <"$1" || :
	return 0
}

# bg_exit DIR: succeed when the job in DIR has recorded its end: its
# exit_code is whole, its first line ended by its newline, which bg_xl
# holds without it. The wrapper writes exit_code in one write, with no
# rename: a file there without its newline is one made and not yet
# written (the job has not ended yet), or whose write a kill cut short
# (its status unknown). A wrapper before it renamed exit_code.tmp into
# place: that file is always whole. A FIFO there is read, and waited on
# (TestExitCodeRemovedWhileRead holds a read so).
bg_exit() {
	bg_xl=
	[ -e "$1/exit_code" ] || return 1
	IFS= read -r bg_xl 2>/dev/null <"$1/exit_code" && return 0
	bg_xl=
	return 1
}

# bg_rec FILE: bg_line for a record written over the launcher's blank
# (exit_code, ended_at, stop): its first line without the blanks after it.
bg_rec() {
	bg_line "$1" || return 1
	bg_l=${bg_l%"${bg_l##*[! ]}"}
}

# bg_metaline DIR: set bg_l to the first line of DIR/meta.json; fail when
# it is missing or not a regular file, or DIR is a symbolic link (never
# followed). One larger than bg_metamax bytes is not read: bg_l is ""
# and bg_mbig is 1 (no meta.json bgjob writes is that large). One larger
# than 8 KiB is read by head(1), as the shells' read takes a system call
# per byte. Sizes come from find(1): for a job under the directory
# bg_mzscan looked at, from its scan, else one find per job, kept for the
# script's next look (bg_mzput).
bg_metaline() {
	bg_l= bg_mbig=
	# Not a regular file (a FIFO, which a read would wait on for ever): as
	# missing.
	[ ! -L "$1" ] && [ -f "$1/meta.json" ] || return 1
	# meta.json is written once (the launcher's mv) and never changed: the
	# line read last is read again only for another job.
	if [ "${bg_mlcd-}" = "$1" ]; then
		bg_l=$bg_mlc bg_mbig=$bg_mlcb
		return 0
	fi
	bg_mzx=./${1#"${bg_mzs-}"/}/meta.json
	if [ -n "${bg_mzs-}" ] && [ "$bg_mzx" != "./$1/meta.json" ]; then
		case $bg_mzf in
		*"$bg_nl$bg_mzx$bg_nl$bg_mzx$bg_nl"*) bg_mzk=2 ;;
		*"$bg_nl$bg_mzx$bg_nl"*) bg_mzk=1 ;;
		*)
			bg_mzk=0
			# Its line, when the scan's awk read it.
			bg_mzv=${1##*/}
			if [ "$1" = "$bg_mzs/$bg_mzv" ] && bg_isid "$bg_mzv"; then
				eval "bg_mzv=\${bg_ml_${bg_mzv%-*}_${bg_mzv#*-}+l}\${bg_ml_${bg_mzv%-*}_${bg_mzv#*-}-}"
				case $bg_mzv in l*)
					bg_l=${bg_mzv#l}
					bg_mzk=l
					;;
				esac
			fi
			;;
		esac
	elif ! bg_mzget "$1"; then
		# One process (exec: bash forks again for a command with a
		# redirection), given a path that starts no expression; find
		# prints it once for each limit passed.
		case $1 in /*) bg_mzp=$1/meta.json ;; *) bg_mzp=./$1/meta.json ;; esac
		bg_mzk=$(exec find "$bg_mzp" -size +8192c -print -size +"$bg_metamax"c -print 2>/dev/null)
		case $bg_mzk in
		"$bg_mzp$bg_nl$bg_mzp") bg_mzk=2 ;;
		"$bg_mzp") bg_mzk=1 ;;
		*) bg_mzk=0 ;;
		esac
		bg_mzput "$1" "$bg_mzk"
	fi
	case $bg_mzk in
	m) bg_l=$bg_mzm ;;
	l) ;;
	2) bg_mbig=1 ;;
	1) bg_l=$(head -n 1 "$1/meta.json" 2>/dev/null) ;;
	*) IFS= read -r bg_l 2>/dev/null <"$1/meta.json" || : ;;
	esac
	# A removal may take meta.json between the look above and the read: the
	# job is then being removed, not torn.
	[ -n "$bg_l$bg_mbig" ] || [ -e "$1/meta.json" ] || return 1
	[ -z "$bg_l$bg_mbig" ] || bg_mlcd=$1 bg_mlc=$bg_l bg_mlcb=$bg_mbig
	return 0
}

# bg_mzput DIR SIZE: keep what bg_metaline learnt of the size of the
# meta.json of the job in DIR: the limits it passes (0 to 2), or m: its
# line is bg_mzm, which the caller has already (the launcher, from the
# wrapper's report). Kept in a variable named after the job's id (a look
# at one job among thousands costs the same as among ten; a list of them
# all, searched by pattern, grew quadratic), holding SIZE and DIR, as
# two workspaces can hold the same id. A directory not named by an id is
# not kept.
bg_mzput() {
	bg_isid "${1##*/}" || return 0
	bg_mzv=${1##*/}
	eval "bg_mz_${bg_mzv%-*}_${bg_mzv#*-}=\$2\$1"
}

# bg_mzget DIR: set bg_mzk to what bg_mzput kept for DIR; fail when it
# kept nothing.
bg_mzget() {
	bg_isid "${1##*/}" || return 1
	bg_mzv=${1##*/}
	eval "bg_mzv=\${bg_mz_${bg_mzv%-*}_${bg_mzv#*-}-}"
	[ -n "$bg_mzv" ] && [ "${bg_mzv#?}" = "$1" ] || return 1
	bg_mzk=${bg_mzv%"$1"}
}

# bg_mzscan BASE GLOB: learn, with one find(1), which of the meta.json
# files GLOB names in BASE are larger than 8 KiB, and which larger than
# bg_metamax bytes (those are printed twice), for bg_metaline to read
# the jobs under BASE; and, when GLOB names the jobs of one workspace,
# the first lines of the others, regular files, which one awk reads (bg_ml_ID, the id's "-" a "_"): the shells' read
# takes a system call per byte, a quarter of a million for 300 jobs. The
# exec saves bash a fork. awk's lines start with "//", which no line of
# a path find prints can (a name holds no "/").
bg_mzscan() {
	# Those of the last scan go first: another BASE may hold the same id.
	# shellcheck disable=SC2086 # the names are words on purpose
	[ -z "${bg_mlnames-}" ] || unset $bg_mlnames
	bg_mzs=$1 bg_mzf=$bg_nl bg_mlnames=
	# The jobs of the workspaces under BASE (ls of them all) are read one
	# by one: their ids are not enough to tell them apart.
	# shellcheck disable=SC2086 # GLOB is expanded on purpose
	case $2 in
	./*/*/*) bg_mx=$(cd "$1" 2>/dev/null && exec find $2 -size +8192c -print -size +"$bg_metamax"c -print 2>/dev/null) ;;
	*)
		# shellcheck disable=SC2016 # an awk program, not expanded
		bg_mx=$(cd "$1" 2>/dev/null && exec find $2 -type f \( -size +8192c \( -size +"$bg_metamax"c -print -print -o -print \) -o -exec awk '
			FNR == 1 {
				d = FILENAME; sub(/\/meta\.json$/, "", d); sub(/.*\//, "", d)
				if (d ~ /^[0-9a-zT-]+$/) print "//" d " " $0
			}' {} + \) 2>/dev/null)
		;;
	esac
	set -f
	bg_oifs=$IFS
	IFS=$bg_nl
	for bg_mzx in $bg_mx; do
		case $bg_mzx in
		//*)
			bg_mzv=${bg_mzx#//}
			bg_mzv=${bg_mzv%% *}
			bg_isid "$bg_mzv" || continue
			bg_mzx=${bg_mzx#//"$bg_mzv" }
			bg_mzv=bg_ml_${bg_mzv%-*}_${bg_mzv#*-}
			eval "$bg_mzv=\$bg_mzx"
			bg_mlnames="$bg_mlnames $bg_mzv"
			;;
		*) bg_mzf=$bg_mzf$bg_mzx$bg_nl ;;
		esac
	done
	IFS=$bg_oifs
	set +f
}

# bg_meta DIR: read DIR/meta.json and set bg_w (the wrapper's pid, also the
# job's process group), bg_st (its start time) and bg_b (the boot id).
bg_meta() {
	bg_metaline "$1" || return 1
	# Another job's meta.json (a directory copied, restored) names a
	# process group that is not this job's: never taken for it.
	case $bg_l in *'"id":"'"${1##*/}"'"'*) ;; *) return 1 ;; esac
	bg_pick
}

# bg_pick: from the meta.json line in bg_l, set bg_w, bg_st and bg_b: the
# last four comma-separated fields are the process fields (their values
# hold no comma). Splitting takes time linear in the line's length, which
# a long command makes large; the shells' longest-prefix patterns would
# take quadratic time.
bg_pick() {
	bg_w= bg_st= bg_b=
	set -f
	bg_oifs=$IFS
	IFS=,
	set -- $bg_l
	IFS=$bg_oifs
	set +f
	[ $# -ge 4 ] || return 1
	eval "bg_w=\${$(($# - 3))} bg_st=\${$(($# - 1))} bg_b=\${$#}"
	case $bg_w in '"pid":'*) ;; *) return 1 ;; esac
	bg_w=${bg_w#\"pid\":}
	bg_st=${bg_st#\"proc_start\":\"}
	bg_st=${bg_st%\"}
	bg_b=${bg_b#\"boot_id\":\"}
	bg_b=${bg_b%\"\}}
	case $bg_w in '' | *[!0-9]*) return 1 ;; esac
	# A ps start time (no /proc) as bg_proc reads it: one space between
	# words (a wrapper of an earlier version wrote ps's "Dec  1").
	case $bg_st in *"  "*)
		set -f
		bg_oifs=$IFS
		IFS=' '
		# shellcheck disable=SC2086 # the words on purpose
		set -- $bg_st
		bg_st="$*"
		IFS=$bg_oifs
		set +f
		;;
	esac
}

# bg_ispty DIR: succeed when the job in DIR was started with --pty (its
# meta.json says "pty":true): in the line bg_metaline reads, without a
# process once a look has learnt its size; one too large to read, grep
# reads.
bg_ispty() {
	bg_metaline "$1" || return 1
	if [ -n "$bg_mbig" ]; then
		grep -q '"pty":true' "$1/meta.json" 2>/dev/null
		return
	fi
	case $bg_l in *'"pty":true'*) return 0 ;; esac
	return 1
}

# bg_ownline DIR: succeed when bg_l, DIR's meta.json line (bg_metaline),
# names DIR: its id is DIR's (not a copied directory's, not damaged).
bg_ownline() {
	case $bg_l in '{'*"\"id\":\"${1##*/}\""*'}') return 0 ;; esac
	return 1
}

# bg_pickone DIR: add DIR, a job directory bg_find found, to bg_sel (one a
# line) unless it is there already: two references to one job (its name
# and its id) select it once. Looked up by id (bg_sd_ID), not in the list.
bg_pickone() {
	bg_px=${1##*/}
	if bg_isid "$bg_px"; then
		eval "[ -z \"\${bg_sd_${bg_px%-*}_${bg_px#*-}-}\" ]" || return 0
		eval "bg_sd_${bg_px%-*}_${bg_px#*-}=1"
	fi
	bg_sel="$bg_sel$bg_nl$1"
}

# bg_find WSDIR REF: set bg_d to the job directory REF names in WSDIR: the
# job with that id, else the newest job with that name: the one the name
# index WSDIR/.names/REF names, else the newest 20 jobs are read by the
# shell and older ones searched with grep. An id names its directory
# with or without a meta.json: an unreadable job, or a launch (or a
# removal) under way, which a stop must reach (bg_stop marks it). An
# entry that is a symbolic
# link is no job, never followed; when it fails, bg_fk is the kind of the
# refusal: symlink when REF is an id whose entry is a link, else notfound.
bg_find() {
	bg_d= bg_fk=notfound
	if [ -L "$1/$2" ] && bg_isid "$2"; then
		bg_fk=symlink
		return 1
	fi
	if [ ! -L "$1/$2" ] && { [ -e "$1/$2/meta.json" ] || { [ -d "$1/$2" ] && bg_isid "$2"; }; }; then
		bg_d=$1/$2
		return 0
	fi
	bg_fw=$1 bg_fn=$2
	# The name index holds the id of the newest job launched with the name;
	# the job's own meta.json must agree, else the directories are searched.
	if bg_line "$1/.names/$2"; then
		case $bg_l in
		'' | *[!0-9a-zT-]*) ;;
		*)
			bg_fx=$1/$bg_l
			if bg_metaline "$bg_fx"; then
				case $bg_l in *"\"name\":\"$bg_fn\""*)
					bg_d=$bg_fx
					return 0
					;;
				esac
			fi
			;;
		esac
	fi
	bg_mzscan "$1" './[0-9]*/meta.json'
	set -- "$1"/[0-9]*
	bg_fi=$# bg_fj=0
	while [ "$bg_fi" -gt 0 ] && [ "$bg_fj" -lt 20 ]; do
		eval "bg_fx=\${$bg_fi}"
		if bg_metaline "$bg_fx"; then
			case $bg_l in *"\"name\":\"$bg_fn\""*)
				bg_d=$bg_fx
				return 0
				;;
			esac
		fi
		bg_fi=$((bg_fi - 1))
		bg_fj=$((bg_fj + 1))
	done
	[ "$bg_fi" -gt 0 ] || return 1
	# Older jobs: let grep read their meta.json, the newest match last.
	bg_fx=$(bg_metagrep "$bg_fw" "\"name\":\"$bg_fn\"")
	while [ -n "$bg_fx" ]; do
		bg_fy=${bg_fx##*"$bg_nl"}
		bg_fy=${bg_fy%/meta.json}
		if [ ! -L "$bg_fy" ]; then
			bg_d=$bg_fy
			return 0
		fi
		case $bg_fx in *"$bg_nl"*) bg_fx=${bg_fx%"$bg_nl"*} ;; *) bg_fx= ;; esac
	done
	return 1
}

# bg_metagrep DIR TEXT: print, one a line, the meta.json files of the jobs
# in DIR that hold TEXT, with one grep; it reads regular files only (a
# FIFO put there would keep it waiting for ever).
bg_metagrep() {
	for bg_gx in "$1"/[0-9]*/meta.json; do
		[ ! -f "$bg_gx" ] || printf '%s\0' "$bg_gx"
	done | xargs -0 grep -l -F -e "$2" 2>/dev/null
}
