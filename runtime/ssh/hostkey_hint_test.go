package ssh

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The command an unknown host key's error suggests is one OpenSSH runs:
// a port given with the host goes as -p PORT, since ssh takes no
// "host:port" destination, and ssh -G reads it as the host bgjob reached.
func TestUnknownHostCommand(t *testing.T) {
	sshBin, err := exec.LookPath("ssh")
	if err != nil {
		t.Fatal("ssh client not installed (openssh-client)")
	}
	for _, tc := range []struct {
		given, config string
		want          []string
		user, host    string
		port          string
	}{
		{"target", "", []string{"ssh", "target"}, "", "target", "22"},
		{"target", "/c", []string{"ssh", "-F", "/c", "target"}, "", "target", "22"},
		{"me@h.example:2222", "", []string{"ssh", "-p", "2222", "me@h.example"}, "me", "h.example", "2222"},
		{"h.example:2222", "/c", []string{"ssh", "-F", "/c", "-p", "2222", "h.example"}, "", "h.example", "2222"},
		{"me@[::1]:2200", "", []string{"ssh", "-p", "2200", "me@::1"}, "me", "::1", "2200"},
		{"[::1]:2200", "", []string{"ssh", "-p", "2200", "::1"}, "", "::1", "2200"},
		{"ssh://me@h.example:23", "", []string{"ssh", "-p", "23", "me@h.example"}, "me", "h.example", "23"},
	} {
		t.Run(tc.given, func(t *testing.T) {
			sp, err := parseSpec(tc.given)
			if err != nil {
				t.Fatal(err)
			}
			h := &hostKeyChecker{cfg: &hostConfig{name: tc.given, given: sp}, configFile: tc.config}
			got := h.sshArgv()
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("argv (-want +got):\n%s", d)
			}
			// OpenSSH reads it as the host meant: ssh -G, with no
			// config file of the user's in the way.
			rest := got[1:]
			if tc.config != "" {
				rest = got[3:]
			}
			args := append([]string{"-G", "-F", "/dev/null"}, rest...)
			out, err := exec.Command(sshBin, args...).Output()
			if err != nil {
				t.Fatalf("ssh %s: %v", strings.Join(args, " "), err)
			}
			lines := "\n" + string(out)
			for _, want := range []string{"\nhostname " + tc.host + "\n", "\nport " + tc.port + "\n"} {
				if !strings.Contains(lines, want) {
					t.Errorf("ssh %s: no %q in its -G", strings.Join(args, " "), strings.TrimSpace(want))
				}
			}
			if tc.user != "" && !strings.Contains(lines, "\nuser "+tc.user+"\n") {
				t.Errorf("ssh %s: not user %s", strings.Join(args, " "), tc.user)
			}
		})
	}
}
