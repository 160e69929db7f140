package shellgen

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bgjob/bgjob/jobdir"
)

//go:embed lib.sh
var lib string

// The lines that frame a script's output.
const (
	BeginMarker = "@@bgjob-begin@@"
	EndMarker   = "@@bgjob-end@@"
)

// Target says where jobs live on a host.
type Target struct {
	// Root is the absolute root directory; "" means the host's default,
	// /tmp/bgjob-$UID of the user running the script.
	Root string
	// Workspace is the workspace, already validated.
	Workspace string
}

func (t Target) check() error {
	if t.Root != "" && (!strings.HasPrefix(t.Root, "/") || strings.ContainsAny(t.Root, "\x00\n")) {
		return fmt.Errorf("root %q must be an absolute path without NUL or newline", t.Root)
	}
	if t.Workspace == "" {
		return nil
	}
	return jobdir.ValidateName("workspace", t.Workspace)
}

// begin starts a script: the begin marker, the library, the root, the
// host's boot id (reported as a B record) and bg_ws, the workspace dir.
func (t Target) begin(b *strings.Builder) error {
	if err := t.check(); err != nil {
		return err
	}
	b.WriteString("umask 077\nprintf '\\n" + BeginMarker + "\\n'\n")
	b.WriteString(lib)
	fmt.Fprintf(b, "bg_root=%s\n", quote(t.Root))
	b.WriteString(`[ -n "$bg_root" ] || bg_root=/tmp/bgjob-$(id -u)
bg_boot=
if [ -r /proc/sys/kernel/random/boot_id ]; then IFS= read -r bg_boot </proc/sys/kernel/random/boot_id; fi
printf 'B\t%s\n' "$bg_boot"
`)
	if t.Workspace != "" {
		fmt.Fprintf(b, "bg_ws=$bg_root/%s\n", t.Workspace)
	}
	return nil
}

// script validates the job references rs, starts a script for them (see
// begin) and returns it with the references as one shell word list.
func (t Target) script(rs []string) (*strings.Builder, string, error) {
	list, err := refs(rs)
	if err != nil {
		return nil, "", err
	}
	b := new(strings.Builder)
	if err := t.begin(b); err != nil {
		return nil, "", err
	}
	return b, list, nil
}

func end(b *strings.Builder) string {
	b.WriteString("bg_end\n")
	return b.String()
}

// Launch describes a job to start.
type Launch struct {
	Target
	// Meta describes the job; its process fields are filled in on the host.
	Meta jobdir.Meta
	// Env holds the variables to set, as NAME=VALUE.
	Env []string
	// Timeout stops the job after this long (0: never), TERM then KILL
	// after Grace.
	Timeout time.Duration
	Grace   time.Duration
	// MaxLogSize, when positive, keeps at most about this many bytes of
	// each log on disk, the newest (see the capper in the wrapper).
	MaxLogSize int64
	// Stdin gives the command a FIFO in the job directory, stdin, as its
	// standard input (see SendScript) instead of /dev/null.
	Stdin bool
	// Prune, when Keep or Before is set, starts a bounded, detached pass
	// that removes up to Prune.Max of the oldest ended jobs beyond the
	// newest Keep or started before Before (an id prefix, e.g. the time
	// seven days ago), so that nobody has to remember to prune.
	Prune AutoPrune
	// LineBuffered runs the command under "stdbuf -oL -eL" where the host
	// has it, with PYTHONUNBUFFERED=1, so output reaches the logs line by
	// line; meta.json's buffering field records what was applied.
	LineBuffered bool
}

// AutoPrune bounds the pass LaunchScript starts after the launch.
type AutoPrune struct {
	Keep   int
	Before string
	Max    int
}

