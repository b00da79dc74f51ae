package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/foya-dev/foya/internal/cmdutil"
)

// Exit codes of foya exec.
const (
	exitCompleted = 0
	exitFailed    = 1
	exitUsage     = 2
	exitCancelled = 130
)

const execUsage = `Usage: foya exec [flags] "prompt"    (prompt "-" or none: read it from stdin)

Runs one turn headless: connects to the kernel at --addr or, when none
answers, starts one for the duration of the command. Assistant text goes to
stdout; reasoning, tool calls, tool results and usage go to stderr.
Exit codes: 0 completed, 1 failed, 2 bad usage, 130 cancelled (Ctrl-C).

Flags:
`

// sessionEventFields is what the CLI asks of each sessionEvents event; the
// --json output prints these objects as received.
const sessionEventFields = `seq type at sessionId delta toolCallIndex phase payload
	message { seq role text reasoning toolCalls { id name input } toolCallId toolName isError turnStatus turnReason }
	approval { requestId toolCallId tool action summary input decision childSessionId }
	usage { inputTokens outputTokens totalTokens cachedTokens estimated }`

type execOptions struct {
	addr, dataDir, tokenFile, session, project, model, approval string
	json                                                        bool
	prompt                                                      string
}

// execCmd is `foya exec`; it returns the process exit code.
func execCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, err := parseExecArgs(args, stdin, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "foya: %v\n", err)
		return exitUsage
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Ctrl-C stops the turn (see runTurn); until the turn runs it cancels.
	sigc := make(chan os.Signal, 2)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigc)

	link, err := connectOrSpawn(ctx, opts.addr, opts.dataDir, opts.tokenFile, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "foya: %v\n", err)
		return exitFailed
	}
	defer link.Close()
	code, err := runExec(ctx, link.gqlClient, opts, stdin, stdout, stderr, sigc)
	if err != nil {
		var ue cmdutil.UsageError
		if errors.As(err, &ue) {
			code = exitUsage
		}
		fmt.Fprintf(stderr, "foya: %s\n", cmdutil.Neutralize(err.Error()))
	}
	return code
}

func parseExecArgs(args []string, stdin io.Reader, stderr io.Writer) (execOptions, error) {
	var o execOptions
	fs := flag.NewFlagSet("exec", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, execUsage); fs.PrintDefaults() }
	fs.StringVar(&o.addr, "addr", defaultKernelAddr, "address of a running kernel; when none answers, one is started for this command")
	fs.StringVar(&o.dataDir, "data-dir", cmdutil.DefaultDataDir(), "data directory of a kernel started for this command")
	fs.StringVar(&o.tokenFile, "token-file", "", "file holding the kernel's bearer token (default: $FOYA_TOKEN, else <data-dir>/auth-token for a loopback --addr)")
	fs.StringVar(&o.session, "session", "", "continue this session (id) instead of creating one")
	fs.StringVar(&o.project, "project", "", "bind a new session to the project with this directory (created when missing)")
	fs.StringVar(&o.model, "model", "", "CONNECTION/MODEL: connection id or name, a slash, and the model id")
	fs.StringVar(&o.approval, "approval-mode", "", "explore, ask or bypass (default: the kernel's, ask)")
	fs.BoolVar(&o.json, "json", false, "print the session's events as JSON, one object per line")
	if err := fs.Parse(cmdutil.Interleaved(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, cmdutil.UsageError{Err: err}
	}
	rest := fs.Args()
	switch {
	case len(rest) > 1:
		return o, cmdutil.UsageError{Err: fmt.Errorf("exec takes one prompt argument, got %d (quote the prompt)", len(rest))}
	case len(rest) == 1 && rest[0] != "-":
		o.prompt = rest[0]
	default:
		if isTerminal(stdin) {
			return o, cmdutil.UsageError{Err: errors.New(`exec needs a prompt: foya exec "prompt" (or pipe it on stdin)`)}
		}
		b, err := io.ReadAll(stdin)
		if err != nil {
			return o, fmt.Errorf("read prompt from stdin: %w", err)
		}
		o.prompt = strings.TrimSpace(string(b))
	}
	if strings.TrimSpace(o.prompt) == "" {
		return o, cmdutil.UsageError{Err: errors.New("the prompt is empty")}
	}
	if o.approval != "" {
		switch strings.ToLower(o.approval) {
		case "explore", "ask", "bypass":
			o.approval = strings.ToUpper(o.approval)
		default:
			return o, cmdutil.UsageError{Err: fmt.Errorf("--approval-mode %q: use explore, ask or bypass", o.approval)}
		}
	}
	if o.model != "" {
		if c, m, ok := strings.Cut(o.model, "/"); !ok || c == "" || m == "" {
			return o, cmdutil.UsageError{Err: fmt.Errorf("--model %q: use CONNECTION/MODEL, e.g. openai/gpt-4.1", o.model)}
		}
	}
	return o, nil
}

