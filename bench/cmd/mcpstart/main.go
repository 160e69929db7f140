// Command mcpstart measures what starting a job costs an agent that holds
// a `bgjob mcp` server open: one job_start call ({"command":"true",
// "wait_sec":0}) inside the running server, beside the CLIs an agent would
// otherwise run for each job (`nq true`, `bgjob run -q -- true`), and the
// same with a wait for the end (job_start's default, `bgjob run --wait`), in
// interleaved rounds (each round runs each once, in an order that rotates
// from round to round). With -ssh-config and -host it adds the same over
// SSH: job_start with host on the server's kept connection beside
// `bgjob -H HOST run`, which dials for each job. It prints a Markdown table
// of medians and quartiles (bench/mcp.sh; docs/benchmarks.md). It also
// times the calls an agent makes in loops in the running server: job_output
// of a running job that writes a line every 10 ms (new bytes each call),
// job_list, and job_start of `echo hi` with the default wait (its output
// in the result).
//
//	mcpstart -bgjob ./bgjob -n 40 [-ssh-config F -host bench]
//
// The job root is $BGJOB_ROOT, nq's directory $NQDIR.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "mcpstart: error: %v\n", err)
		os.Exit(1)
	}
}

type measured struct {
	label, what string
	do          func(context.Context) error
	times       []time.Duration
}

func run() error {
	bin := flag.String("bgjob", "bgjob", "the bgjob binary")
	n := flag.Int("n", 40, "measured rounds")
	warm := flag.Int("w", 5, "warm-up rounds, not measured")
	sshConfig := flag.String("ssh-config", "", "ssh_config for the SSH rows")
	host := flag.String("host", "", "SSH host of the SSH rows (with -ssh-config)")
	flag.Parse()
	ctx := context.Background()

	args := []string{"mcp"}
	if *sshConfig != "" {
		args = append(args, "--ssh-config", *sshConfig)
	}
	cmd := exec.Command(*bin, args...)
	cmd.Stderr = os.Stderr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "mcpstart", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return fmt.Errorf("starting %s mcp: %w", *bin, err)
	}
	defer cs.Close()
	call := func(name string, a map[string]any) func(context.Context) error {
		return func(ctx context.Context) error {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: a})
			if err == nil && res.IsError {
				err = errors.New(fmt.Sprint(res.Content))
			}
			return err
		}
	}
	chatty := map[string]any{"command": "while :; do echo line; sleep 0.01; done", "name": "mcpstart-chatty", "wait_sec": 0}
	if err := call("job_start", chatty)(ctx); err != nil {
		return fmt.Errorf("starting the chatty job: %w", err)
	}
	start := func(host string, wait bool) func(context.Context) error {
		a := map[string]any{"command": "true", "wait_sec": 0}
		if wait {
			delete(a, "wait_sec")
		}
		if host != "" {
			a["host"] = host
		}
		return func(ctx context.Context) error {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "job_start", Arguments: a})
			if err == nil && res.IsError {
				err = errors.New(fmt.Sprint(res.Content))
			}
			return err
		}
	}
	execute := func(argv ...string) func(context.Context) error {
		return func(ctx context.Context) error {
			out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
			if err != nil {
				return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, out)
			}
			return nil
		}
	}
	rows := []*measured{
		{label: "mcp", what: `job_start {"command":"true","wait_sec":0} in a running bgjob mcp`, do: start("", false)},
		{label: "nq", what: "nq true", do: execute("nq", "true")},
		{label: "run", what: "bgjob run -q -- true", do: execute(*bin, "run", "-q", "--", "true")},
		{label: "mcp-wait", what: `job_start {"command":"true"}: waits (wait_sec 3), returns status, exit code, output`, do: start("", true)},
		{label: "run-wait", what: "bgjob run --wait 3s -- true", do: execute(*bin, "run", "--wait", "3s", "--", "true")},
		{label: "mcp-echo", what: `job_start {"command":"echo hi"}: waits, returns its output`, do: call("job_start", map[string]any{"command": "echo hi"})},
		{label: "output", what: `job_output {"id":"mcpstart-chatty"}: the new lines of a running job`, do: call("job_output", map[string]any{"id": "mcpstart-chatty"})},
		{label: "list", what: "job_list {}", do: call("job_list", map[string]any{})},
	}
	if *host != "" {
		rows = append(rows,
			&measured{label: "mcp-ssh", what: fmt.Sprintf(`job_start {"command":"true","wait_sec":0,"host":%q}`, *host), do: start(*host, false)},
			&measured{label: "run-ssh", what: fmt.Sprintf("bgjob -H %s run -q -- true", *host), do: execute(*bin, "--ssh-config", *sshConfig, "-H", *host, "run", "-q", "--", "true")},
		)
	}
	for round := range *warm + *n {
		for i := range rows {
			r := rows[(i+round)%len(rows)]
			t0 := time.Now()
			if err := r.do(ctx); err != nil {
				return fmt.Errorf("%s: %w", r.label, err)
			}
			if round >= *warm {
				r.times = append(r.times, time.Since(t0))
			}
		}
	}
	base := median(rows[0].times)
	fmt.Printf("%d interleaved rounds after %d warm-up rounds; baseline: mcp.\n\n", *n, *warm)
	fmt.Println("| | what | median | p25–p75 | × mcp |\n|---|---|--:|--:|--:|")
	for _, r := range rows {
		m := median(r.times)
		fmt.Printf("| %s | `%s` | %.2f ms | %.2f–%.2f ms | %.2f× |\n", r.label, r.what, ms(m), ms(quantile(r.times, 0.25)), ms(quantile(r.times, 0.75)), ms(m)/ms(base))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(ts []time.Duration) time.Duration { return quantile(ts, 0.5) }

func quantile(ts []time.Duration, q float64) time.Duration {
	s := slices.Clone(ts)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1)+0.5)]
}
