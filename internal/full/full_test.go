package full

import (
	"testing"

	"github.com/bgjob/bgjob/internal/cli"
	"github.com/bgjob/bgjob/internal/mcp"
	"github.com/bgjob/bgjob/internal/tui"
)

// The command line's defaults of flags whose meaning lives here are this
// side's: the bgjob binary, which shows them in its help, does not link
// these packages.
func TestDefaultsAgree(t *testing.T) {
	if cli.DefaultMCPMaxOutput != mcp.DefaultMaxOutput {
		t.Errorf("cli.DefaultMCPMaxOutput = %d, mcp.DefaultMaxOutput = %d", cli.DefaultMCPMaxOutput, mcp.DefaultMaxOutput)
	}
	if cli.DefaultTopInterval != tui.DefaultInterval {
		t.Errorf("cli.DefaultTopInterval = %v, tui.DefaultInterval = %v", cli.DefaultTopInterval, tui.DefaultInterval)
	}
}
