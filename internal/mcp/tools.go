package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgjob/bgjob"
	"github.com/bgjob/bgjob/jobdir"
	"github.com/bgjob/bgjob/shellgen"
)

func (s *Server) addTools() {
	// Defaults are in the schemas for the model to see; the SDK fills them
	// in, so each is what the handler does without it. since has none: "new"
	// given means more than since left out (with tail_lines).
	sdk.AddTool(s.sdk, tool("job_start", startDoc, schema[startIn](map[string]any{"wait_sec": 3, "line_buffered": true}), startSchema(), hints{
		title: "Start a background job", destructive: true, openWorld: true}), s.start)
	outputSchema := withEnum(schema[outputIn](map[string]any{"stream": "both"}), "stream", []string{"stdout", "stderr", "both"})
	sdk.AddTool(s.sdk, tool("job_output", outputDoc, withEnum(outputSchema, "since", []string{"new", "start"}), output[outputOut](), hints{
		title: "Read a job's output"}), s.output)
	sdk.AddTool(s.sdk, tool("job_wait", waitDoc, schema[waitIn](map[string]any{"timeout_sec": 30}), output[waitOut](), hints{
		title: "Wait for jobs to end or print a line", readOnly: true, idempotent: true}), s.wait)
	sdk.AddTool(s.sdk, tool("job_list", listDoc, withEnum(schema[listIn](map[string]any{"limit": 20}), "status", jobdir.Statuses()), output[listOut](), hints{
		title: "List jobs", readOnly: true, idempotent: true}), s.list)
	sdk.AddTool(s.sdk, tool("job_stop", stopDoc, withEnum(schema[stopIn](map[string]any{"signal": "TERM", "grace_sec": bgjob.DefaultGrace.Seconds()}), "signal", shellgen.Signals()), output[stopOut](), hints{
		title: "Stop jobs", destructive: true, idempotent: true}), s.stop)
	sdk.AddTool(s.sdk, tool("job_send", sendDoc, schema[sendIn](nil), output[jobView](), hints{
		title: "Send input to a job", destructive: true, openWorld: true}), s.send)
	sdk.AddTool(s.sdk, tool("job_remove", removeDoc, schema[removeIn](nil), output[removeOut](), hints{
		title: "Remove ended jobs", destructive: true, idempotent: true}), s.remove)
}

// hints are a tool's annotations. job_output is not a read only: a read
// through the client's cursor moves it, so that a second call returns what
// is new since (not idempotent either). job_start and job_send run or feed
// an arbitrary command, which may change anything and reach anything, hence
// destructive and open-world; job_stop ends processes and job_remove
// deletes jobs' files (destructive), and a second call with the same
// arguments changes nothing more. The other tools touch only the jobs of
// the workspace (a closed world).
type hints struct {
	title                                        string
	readOnly, destructive, idempotent, openWorld bool
}

// tool is a tool with its annotations and its description as one
// paragraph: the descriptions are wrapped in the source for reading, and a
// model reads a hard line break inside a sentence as a break.
func tool(name, doc string, in, out *jsonschema.Schema, h hints) *sdk.Tool {
	return &sdk.Tool{Name: name, Title: h.title, Description: unwrap(doc), InputSchema: in, OutputSchema: out,
		Annotations: &sdk.ToolAnnotations{Title: h.title, ReadOnlyHint: h.readOnly,
			DestructiveHint: &h.destructive, IdempotentHint: h.idempotent, OpenWorldHint: &h.openWorld}}
}

// unwrap joins the lines of a description with spaces.
func unwrap(doc string) string {
	return strings.ReplaceAll(doc, "\n", " ")
}

// schema is the input schema inferred from In, with defaults set, in the
// subset of JSON Schema that every client accepts (see oneType); a host
// parameter's description ends with the forms a host takes (hostForms).
func schema[In any](defaults map[string]any) *jsonschema.Schema {
	sc := inferred[In]()
	for k, v := range defaults {
		p := sc.Properties[k]
		if p == nil {
			panic(fmt.Sprintf("schema of %T has no %s", *new(In), k))
		}
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		p.Default = b
	}
	if p := sc.Properties["host"]; p != nil {
		p.Description += hostForms
	}
	return sc
}

// hostForms are the forms of a tool's host argument, as package host
// reads them.
const hostForms = "; an SSH host ([user@]host[:port], ssh://[user@]host[:port], or a Host alias of ~/.ssh/config)," +
	" or a running container: docker://[USER@]CONTAINER or podman://[USER@]CONTAINER"

