# lock.sh: a lock any host has: a directory made with mkdir, holding its
# holder's pid and start time, taken over from a holder that is gone.

# bg_dirlock LOCK OWNER LIMIT: take the lock LOCK (a directory), writing
# OWNER ("PID START") into it, napping between tries; fail after LIMIT
# naps (0: no limit). A lock whose holder is gone is taken over in place
# (its owner file renamed away, then written anew); one that has had no
# holder for 20 naps (one killed between its mkdir and its write; an
# owner that is no regular file) is removed and made again. An owner
# file still empty (its holder between opening and writing it) names no
# holder yet. With a LIMIT, a mkdir refused where no lock is (a
# read-only or full file system) fails at once, with status 2; and with
# any LIMIT, so does a lock made whose owner could not be written (a
# full file system), which is let go of. bg_dirunlock lets it go.
bg_dirlock() {
	bg_ki=0 bg_kno=0
	until mkdir "$1" 2>/dev/null; do
		if [ "$3" != 0 ] && [ ! -e "$1" ] && [ ! -L "$1" ]; then
			# Let go of since (a race), or refused: a second try tells.
			mkdir "$1" 2>/dev/null && break
			[ -e "$1" ] || [ -L "$1" ] || return 2
		fi
		if [ -f "$1/owner" ] && bg_line "$1/owner" && [ -n "$bg_l" ]; then
			bg_kno=0
			bg_proc "${bg_l%% *}"
			if [ -z "$bg_s" ] || [ "$bg_s" != "${bg_l#* }" ]; then
				# Its holder is gone: take the lock over where it is, never
				# removing it, since another may have taken it over since
				# we read it. Of those that judge it so at once, one
				# renames the owner file away and finds it unchanged; the
				# others find it gone, or find the new owner in what they
				# renamed and put it back. A rename refused (a lock another
				# user made) is a try like any other: a nap, counted.
				bg_kold=$bg_l
				if mv "$1/owner" "$1/owner.$$" 2>/dev/null; then
					bg_line "$1/owner.$$"
					if [ "$bg_l" = "$bg_kold" ]; then
						rm -f "$1/owner.$$"
						break
					fi
					mv "$1/owner.$$" "$1/owner" 2>/dev/null
					continue
				fi
			fi
		else
			bg_kno=$((bg_kno + 1))
			if [ "$bg_kno" -ge 20 ]; then
				rm -rf "$1"
				bg_kno=0
				continue
			fi
		fi
		bg_ki=$((bg_ki + 1))
		[ "$3" = 0 ] || [ "$bg_ki" -lt "$3" ] || return 1
		bg_nap
	done
	{ printf '%s\n' "$2" >"$1/owner"; } 2>/dev/null || {
		rm -rf "$1"
		return 2
	}
}

# bg_dirunlock LOCK: let go of the lock bg_dirlock took.
bg_dirunlock() {
	rm -rf "$1"
}
