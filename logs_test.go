package bgjob_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/runtime/local"
)

// LogOptions.Validate is the one home of the rules about how a read's
// options go together; the CLI and the MCP server word its FieldError with
// their own names.
func TestLogOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		o            bgjob.LogOptions
		field, other string
	}{
		{bgjob.LogOptions{}, "", ""},
		{bgjob.LogOptions{New: true, Tail: 3}, "", ""},
		{bgjob.LogOptions{Tail: bgjob.Zero}, "", ""},
		{bgjob.LogOptions{FromOffset: true}, "", ""},
		{bgjob.LogOptions{Tail: 1, Head: 1}, "Tail", "Head"},
		{bgjob.LogOptions{Head: 1, FromOffset: true}, "Head", "Offset"},
		{bgjob.LogOptions{Bytes: bgjob.Zero, New: true}, "Bytes", "New"},
		{bgjob.LogOptions{Tail: -2}, "Tail", ""},
		{bgjob.LogOptions{Offset: -1, FromOffset: true}, "Offset", ""},
		{bgjob.LogOptions{MaxBytes: -1}, "MaxBytes", ""},
		{bgjob.LogOptions{Reader: "r"}, "Reader", "New"},
		{bgjob.LogOptions{Hold: true}, "Hold", "New"},
		{bgjob.LogOptions{New: true, Follow: true}, "New", "Follow"},
	} {
		err := tc.o.Validate()
		if tc.field == "" {
			if err != nil {
				t.Errorf("%+v: %v, want nil", tc.o, err)
			}
			continue
		}
		var fe *bgjob.FieldError
		if !errors.As(err, &fe) || !errors.Is(err, bgjob.ErrUsage) || fe.Field != tc.field || fe.Other != tc.other {
			t.Errorf("%+v: %v (%+v), want a usage FieldError on %s and %q", tc.o, err, fe, tc.field, tc.other)
		}
	}
}

// A read of the logs does not look at the host's processes, and says so
// (ProcessScan "none"); a follow counts them once the job has ended, here
// the one process it left behind (the local runtime's watched follow, as
// the follow script over SSH does).
func TestLogsDoNotCountProcesses(t *testing.T) {
	root := t.TempDir()
	c, err := bgjob.NewClient(local.New(), root, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	j, err := c.Run(ctx, bgjob.Spec{Argv: []string{"sleep 60 & echo left"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop(context.Background(), []string{j.ID}, bgjob.StopOptions{Grace: new(time.Duration(0))}) })
	if _, err := c.Wait(ctx, []string{j.ID}, bgjob.WaitOptions{Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := c.Logs(ctx, j.ID, bgjob.LogOptions{}, &out, io.Discard)
	if err != nil || out.String() != "left\n" {
		t.Fatalf("Logs: %q, %v", out.String(), err)
	}
	if res.Job.ProcessScan != jobdir.ScanNone || res.Job.LiveProcesses != 0 {
		t.Errorf("a read's job: process_scan %q, %d live; want none, 0 (not counted)", res.Job.ProcessScan, res.Job.LiveProcesses)
	}
	res, err = c.Logs(ctx, j.ID, bgjob.LogOptions{Follow: true}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if res.Job.ProcessScan != "" || res.Job.LiveProcesses != 1 {
		t.Errorf("a follow's job: process_scan %q, %d live; want counted, 1 (the sleep)", res.Job.ProcessScan, res.Job.LiveProcesses)
	}
}
