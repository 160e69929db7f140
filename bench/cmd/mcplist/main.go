// Command mcplist measures what a job_list call ({}: the first 20 jobs,
// their ports, the counts of every job) costs an agent that holds a
// `bgjob mcp` server open, with the jobs and processes the host has when
// it runs: one server of each binary given, called in interleaved rounds
// (each round calls each once, in an order that rotates), after w warm-up
// rounds. It prints a Markdown row of the median and quartiles of each
// (bench/scan.sh; docs/benchmarks.md).
//
//	mcplist -n 40 old=./bgjob-old new=./bgjob
//
// The job root is $BGJOB_ROOT.
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
		fmt.Fprintf(os.Stderr, "mcplist: error: %v\n", err)
		os.Exit(1)
	}
}

type server struct {
	label string
	cs    *sdk.ClientSession
	times []time.Duration
}

func run() error {
	n := flag.Int("n", 40, "measured rounds")
	warm := flag.Int("w", 5, "warm-up rounds, not measured")
	flag.Parse()
	ctx := context.Background()
	var servers []*server
	for _, arg := range flag.Args() {
		label, bin, ok := strings.Cut(arg, "=")
		if !ok {
			return fmt.Errorf("%q: want LABEL=BINARY", arg)
		}
		cmd := exec.Command(bin, "mcp")
		cmd.Stderr = os.Stderr
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "mcplist", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			return fmt.Errorf("starting %s mcp: %w", bin, err)
		}
		defer cs.Close()
		servers = append(servers, &server{label: label, cs: cs})
	}
	for round := range *warm + *n {
		for i := range servers {
			s := servers[(i+round)%len(servers)]
			t0 := time.Now()
			res, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Name: "job_list", Arguments: map[string]any{}})
			if err == nil && res.IsError {
				err = errors.New(fmt.Sprint(res.Content))
			}
			if err != nil {
				return fmt.Errorf("%s: job_list: %w", s.label, err)
			}
			if round >= *warm {
				s.times = append(s.times, time.Since(t0))
			}
		}
	}
	for _, s := range servers {
		fmt.Printf("| %s | %.2f ms | %.2f–%.2f ms |\n", s.label, ms(quantile(s.times, 0.5)), ms(quantile(s.times, 0.25)), ms(quantile(s.times, 0.75)))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func quantile(ts []time.Duration, q float64) time.Duration {
	s := slices.Clone(ts)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1)+0.5)]
}
