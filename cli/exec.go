package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/internal/cmdutil"
)

// Exit codes of foya exec.
const (
	exitCompleted = 0
	exitFailed    = 1
	exitUsage     = 2
	exitCancelled = 130
)

var execCommand = cmdutil.Command{
	Name:     "exec",
	Synopsis: `[flags] "prompt"    (prompt "-" or none: read it from stdin)`,
	Doc: `Runs one turn headless in a session whose project is the current directory
(--project DIR for another, --no-project for a scratch directory): the model
reads and edits files there. -c continues the project's newest session,
--session ID a given one. Connects to the kernel at --addr or, when none
answers, starts one for the duration of the command. Assistant text goes to
stdout; a header line (model, project, session), reasoning, tool calls, tool
results and usage go to stderr.
Exit codes: 0 completed, 1 failed, 2 bad usage, 130 cancelled (Ctrl-C).`,
}

type execOptions struct {
	addr, dataDir, tokenFile, session, project, model, approval string
	json, continueLast, noProject                               bool
	prompt                                                      string
}

// execCmd is ` + "`foya exec`" + `; it returns the process exit code.
func execCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, err := parseExecArgs(args, stdin, stdout)
	if err != nil {
		return cmdutil.Exit(err, stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Ctrl-C stops the turn (see runTurn); until the turn runs it cancels.
	sigc := make(chan os.Signal, 2)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigc)

	link, err := connectOrSpawnQuiet(ctx, clientFlags{addr: opts.addr, dataDir: opts.dataDir, tokenFile: opts.tokenFile}, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "foya: %v\n", err)
		return exitFailed
	}
	defer link.Close()
	code, err := runExec(ctx, link.Client, opts, stdin, stdout, stderr, sigc)
	if err != nil {
		var ue cmdutil.UsageError
		if errors.As(err, &ue) {
			code = exitUsage
		}
		fmt.Fprintf(stderr, "foya: %s\n", cmdutil.Neutralize(err.Error()))
	}
	return code
}

func parseExecArgs(args []string, stdin io.Reader, stdout io.Writer) (execOptions, error) {
	var o execOptions
	fs := cmdutil.NewFlagSet(execCommand, stdout)
	fs.StringVar(&o.addr, "addr", kernelAddr(), addrUsage)
	fs.StringVar(&o.dataDir, "data-dir", cmdutil.DefaultDataDir(), "data directory of a kernel started for this command")
	fs.StringVar(&o.tokenFile, "token-file", "", "file holding the kernel's bearer token (default: $FOYA_TOKEN, else <data-dir>/auth-token for a loopback --addr)")
	fs.StringVar(&o.session, "session", "", "continue this session (id) instead of creating one")
	fs.BoolVar(&o.continueLast, "continue", false, "continue the newest session of the project")
	fs.BoolVar(&o.continueLast, "c", false, "short for --continue")
	fs.StringVar(&o.project, "project", "", "the project directory (default: the current directory; created as a project when new)")
	fs.BoolVar(&o.noProject, "no-project", false, "no project: the session works in a scratch directory of its own")
	fs.StringVar(&o.model, "model", "", "CONNECTION/MODEL: connection name or id, a slash, and the model id (default: the default model, see foya connections default)")
	fs.StringVar(&o.approval, "approval-mode", "", "explore, ask or bypass (default: the kernel's, ask)")
	fs.BoolVar(&o.json, "json", false, "print the session's events as JSON, one object per line")
	rest, err := cmdutil.Parse(fs, args)
	if err != nil {
		return o, err
	}
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
	switch {
	case o.noProject && o.project != "":
		return o, cmdutil.UsageError{Err: errors.New("--project and --no-project exclude each other")}
	case o.continueLast && o.session != "":
		return o, cmdutil.UsageError{Err: errors.New("--continue and --session exclude each other")}
	}
	// The project: --project, else the current directory, unless
	// --no-project or --session (whose project is already set).
	if o.project == "" && !o.noProject && o.session == "" {
		wd, err := os.Getwd()
		if err != nil {
			return o, fmt.Errorf("current directory: %w", err)
		}
		o.project = wd
	}
	if o.project != "" {
		abs, err := filepath.Abs(o.project)
		if err != nil {
			return o, fmt.Errorf("project path %s: %w", o.project, err)
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return o, cmdutil.UsageError{Err: fmt.Errorf("project %s is not a directory", abs)}
		}
		o.project = abs
	}
	return o, nil
}

