package bgjob_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/shellgen"
)

// viaRuntime is a bgjob.Runtime written outside bgjob's packages, with
// nothing but public API: it reaches its host by running a command that
// runs a shell there (env here; kubectl exec -i POD --, docker exec -i
// NAME or ssh HOST elsewhere), the way the runtimes of runtime/ do.
type viaRuntime struct {
	via []string // the command before "sh -c SCRIPT"
}

func (r viaRuntime) Host() string { return strings.Join(r.via, " ") }

func (r viaRuntime) Exec(ctx context.Context, script string, stdin io.Reader, stdout io.Writer) error {
	args := append(append([]string{}, r.via...), "sh", "-c", script)
	if len(script) > shellgen.MaxArgScript {
		// Too long for one argument: a short bootstrap reads the script
		// first from stdin.
		args = append(append([]string{}, r.via...), "sh", "-c", shellgen.Bootstrap(), "sh", strconv.Itoa(len(script)))
		if stdin == nil {
			stdin = strings.NewReader("")
		}
		stdin = io.MultiReader(strings.NewReader(script), stdin)
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdout = stdout
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if stdin != nil {
		// Scripts that wait watch their stdin and end when it closes:
		// give them a pipe that stays open while the caller's reader does.
		pr, pw, err := os.Pipe()
		if err != nil {
			return err
		}
		defer pr.Close()
		cmd.Stdin = pr
		go func() {
			io.Copy(pw, stdin)
			pw.Close()
		}()
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", r.Host(), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// A runtime of one's own: anything that can run "sh -c SCRIPT" on a host
// and copy its output back is a bgjob host. Here a job runs end to end
// through one written outside bgjob's packages.
func Example_runtime() {
	root, err := os.MkdirTemp("", "bgjob-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)

	ctx := context.Background()
	c, err := bgjob.NewClient(viaRuntime{via: []string{"env"}}, root, "example")
	if err != nil {
		log.Fatal(err)
	}
	job, err := c.Run(ctx, bgjob.Spec{Name: "far", Argv: []string{"echo from afar; exit 4"}})
	if err != nil {
		log.Fatal(err)
	}
	jobs, err := c.Wait(ctx, []string{job.ID}, bgjob.WaitOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(jobs[0].Name, jobs[0].Status, *jobs[0].ExitCode)
	if _, err := c.Logs(ctx, "far", bgjob.LogOptions{}, os.Stdout, os.Stderr); err != nil {
		log.Fatal(err)
	}
	// Output:
	// far exited 4
	// from afar
}
