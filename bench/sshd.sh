# shellcheck shell=bash disable=SC2034,SC2154 # sourced: tmp comes from the caller, which uses sshd_pid and cfg
# bench/sshd.sh: sourced by the bench scripts that measure over SSH. It
# starts the loopback test sshd (bench/cmd/sshd) for $tmp, sets cfg (its
# ssh_config, host "bench") and listener (the listening sshd's pid), and
# defines host: the CPU seconds the listener's finished children (every
# session and what it started; a job runs in a session of its own and is
# not counted) used so far. At the caller's exit (a trap this sets) the
# sshd goes, then its cgroup, then $tmp.
#
# A session whose shell outlives sshd's process for its connection (the
# client closed it on the script's last record) is reaped by init, not
# the listener, and its CPU is not counted: one run in three of a follow
# counted 0.07 s of 0.45. With hostcg=1 set before sourcing this, as root
# where cgroup v1's cpuacct is mounted, the listener goes into a cgroup of
# its own (cg) and host is the
# CPU of all its processes, sshd's own included, however they end: jobs
# started over SSH are counted too, so the caller starts them on this
# machine (bgjob --root with the same root, no -H).
sshd_pid= cg=
cleanup() {
	set +e
	[ -n "$sshd_pid" ] && kill "$sshd_pid" 2>/dev/null && wait "$sshd_pid" 2>/dev/null
	if [ -n "$cg" ]; then
		for _ in $(seq 50); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
go build -o "$tmp/sshd" ./bench/cmd/sshd
mkdir -p "$tmp/ssh"
"$tmp/sshd" -dir "$tmp/ssh" -timeout 30m >"$tmp/ssh/path" 2>"$tmp/ssh/err" &
sshd_pid=$!
for _ in $(seq 100); do
	[ -s "$tmp/ssh/path" ] && break
	sleep 0.1
done
cfg=$(cat "$tmp/ssh/path")
listener=$(pgrep -f -- "-f $tmp/ssh/sshd_config" | head -1)
tick=$(getconf CLK_TCK)
host() { awk -v t="$tick" '{ printf "%.3f", ($14 + $15 + $16 + $17) / t }' "/proc/$listener/stat"; }
if [ "${hostcg-}" = 1 ] && [ -w /sys/fs/cgroup/cpuacct ] && mkdir "/sys/fs/cgroup/cpuacct/${tmp##*/}" 2>/dev/null; then
	cg=/sys/fs/cgroup/cpuacct/${tmp##*/}
	echo "$listener" >"$cg/cgroup.procs"
	host() { awk '{ printf "%.3f", $1 / 1e9 }' "$cg/cpuacct.usage"; }
fi
