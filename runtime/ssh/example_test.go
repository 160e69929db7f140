package ssh_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/bgjob/bgjob/runtime/ssh"
)

// Dial a host named in ~/.ssh/config and run a script on it.
func ExampleDial() {
	ctx := context.Background()
	r, err := ssh.Dial(ctx, "web1", ssh.Options{
		// The runtime never prints: the caller decides where warnings and
		// the passphrase prompt go.
		Warn:       func(msg string) { log.Printf("warning: %s", msg) },
		Passphrase: ssh.TerminalPassphrase(os.Stdin, os.Stderr),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	var out strings.Builder
	if err := r.Exec(ctx, "uname -s", nil, &out); err != nil {
		log.Fatal(err)
	}
	fmt.Print(out.String())
}
