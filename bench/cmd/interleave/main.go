// Command interleave times commands side by side: each round runs every
// command once, in an order that rotates from round to round (A B C, B C A,
// C A B, ...), so that a machine getting busier or quieter during the run
// weighs on all of them alike. It reports the median and the quartiles of
// each command's wall-clock time, the ratio of each median to a baseline's,
// and whether the targets given with -target are met, as a markdown table.
//
// hyperfine runs all runs of one command before the next command, which on a
// noisy machine compares different moments rather than different commands;
// this tool exists for the A B A B order.
//
//	interleave -title 'start latency' -n 40 -base setsid \
//	  -c 'bgjob=bgjob run -q -- true' \
//	  -c "setsid=sh -c 'setsid nohup true >/dev/null 2>&1 </dev/null &'" \
//	  -target 'bgjob / setsid <= 1.1'
//
// Each -c is LABEL=COMMAND; COMMAND is split into words like a shell would
// (single and double quotes, backslash; leading NAME=VALUE words set
// environment variables) and run directly, not through a shell, with stdin, stdout and stderr on /dev/null (stderr goes to a file
// shown when a command fails). A target is "A / B <= X" or "A / B < X": the
// ratio of A's median to B's. Rows are appended to -md and targets to
// -targets (tab-separated: title, target, ratio, met), for bench/run.sh.
//
// -setup LABEL=COMMAND runs COMMAND, untimed, before each run of LABEL
// (warm-up runs too): e.g. to give every timed run a fresh workspace.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

type command struct {
	label string
	env   []string // NAME=VALUE words before the command, as in sh
	argv  []string
	setup *command // run untimed before each run (nil: none)
	times []time.Duration
}

type target struct {
	a, b  string
	op    string // "<=" or "<"
	limit float64
}

