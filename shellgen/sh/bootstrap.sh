# bootstrap.sh: how a runtime runs a script too long for one argument
# (Linux takes 128 KiB at most): "sh -c BOOTSTRAP sh N", with the script's
# N bytes first on stdin and then the script's own stdin. The script is
# read into a variable and run from there (eval), with the caller's umask:
# no file holds it, so none is left behind, whatever kills the script (it
# may hold --env values). A script that did not arrive whole (the caller
# went away) is not run at all.
#
# Not one byte past the N may be read: what follows is the script's stdin
# (send's data, a cursor's reports). head -c does not promise that, and
# busybox's reads stdin through a 4 KiB buffer, which ate the start of it.
# dd reads with read(2) and no buffer: "bs=LEFT count=1 iflag=fullblock"
# (GNU, busybox) reads exactly LEFT bytes, unless stdin ends first. A dd
# that refuses iflag (POSIX has none) has read nothing; then each dd makes
# one read(2) of at most LEFT bytes, as many as a pipe holds, until all N
# have come. Bytes are counted with ${#} in the C locale.
if bg_bt=$(
	LC_ALL=C
	bg_left=$1
	bg_full=iflag=fullblock
	while [ "$bg_left" -gt 0 ]; do
		# shellcheck disable=SC2086 # bg_full is one word or none
		bg_c=$(
			dd bs="$bg_left" count=1 $bg_full 2>/dev/null
			echo .
		)
		bg_c=${bg_c%.}
		if [ -z "$bg_c" ]; then
			# stdin ended, or dd refused iflag: try once without it.
			[ -n "$bg_full" ] || exit 1
			bg_full=
			continue
		fi
		printf '%s' "$bg_c"
		bg_left=$((bg_left - ${#bg_c}))
	done
	echo .
); then
	eval "${bg_bt%.}"
else
	echo "bgjob: the script did not arrive whole" >&2
	exit 1
fi
