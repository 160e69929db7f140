//go:build !windows

// Command fleet starts a simulated fleet of N OpenSSH hosts for benchmarks
// (docs/benchmarks.md) with package internal/sshtest: each host is an sshd
// in its own pid, mount and UTS namespace on 127.0.2.I (then 127.0.3.I...). It needs root. It
// writes DIR/ssh_config (aliases n1..nN), DIR/known_hosts and DIR/hosts
// (one alias a line), prints the config's path and runs until it is sent
// SIGTERM or SIGINT or -timeout passes, then ends every host.
//
//	fleet -n 100 -dir DIR [-timeout 15m]
//
// DIR must not be under /tmp, which every host hides behind its own tmpfs.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/bgjob/bgjob/internal/sshtest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "fleet: error: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	n := flag.Int("n", 100, "number of hosts (at most sshtest.MaxFleet)")
	dir := flag.String("dir", "", "directory for the hosts' and the client's files (required, must exist, not under /tmp)")
	timeout := flag.Duration("timeout", 15*time.Minute, "stop after this long even if not told to")
	flag.Parse()
	if *dir == "" {
		return fmt.Errorf("-dir is required")
	}
	start := time.Now()
	f, err := sshtest.NewFleet(*dir, *n)
	if err != nil {
		return err
	}
	defer f.Close()
	cfg, err := f.WriteClientConfig(*dir)
	if err != nil {
		return err
	}
	hosts := strings.Join(f.Names(), "\n") + "\n"
	if err := os.WriteFile(filepath.Join(*dir, "hosts"), []byte(hosts), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "fleet: %d hosts up in %v\n", *n, time.Since(start).Round(time.Millisecond))
	fmt.Println(cfg)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-sig:
	case <-time.After(*timeout):
		fmt.Fprintf(os.Stderr, "fleet: stopping after -timeout %v\n", *timeout)
	}
	return f.Close()
}
