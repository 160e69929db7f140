package shellgen

import (
	"fmt"
	"strings"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

// signals bgjob may send, by name.
var signals = map[string]bool{
	"TERM": true, "INT": true, "QUIT": true, "HUP": true, "KILL": true,
	"USR1": true, "USR2": true, "ALRM": true,
}

// ParseSignal normalises a signal name ("term", "SIGTERM", "15") to the
// name the scripts use.
func ParseSignal(s string) (string, error) {
	up := strings.TrimPrefix(strings.ToUpper(s), "SIG")
	byNum := map[string]string{"1": "HUP", "2": "INT", "3": "QUIT", "9": "KILL", "10": "USR1", "12": "USR2", "14": "ALRM", "15": "TERM"}
	if n, ok := byNum[up]; ok {
		up = n
	}
	if !signals[up] {
		return "", fmt.Errorf("unsupported signal %q (want TERM, INT, QUIT, HUP, KILL, USR1, USR2 or ALRM)", s)
	}
	return up, nil
}

// Stop selects what StopScript stops.
type Stop struct {
	// Refs names the jobs; All stops every job of the workspace that still
	// has live processes.
	Refs []string
	All  bool
	// Signal is sent first (a name from ParseSignal); after Grace, KILL.
	Signal string
	Grace  time.Duration
}

// StopScript returns the script that stops jobs: for each, an O record
// with the outcome (stopped, gone, untied) and then its observation.
func StopScript(t Target, s Stop) (string, error) {
	sig, err := ParseSignal(s.Signal)
	if err != nil {
		return "", err
	}
	b, list, err := t.script(s.Refs)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(b, "bg_readroot\nbg_sig1=%s\nbg_grace=%d\n", sig, tenths(s.Grace))
	b.WriteString(`bg_stopone() {
	bg_stop "$1" "$bg_sig1" "$bg_grace" stop $$
	printf 'O\t%s\n' "$bg_o"
	bg_obs "$1"
}
`)
	if s.All {
		b.WriteString(`for bg_x in "$bg_ws"/[0-9]*; do
	[ -e "$bg_x/meta.json" ] || continue
	if bg_busy "$bg_x"; then bg_stopone "$bg_x"; fi
done
`)
	} else {
		fmt.Fprintf(b, `for bg_ref in %s; do
	if bg_find "$bg_ws" "$bg_ref"; then bg_stopone "$bg_d"; else printf 'E\tnotfound\t%%s\n' "$bg_ref"; fi
done
`, list)
	}
	return end(b), nil
}

// Wait selects what WaitScript waits for.
type Wait struct {
	Refs []string
	// Any returns when the first job ends instead of all of them.
	Any bool
	// Timeout gives up after this long (0: never) with a W timeout record.
	Timeout time.Duration
}

// watchStdin starts a reader of the script's stdin: when stdin closes (the
// caller went away), the script notices on its next round and ends.
const watchStdin = `exec 3<&0
cat <&3 >/dev/null 2>&1 &
bg_cat=$!
exec 3<&-
`

// WaitScript returns the script that waits, polling on the host, until the
// jobs have ended (exit_code written or wrapper gone), then prints their
// observations. It ends early, printing nothing more, when its stdin closes.
func WaitScript(t Target, w Wait) (string, error) {
	b, list, err := t.script(w.Refs)
	if err != nil {
		return "", err
	}
	any := 0
	if w.Any {
		any = 1
	}
	fmt.Fprintf(b, "bg_readroot\nbg_any=%d\nbg_limit=%d\nbg_dirs=\n", any, tenths(w.Timeout))
	fmt.Fprintf(b, `for bg_ref in %s; do
	if bg_find "$bg_ws" "$bg_ref"; then bg_dirs="$bg_dirs $bg_d"; else bg_err notfound "$bg_ref"; fi
done
`, list)
	b.WriteString(watchStdin)
	b.WriteString(`bg_i=0
while :; do
	bg_left=0 bg_done=0
	for bg_x in $bg_dirs; do
		if bg_running "$bg_x"; then bg_left=$((bg_left + 1)); else bg_done=$((bg_done + 1)); fi
	done
	[ "$bg_left" -eq 0 ] && break
	[ "$bg_any" = 1 ] && [ "$bg_done" -gt 0 ] && break
	if [ "$bg_limit" -gt 0 ] && [ "$bg_i" -ge "$bg_limit" ]; then
		printf 'W\ttimeout\n'
		break
	fi
	kill -0 "$bg_cat" 2>/dev/null || exit 0
	bg_nap
	bg_i=$((bg_i + 1))
done
kill "$bg_cat" 2>/dev/null
for bg_x in $bg_dirs; do bg_obs "$bg_x"; done
`)
	return end(b), nil
}

// Logs selects what LogsScript prints.
type Logs struct {
	Ref string
	// Streams lists the logs to read: "stdout", "stderr" or both.
	Streams []string
	// At most one of these picks the range (none: the whole log): the last
	// Tail lines, the first Head lines, the last Bytes bytes, the bytes
	// from Offset (when HasOffset), or, with New, the bytes Reader has not
	// read yet, moving its cursor. Offset and New end the range before an
	// incomplete UTF-8 sequence while the job runs, so text is never cut
	// in the middle of a character.
	Tail, Head int
	Bytes      int64
	Offset     int64
	HasOffset  bool
	New        bool
	Reader     string
	// Follow keeps printing what is appended until the job ends.
	Follow bool
}

// LogsScript returns the script that prints a job's logs: the job's
// observation, then for each stream a D record "D STREAM OFFSET LENGTH"
// followed by exactly LENGTH bytes of the log from OFFSET. With Follow it
// goes on printing D records as the logs grow and, once the job has ended
// and the last bytes are out, prints the job's observation again.
func LogsScript(t Target, l Logs) (string, error) {
	if len(l.Streams) == 0 {
		l.Streams = []string{"stdout"}
	}
	for _, st := range l.Streams {
		if st != "stdout" && st != "stderr" {
			return "", fmt.Errorf("unknown stream %q", st)
		}
	}
	if l.New {
		if l.Reader == "" {
			l.Reader = "default"
		}
		if err := jobdir.ValidateName("reader", l.Reader); err != nil {
			return "", err
		}
	}
	b, list, err := t.script([]string{l.Ref})
	if err != nil {
		return "", err
	}
	fmt.Fprintf(b, `bg_readroot
bg_find "$bg_ws" %[1]s || bg_err notfound %[1]s
bg_obs "$bg_d" || bg_err notfound %[1]s
bg_live=0
bg_running "$bg_d" && bg_live=1
`, list)
	if l.New {
		// One reader at a time moves a cursor: mkdir is the lock.
		fmt.Fprintf(b, `bg_lock=$bg_d/cursor-%s.lock
bg_i=0
until mkdir "$bg_lock" 2>/dev/null; do
	bg_i=$((bg_i + 1))
	[ "$bg_i" -lt 50 ] || break
	bg_nap
done
`, l.Reader)
	}
	for _, st := range l.Streams {
		fmt.Fprintf(b, `bg_f=$bg_d/%[1]s.log
bg_sz=$(wc -c <"$bg_f")
bg_to=$bg_sz
bg_dr=0
if bg_line "$bg_d/%[1]s.dropped"; then bg_dr=${bg_l:-0}; fi
`, st)
		switch {
		case l.Tail > 0:
			fmt.Fprintf(b, `bg_from=$((bg_sz - $(tail -n %d "$bg_f" | wc -c)))
`, l.Tail)
		case l.Head > 0:
			fmt.Fprintf(b, `bg_from=$bg_dr
bg_to=$((bg_dr + $(tail -c +$((bg_dr + 1)) "$bg_f" | head -n %d | wc -c)))
`, l.Head)
		case l.Bytes > 0:
			fmt.Fprintf(b, `bg_from=$((bg_sz - %d))
`, l.Bytes)
		case l.HasOffset:
			fmt.Fprintf(b, `bg_from=%d
[ "$bg_live" = 0 ] || bg_utf8end "$bg_f" "$bg_sz"
`, l.Offset)
		case l.New:
			fmt.Fprintf(b, `bg_cur=$bg_d/cursor-%s.%s
bg_from=0
if bg_line "$bg_cur"; then bg_from=${bg_l%%%%[!0-9]*}; fi
[ -n "$bg_from" ] || bg_from=0
[ "$bg_live" = 0 ] || bg_utf8end "$bg_f" "$bg_sz"
`, l.Reader, st)
		default:
			b.WriteString("bg_from=0\n")
		}
		b.WriteString(`[ "$bg_from" -ge "$bg_dr" ] || bg_from=$bg_dr
[ "$bg_to" -le "$bg_sz" ] || bg_to=$bg_sz
[ "$bg_from" -le "$bg_to" ] || bg_from=$bg_to
bg_chunk ` + st + ` "$bg_f" "$bg_from" "$bg_to"
`)
		if l.New {
			b.WriteString(`printf '%s\n' "$bg_to" >"$bg_cur.tmp" && mv -f "$bg_cur.tmp" "$bg_cur"
`)
		}
		if l.Follow {
			fmt.Fprintf(b, "bg_off_%s=$bg_to\n", st)
		}
	}
	if l.New {
		b.WriteString(`rmdir "$bg_lock" 2>/dev/null
`)
	}
	if l.Follow {
		// Print whatever arrives until the job has ended; the sizes are
		// taken after the job is seen to have ended, so its last bytes are
		// drained.
		b.WriteString(watchStdin)
		b.WriteString(`while :; do
	bg_ended=1
	bg_running "$bg_d" && bg_ended=0
`)
		for _, st := range l.Streams {
			fmt.Fprintf(b, `	bg_sz=$(wc -c <"$bg_d/%[1]s.log")
	if bg_line "$bg_d/%[1]s.dropped" && [ "${bg_l:-0}" -gt "$bg_off_%[1]s" ]; then bg_off_%[1]s=$bg_l; fi
	if [ "$bg_sz" -gt "$bg_off_%[1]s" ]; then
		bg_chunk %[1]s "$bg_d/%[1]s.log" "$bg_off_%[1]s" "$bg_sz"
		bg_off_%[1]s=$bg_sz
	fi
`, st)
		}
		b.WriteString(`	[ "$bg_ended" = 1 ] && break
	kill -0 "$bg_cat" 2>/dev/null || exit 0
	bg_nap
done
kill "$bg_cat" 2>/dev/null
bg_obs "$bg_d"
`)
	}
	return end(b), nil
}

// Remove selects what RemoveScript removes.
type Remove struct {
	// Refs names jobs; Dirs names job directories directly (as reported by
	// an earlier observation, used by prune).
	Refs []string
	Dirs []string
	// Force stops a job that still has live processes first; without it
	// such a job is refused with an E busy record.
	Force bool
	Grace time.Duration
}

// RemoveScript returns the script that deletes ended jobs: an R record for
// each directory removed, E records for refusals.
func RemoveScript(t Target, r Remove) (string, error) {
	var dirs []string
	for _, d := range r.Dirs {
		q, err := Quote(d)
		if err != nil || !strings.HasPrefix(d, "/") || strings.Contains(d, "\n") {
			return "", fmt.Errorf("invalid job directory %q", d)
		}
		dirs = append(dirs, q)
	}
	b, list, err := t.script(r.Refs)
	if err != nil {
		return "", err
	}
	force := 0
	if r.Force {
		force = 1
	}
	fmt.Fprintf(b, "bg_readroot\nbg_force=%d\nbg_grace=%d\n", force, tenths(r.Grace))
	fmt.Fprintf(b, `for bg_ref in %s; do
	if bg_find "$bg_ws" "$bg_ref"; then bg_rm "$bg_d" "$bg_force" "$bg_grace"; else printf 'E\tnotfound\t%%s\n' "$bg_ref"; fi
done
for bg_x in %s; do bg_rm "$bg_x" "$bg_force" "$bg_grace"; done
`, list, strings.Join(dirs, " "))
	return end(b), nil
}

// SendScript returns the script that writes its own stdin to the stdin
// FIFO of a job started with --stdin, or with eof ends the keeper that
// holds the FIFO open, so the command reads end of file. It prints the
// job's observation.
func SendScript(t Target, ref string, eof bool) (string, error) {
	b, list, err := t.script([]string{ref})
	if err != nil {
		return "", err
	}
	fmt.Fprintf(b, `bg_readroot
bg_find "$bg_ws" %[1]s || bg_err notfound %[1]s
[ -p "$bg_d/stdin" ] || bg_err nostdin "job %[1]s was not started with --stdin"
bg_running "$bg_d" || bg_err ended "job %[1]s has ended"
`, list)
	if eof {
		b.WriteString(`if bg_line "$bg_d/stdin.keeper" && [ -n "$bg_l" ]; then
	bg_k=$bg_l
	bg_proc "$bg_k"
	if [ "$bg_pg" = "$bg_w" ]; then kill "$bg_k" 2>/dev/null; fi
fi
`)
	} else {
		// Opened read-write, the FIFO never blocks the open.
		b.WriteString("cat 1<>\"$bg_d/stdin\"\n")
	}
	b.WriteString("bg_obs \"$bg_d\"\n")
	return end(b), nil
}
