package e2e

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdFreePort sets the variable NAME to a TCP port on 127.0.0.1 that was
// free a moment ago: freeport NAME.
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: freeport NAME")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	port := l.Addr().(*net.TCPAddr).Port
	ts.Check(l.Close())
	ts.Setenv(args[0], strconv.Itoa(port))
}

// cmdListening waits up to 10 s for a socket listening on TCP port PORT
// (IPv4 or IPv6), or with ! checks that none listens now:
// [!] listening PORT.
func cmdListening(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: listening PORT")
	}
	port, err := strconv.Atoi(args[0])
	ts.Check(err)
	if neg {
		if listening(port) {
			ts.Fatalf("port %d: a socket is listening", port)
		}
		return
	}
	if !eventually(10*time.Second, func() bool { return listening(port) }) {
		ts.Fatalf("port %d: no socket is listening", port)
	}
}

// listening reports whether /proc/net/tcp or tcp6 has a socket in state
// LISTEN (0A) on port.
func listening(port int) bool {
	suffix := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(b), "\n") {
			fs := strings.Fields(line)
			if len(fs) > 3 && strings.HasSuffix(fs[1], suffix) && fs[3] == "0A" {
				return true
			}
		}
	}
	return false
}

// cmdTCPSend connects to 127.0.0.1:PORT, writes TEXT and a newline and
// closes the connection: tcpsend PORT TEXT.
func cmdTCPSend(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: tcpsend PORT TEXT")
	}
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+args[0], 5*time.Second)
	ts.Check(err)
	_, err = c.Write([]byte(args[1] + "\n"))
	ts.Check(err)
	ts.Check(c.Close())
}