// output is the output schema inferred from Out in the same subset: a
// field that has no value is left out of a result, never null (strict
// validators warn of a type list such as ["null", "integer"]).
func output[Out any]() *jsonschema.Schema {
	sc := inferred[Out]()
	// Every result may carry the digest of what changed since the
	// client's previous call (digest.go).
	ev := inferred[digestField]().Properties["events"]
	ev.Description = "what changed since your previous call for the jobs you started: each that ended (not run included) or became ready"
	sc.Properties["events"] = ev
	return sc
}

// digestField is the events field the digest adds to a result.
type digestField struct {
	Events []bgjob.Event `json:"events,omitempty"`
}

// inferred is the schema the SDK would infer from T, with one type for
// every property (oneType).
func inferred[T any]() *jsonschema.Schema {
	sc, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("schema of %T: %v", *new(T), err))
	}
	for _, p := range sc.Properties {
		oneType(p)
	}
	return sc
}

// withEnum sets the values property name of sc takes.
func withEnum[T any](sc *jsonschema.Schema, name string, values []T) *jsonschema.Schema {
	p := sc.Properties[name]
	if p == nil {
		panic(fmt.Sprintf("schema has no %s", name))
	}
	p.Enum = nil
	for _, v := range values {
		p.Enum = append(p.Enum, v)
	}
	return sc
}

// oneType gives a property one type: Gemini's function declarations take
// one type per schema, and the whole request of a session fails (HTTP 400)
// on a list such as ["null", "array"], which inference gives pointers and
// slices. An argument left out takes its default, and a result leaves out
// a field that has no value (omitempty), so null is never needed.
func oneType(p *jsonschema.Schema) {
	if len(p.Types) > 0 {
		var ts []string
		for _, t := range p.Types {
			if t != "null" {
				ts = append(ts, t)
			}
		}
		if len(ts) != 1 {
			panic(fmt.Sprintf("schema property with types %v", p.Types))
		}
		p.Type, p.Types = ts[0], nil
	}
	if p.Items != nil {
		oneType(p.Items)
	}
	if p.AdditionalProperties != nil {
		oneType(p.AdditionalProperties)
	}
	for _, q := range p.Properties {
		oneType(q)
	}
}

// client returns the client for a tool's host argument, and the host.
func (s *Server) client(ctx context.Context, host string) (*bgjob.Client, string, error) {
	h, err := s.hosts.resolve(host)
	if err != nil {
		return nil, "", err
	}
	c, err := s.hosts.client(ctx, h)
	if err != nil {
		return nil, "", fmt.Errorf("connecting to %s: %w", hostName(h), err)
	}
	return c, h, nil
}

// limit is how long a tool's call to a host may take, connecting
// included: what it waits for, and Options.HostTimeout more (0: no bound),
// as the CLI's --host-timeout: a host whose login shell blocks is given up
// on, and named, instead of holding the call for ever.
func (s *Server) limit(wait time.Duration) time.Duration {
	if s.opts.HostTimeout < 0 {
		return 0
	}
	return s.opts.HostTimeout + wait
}

// do calls fn with the client of a tool's host argument, and a context
// that limit (0: none) bounds, connecting and a second attempt included: a
// call that outlives it fails, saying that the host did not answer. A
// call that fails in transit (the connection dropped) drops the
// connection, so that the next call dials again; with retry (a call that
// is safe to repeat) fn is called once more, on a new connection.
func (s *Server) do(ctx context.Context, host string, retry bool, limit time.Duration, fn func(ctx context.Context, c *bgjob.Client, host string) error) error {
	return s.doWaiting(ctx, host, retry, limit, 0, fn)
}

// doWaiting is do for a call that waits up to wait: Options.HostTimeout,
// when shorter, also bounds the host's first answer (bgjob.WithinAnswer),
// so that a host whose sessions never run a script is given up on then,
// not at the end of the wait.
func (s *Server) doWaiting(ctx context.Context, host string, retry bool, limit, wait time.Duration, fn func(ctx context.Context, c *bgjob.Client, host string) error) error {
	h, err := s.hosts.resolve(host)
	if err != nil {
		return err
	}
	first := s.opts.HostTimeout
	if first < 0 || first >= wait {
		first = 0
	}
	bctx, end := bgjob.Within(ctx, h, limit)
	actx, answered := bgjob.WithinAnswer(bctx, h, first)
	h, err = s.tries(actx, h, retry, fn)
	return s.explain(end(answered(err)), h)
}

