package via_test

import (
	"bytes"
	"context"
	"os/exec"
	"testing"

	"github.com/bgjob/bgjob/internal/containertest"
	"github.com/bgjob/bgjob/internal/testneed"
	ctr "github.com/bgjob/bgjob/runtime/container"
	"github.com/bgjob/bgjob/runtime/via"
	"github.com/bgjob/bgjob/shellgen"
)

// TestPodmanExec runs scripts in a busybox container through the podman
// command ("podman exec -i %h"), which passes its arguments on as they
// are: short and long scripts, stdin, and a script's exit status.
func TestPodmanExec(t *testing.T) {
	if _, err := exec.LookPath("podman"); err != nil {
		testneed.Missing(t, "the podman command (apt-get install podman)")
	}
	c := containertest.Start(t, ctr.Podman).Run(t)
	r, err := via.New("podman exec -i %h", c.Name)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	long := "echo " + string(bytes.Repeat([]byte("x"), shellgen.MaxArgScript)) + " >/dev/null; cat; exit 4"
	err = r.Exec(context.Background(), long, bytes.NewBufferString("in\n"), &out)
	var xe *via.ExitError
	if !asExit(err, &xe) || xe.Status != 4 || out.String() != "in\n" {
		t.Fatalf("Exec: %v, stdout %q; want status 4 and the input back", err, out.String())
	}
}
