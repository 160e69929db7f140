package jobdir

import (
	"maps"
	"slices"
	"sync"
)

// metaMemo keeps the Meta decoded from each meta.json line this process
// derived lately: a process that looks again and again (the MCP server,
// top, a follow) derives the same jobs' lines look after look, and
// decoding their JSON was a seventh of an MCP job_list. Each use is a
// copy (cloneMeta): no caller shares what another may change. Bounded:
// past maxMetaMemo lines it starts anew.
var metaMemo struct {
	sync.Mutex
	m map[string]Meta
}

const maxMetaMemo = 4096

// decodeMetaLine is DecodeMeta of line, from metaMemo where it was
// decoded before.
func decodeMetaLine(line string) (Meta, error) {
	metaMemo.Lock()
	m, ok := metaMemo.m[line]
	metaMemo.Unlock()
	if ok {
		return cloneMeta(m), nil
	}
	m, err := DecodeMeta([]byte(line))
	if err != nil {
		return m, err
	}
	metaMemo.Lock()
	if metaMemo.m == nil || len(metaMemo.m) >= maxMetaMemo {
		metaMemo.m = make(map[string]Meta)
	}
	metaMemo.m[line] = cloneMeta(m)
	metaMemo.Unlock()
	return m, nil
}

// cloneMeta returns a copy of m that shares no slice, map or pointer with
// it (TestCloneMetaSharesNothing holds every such field to it).
func cloneMeta(m Meta) Meta {
	m.Argv = slices.Clone(m.Argv)
	m.Env = slices.Clone(m.Env)
	m.After = slices.Clone(m.After)
	m.AfterOK = slices.Clone(m.AfterOK)
	m.Ulimits = slices.Clone(m.Ulimits)
	m.Labels = maps.Clone(m.Labels)
	if m.QueuedAt != nil {
		t := *m.QueuedAt
		m.QueuedAt = &t
	}
	if m.HostStartedAt != nil {
		t := *m.HostStartedAt
		m.HostStartedAt = &t
	}
	if m.Owner != nil {
		o := *m.Owner
		m.Owner = &o
	}
	return m
}
