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
	"strings"
	"syscall"

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
	if wt := sess.Worktree; wt != nil {
		pr.note("worktree %s · branch %s (from %s)", wt.Path, wt.Branch, wt.BaseRef)
	}

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