var envNameRE = func(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// ValidEnvName reports whether s can be a shell variable name.
func ValidEnvName(s string) bool { return envNameRE(s) }

// processFields is how json.Marshal ends a Meta whose process fields are
// zero; the launcher replaces it with the real values.
const processFields = `,"pid":0,"pgid":0,"proc_start":"","boot_id":""}`

// LaunchScript returns the script that creates the job directory, writes
// meta.json and the wrapper, and starts the wrapper in a new session. It
// prints the job's observation.
func LaunchScript(l Launch) (string, error) {
	m := l.Meta
	if err := jobdir.ValidateName("job id", m.ID); err != nil {
		return "", err
	}
	if m.Name != "" {
		if err := jobdir.ValidateName("job name", m.Name); err != nil {
			return "", err
		}
	}
	m.PID, m.PGID, m.ProcStart, m.BootID = 0, 0, "", ""
	var mb strings.Builder
	enc := json.NewEncoder(&mb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return "", fmt.Errorf("encoding meta.json: %w", err)
	}
	prefix, ok := strings.CutSuffix(mb.String(), processFields+"\n")
	if !ok {
		return "", errors.New("meta.json encoding does not end with the process fields")
	}
	wrapper, err := wrapperScript(l)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := l.Target.begin(&b); err != nil {
		return "", err
	}
	b.WriteString("bg_makeroot\n")
	if m.Cwd != "" {
		cwd, err := Quote(m.Cwd)
		if err != nil {
			return "", fmt.Errorf("cwd: %w", err)
		}
		fmt.Fprintf(&b, "[ -d %s ] || bg_err cwd %s\n", cwd, quote("working directory "+m.Cwd+" does not exist"))
	}
	fmt.Fprintf(&b, `[ -d "$bg_ws" ] || mkdir -p "$bg_ws" 2>/dev/null || bg_err io "cannot create workspace directory $bg_ws"
bg_d=$bg_ws/%s
mkdir "$bg_d" 2>/dev/null || bg_err exists "cannot create job directory $bg_d"
%sprintf '%%s' %s >"$bg_d/job.sh"
%s# Start the wrapper in a session of its own. setsid -f runs it from the
# foreground, so it does not inherit the SIGINT and SIGQUIT a non-interactive
# shell ignores for background commands; busybox setsid lacks -f. The
# wrapper prints its pid once its traps are set (from then on a signal to
# the group cannot kill it) and closes the pipe, which is what we wait for.
if bg_w=$(setsid -f /bin/sh "$bg_d/job.sh" </dev/null 2>/dev/null); then
	:
elif command -v setsid >/dev/null 2>&1; then
	bg_w=$(setsid /bin/sh "$bg_d/job.sh" </dev/null 2>/dev/null &)
elif command -v bash >/dev/null 2>&1; then
	bg_w=$(bash -c 'set -m; /bin/sh "$1" </dev/null 2>/dev/null &' bash "$bg_d/job.sh")
else
	rm -f "$bg_d/job.sh"
	rmdir "$bg_d"
	bg_err setsid "the host has neither setsid nor bash to start the job in its own process group"
fi
[ -n "$bg_w" ] || bg_err start "the wrapper of job $bg_d did not start"
bg_s=${bg_w#* }
bg_w=${bg_w%% *}
printf '%%s%%s,"pid":%%s,"pgid":%%s,"proc_start":"%%s","boot_id":"%%s"}\n' %s "$bg_buf" "$bg_w" "$bg_w" "$bg_s" "$bg_boot" >"$bg_d/meta.json.tmp"
mv -f "$bg_d/meta.json.tmp" "$bg_d/meta.json"
bg_obs "$bg_d"
%s`, m.ID, nameIndex(m.Name, m.ID), quote(wrapper), launchExtras(l), quote(prefix), autoPrune(l.Prune))
	return end(&b), nil
}

// nameIndex returns the launcher's lines that record id as the newest job
// named name in the workspace's name index, .names/NAME (nothing for an
// unnamed job). A reader checks the job's meta.json, so a stale or torn
// entry only sends it back to searching.
func nameIndex(name, id string) string {
	if name == "" {
		return ""
	}
	return fmt.Sprintf(`[ -d "$bg_ws/.names" ] || mkdir "$bg_ws/.names" 2>/dev/null
printf '%%s\n' %s >"$bg_ws/.names/%s" 2>/dev/null
`, id, name)
}

// autoPrune returns the launcher's line that starts the pruning pass in
// the background, detached from the launcher's output.
func autoPrune(p AutoPrune) string {
	if p.Max <= 0 || p.Keep <= 0 && p.Before == "" {
		return ""
	}
	keep := p.Keep
	if keep <= 0 {
		keep = 1 << 30
	}
	return fmt.Sprintf("(bg_autoprune %d %s %d) </dev/null >/dev/null 2>&1 &\n", keep, quote(p.Before), p.Max)
}

// launchExtras returns the launcher's lines for --stdin (the FIFO) and
// --line-buffered (bg_buf, the buffering field of meta.json).
func launchExtras(l Launch) string {
	var b strings.Builder
	b.WriteString("bg_buf=\n")
	if l.Stdin {
		b.WriteString(`mkfifo -m 600 "$bg_d/stdin" || bg_err io "cannot create the stdin FIFO in $bg_d"
`)
	}
	if l.LineBuffered {
		b.WriteString(`if command -v stdbuf >/dev/null 2>&1; then
	bg_buf=',"buffering":"stdbuf -oL -eL, PYTHONUNBUFFERED=1"'
else
	bg_buf=',"buffering":"PYTHONUNBUFFERED=1 (the host has no stdbuf)"'
fi
`)
	}
	return b.String()
}

// wrapperScript returns job.sh, the wrapper that runs the command as its
// child and records the child's real status.
func wrapperScript(l Launch) (string, error) {
	m := l.Meta
	var b strings.Builder
	fmt.Fprintf(&b, "# bgjob wrapper for job %s (generated; see docs/design.md)\nbg_d=${0%%/*}\n", m.ID)
	if l.Timeout > 0 {
		b.WriteString("if [ \"${1-}\" = timer ]; then\n")
		b.WriteString(lib)
		fmt.Fprintf(&b, `	bg_boot=
	if [ -r /proc/sys/kernel/random/boot_id ]; then IFS= read -r bg_boot </proc/sys/kernel/random/boot_id; fi
	bg_term=
	trap 'bg_term=1' TERM
	sleep %s &
	bg_t=$!
	[ -n "$bg_term" ] || wait "$bg_t"
	if [ -n "$bg_term" ]; then
		kill "$bg_t" 2>/dev/null
		exit 0
	fi
	trap : TERM INT QUIT
	bg_stop "$bg_d" TERM %d timeout $$ nowait
	exit 0
fi
`, seconds(l.Timeout), tenths(l.Grace))
	}
	if l.MaxLogSize > 0 {
		// The capper keeps each log's newest MaxLogSize/2 to MaxLogSize
		// bytes on disk: once a second it punches a hole (fallocate -p)
		// over the older part, so offsets never change, and records in
		// STREAM.dropped how many leading bytes are gone.
		b.WriteString("if [ \"${1-}\" = capper ]; then\n")
		b.WriteString(lib)
		fmt.Fprintf(&b, `	bg_cw=$2 bg_cap=%d
	trap 'exit 0' TERM
	while :; do
		bg_proc "$bg_cw"
		[ -n "$bg_s" ] || exit 0
		sleep 1
		for bg_cf in stdout stderr; do
			bg_sz=$(wc -c <"$bg_d/$bg_cf.log")
			bg_dr=0
			if bg_line "$bg_d/$bg_cf.dropped"; then bg_dr=${bg_l:-0}; fi
			[ $((bg_sz - bg_dr)) -gt "$bg_cap" ] || continue
			bg_new=$(((bg_sz - bg_cap / 2) / 4096 * 4096))
			[ "$bg_new" -gt "$bg_dr" ] || continue
			fallocate -p -o 0 -l "$bg_new" "$bg_d/$bg_cf.log" 2>/dev/null || continue
			printf '%%s\n' "$bg_new" >"$bg_d/$bg_cf.dropped.tmp" && mv -f "$bg_d/$bg_cf.dropped.tmp" "$bg_d/$bg_cf.dropped"
		done
	done
fi
`, l.MaxLogSize)
	}
	b.WriteString("trap '' HUP\ntrap : TERM INT QUIT USR1 USR2 ALRM\n")
	if l.Stdin {
		// A keeper holds the FIFO open for writing, so the command sees
		// end of file only when "bgjob send --eof" ends the keeper. The
		// wrapper opens the FIFO itself (read-write, which never blocks)
		// and hands it over, so the keeper holds it before run returns.
		b.WriteString(`exec 3<>"$bg_d/stdin"
sleep 2147483647 >&3 3>&- 2>/dev/null &
bg_keeper=$!
exec 3>&-
printf '%s\n' "$bg_keeper" >"$bg_d/stdin.keeper"
`)
	}
	// The wrapper reports its own pid and start time: the launcher cannot
	// read them once a quick job's wrapper has exited.
	b.WriteString(`: >>"$bg_d/stdout.log"
: >>"$bg_d/stderr.log"
if [ -r /proc/self/stat ]; then
	IFS= read -r bg_st </proc/$$/stat
	bg_st=${bg_st##*) }
	set -- $bg_st
	bg_st=${20}
else
	bg_st=$(ps -o lstart= -p $$)
fi
printf '%s %s\n' "$$" "$bg_st"
exec >/dev/null
`)
	fmt.Fprintf(&b, "BGJOB_JOB_ID=%s\nBGJOB_JOB_DIR=$bg_d\nexport BGJOB_JOB_ID BGJOB_JOB_DIR\n", m.ID)
	// The variables are set in the command's subshell only, so that they
	// cannot change the wrapper's own: its bg_* variables, or the PATH it
	// finds sh, date and mv in.
	var env strings.Builder
	for _, kv := range l.Env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !ValidEnvName(name) {
			return "", fmt.Errorf("invalid environment variable %q: want NAME=VALUE with NAME a shell name", kv)
		}
		q, err := Quote(value)
		if err != nil {
			return "", fmt.Errorf("value of %s: %w", name, err)
		}
		fmt.Fprintf(&env, "\t%s=%s\n\texport %s\n", name, q, name)
	}
	if l.LineBuffered {
		env.WriteString("\tPYTHONUNBUFFERED=1\n\texport PYTHONUNBUFFERED\n")
	}
	var run string
	if len(m.Argv) > 0 {
		q, err := QuoteArgv(m.Argv)
		if err != nil {
			return "", fmt.Errorf("command: %w", err)
		}
		run = q
	} else {
		q, err := Quote(m.Command)
		if err != nil {
			return "", fmt.Errorf("command: %w", err)
		}
		if m.Shell != "" {
			sh, err := Quote(m.Shell)
			if err != nil {
				return "", fmt.Errorf("shell: %w", err)
			}
			fmt.Fprintf(&b, "bg_sh=%s\n", sh)
		} else {
			b.WriteString("bg_sh=sh\ncommand -v bash >/dev/null 2>&1 && bg_sh=bash\n")
		}
		// $1, unlike $bg_sh, cannot be changed by a variable from Env.
		b.WriteString("set -- \"$bg_sh\"\n")
		run = `"$1" -c ` + q
	}
	// The timer and the capper lead process groups of their own, so that
	// one signal ends each with its sleep, whatever it is doing.
	if l.Timeout > 0 {
		b.WriteString(startHelper("timer", "bg_timer"))
	}
	if l.MaxLogSize > 0 {
		b.WriteString(startHelper("capper $$", "bg_capper"))
	}
	cd := "cd ."
	if m.Cwd != "" {
		q, err := Quote(m.Cwd)
		if err != nil {
			return "", fmt.Errorf("cwd: %w", err)
		}
		// A relative directory is named with ./ so that cd neither takes a
		// leading dash for an option nor looks it up in $CDPATH.
		if !strings.HasPrefix(m.Cwd, "/") {
			q = "./" + q
		}
		cd = "cd " + q
	}
	if l.LineBuffered {
		run = fmt.Sprintf("if [ -n \"$bg_lb\" ]; then stdbuf -oL -eL %s; else %s; fi", run, run)
		b.WriteString("bg_lb=\ncommand -v stdbuf >/dev/null 2>&1 && bg_lb=1\n")
	}
	stdin := "/dev/null"
	if l.Stdin {
		// A keeper holds the FIFO open for writing, so the command sees
		// end of file only when "bgjob send --eof" ends the keeper.
		stdin = `"$bg_d/stdin"`
	}
	// The command runs in a subshell (which execs its last command, so no
	// extra process): neither Env nor an argv that is a shell builtin such
	// as exit or exec can end or change the wrapper.
	fmt.Fprintf(&b, `if %s 2>>"$bg_d/stderr.log"; then
	(
%s	%s
	) <%s >>"$bg_d/stdout.log" 2>>"$bg_d/stderr.log"
	bg_rc=$?
else
	bg_rc=126
fi
`, cd, env.String(), run, stdin)
	if l.Stdin {
		b.WriteString("kill \"$bg_keeper\" 2>/dev/null\n")
	}
	// The timer ends at once while it sleeps; while it stops the job, it
	// ends once the group is gone.
	if l.Timeout > 0 {
		b.WriteString(endHelper("bg_timer"))
	}
	if l.MaxLogSize > 0 {
		b.WriteString(endHelper("bg_capper"))
	}
	b.WriteString(`date -u '+%Y-%m-%dT%H:%M:%SZ' >"$bg_d/ended_at" 2>/dev/null
printf '%s\n' "$bg_rc" >"$bg_d/exit_code.tmp" && mv -f "$bg_d/exit_code.tmp" "$bg_d/exit_code"
`)
	return b.String(), nil
}

