//go:build !windows

// Command sshd starts a loopback OpenSSH sshd for the benchmark harness
// (bench/run.sh) with package internal/sshtest, writes a client config for
// it, prints the config's path and runs until it is sent SIGTERM or SIGINT
// or -timeout passes, then stops the server and every connection to it.
//
//	sshd -dir DIR [-control SOCKET] [-timeout 15m]
//
// The client config DIR/ssh_config has two Host entries for the server:
// "bench" and, with -control, "bench-cm", whose ControlPath is SOCKET (start
// the master with "ssh -F DIR/ssh_config -M -S SOCKET -fN bench-cm").
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/bgjob/bgjob/internal/sshtest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "sshd: error: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	dir := flag.String("dir", "", "directory for the server's and the client's files (required, must exist)")
	control := flag.String("control", "", "ControlPath of the bench-cm host entry")
	timeout := flag.Duration("timeout", 15*time.Minute, "stop after this long even if not told to")
	flag.Parse()
	if *dir == "" {
		return fmt.Errorf("-dir is required")
	}
	srv, err := sshtest.New(*dir)
	if err != nil {
		return err
	}
	defer srv.Close()
	kh := filepath.Join(*dir, "known_hosts")
	if err := srv.WriteKnownHosts(kh, false); err != nil {
		return err
	}
	cfg := srv.ConfigEntry("bench", kh, "BatchMode yes")
	if *control != "" {
		cfg += srv.ConfigEntry("bench-cm", kh, "BatchMode yes", "ControlPath "+*control)
	}
	path := filepath.Join(*dir, "ssh_config")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return err
	}
	fmt.Println(path)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-sig:
	case <-time.After(*timeout):
		fmt.Fprintf(os.Stderr, "sshd: stopping after -timeout %v\n", *timeout)
	}
	return srv.Close()
}