// errNoConnection says which command makes exec usable.
func errNoConnection(conns []client.ConnectionsConnectionsConnection) error {
	for _, cn := range conns {
		if cn.Type == client.ConnectionTypeLanguage {
			return fmt.Errorf("connection %q has no models yet: list them with\n  foya connections models %s\nor add one with --model on foya connections add", cn.Name, cn.Name)
		}
	}
	return errors.New("no model connection is configured yet; add one, e.g.\n  " + addConnectionHint)
}

// usable reports whether a new session without --model gets a model.
func usable(resp *client.ConnectionsResponse) bool {
	if resp.DefaultModels.Language != nil {
		return true
	}
	for _, cn := range resp.Connections {
		if cn.Type == client.ConnectionTypeLanguage && len(cn.Models) > 0 {
			return true
		}
	}
	return false
}

// prepareSession creates the session, or loads and adjusts --session or the
// session --continue finds. Nothing is created when no model can serve it.
func prepareSession(ctx context.Context, c *client.Client, o execOptions) (client.SessionFields, nameMap, error) {
	conns, err := client.Connections(ctx, c)
	if err != nil {
		return client.SessionFields{}, nil, err
	}
	names := connectionNames(conns)
	upd := client.UpdateSessionInput{}
	changed := false
	if o.model != "" {
		conn, m, _ := strings.Cut(o.model, "/")
		cn, err := resolveConnection(ctx, c, conn)
		if err != nil {
			return client.SessionFields{}, nil, err
		}
		upd.ConnectionId, upd.Model, changed = &cn.Id, &m, true
	}
	if o.approval != "" {
		mode := client.ApprovalMode(o.approval)
		upd.ApprovalMode, changed = &mode, true
	}
	var existing *client.SessionFields
	switch {
	case o.session != "":
		resp, err := client.SessionInfo(ctx, c, o.session)
		if err != nil {
			return client.SessionFields{}, nil, err
		}
		if resp.Session == nil {
			return client.SessionFields{}, nil, &client.Error{Message: fmt.Sprintf("session %s not found", o.session), Code: "NOT_FOUND"}
		}
		existing = &resp.Session.SessionFields
		if o.project != "" && (existing.Project == nil || existing.Project.Path != o.project) {
			return client.SessionFields{}, nil, cmdutil.UsageError{Err: fmt.Errorf("session %s belongs to %s, not to --project %s (a session's project never changes)", o.session, projectOf(*existing), o.project)}
		}
	case o.continueLast:
		s, err := newestSession(ctx, c, o.project)
		if err != nil {
			return client.SessionFields{}, nil, err
		}
		existing = s
	}
	if existing != nil {
		if existing.ConnectionId == nil && o.model == "" && !usable(conns) {
			return client.SessionFields{}, nil, errNoConnection(conns.Connections)
		}
		if !changed {
			return *existing, names, nil
		}
		resp, err := client.UpdateSession(ctx, c, existing.Id, upd)
		if err != nil {
			return client.SessionFields{}, nil, err
		}
		return resp.UpdateSession.SessionFields, names, nil
	}
	if o.model == "" && !usable(conns) {
		return client.SessionFields{}, nil, errNoConnection(conns.Connections)
	}
	in := client.CreateSessionInput{ConnectionId: upd.ConnectionId, Model: upd.Model, ApprovalMode: upd.ApprovalMode}
	if o.project != "" {
		p, err := findOrCreateProject(ctx, c, o.project)
		if err != nil {
			return client.SessionFields{}, nil, err
		}
		in.ProjectId = &p.Id
	}
	resp, err := client.CreateSession(ctx, c, in)
	if err != nil {
		return client.SessionFields{}, nil, err
	}
	return resp.CreateSession.SessionFields, names, nil
}

// newestSession is the most recently active top-level session of the
// project directory (absolute; "" for sessions without a project).
func newestSession(ctx context.Context, c *client.Client, project string) (*client.SessionFields, error) {
	resp, err := client.Sessions(ctx, c, nil)
	if err != nil {
		return nil, err
	}
	var best *client.SessionFields
	for i := range resp.Sessions {
		s := &resp.Sessions[i].SessionFields
		path := ""
		if s.Project != nil {
			path = filepath.Clean(s.Project.Path)
		}
		if path == project && (best == nil || s.UpdatedAt.After(best.UpdatedAt)) {
			best = s
		}
	}
	if best == nil {
		where := "without a project"
		if project != "" {
			where = "in " + project
		}
		return nil, &client.Error{Message: fmt.Sprintf("no session to continue %s (run foya exec without --continue to start one)", where), Code: "NOT_FOUND"}
	}
	return best, nil
}