// startHelper returns the wrapper's lines that start job.sh in helper mode
// ARGS (timer, capper) in a process group of its own, its pid in VAR.
func startHelper(args, v string) string {
	return fmt.Sprintf(`if command -v setsid >/dev/null 2>&1; then
	setsid /bin/sh "$0" %[1]s </dev/null >/dev/null 2>&1 &
else
	/bin/sh "$0" %[1]s </dev/null >/dev/null 2>&1 &
fi
%[2]s=$!
`, args, v)
}

// endHelper returns the wrapper's lines that end the helper whose pid is in
// VAR, with its group, and wait for it.
func endHelper(v string) string {
	return fmt.Sprintf(`kill -s TERM -- "-$%[1]s" 2>/dev/null || kill -s TERM "-$%[1]s" 2>/dev/null || kill "$%[1]s" 2>/dev/null
wait "$%[1]s"
`, v)
}

func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

func tenths(d time.Duration) int {
	return int((d + 99*time.Millisecond) / (100 * time.Millisecond))
}

// refs validates job references and returns them quoted as one list.
func refs(rs []string) (string, error) {
	for _, r := range rs {
		if err := jobdir.ValidateName("job", r); err != nil {
			return "", err
		}
	}
	return strings.Join(rs, " "), nil
}

// StatusScript returns the script that prints the observation of each job
// named in refs (by id or name), or an E notfound record.
func StatusScript(t Target, rs []string) (string, error) {
	b, list, err := t.script(rs)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(b, `bg_readroot
for bg_ref in %s; do
	if bg_find "$bg_ws" "$bg_ref" && bg_obs "$bg_d"; then :; else printf 'E\tnotfound\t%%s\n' "$bg_ref"; fi
done
`, list)
	return end(b), nil
}

