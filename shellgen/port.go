package shellgen

import (
	"fmt"

	"github.com/bgjob/bgjob/jobdir"
)

// The range run --port auto takes a port from: below Linux's ephemeral
// ports (32768 and up by default), which the host hands to outgoing
// connections, and above the ports well-known servers use.
const (
	AutoPortLow  = 20000
	AutoPortHigh = 29999
)

// Port selects what PortScript takes.
type Port struct {
	// ID is the job about to be launched in the target's workspace that
	// takes the port.
	ID string
	// Port is the port to take; 0 takes the first free one from From on
	// (AutoPortLow to AutoPortHigh, wrapping).
	Port int
	// From is where a search for a free port starts (0: AutoPortLow).
	From int
	// Replaces, for run --replace, is the job's name: a port that a job
	// of that name holds is taken over (the replace stops that job, and
	// waits until its processes are gone, before the launch).
	Replaces string
}

// PortScript returns the script that takes a TCP port for the job p.ID
// (port.sh): it prints an n PORT record, or refuses with an E record:
// porttaken, "PORT HOLDER" (what holds p.Port: "job ID", "process PID
// (NAME)", "another user's process", or nothing when the host cannot
// tell), or noport, "LOW-HIGH" (no port of the range is free).
func PortScript(t Target, p Port) (string, error) {
	if err := jobdir.ValidateName("job id", p.ID); err != nil {
		return "", err
	}
	if t.Workspace == "" {
		return "", fmt.Errorf("taking a port needs a workspace")
	}
	if p.Port < 0 || p.Port > 65535 {
		return "", fmt.Errorf("port %d: want 1 to 65535", p.Port)
	}
	from := p.From
	if from < AutoPortLow || from > AutoPortHigh {
		from = AutoPortLow
	}
	if p.Replaces != "" {
		if err := jobdir.ValidateJobName(p.Replaces); err != nil {
			return "", err
		}
	}
	return t.script("port.sh", func(c *config) {
		c.set("bg_id", p.ID)
		c.set("bg_pname", p.Replaces)
		c.setInt("bg_port", int64(p.Port))
		c.setInt("bg_pfrom", int64(from))
		c.setInt("bg_plo", AutoPortLow)
		c.setInt("bg_phi", AutoPortHigh)
	})
}

// UnportScript returns the script that lets go of the TCP port port
// that PortScript took for the job id, whose launch was refused
// (unport.sh): its reservation is removed unless the job runs. It prints
// nothing.
func UnportScript(t Target, id string, port int) (string, error) {
	if err := jobdir.ValidateName("job id", id); err != nil {
		return "", err
	}
	if t.Workspace == "" {
		return "", fmt.Errorf("letting go of a port needs a workspace")
	}
	if port < 1 || port > 65535 {
		return "", fmt.Errorf("port %d: want 1 to 65535", port)
	}
	return t.script("unport.sh", func(c *config) {
		c.set("bg_id", id)
		c.setInt("bg_port", int64(port))
	})
}