// tries is do's attempts, and the host they were for.
func (s *Server) tries(ctx context.Context, host string, retry bool, fn func(ctx context.Context, c *bgjob.Client, host string) error) (string, error) {
	for attempt := 0; ; attempt++ {
		c, h, err := s.client(ctx, host)
		if err != nil {
			return host, err
		}
		err = fn(ctx, c, h)
		if h == "" || !inTransit(err) {
			return h, err
		}
		s.hosts.forget(h, c)
		if !retry || attempt > 0 || ctx.Err() != nil {
			return h, err
		}
	}
}

// explain rewrites a library error into one a model can act on.
func (s *Server) explain(err error, host string) error {
	if err == nil {
		return nil
	}
	ws := s.opts.Workspace
	if ws == "" {
		ws = jobdir.DefaultWorkspace
	}
	e := only(err)
	switch bgjob.KindOf(err) {
	case bgjob.KindNotFound:
		// "job X: not found" from the library: the model needs the id,
		// where it looked and what to do next.
		if e == nil || e.Ref == "" || e.Err != bgjob.ErrNotFound {
			return fmt.Errorf("%v: no such job in workspace %s on %s; job_list shows the jobs", err, ws, hostName(host))
		}
		return fmt.Errorf("no job %s in workspace %s on %s; job_list shows the jobs", e.Ref, ws, hostName(host))
	case bgjob.KindEnded:
		// "job X has ended: input not delivered": say what happened once
		// (the host's words), and what to do.
		what := err
		if e != nil && e.Kind == bgjob.KindEnded {
			what = e.Err
		}
		return fmt.Errorf("%v: it takes no more input; job_start a new job with stdin: true", what)
	case bgjob.KindNoStdin:
		return fmt.Errorf("%v: only a job started with stdin: true takes input", err)
	case bgjob.KindCursorBusy:
		return fmt.Errorf("%v: another job_output call of this client is reading the same job; call again", err)
	case bgjob.KindNoAnswer:
		// "HOST: no answer within 30s" (bgjob.Within), with the host in
		// words, this machine's too.
		if e != nil && e.Kind == bgjob.KindNoAnswer {
			host, err = e.Host, e.Err
		}
		return fmt.Errorf("%s did not answer: %w", hostName(host), err)
	}
	return err
}

// only returns the *bgjob.Error err is, or is the one error of (a Stop or
// Status of one job joins one error), else nil.
func only(err error) *bgjob.Error {
	for {
		switch x := err.(type) {
		case *bgjob.Error:
			return x
		case interface{ Unwrap() []error }:
			if errs := x.Unwrap(); len(errs) == 1 {
				err = errs[0]
				continue
			}
		}
		return nil
	}
}

// result is a tool result with a short text; the SDK adds the structured
// content.
func result(format string, args ...any) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// argError is the error of a tool's arguments that Validate refused,
// worded with the tool's names for the fields a bgjob.FieldError names
// (args).
func argError(err error, args map[string]string) error {
	var fe *bgjob.FieldError
	if errors.As(err, &fe) {
		return errors.New(fe.Text(func(f string) string { return args[f] }))
	}
	return err
}

// seconds turns a tool's seconds argument, at most max, into a duration.
func seconds(name string, v float64, max time.Duration) (time.Duration, error) {
	if v < 0 {
		return 0, fmt.Errorf("%s must not be negative", name)
	}
	// Compared before the conversion, which overflows past 292 years.
	if v > max.Seconds() {
		return 0, fmt.Errorf("%s is at most %d", name, int64(max/time.Second))
	}
	d := time.Duration(v * float64(time.Second))
	if d == 0 && v > 0 {
		// Below a nanosecond is still not 0, which means none (timeout_sec).
		d = 1
	}
	return d, nil
}

// exitText says how a job is doing, for the short text of a result.
func exitText(j jobView) string {
	var b strings.Builder
	b.WriteString(string(j.Status))
	if j.ExitCode != nil {
		fmt.Fprintf(&b, " (exit code %d)", *j.ExitCode)
	}
	if j.Reason != "" {
		fmt.Fprintf(&b, ", %s", j.Reason)
	}
	if j.Detail != "" {
		fmt.Fprintf(&b, " (%s)", j.Detail)
	}
	return b.String()
}
