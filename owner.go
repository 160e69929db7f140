package bgjob

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local/proc"
)

// SelfOwner returns the identity of the calling process as the owner of
// the jobs it starts (Spec.Owner): its pid, start time and boot id, and the
// names of its machine and pid namespace. Where there is no /proc the
// start time and boot id are "", and such an owner is never judged gone.
func SelfOwner(kind string) jobdir.Owner {
	m := thisMachine()
	o := jobdir.Owner{Kind: kind, PID: os.Getpid(), BootID: m.bootID, Hostname: m.hostname,
		MachineID: m.machineID, PIDNamespace: m.pidNS}
	o.ProcStart, _, _ = proc.Start(o.PID)
	return o
}

// machine names the machine and pid namespace bgjob runs in.
type machine struct {
	hostname, machineID, bootID, pidNS string
}

func thisMachine() machine {
	var m machine
	m.hostname, _ = os.Hostname()
	for _, f := range []string{"/etc/machine-id", "/var/lib/dbus/machine-id"} {
		if b, err := os.ReadFile(f); err == nil && strings.TrimSpace(string(b)) != "" {
			m.machineID = strings.TrimSpace(string(b))
			break
		}
	}
	m.bootID = proc.Boot()
	m.pidNS = proc.PIDNamespace()
	return m
}

// OwnerGone reports whether the owner o is provably gone, judged from the
// machine the caller runs on, and why: the machine rebooted ("rebooted"),
// or no live process has the owner's pid and start time ("gone"). An owner
// of another machine or pid namespace, or one whose identity is not
// known, is never gone (false, and the reason it cannot tell).
func OwnerGone(o jobdir.Owner) (bool, string) {
	return ownerGone(o, thisMachine())
}

func ownerGone(o jobdir.Owner, m machine) (bool, string) {
	switch {
	case o.Hostname != m.hostname || o.MachineID != m.machineID:
		return false, fmt.Sprintf("its owner runs on another machine (%s)", o.Hostname)
	case o.BootID == "" || m.bootID == "" || o.ProcStart == "" || o.PID <= 0:
		return false, "its owner's identity is not known"
	case o.BootID != m.bootID:
		return true, "rebooted"
	case o.PIDNamespace != m.pidNS:
		return false, "its owner runs in another pid namespace"
	}
	start, zombie, found := proc.Start(o.PID)
	if !found || zombie || start != o.ProcStart {
		return true, "gone"
	}
	return false, "its owner is alive"
}

// OrphanOptions tunes StopOrphans.
type OrphanOptions struct {
	// DryRun reports the orphans without stopping them.
	DryRun bool
}

// StopOrphans stops the jobs of the workspace whose owner (Spec.Owner) is
// provably gone (OwnerGone, judged on the machine the caller runs on),
// with reason ReasonSessionEnd, and returns them as Stop does, or, with DryRun, as they are. It never touches
// a job without an owner, one whose owner is alive, runs on another
// machine or cannot be checked, nor one with Owner.Keep.
func (c *Client) StopOrphans(ctx context.Context, o OrphanOptions) ([]jobdir.Job, error) {
	m := thisMachine()
	var (
		ids    []string
		found  []jobdir.Job
		listed error
	)
	_, listed = c.ListFunc(ctx, ListOptions{Owned: true}, func(j jobdir.Job) error {
		if j.Owner == nil || j.Owner.Keep || !j.Status.Active() && j.LiveProcesses == 0 {
			return nil
		}
		if gone, _ := ownerGone(*j.Owner, m); gone {
			ids = append(ids, j.ID)
			found = append(found, j)
		}
		return nil
	})
	if listed != nil && ctx.Err() != nil {
		return nil, listed
	}
	if len(ids) == 0 || o.DryRun {
		return found, listed
	}
	// Their session has ended: the stop says so.
	jobs, err := c.Stop(ctx, ids, StopOptions{Reason: ReasonSessionEnd})
	// A job removed since it was listed is done with.
	if err = IgnoreNotFound(err); err != nil {
		err = fmt.Errorf("stopping the jobs of owners that are gone: %w", err)
	}
	return jobs, errors.Join(listed, err)
}