type execSession struct {
	ID      string
	HeadSeq int
	Project *struct{ ID, Path string }
}

// prepareSession creates the session, or loads and adjusts --session.
func prepareSession(ctx context.Context, c *gqlClient, o execOptions) (execSession, error) {
	var projectID, connID, model string
	if o.project != "" {
		id, err := findOrCreateProject(ctx, c, o.project)
		if err != nil {
			return execSession{}, err
		}
		projectID = id
	}
	if o.model != "" {
		conn, m, _ := strings.Cut(o.model, "/")
		id, err := resolveConnection(ctx, c, conn)
		if err != nil {
			return execSession{}, err
		}
		connID, model = id, m
	}
	input := map[string]any{}
	if projectID != "" {
		input["projectId"] = projectID
	}
	if connID != "" {
		input["connectionId"], input["model"] = connID, model
	}
	if o.approval != "" {
		input["approvalMode"] = o.approval
	}
	const fields = `id headSeq project { id path }`
	if o.session == "" {
		var r struct{ CreateSession execSession }
		err := c.do(ctx, `mutation($in: CreateSessionInput!) { createSession(input: $in) { `+fields+` } }`, map[string]any{"in": input}, &r)
		return r.CreateSession, err
	}
	var r struct{ Session *execSession }
	if err := c.do(ctx, `query($id: ID!) { session(id: $id) { `+fields+` } }`, map[string]any{"id": o.session}, &r); err != nil {
		return execSession{}, err
	}
	if r.Session == nil {
		return execSession{}, &gqlError{Message: fmt.Sprintf("session %s not found", o.session), Code: "NOT_FOUND"}
	}
	if r.Session.Project != nil && r.Session.Project.ID == projectID {
		delete(input, "projectId")
	}
	if len(input) == 0 {
		return *r.Session, nil
	}
	var u struct{ UpdateSession execSession }
	err := c.do(ctx, `mutation($id: ID!, $in: UpdateSessionInput!) { updateSession(id: $id, input: $in) { `+fields+` } }`,
		map[string]any{"id": o.session, "in": input}, &u)
	return u.UpdateSession, err
}

func findOrCreateProject(ctx context.Context, c *gqlClient, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("project path %s: %w", path, err)
	}
	var r struct{ Projects []struct{ ID, Path string } }
	if err := c.do(ctx, `{ projects { id path } }`, nil, &r); err != nil {
		return "", err
	}
	for _, p := range r.Projects {
		if filepath.Clean(p.Path) == abs {
			return p.ID, nil
		}
	}
	var cr struct{ CreateProject struct{ ID string } }
	if err := c.do(ctx, `mutation($p: String!) { createProject(input: {path: $p}) { id } }`, map[string]any{"p": abs}, &cr); err != nil {
		return "", err
	}
	return cr.CreateProject.ID, nil
}

