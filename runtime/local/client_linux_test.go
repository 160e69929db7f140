package local

import (
	"testing"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/shellgen"
)

// testClient is a bgjob client of this runtime, with the root and
// workspace its requests name, which the tests answer in Go directly
// (answererOf) and compare with the scripts (targetOf).
type testClient struct {
	*bgjob.Client
	root, workspace string
	// procs is what the looks answererOf makes remember: from the second
	// on they are warm, as a server's.
	procs *procCache
}

// newClient returns a client of New() for root ("": the default) and
// workspace ("": "default"), its automatic pruning off.
func newClient(t *testing.T, root, workspace string) (*testClient, error) {
	t.Helper()
	return newClientOf(New(), root, workspace)
}

// newClientOf is newClient of rt.
func newClientOf(rt bgjob.Runtime, root, workspace string) (*testClient, error) {
	c, err := bgjob.NewClient(rt, root, workspace, bgjob.WithAutoPrune(0, 0))
	if err != nil {
		return nil, err
	}
	if root == "" {
		root = New().DefaultRoot()
	}
	if workspace == "" {
		workspace = "default"
	}
	return &testClient{Client: c, root: root, workspace: workspace, procs: &procCache{}}, nil
}

// answererOf returns what answers c's requests in Go.
func answererOf(c *testClient) answerer {
	return answerer{root: c.root, workspace: c.workspace, procs: c.procs}
}

// targetOf returns where c's requests look.
func targetOf(c *testClient) shellgen.Target {
	return shellgen.Target{Root: c.root, Workspace: c.workspace}
}
