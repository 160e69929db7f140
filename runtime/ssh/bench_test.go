package ssh_test

import (
	"context"
	"testing"

	"github.com/bgjob/bgjob/runtime/ssh"
)

// BenchmarkDial measures resolving the config, connecting and
// authenticating to a local sshd.
func BenchmarkDial(b *testing.B) {
	e := newEnv(b)
	for b.Loop() {
		r, err := ssh.Dial(context.Background(), "target", ssh.Options{ConfigFile: e.cfg})
		if err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
}

// BenchmarkExec measures one script on an open connection.
func BenchmarkExec(b *testing.B) {
	e := newEnv(b)
	r, err := ssh.Dial(context.Background(), "target", ssh.Options{ConfigFile: e.cfg})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for b.Loop() {
		if err := r.Exec(context.Background(), "true", nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}
