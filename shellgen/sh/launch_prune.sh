# launch_prune.sh: after launch.sh, in one run of a few, start run's pruning
# pass (bg_autoprune, with bg_keep and bg_age), detached from the
# launcher's output.
(bg_autoprune) </dev/null >/dev/null 2>&1 &