func (t target) String() string {
	return fmt.Sprintf("%s / %s %s %g", t.a, t.b, t.op, t.limit)
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ", ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "interleave: error: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("interleave", flag.ContinueOnError)
	var cmds, targets, setups listFlag
	title := fs.String("title", "", "title of the table")
	n := fs.Int("n", 30, "measured rounds")
	warmup := fs.Int("w", 3, "warm-up rounds, not measured")
	base := fs.String("base", "", "label of the baseline for the ratio column (default: the first command)")
	md := fs.String("md", "", "append the markdown table to this file too")
	tsv := fs.String("targets", "", "append target results to this file (tab-separated)")
	note := fs.String("note", "", "a line printed under the table")
	fs.Var(&cmds, "c", "LABEL=COMMAND (repeatable)")
	fs.Var(&setups, "setup", "LABEL=COMMAND run untimed before each run of LABEL (repeatable)")
	fs.Var(&targets, "target", `"A / B <= X": A's median at most X times B's (repeatable)`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(cmds) == 0 || *n < 1 {
		return errors.New("need at least one -c and -n >= 1")
	}
	var list []*command
	byLabel := map[string]*command{}
	for _, c := range cmds {
		cmd, err := parseCommand("-c", c)
		if err != nil {
			return err
		}
		if byLabel[cmd.label] != nil {
			return fmt.Errorf("label %q given twice", cmd.label)
		}
		list = append(list, cmd)
		byLabel[cmd.label] = cmd
	}
	for _, s := range setups {
		cmd, err := parseCommand("-setup", s)
		if err != nil {
			return err
		}
		if byLabel[cmd.label] == nil {
			return fmt.Errorf("-setup %q names an unknown label", s)
		}
		byLabel[cmd.label].setup = cmd
	}
	var tgs []target
	for _, s := range targets {
		t, err := parseTarget(s)
		if err != nil {
			return err
		}
		if byLabel[t.a] == nil || byLabel[t.b] == nil {
			return fmt.Errorf("target %q names an unknown label", s)
		}
		tgs = append(tgs, t)
	}
	baseline := list[0]
	if *base != "" {
		if baseline = byLabel[*base]; baseline == nil {
			return fmt.Errorf("-base %q is not a label", *base)
		}
	}
	errFile, err := os.CreateTemp("", "interleave-stderr-*")
	if err != nil {
		return err
	}
	defer os.Remove(errFile.Name())
	defer errFile.Close()

	for round := range *warmup + *n {
		for i := range list {
			c := list[(i+round)%len(list)]
			if s := c.setup; s != nil {
				if _, err := once(s.env, s.argv, errFile); err != nil {
					return fmt.Errorf("setup of %s: %w", c.label, err)
				}
			}
			d, err := once(c.env, c.argv, errFile)
			if err != nil {
				return fmt.Errorf("%s: %w", c.label, err)
			}
			if round >= *warmup {
				c.times = append(c.times, d)
			}
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "\n### %s\n\n", *title)
	fmt.Fprintf(&b, "%d interleaved rounds after %d warm-up rounds; baseline: %s.\n\n", *n, *warmup, baseline.label)
	b.WriteString("| | command | median | p25–p75 | × baseline | target | met? |\n|---|---|--:|--:|--:|---|---|\n")
	bmed := median(baseline.times)
	results := map[string][]string{}
	var tsvLines []string
	for _, t := range tgs {
		r := ms(median(byLabel[t.a].times)) / ms(median(byLabel[t.b].times))
		ok := r < t.limit || (t.op == "<=" && r == t.limit)
		results[t.a] = append(results[t.a], fmt.Sprintf("%s %s %g× %s: %.2f×", t.a, t.op, t.limit, t.b, r), yesNo(ok))
		tsvLines = append(tsvLines, fmt.Sprintf("%s\t%s\t%.2f\t%s\n", *title, t, r, yesNo(ok)))
	}
	for _, c := range list {
		med := median(c.times)
		tgt, met := "", ""
		if rs := results[c.label]; len(rs) > 0 {
			var ts, ms []string
			for i := 0; i < len(rs); i += 2 {
				ts, ms = append(ts, rs[i]), append(ms, rs[i+1])
			}
			tgt, met = strings.Join(ts, "<br>"), strings.Join(ms, "<br>")
		}
		fmt.Fprintf(&b, "| %s | `%s` | %.2f ms | %.2f–%.2f ms | %.2f× | %s | %s |\n",
			c.label, display(append(slices.Clone(c.env), c.argv...)), ms(med), ms(quantile(c.times, 0.25)), ms(quantile(c.times, 0.75)), ms(med)/ms(bmed), tgt, met)
	}
	if *note != "" {
		fmt.Fprintf(&b, "\n%s\n", *note)
	}
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return err
	}
	if *md != "" {
		if err := appendFile(*md, b.String()); err != nil {
			return err
		}
	}
	if *tsv != "" {
		if err := appendFile(*tsv, strings.Join(tsvLines, "")); err != nil {
			return err
		}
	}
	return nil
}

// parseCommand parses LABEL=COMMAND, the value of the flag name.
func parseCommand(name, s string) (*command, error) {
	label, line, ok := strings.Cut(s, "=")
	if !ok || label == "" {
		return nil, fmt.Errorf("%s %q: want LABEL=COMMAND", name, s)
	}
	argv, err := split(line)
	if err != nil || len(argv) == 0 {
		return nil, fmt.Errorf("%s %q: %v", name, s, err)
	}
	cmd := &command{label: label}
	for len(argv) > 1 && isAssignment(argv[0]) {
		cmd.env, argv = append(cmd.env, argv[0]), argv[1:]
	}
	cmd.argv = argv
	return cmd, nil
}

// once runs argv with env added to the environment and returns its
// wall-clock time, from just before the fork to the end of wait. argv[0] is
// looked up in this process's PATH.
func once(env, argv []string, errFile *os.File) (time.Duration, error) {
	if err := errFile.Truncate(0); err != nil {
		return 0, err
	}
	if _, err := errFile.Seek(0, 0); err != nil {
		return 0, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	// Files, not pipes: Wait must not wait for background processes that
	// inherited an output (a job launcher's children may keep it open).
	cmd.Stderr = errFile
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		b, _ := os.ReadFile(errFile.Name())
		return 0, fmt.Errorf("%s: %w: %s", display(argv), err, strings.TrimSpace(string(b)))
	}
	return d, nil
}

// isAssignment reports whether word is NAME=VALUE with NAME a shell name.
func isAssignment(word string) bool {
	name, _, ok := strings.Cut(word, "=")
	if !ok || name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for _, c := range name {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func parseTarget(s string) (target, error) {
	var t target
	lhs, rhs, ok := strings.Cut(s, "<=")
	t.op = "<="
	if !ok {
		lhs, rhs, ok = strings.Cut(s, "<")
		t.op = "<"
	}
	a, b, ok2 := strings.Cut(lhs, " / ")
	if !ok || !ok2 {
		return t, fmt.Errorf("target %q: want \"A / B <= X\"", s)
	}
	limit, err := strconv.ParseFloat(strings.TrimSpace(rhs), 64)
	if err != nil {
		return t, fmt.Errorf("target %q: %v", s, err)
	}
	t.a, t.b, t.limit = strings.TrimSpace(a), strings.TrimSpace(b), limit
	return t, nil
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(ts []time.Duration) time.Duration { return quantile(ts, 0.5) }

// quantile interpolates linearly between the closest ranks.
func quantile(ts []time.Duration, q float64) time.Duration {
	s := slices.Clone(ts)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	frac := pos - float64(i)
	return s[i] + time.Duration(frac*float64(s[i+1]-s[i]))
}

func appendFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	w.WriteString(s)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// display shows argv as a shell command line, with long temporary paths
// shortened to their last element.
func display(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		if strings.HasPrefix(a, "/") && strings.Count(a, "/") > 2 && !strings.ContainsAny(a, " '") {
			a = "…/" + a[strings.LastIndexByte(a, '/')+1:]
		}
		if a == "" || strings.ContainsAny(a, " '\"\\$&|<>;*?()") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		words[i] = a
	}
	return strings.ReplaceAll(strings.Join(words, " "), "|", `\|`)
}

// split breaks a command line into words as a POSIX shell would, for single
// quotes, double quotes and backslashes; it expands nothing.
func split(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			in = true
			for i++; ; i++ {
				if i >= len(s) {
					return nil, errors.New("unterminated double quote")
				}
				if s[i] == '"' {
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}