// List selects jobs for ListScript.
type List struct {
	// AllWorkspaces lists every workspace under the root.
	AllWorkspaces bool
	// Before lists only jobs whose id sorts before it (a paging cursor).
	Before string
	// Max stops after this many jobs (0: all).
	Max int
}

// ListScript returns the script that prints the observations of jobs,
// newest first, and an N record when Max cut the list short. It reads
// directory names, and meta.json only of the jobs it prints.
func ListScript(t Target, q List) (string, error) {
	if q.Before != "" && !jobdir.IsID(q.Before) {
		return "", fmt.Errorf("invalid cursor %q: want a job id", q.Before)
	}
	var b strings.Builder
	if err := t.begin(&b); err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "bg_readroot\nbg_before=%s\nbg_max=%d\nbg_n=0\nLC_ALL=C\n", quote(q.Before), q.Max)
	body := `	bg_id=${bg_x##*/}
	if [ -n "$bg_before" ] && ! [ "$bg_id" \< "$bg_before" ]; then continue; fi
	[ -e "$bg_x/meta.json" ] || continue
	if [ "$bg_max" -gt 0 ] && [ "$bg_n" -ge "$bg_max" ]; then
		printf 'N\tmore\n'
		break
	fi
	bg_obs "$bg_x" || continue
	bg_n=$((bg_n + 1))
`
	if q.AllWorkspaces {
		fmt.Fprintf(&b, `bg_all=$(for bg_x in "$bg_root"/*/[0-9]*; do [ -d "$bg_x" ] && printf '%%s %%s\n' "${bg_x##*/}" "$bg_x"; done | LC_ALL=C sort -r)
while IFS=' ' read -r bg_id bg_x; do
	[ -n "$bg_x" ] || continue
%sdone <<bg_EOF
$bg_all
bg_EOF
`, body)
	} else {
		fmt.Fprintf(&b, `set -- "$bg_ws"/[0-9]*
bg_j=$#
while [ "$bg_j" -gt 0 ]; do
	eval "bg_x=\${$bg_j}"
	bg_j=$((bg_j - 1))
%sdone
`, body)
	}
	return end(&b), nil
}
