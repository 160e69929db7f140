package jobdir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// ErrVersion is wrapped by the error DecodeMeta returns for a meta.json of
// a format version this package does not read.
var ErrVersion = errors.New("unsupported meta.json version")

// MaxMetaSize is the most bytes of meta.json a reader reads: a larger one
// makes its job unreadable, unread (the shell's read takes a system call
// per byte, and one 8 MB meta.json made ls take seconds). bgjob never
// writes one that large: EncodeMetaPrefix refuses a Meta that would be,
// and run refuses a command over bgjob.MaxCommand, a quarter of it.
const MaxMetaSize = 4 << 20

// metaHostRoom is room kept under MaxMetaSize for what the host appends
// to EncodeMetaPrefix: the buffering, umask and process fields.
const metaHostRoom = 1 << 10

// ErrMetaSize is wrapped by the errors of EncodeMetaPrefix and DecodeMeta
// for a meta.json larger than MaxMetaSize.
var ErrMetaSize = errors.New("meta.json too large")

// MetaProcessFormat is the end of meta.json, after EncodeMetaPrefix: the
// four process fields, in the order docs/format.md fixes, the closing brace
// and the newline. It is a format for Go's fmt and for printf(1) alike:
// four %s verbs (pid, pgid, proc_start, boot_id) and no other % or
// backslash, so the launcher, which learns these values on the host, can
// write meta.json with one printf(1) whose format is '%s' (the prefix) and
// then MetaProcessFormat, single-quoted by the script generator:
//
//	printf '%s,"pid":%s,...}<newline>' "$prefix" "$pid" "$pgid" "$start" "$boot"
//
// The values must need no escaping in JSON: pid and pgid decimal integers,
// proc_start and boot_id printable ASCII without '"' or '\' (clock ticks,
// `ps -o lstart=` output and a boot id UUID all are).
const MetaProcessFormat = `,"pid":%s,"pgid":%s,"proc_start":"%s","boot_id":"%s"}` + "\n"

// MetaHostFormat is the end of meta.json after EncodeMetaPrefix as the
// wrapper writes it on the host: three %s for the optional fields only the
// host knows (buffering, umask, host_started_at), each "" or encoded with
// its leading comma (HostField), then MetaProcessFormat.
const MetaHostFormat = "%s%s%s" + MetaProcessFormat

// HostField returns the optional host field name with value v as it
// follows EncodeMetaPrefix: `,"NAME":"V"`, or "" when v is "". v must need
// no escaping in JSON.
func HostField(name, v string) string {
	if v == "" {
		return ""
	}
	return `,"` + name + `":"` + v + `"`
}

// metaHead is a Meta without its process fields: each shallower field here
// hides the Meta field of the same JSON name (encoding/json's rule for
// embedded structs) and, being nil, is omitted. So the head holds every
// other field of Meta in Meta's order, whatever that order is.
type metaHead struct {
	Meta
	Buffering *struct{} `json:"buffering,omitempty"`
	Umask     *struct{} `json:"umask,omitempty"`
	HostStart *struct{} `json:"host_started_at,omitempty"`
	PID       *struct{} `json:"pid,omitempty"`
	PGID      *struct{} `json:"pgid,omitempty"`
	ProcStart *struct{} `json:"proc_start,omitempty"`
	BootID    *struct{} `json:"boot_id,omitempty"`
}

// EncodeMetaPrefix returns the start of m's meta.json: every field but the
// four process fields (pid, pgid, proc_start, boot_id), without the closing
// brace. The process fields of m are ignored. For any m,
//
//	EncodeMetaPrefix(m) + fmt.Sprintf(MetaProcessFormat, pid, pgid, procStart, bootID)
//
// is exactly EncodeMeta of m with those process fields (pid and pgid as
// decimal strings). This is the split the launcher uses: Go encodes the
// prefix, the host appends what only it knows.
func EncodeMetaPrefix(m Meta) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(metaHead{Meta: m}); err != nil {
		return nil, fmt.Errorf("encoding meta.json: %w", err)
	}
	// Encode wrote {...}\n; version and id are never omitted, so the
	// object is not empty and the process fields follow after a comma.
	out := bytes.TrimSuffix(b.Bytes(), []byte("}\n"))
	if len(out) == b.Len() {
		return nil, errors.New("encoding meta.json: not a JSON object")
	}
	if len(out) > MaxMetaSize-metaHostRoom {
		// The host's fields come on top: the room they need counts.
		return nil, fmt.Errorf("%w: it would be %d bytes and the host's fields, over the %d (%d MiB) readers read (a control character or an invalid UTF-8 byte of the command takes up to 6)",
			ErrMetaSize, len(out), MaxMetaSize, MaxMetaSize>>20)
	}
	return out, nil
}

// EncodeMeta returns the exact bytes meta.json holds for m: one line of
// JSON (UTF-8, not HTML-escaped) and a newline, the process fields last.
// Strings that are not valid UTF-8 are encoded with U+FFFD in place of
// each invalid byte, as docs/format.md says of command.
func EncodeMeta(m Meta) ([]byte, error) {
	b, err := EncodeMetaPrefix(m)
	if err != nil {
		return nil, err
	}
	if m.Buffering != "" {
		b = append(b, `,"buffering":`...)
		b = appendString(b, m.Buffering)
	}
	if m.Umask != "" {
		b = append(b, `,"umask":`...)
		b = appendString(b, m.Umask)
	}
	if m.HostStartedAt != nil {
		b = append(b, `,"host_started_at":`...)
		b = appendString(b, m.HostStartedAt.UTC().Format(EndedAtLayout))
	}
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(m.PID), 10)
	b = append(b, `,"pgid":`...)
	b = strconv.AppendInt(b, int64(m.PGID), 10)
	b = append(b, `,"proc_start":`...)
	b = appendString(b, m.ProcStart)
	b = append(b, `,"boot_id":`...)
	b = appendString(b, m.BootID)
	return append(b, "}\n"...), nil
}

// appendString appends s as a JSON string, not HTML-escaped.
func appendString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// DecodeMeta parses meta.json (its whole content, or its first line). It
// ignores fields it does not know, as docs/format.md asks of readers, and
// refuses, with an error wrapping ErrVersion, a version other than
// Version: a new incompatible format gets a new version. More than
// MaxMetaSize bytes are refused unread, with an error wrapping
// ErrMetaSize.
func DecodeMeta(b []byte) (Meta, error) {
	if len(b) > MaxMetaSize {
		return Meta{}, fmt.Errorf("%w: %d bytes, more than the %d a reader reads", ErrMetaSize, len(b), MaxMetaSize)
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return Meta{}, err
	}
	if m.Version != Version {
		return Meta{}, fmt.Errorf("%w %d (this bgjob reads version %d)", ErrVersion, m.Version, Version)
	}
	if len(m.Argv) == 0 {
		// "argv":[] is no argv, as EncodeMeta writes it (omitted).
		m.Argv = nil
	}
	// Likewise "labels":{} and "ulimits":[] (FuzzDecodeMeta).
	if len(m.Labels) == 0 {
		m.Labels = nil
	}
	if len(m.Ulimits) == 0 {
		m.Ulimits = nil
	}
	return m, nil
}
