# launch_cgroup.sh: before launch.sh for a job run with --memory or --cpus,
# which bound its processes together and so need a cgroup of the job's
# own: one the user may make in a delegated cgroup v2 hierarchy (a
# cgroup.subtree_control of the user's own cgroup that the user can
# write), or a scope that systemd-run --user asks the user's systemd to
# make. bgjob makes neither yet, so every host refuses, and no job is made
# (nor does a --replace stop one): the refusal says what the host has.
bg_x="per-job memory and CPU limits need a delegated cgroup v2 hierarchy or systemd-run --user"
bg_v=
# (The user's cgroup is /proc/self/cgroup's: without /proc, none.)
if [ -r /sys/fs/cgroup/cgroup.controllers ] && [ -r /proc/self/cgroup ]; then
	bg_g=
	while IFS= read -r bg_l; do
		case $bg_l in 0::*) bg_g=${bg_l#0::} ;; esac
	done </proc/self/cgroup
	[ ! -w "/sys/fs/cgroup$bg_g/cgroup.subtree_control" ] || bg_v="a delegated cgroup v2 hierarchy"
fi
if command -v systemd-run >/dev/null 2>&1 && [ -S "${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/systemd/private" ]; then
	bg_v="${bg_v:+$bg_v and }systemd-run --user"
fi
[ -n "$bg_v" ] || bg_err nocgroup "$bg_x: this host has neither"
bg_err nocgroup "$bg_x: this host has $bg_v, which bgjob does not use yet"
