package bgjob

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/bgjob/bgjob/internal/records"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

// DefaultPortEnv is the environment variable a job gets its port in
// (Spec.Port, Spec.AutoPort) unless Spec.PortEnv names another.
const DefaultPortEnv = "PORT"

// checkPort: a port from 0 to 65535, not with AutoPort; PortEnv a name a
// shell can set, only with a port.
func checkPort(s Spec) error {
	switch {
	case s.Port < 0 || s.Port > 65535:
		return fmt.Errorf("port %d: want a TCP port from 1 to 65535", s.Port)
	case s.AutoPort && s.Port != 0:
		return errors.New("a port is given, or taken automatically, not both")
	case s.PortEnv != "" && s.Port == 0 && !s.AutoPort:
		return errors.New("a port's environment variable goes with a port")
	case s.PortEnv != "" && !shellgen.ValidEnvName(s.PortEnv):
		return fmt.Errorf("port environment variable %q: want a name made of letters, digits and _", s.PortEnv)
	case s.PortEnv == "BGJOB_JOB_ID" || s.PortEnv == "BGJOB_JOB_DIR":
		return fmt.Errorf("port environment variable %s: bgjob sets it for each job", s.PortEnv)
	}
	return nil
}

// takePort takes the port s asks for (Spec.Port, Spec.AutoPort) on the
// host, for the job s starts, and returns s with its id (made here when
// it has none: the reservation names it), the port taken, and the
// variable that passes it in its environment. A Spec that asks for no
// port is returned as it is.
func (c *Client) takePort(ctx context.Context, s Spec) (Spec, error) {
	if s.Port == 0 && !s.AutoPort {
		return s, nil
	}
	if s.ID == "" {
		s.ID = jobdir.NewID(time.Now())
	}
	p := shellgen.Port{ID: s.ID, Port: s.Port}
	if s.Replace {
		p.Replaces = s.Name
	}
	if s.AutoPort {
		// Runs at once start apart, so that each finds a free port at
		// its first try.
		p.From = shellgen.AutoPortLow + rand.IntN(shellgen.AutoPortHigh-shellgen.AutoPortLow+1)
	}
	script, err := shellgen.PortScript(c.target(), p)
	if err != nil {
		return s, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	var (
		taken int
		errs  []error
	)
	err = c.exec(ctx, script, nil, false, records.Handler{
		PortTaken: func(port int) { taken = port },
		Refused:   c.gather(&errs),
	})
	if err != nil {
		return s, doing("taking a port", err)
	}
	if err := errors.Join(errs...); err != nil {
		return s, err
	}
	if taken == 0 {
		return s, errors.New("taking a port: the host reported none")
	}
	s.Port, s.AutoPort = taken, false
	name := s.PortEnv
	if name == "" {
		name = DefaultPortEnv
	}
	// The port's variable replaces one Env sets.
	env := make([]string, 0, len(s.Env)+1)
	for _, kv := range s.Env {
		if !strings.HasPrefix(kv, name+"=") {
			env = append(env, kv)
		}
	}
	s.Env = append(env, name+"="+strconv.Itoa(taken))
	return s, nil
}

// unportWait bounds unport: a host that does not answer leaves the
// reservation, which holds its port for a minute at most (port.sh).
const unportWait = 10 * time.Second

// unport lets go of the port takePort took for the job of s, whose launch
// was refused or never made: a run after it may take the port at once.
// It runs after ctx's end too (an interrupted run), bounded by
// unportWait; a failure leaves the reservation, which expires.
func (c *Client) unport(ctx context.Context, s Spec) {
	script, err := shellgen.UnportScript(c.target(), s.ID, s.Port)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unportWait)
	defer cancel()
	_ = c.exec(ctx, script, nil, false, records.Handler{})
}
