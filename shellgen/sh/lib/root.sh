# root.sh: the root directory of the jobs: checked before a script reads
# from it, created private before a launch writes to it.

# bg_readroot: check the root before reading from it.
bg_readroot() {
	if [ -L "$bg_root" ]; then bg_err root "root $bg_root is a symbolic link"; fi
	if [ -d "$bg_root" ] && [ ! -O "$bg_root" ]; then bg_err root "root $bg_root is owned by another user"; fi
	if [ -n "${bg_ws-}" ] && [ -L "$bg_ws" ]; then bg_err root "workspace $bg_ws is a symbolic link"; fi
}

# bg_makeroot: create the root (mode 0700) or check that it is safe.
bg_makeroot() {
	bg_readroot
	if [ ! -d "$bg_root" ]; then
		# shellcheck disable=SC2174 # only the root itself is made private
		bg_why=$(LC_ALL=C mkdir -p -m 700 "$bg_root" 2>&1) || bg_noroot "$bg_why"
	fi
	[ -O "$bg_root" ] || bg_err root "root $bg_root is owned by another user"
	# The mode is checked the first time a root is used; .bgjob-root, a
	# file only its owner can have created there, records that it passed.
	if [ ! -O "$bg_root/.bgjob-root" ]; then
		case $(ls -ld "$bg_root" 2>/dev/null) in
		d????w* | d???????w*) bg_err root "root $bg_root is writable by other users (want mode 0700)" ;;
		esac
		# A root where it cannot be made (read-only, full, immutable) is
		# checked again next time; what cannot be made in it says so.
		# command: a failed redirection of a special builtin would end
		# the shell with the shell's own words.
		{ command : >"$bg_root/.bgjob-root"; } 2>/dev/null || :
	fi
}

# bg_noroot MKDIR_ERROR: refuse a root that could not be made, saying why:
# the nearest path above it that is there is no directory, or what mkdir
# said of making a directory in it, the text its message ends with (the
# system's, lowercased as Go words it): "permission denied on /srv",
# "read-only file system on /mnt", "no such file or directory on /proc".
bg_noroot() {
	bg_d=$bg_root
	while [ ! -e "$bg_d" ] && [ ! -L "$bg_d" ]; do
		case $bg_d in
		*/*) bg_d=${bg_d%/*} && bg_d=${bg_d:-/} ;;
		*) bg_d=. ;;
		esac
	done
	if [ ! -d "$bg_d" ]; then bg_err root "cannot create root $bg_root: $bg_d is not a directory"; fi
	bg_reason "$1"
	[ -z "$bg_rs" ] || bg_err root "cannot create root $bg_root: $bg_rs on $bg_d"
	bg_err root "cannot create root $bg_root"
}

# bg_reason MKDIR_ERROR: set bg_rs to the system's reason a message of
# mkdir (run under LC_ALL=C) ends with, lowercased as Go words it
# ("read-only file system", "no space left on device"), or "" when it has
# none.
bg_reason() {
	bg_rs=
	case $1 in *': '*) bg_rs=$(printf '%s\n' "${1##*: }" | LC_ALL=C tr '[:upper:]' '[:lower:]') ;; esac
}
