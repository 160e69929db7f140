# bootstrap.sh: how a runtime runs a script too long for one argument
# (Linux takes 128 KiB at most): "sh -c BOOTSTRAP sh N", with the script's
# N bytes first on stdin and then the script's own stdin. The script is
# read into a private temporary file, run, and removed.
umask 077
bg_bf=$(mktemp 2>/dev/null) || bg_bf=${TMPDIR:-/tmp}/bgjob-script.$$
if head -c "$1" >"$bg_bf" && [ "$(wc -c <"$bg_bf")" -eq "$1" ]; then
	sh "$bg_bf"
	bg_bs=$?
else
	echo "bgjob: cannot store the script in $bg_bf" >&2
	bg_bs=1
fi
rm -f "$bg_bf"
exit "$bg_bs"
