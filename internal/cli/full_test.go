package cli_test

import (
	"os"
	"testing"

	"github.com/bgjob/bgjob/internal/cli"
	"github.com/bgjob/bgjob/internal/full"
)

// The tests of the command line run it as bgjob-full: every verb and
// transport in the test binary. e2e's TestFullBinary runs the two
// binaries as installed.
func TestMain(m *testing.M) {
	cli.SetFull(full.New())
	os.Exit(m.Run())
}
