# unport.sh: let go of the TCP port bg_port that port.sh took for the job
# bg_id of bg_workspace, whose launch was refused: its reservation is
# removed (bg_unport) unless the job runs after all. Prints nothing.
bg_readroot
if [ -d "$bg_ws/$bg_id" ] && bg_running "$bg_ws/$bg_id"; then
	exit 0
fi
bg_unport "$bg_port" "$bg_workspace/$bg_id"