// runExec runs the turn and returns the exit code.
func runExec(ctx context.Context, c *client.Client, o execOptions, stdin io.Reader, stdout, stderr io.Writer, sigc <-chan os.Signal) (int, error) {
	sess, names, err := prepareSession(ctx, c, o)
	if err != nil {
		return exitFailed, err
	}
	pr := newPrinter(stdout, stderr)
	defer pr.flush()
	project := "none (scratch directory)"
	if sess.Project != nil {
		project = sess.Project.Path
	}
	pr.note("model %s · project %s · session %s", names.model(deref(sess.ConnectionId), deref(sess.Model)), project, sess.Id)

	subCtx, cancelSub := context.WithCancel(ctx)
	defer cancelSub()
	// afterSeq = headSeq: every persisted event of the turn arrives even if
	// the subscription registers after sendMessage.
	sub, err := c.SessionEvents(subCtx, sess.Id, &sess.HeadSeq)
	if err != nil {
		return exitFailed, err
	}
	defer sub.Close()

	sent, err := client.SendMessage(ctx, c, sess.Id, &o.prompt)
	if err != nil {
		return exitFailed, err
	}
	t := &turnWatch{c: c, sessionID: sess.Id, started: sent.SendMessage.TurnStarted, pr: pr, json: o.json, stdin: stdin}
	if q := sent.SendMessage.QueueItem; q != nil {
		t.queueItemID = q.Id
		pr.note("the session is busy: the message is queued (item %s)", q.Id)
	}
	return t.run(ctx, sub, sigc)
}

// turnWatch follows the session's events until this command's turn ends.
type turnWatch struct {
	c           *client.Client
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

// execEvent is one sessionEvents event (typed by the generated client).
type execEvent = client.SessionEventsSessionEventsSessionEvent

func (t *turnWatch) run(ctx context.Context, sub *client.Stream[client.SessionEventsResponse], sigc <-chan os.Signal) (int, error) {
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
		case ev, ok := <-sub.Events:
			if !ok {
				if err := sub.Err(); err != nil {
					return exitFailed, err
				}
				return exitFailed, errors.New("the kernel ended the event stream before the turn finished")
			}
			// --json prints the event object as the kernel sent it.
			var wrap struct{ SessionEvents json.RawMessage }
			if err := json.Unmarshal(ev.Raw, &wrap); err != nil {
				return exitFailed, fmt.Errorf("decode event: %w", err)
			}
			if code, done, err := t.handle(ctx, ev.Data.SessionEvents, wrap.SessionEvents); done || err != nil {
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
		_, err := client.DeleteQueuedMessage(ctx, t.c, t.sessionID, t.queueItemID)
		return true, err
	}
	t.pr.note("stopping the turn…")
	if _, err := client.StopTurn(ctx, t.c, t.sessionID); err != nil {
		return true, err
	}
	return false, nil
}

// handle processes one event; done reports that the turn is over.
func (t *turnWatch) handle(ctx context.Context, ev execEvent, raw json.RawMessage) (code int, done bool, err error) {
	if ev.Type == "turn_started" && t.turnID == "" {
		var p struct{ TurnID, QueueItemID string }
		_ = json.Unmarshal(payloadOf(ev), &p)
		if t.started || (t.queueItemID != "" && p.QueueItemID == t.queueItemID) {
			t.turnID = p.TurnID
		}
	}
	if t.turnID == "" {
		return 0, false, nil // another turn of the session
	}
	if ev.MessageTruncated {
		t.wholeMessage(ctx, &ev) // a live event carries 1 MiB of a longer message
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
		if err := t.answer(ctx, payloadOf(ev)); err != nil {
			return exitFailed, true, err
		}
	case "turn_finished":
		var p struct{ TurnID, Status, Reason string }
		_ = json.Unmarshal(payloadOf(ev), &p)
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
			t.finishReason(m.FinishReason, m.Refusal)
		case "TOOL":
			line, _, _ := strings.Cut(strings.TrimSpace(m.Text), "\n")
			if m.IsError {
				t.pr.errorf("← %s error: %s", deref(m.ToolName), short(line, 160))
			} else {
				t.pr.info("← %s: %s", deref(m.ToolName), short(line, 160))
			}
		}
	case "hook_started", "hook_finished":
		var h struct {
			Event, Command, Tool, Error string
			ExitCode                    int
			DurationMs                  int64
			TimedOut                    bool
		}
		_ = json.Unmarshal(payloadOf(ev), &h)
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
		_ = json.Unmarshal(payloadOf(ev), &r)
		t.pr.info("retrying in %s (attempt %d of %d): %s", (time.Duration(r.DelayMs) * time.Millisecond).String(), r.Attempt, r.MaxAttempts, short(r.Reason, 160))
	case "usage":
		if u := ev.Usage; u != nil {
			est := ""
			if u.Estimated {
				est = " (estimated)"
			}
			t.pr.info("tokens: %d in (%d cached), %d out%s%s", u.InputTokens, u.CachedTokens, u.OutputTokens, est, costSuffix(u.Cost, u.UnpricedTokens))
		}
	}
}

