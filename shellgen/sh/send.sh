# send.sh: write the script's stdin to the stdin FIFO of the job bg_ref
# names (started with --stdin), or with bg_eof=1 end the keeper that holds
# the FIFO open, so the command reads end of file. Then print the job's
# observation.
bg_readroot
bg_find "$bg_ws" "$bg_ref" || bg_err notfound "$bg_ref"
[ -p "$bg_d/stdin" ] || bg_err nostdin "job $bg_ref was not started with --stdin"
bg_running "$bg_d" || bg_err ended "job $bg_ref has ended"
if [ "$bg_eof" = 1 ]; then
	if bg_line "$bg_d/stdin.keeper" && [ -n "$bg_l" ]; then
		bg_k=$bg_l
		bg_proc "$bg_k"
		if [ "$bg_pg" = "$bg_w" ]; then kill "$bg_k" 2>/dev/null; fi
	fi
else
	# Opened read-write, the FIFO never blocks the open.
	cat 1<>"$bg_d/stdin"
fi
bg_obs "$bg_d"
