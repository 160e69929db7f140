# launch_cap.sh: before launch.sh for a job run with --max-log-size, check
# that the host can enforce the cap, so that a host that cannot gets no
# job (and a --replace stops nothing): the drains punch holes in the logs
# with util-linux fallocate -p (busybox's has no -p). The trial punches
# the root's .bgjob-root, an empty file of the user's on the file system
# the logs are on, and changes nothing in it.
bg_x="--max-log-size needs fallocate -p (util-linux) to drop the logs' old bytes"
command -v fallocate >/dev/null 2>&1 || bg_err nocap "the host has no fallocate command: $bg_x"
bg_makeroot
bg_v=$(fallocate -p -o 0 -l 4096 "$bg_root/.bgjob-root" 2>&1 </dev/null) ||
	bg_err nocap "the host's fallocate cannot punch holes in $bg_root (${bg_v%%"$bg_nl"*}): $bg_x"
