package cli

import "testing"

// Only a verb that is certain makes a tree of one command; help, flags the
// root does not take and anything unknown get the whole tree.
func TestVerbOf(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "x"}, "status"},
		{[]string{"-w", "ws", "--root", "/r", "logs", "--new", "x"}, "logs"},
		{[]string{"--root=/r", "-wws", "-H", "h", "ls"}, "ls"},
		{[]string{"run", "--", "sh", "-c", "--help"}, "run"},
		{[]string{"run", "-n", "x", "--", "help"}, "run"},
		{[]string{"status", "--help"}, ""},
		{[]string{"logs", "-h", "x"}, ""},
		{[]string{"--version"}, ""},
		{[]string{"-v"}, ""},
		{[]string{"help", "status"}, ""},
		{[]string{"stauts"}, ""},
		{[]string{"__complete", "st"}, ""},
		{[]string{"completion", "bash"}, ""},
		{[]string{"--bogus", "status"}, ""},
		{[]string{"-w"}, ""},
		{nil, ""},
	} {
		if got := verbOf(tc.args); got != tc.want {
			t.Errorf("verbOf(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
