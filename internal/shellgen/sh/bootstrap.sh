# bootstrap.sh: how a runtime runs a script too long for one argument
# (Linux takes 128 KiB at most): "sh -c BOOTSTRAP sh N", with the script's
# N bytes first on stdin and then the script's own stdin. The script is
# read into a variable and run from there (eval), with the caller's umask:
# no file holds it, so none is left behind, whatever kills the script (it
# may hold --env values). A script that did not arrive whole (the caller
# went away) is not run at all.
bg_bt=$(
	head -c "$1"
	echo .
)
bg_bt=${bg_bt%.}
if [ "$(printf '%s' "$bg_bt" | wc -c)" -eq "$1" ]; then
	eval "$bg_bt"
else
	echo "bgjob: the script did not arrive whole" >&2
	exit 1
fi
