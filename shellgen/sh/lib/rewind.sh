# rewind.sh: telling a log that was truncated under its reader
# (logrotate's copytruncate, ": >"): the t record that says so, and the
# mark of a log at an offset, which tells it also where the log has grown
# again past the offset since.

# bg_rewound STREAM SIZE: the log of STREAM is SIZE bytes, below where the
# read had got to: it was truncated (logrotate's copytruncate, ": >"), and
# all it holds now is new. A t record says so; the caller reads on from
# the start, as tail -F does.
bg_rewound() {
	printf 't\t%s\t%s\n' "$1" "$2"
}

# bg_markof FILE AT: set bg_mk to the mark of FILE at AT: the bytes just
# before AT (16 at most) in hex, two digits a byte, as od prints them,
# without blanks ("" at 0). A reader that keeps the mark of where it got to
# can tell a log that was truncated and has grown past that place since
# (bg_moved), which its size does not tell.
bg_markof() {
	bg_mk=
	bg_mj=$(($2 - 16))
	[ "$bg_mj" -ge 0 ] || bg_mj=0
	[ "$2" -gt "$bg_mj" ] || return 0
	for bg_x in $(exec od -An -v -tx1 -j "$bg_mj" -N $(($2 - bg_mj)) "$1" 2>/dev/null); do bg_mk=$bg_mk$bg_x; done
}

# bg_moved FILE AT MARK DROPPED: succeed when FILE no longer holds, just
# before AT, the bytes MARK (bg_markof's, as many as it holds) it held when
# a reader got to AT: the log was truncated (logrotate's copytruncate) or
# replaced, and all it holds is new, however long it has grown since. The
# bytes below the dropped count, which the --max-log-size cap punched out,
# are not compared: DROPPED, read before, and on a mismatch the count
# FILE's .dropped holds then (the cap records a drop before it punches the
# hole over what the count was read before: a mark compared with that
# hole is the cap's, not a truncation). Without MARK (a cursor written
# before marks), or with nothing to compare, it fails: only the size can
# tell then. One od, of 16 bytes (one more for each drop under the look).
bg_moved() {
	bg_md=$4
	while :; do
		[ -n "$3" ] && [ "$2" -gt "$bg_md" ] || return 1
		bg_mm=$3
		while [ $((${#bg_mm} / 2)) -gt $(($2 - bg_md)) ]; do bg_mm=${bg_mm#??}; done
		bg_mn=$((${#bg_mm} / 2))
		[ "$bg_mn" -le "$2" ] || return 0
		bg_mk=
		for bg_x in $(exec od -An -v -tx1 -j $(($2 - bg_mn)) -N "$bg_mn" "$1" 2>/dev/null); do bg_mk=$bg_mk$bg_x; done
		[ "$bg_mk" != "$bg_mm" ] || return 1
		bg_mo=$bg_md
		if bg_line "${1%.log}.dropped"; then bg_md=${bg_l:-0}; fi
		[ "$bg_md" -gt "$bg_mo" ] || return 0
	done
}