// approve asks the person at the terminal, or denies without one.
func (t *turnWatch) approve(ctx context.Context, a client.SessionEventsSessionEventsSessionEventApproval) error {
	decision := client.ApprovalDecisionDenied
	who := ""
	if a.ChildSessionId != nil && *a.ChildSessionId != "" {
		who = " (sub-agent " + *a.ChildSessionId + ")"
	}
	if !isTerminal(t.stdin) {
		t.pr.errorf("denied %s (%s)%s: no terminal to ask for approval (use --approval-mode bypass or explore)", a.Tool, short(a.Summary, 100), who)
	} else {
		ans, err := t.ask(fmt.Sprintf("Allow %s%s? [y]es/[n]o/[a]lways for session: ", orDefault(a.Summary, a.Tool), who))
		switch strings.ToLower(strings.TrimSpace(ans)) {
		case "y", "yes":
			decision = client.ApprovalDecisionApproved
		case "a", "always":
			decision = client.ApprovalDecisionApprovedForSession
		}
		if err != nil {
			t.pr.errorf("denied: %v", err)
		}
	}
	_, err := client.ResolveApproval(ctx, t.c, t.sessionID, a.RequestId, decision)
	if client.ErrorCode(err) == "CONFLICT" {
		return nil // decided elsewhere first
	}
	return err
}

// answer asks the model's question at the terminal; without one it says so.
func (t *turnWatch) answer(ctx context.Context, payload json.RawMessage) error {
	var q struct {
		RequestID, Question string
		Elicitation         *json.RawMessage
	}
	_ = json.Unmarshal(payload, &q)
	if q.Elicitation != nil {
		return t.answerServer(ctx, q.RequestID, q.Question)
	}
	answer := "(the user ran a headless command without a terminal and cannot answer; continue without an answer)"
	if isTerminal(t.stdin) {
		a, err := t.ask(fmt.Sprintf("%s\n> ", q.Question))
		if err == nil && strings.TrimSpace(a) != "" {
			answer = strings.TrimSpace(a)
		}
	} else {
		t.pr.info("question: %s (no terminal to answer)", q.Question)
	}
	_, err := client.AnswerQuestion(ctx, t.c, t.sessionID, q.RequestID, answer)
	if client.ErrorCode(err) == "CONFLICT" {
		return nil
	}
	return err
}

// answerServer answers an MCP server's question (elicitation) at the
// terminal: the fields as JSON (or the one field's value), an empty line
// declines; without a terminal it declines.
func (t *turnWatch) answerServer(ctx context.Context, requestID, question string) error {
	action, answer := client.QuestionActionDecline, ""
	prompt := question + "\n(empty line declines)\n> "
	for {
		if isTerminal(t.stdin) {
			a, err := t.ask(prompt)
			if err == nil && strings.TrimSpace(a) != "" {
				action, answer = client.QuestionActionAccept, strings.TrimSpace(a)
			}
		} else {
			t.pr.info("question: %s (no terminal to answer: declined)", question)
		}
		_, err := client.AnswerElicitation(ctx, t.c, t.sessionID, requestID, answer, action)
		switch client.ErrorCode(err) {
		case "CONFLICT":
			return nil
		case "BAD_INPUT":
			if action == client.QuestionActionAccept {
				prompt = err.Error() + "\n> "
				action, answer = client.QuestionActionDecline, ""
				continue
			}
		}
		return err
	}
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

// costSuffix is ", $0.0123" for a priced usage ("" without prices), noting
// tokens that had no price.
func costSuffix(cost *float64, unpriced int) string {
	if cost == nil {
		return ""
	}
	s := ", " + formatCost(*cost)
	if unpriced > 0 {
		s += fmt.Sprintf(" (+%d unpriced tokens)", unpriced)
	}
	return s
}

// formatCost prints US dollars with 4 significant decimals for small sums.
func formatCost(usd float64) string {
	switch {
	case usd == 0:
		return "$0"
	case usd < 0.01:
		return fmt.Sprintf("$%.4f", usd)
	default:
		return fmt.Sprintf("$%.2f", usd)
	}
}

// payloadOf is the event's payload JSON (nil when it has none).
func payloadOf(ev execEvent) []byte {
	if ev.Payload == nil {
		return nil
	}
	return *ev.Payload
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