// resolveConnection finds a connection by id or by name.
func resolveConnection(ctx context.Context, c *gqlClient, idOrName string) (string, error) {
	var r struct{ Connections []struct{ ID, Name string } }
	if err := c.do(ctx, `{ connections { id name } }`, nil, &r); err != nil {
		return "", err
	}
	for _, cn := range r.Connections {
		if cn.ID == idOrName {
			return cn.ID, nil
		}
	}
	var found []string
	for _, cn := range r.Connections {
		if strings.EqualFold(cn.Name, idOrName) {
			found = append(found, cn.ID)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", &gqlError{Message: fmt.Sprintf("no connection with id or name %q (see foya connections list)", idOrName), Code: "NOT_FOUND"}
	default:
		return "", cmdutil.UsageError{Err: fmt.Errorf("%d connections are named %q: use the id (%s)", len(found), idOrName, strings.Join(found, ", "))}
	}
}

// runExec runs the turn and returns the exit code.
func runExec(ctx context.Context, c *gqlClient, o execOptions, stdin io.Reader, stdout, stderr io.Writer, sigc <-chan os.Signal) (int, error) {
	sess, err := prepareSession(ctx, c, o)
	if err != nil {
		return exitFailed, err
	}
	pr := newPrinter(stdout, stderr)
	defer pr.flush()
	pr.note("session %s", sess.ID)

	subCtx, cancelSub := context.WithCancel(ctx)
	defer cancelSub()
	// afterSeq = headSeq: every persisted event of the turn arrives even if
	// the subscription registers after sendMessage.
	sub, err := c.subscribe(subCtx, `subscription($s: ID!, $after: Int) { sessionEvents(sessionId: $s, afterSeq: $after) { `+sessionEventFields+` } }`,
		map[string]any{"s": sess.ID, "after": sess.HeadSeq})
	if err != nil {
		return exitFailed, err
	}
	defer sub.Close()

	var sent struct {
		SendMessage struct {
			TurnStarted bool
			QueueItem   *struct{ ID string }
		}
	}
	if err := c.do(ctx, `mutation($s: ID!, $t: String) { sendMessage(sessionId: $s, input: {text: $t}) { turnStarted queueItem { id } } }`,
		map[string]any{"s": sess.ID, "t": o.prompt}, &sent); err != nil {
		return exitFailed, err
	}
	t := &turnWatch{c: c, sessionID: sess.ID, started: sent.SendMessage.TurnStarted, pr: pr, json: o.json, stdin: stdin}
	if q := sent.SendMessage.QueueItem; q != nil {
		t.queueItemID = q.ID
		pr.note("the session is busy: the message is queued (item %s)", q.ID)
	}
	return t.run(ctx, sub, sigc)
}

// turnWatch follows the session's events until this command's turn ends.
type turnWatch struct {
	c           *gqlClient
	sessionID   string
	started     bool   // sendMessage started the turn (else it is queued)
	queueItemID string // the queued item that will start it
	turnID      string
	pr          *printer
	json        bool
	stdin       io.Reader
	stdinLines  *bufio.Reader
	cancelled   bool
}

type execEvent struct {
	Seq      *int
	Type     string
	Delta    *string
	Payload  json.RawMessage
	Message  *eventMessage
	Approval *eventApproval
	Usage    *struct {
		InputTokens, OutputTokens, TotalTokens, CachedTokens int
		Estimated                                            bool
	}
}

type eventMessage struct {
	Role      string
	Text      string
	ToolCalls []struct {
		ID, Name string
		Input    json.RawMessage
	}
	ToolName string
	IsError  bool
}

type eventApproval struct {
	RequestID, Tool, Action, Summary string
	// ChildSessionID is set for a sub-agent's request shown on the parent.
	ChildSessionID *string
}

func (t *turnWatch) run(ctx context.Context, sub *subscription, sigc <-chan os.Signal) (int, error) {
	for {
		select {
		case <-sigc:
			if t.cancelled {
				t.pr.note("interrupted again: exiting without waiting for the turn")
				return exitCancelled, nil
			}
			t.cancelled = true
			if done, err := t.cancel(ctx); err != nil || done {
				return exitCancelled, err
			}
		case raw, ok := <-sub.Events:
			if !ok {
				if err := sub.Err(); err != nil {
					return exitFailed, err
				}
				return exitFailed, errors.New("the kernel ended the event stream before the turn finished")
			}
			var wrap struct{ SessionEvents json.RawMessage }
			if err := json.Unmarshal(raw, &wrap); err != nil {
				return exitFailed, fmt.Errorf("decode event: %w", err)
			}
			var ev execEvent
			if err := json.Unmarshal(wrap.SessionEvents, &ev); err != nil {
				return exitFailed, fmt.Errorf("decode event: %w", err)
			}
			if code, done, err := t.handle(ctx, ev, wrap.SessionEvents); done || err != nil {
				if ferr := t.pr.flush(); err == nil && ferr != nil {
					return exitFailed, ferr
				}
				return code, err
			}
			// Text is printed as it arrives: what is buffered goes out as
			// soon as no further event is already waiting.
			if len(sub.Events) == 0 {
				if err := t.pr.flush(); err != nil {
					return exitFailed, err
				}
			}
		}
	}
}

// cancel asks the kernel to stop the turn; done reports that there is
// nothing to wait for (the message was still queued).
func (t *turnWatch) cancel(ctx context.Context) (done bool, err error) {
	if t.turnID == "" && !t.started && t.queueItemID != "" {
		t.pr.note("cancelled: removing the queued message")
		err := t.c.do(ctx, `mutation($s: ID!, $i: ID!) { deleteQueuedMessage(sessionId: $s, itemId: $i) { id } }`,
			map[string]any{"s": t.sessionID, "i": t.queueItemID}, nil)
		return true, err
	}
	t.pr.note("stopping the turn…")
	if err := t.c.do(ctx, `mutation($s: ID!) { stopTurn(sessionId: $s) { id } }`, map[string]any{"s": t.sessionID}, nil); err != nil {
		return true, err
	}
	return false, nil
}

// handle processes one event; done reports that the turn is over.
func (t *turnWatch) handle(ctx context.Context, ev execEvent, raw json.RawMessage) (code int, done bool, err error) {
	if ev.Type == "turn_started" && t.turnID == "" {
		var p struct{ TurnID, QueueItemID string }
		_ = json.Unmarshal(ev.Payload, &p)
		if t.started || (t.queueItemID != "" && p.QueueItemID == t.queueItemID) {
			t.turnID = p.TurnID
		}
	}
	if t.turnID == "" {
		return 0, false, nil // another turn of the session
	}
	if t.json {
		if _, err := fmt.Fprintf(t.pr.stdout, "%s\n", raw); err != nil {
			return exitFailed, true, fmt.Errorf("write output: %w", err)
		}
	} else {
		t.print(ev)
	}
	switch ev.Type {
	case "approval_requested":
		if ev.Approval != nil {
			if err := t.approve(ctx, *ev.Approval); err != nil {
				return exitFailed, true, err
			}
		}
	case "question_requested":
		if err := t.answer(ctx, ev.Payload); err != nil {
			return exitFailed, true, err
		}
	case "turn_finished":
		var p struct{ TurnID, Status, Reason string }
		_ = json.Unmarshal(ev.Payload, &p)
		if p.TurnID != t.turnID {
			return 0, false, nil
		}
		t.pr.endText()
		switch p.Status {
		case "completed":
			return exitCompleted, true, nil
		case "cancelled":
			t.pr.note("turn cancelled%s", suffix(p.Reason))
			return exitCancelled, true, nil
		default:
			return exitFailed, true, fmt.Errorf("turn failed: %s", orDefault(p.Reason, "no reason given"))
		}
	case "session_deleted":
		return exitFailed, true, errors.New("the session was deleted during the turn")
	case "resync_required":
		return exitFailed, true, errors.New("fell too far behind the session's events (resync_required)")
	}
	return 0, false, nil
}

func (t *turnWatch) print(ev execEvent) {
	switch ev.Type {
	case "message_delta":
		if ev.Delta != nil {
			t.pr.text(*ev.Delta)
		}
	case "reasoning_delta":
		if ev.Delta != nil {
			t.pr.reasoning(*ev.Delta)
		}
	case "message_end":
		m := ev.Message
		if m == nil {
			return
		}
		switch m.Role {
		case "ASSISTANT":
			t.pr.finishText(m.Text)
			for _, tc := range m.ToolCalls {
				t.pr.info("→ %s %s", tc.Name, short(string(tc.Input), 100))
			}
		case "TOOL":
			line, _, _ := strings.Cut(strings.TrimSpace(m.Text), "\n")
			if m.IsError {
				t.pr.errorf("← %s error: %s", m.ToolName, short(line, 160))
			} else {
				t.pr.info("← %s: %s", m.ToolName, short(line, 160))
			}
		}
	case "hook_started", "hook_finished":
		var h struct {
			Event, Command, Tool, Error string
			ExitCode                    int
			DurationMs                  int64
			TimedOut                    bool
		}
		_ = json.Unmarshal(ev.Payload, &h)
		on := ""
		if h.Tool != "" {
			on = " (" + h.Tool + ")"
		}
		if ev.Type == "hook_started" {
			t.pr.info("hook %s%s: %s", h.Event, on, short(h.Command, 100))
			return
		}
		how := fmt.Sprintf("exit %d", h.ExitCode)
		switch {
		case h.TimedOut:
			how = "timed out"
		case h.Error != "":
			how = "error: " + short(h.Error, 100)
		}
		t.pr.info("hook %s%s done: %s, %s in %s", h.Event, on, short(h.Command, 100), how, (time.Duration(h.DurationMs) * time.Millisecond).String())
	case "retry_scheduled":
		var r struct {
			Attempt, MaxAttempts int
			DelayMs              int64
			Reason               string
		}
		_ = json.Unmarshal(ev.Payload, &r)
		t.pr.info("retrying in %s (attempt %d of %d): %s", (time.Duration(r.DelayMs) * time.Millisecond).String(), r.Attempt, r.MaxAttempts, short(r.Reason, 160))
	case "usage":
		if u := ev.Usage; u != nil {
			est := ""
			if u.Estimated {
				est = " (estimated)"
			}
			t.pr.info("tokens: %d in (%d cached), %d out%s", u.InputTokens, u.CachedTokens, u.OutputTokens, est)
		}
	}
}

// approve asks the person at the terminal, or denies without one.
func (t *turnWatch) approve(ctx context.Context, a eventApproval) error {
	decision := "DENIED"
	who := ""
	if a.ChildSessionID != nil && *a.ChildSessionID != "" {
		who = " (sub-agent " + *a.ChildSessionID + ")"
	}
	if !isTerminal(t.stdin) {
		t.pr.errorf("denied %s (%s)%s: no terminal to ask for approval (use --approval-mode bypass or explore)", a.Tool, short(a.Summary, 100), who)
	} else {
		ans, err := t.ask(fmt.Sprintf("Allow %s%s? [y]es/[n]o/[a]lways for session: ", orDefault(a.Summary, a.Tool), who))
		switch strings.ToLower(strings.TrimSpace(ans)) {
		case "y", "yes":
			decision = "APPROVED"
		case "a", "always":
			decision = "APPROVED_FOR_SESSION"
		}
		if err != nil {
			t.pr.errorf("denied: %v", err)
		}
	}
	err := t.c.do(ctx, `mutation($s: ID!, $r: ID!, $d: ApprovalDecision!) { resolveApproval(sessionId: $s, requestId: $r, decision: $d) }`,
		map[string]any{"s": t.sessionID, "r": a.RequestID, "d": decision}, nil)
	var ge *gqlError
	if errors.As(err, &ge) && ge.Code == "CONFLICT" {
		return nil // decided elsewhere first
	}
	return err
}

// answer asks the model's question at the terminal; without one it says so.
func (t *turnWatch) answer(ctx context.Context, payload json.RawMessage) error {
	var q struct{ RequestID, Question string }
	_ = json.Unmarshal(payload, &q)
	answer := "(the user ran a headless command without a terminal and cannot answer; continue without an answer)"
	if isTerminal(t.stdin) {
		a, err := t.ask(fmt.Sprintf("%s\n> ", q.Question))
		if err == nil && strings.TrimSpace(a) != "" {
			answer = strings.TrimSpace(a)
		}
	} else {
		t.pr.info("question: %s (no terminal to answer)", q.Question)
	}
	err := t.c.do(ctx, `mutation($s: ID!, $r: ID!, $a: String!) { answerQuestion(sessionId: $s, requestId: $r, answer: $a) }`,
		map[string]any{"s": t.sessionID, "r": q.RequestID, "a": answer}, nil)
	var ge *gqlError
	if errors.As(err, &ge) && ge.Code == "CONFLICT" {
		return nil
	}
	return err
}

func (t *turnWatch) ask(prompt string) (string, error) {
	t.pr.endText()
	t.pr.flush()
	fmt.Fprint(t.pr.stderr, cmdutil.Neutralize(prompt))
	if t.stdinLines == nil {
		t.stdinLines = bufio.NewReader(t.stdin)
	}
	line, err := t.stdinLines.ReadString('\n')
	if err != nil && line == "" {
		return "", fmt.Errorf("read answer: %w", err)
	}
	return line, nil
}

func short(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func suffix(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}
