# resize.sh: give the terminal of the job bg_ref names (started with
# --pty) bg_cols columns by bg_rows rows, the size of an attached client's
# terminal. The kernel sends SIGWINCH to the terminal's foreground process
# group when the size changes. The device is the one pty.sh recorded in the
# file terminal ("DEVICE COLS ROWS"), which is rewritten with the new
# size. Then print the job's observation (its processes not counted).
bg_readroot
bg_find "$bg_ws" "$bg_ref" || bg_err "$bg_fk" "$bg_ref"
bg_ispty "$bg_d" || bg_err nopty "job $bg_ref was not started with --pty"
bg_running "$bg_d" || bg_err ended "job $bg_ref has ended"
bg_t=
if bg_line "$bg_d/terminal"; then bg_t=${bg_l%% *}; fi
case $bg_t in
/dev/*) ;;
*) bg_err nopty "job $bg_ref records no terminal device (it was started by an earlier bgjob)" ;;
esac
stty -F "$bg_t" cols "$bg_cols" rows "$bg_rows" 2>/dev/null </dev/null ||
	bg_err io "cannot set the size of $bg_t, job $bg_ref's terminal"
printf '%s %s %s\n' "$bg_t" "$bg_cols" "$bg_rows" >"$bg_d/terminal.tmp" &&
	mv -f "$bg_d/terminal.tmp" "$bg_d/terminal"
bg_obsrec "$bg_d"
