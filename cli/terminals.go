package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/internal/cmdutil"
)

// foya terminals: a session's background terminals (docs/terminals.md).
// `follow` mirrors one terminal's output on the machine it runs on and
// exits with the terminal's exit code; `foya acp` gives it to an ACP
// client's terminal/create (docs/acp.md).

var terminalsGroup = group{
	name: "terminals",
	doc:  "A session's background terminals (docs/terminals.md).",
	subs: []subcommand{
		{Command: cmdutil.Command{Name: "terminals list", Synopsis: "SESSION_ID [--json]",
			Doc: "Lists a session's terminals: the running ones and the last ended ones."},
			aliases: []string{"ls"}, min: 1, max: 1, run: terminalsList},
		{Command: cmdutil.Command{Name: "terminals follow", Synopsis: "SESSION_ID TERMINAL_ID [--addr A] [--data-dir DIR] [--token-file PATH]",
			Doc: `Prints a terminal's output from its oldest byte kept, then its new output as
it comes, and exits when the terminal ends with the terminal's exit code:
its own when it exited, 137 when it was killed, 129 when a signal ended it
otherwise. It connects to a running kernel only (it never starts one).
Other errors exit with 1 (3 when the kernel went away while following).`},
			noJSON: true, min: 2, max: 2, run: terminalsFollow},
	},
}

// Exit codes of foya terminals follow besides the terminal's own.
const (
	exitKilled     = 137 // 128 + SIGKILL: the terminal was killed
	exitSignalled  = 129 // a signal other than a kill ended it
	exitKernelLost = 3   // the kernel's event stream ended for good
)

// exitCodeError makes a client command exit with code (after printing err,
// when set).
type exitCodeError struct {
	code int
	err  error
}

func (e exitCodeError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit code %d", e.code)
	}
	return e.err.Error()
}

func (e exitCodeError) Unwrap() error { return e.err }

// terminalsCmd is `foya terminals`; it returns the exit code.
func terminalsCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	err := terminalsGroup.run(args, stdin, stdout, stderr)
	var ec exitCodeError
	if errors.As(err, &ec) {
		if ec.err != nil {
			fmt.Fprintf(stderr, "foya: %s\n", cmdutil.Neutralize(ec.err.Error()))
		}
		return ec.code
	}
	return cmdutil.Exit(err, stderr)
}

func terminalsList(r *runner) error {
	rest, err := r.parse()
	if err != nil {
		return err
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		resp, err := client.SessionTerminals(ctx, c, rest[0])
		if err != nil {
			return err
		}
		tms := make([]client.TerminalFields, len(resp.Session.Terminals))
		for i, tm := range resp.Session.Terminals {
			tms[i] = tm.TerminalFields
		}
		if r.cf.json {
			return printJSON(r.stdout, tms)
		}
		rows := make([][]string, len(tms))
		for i, tm := range tms {
			rows[i] = []string{tm.Id, strings.ToLower(string(tm.Status)), optInt(tm.ExitCode),
				fmt.Sprint(tm.OutputBytes), shortTime(tm.StartedAt), short(tm.Command, 60)}
		}
		return table(r.stdout, "ID\tSTATUS\tEXIT\tOUTPUT\tSTARTED\tCOMMAND", rows)
	})
}

// terminalExitCode is the exit code foya terminals follow ends with.
func terminalExitCode(tm client.TerminalFields) int {
	switch {
	case tm.Status == client.TerminalStatusKilled:
		return exitKilled
	case tm.ExitCode != nil && *tm.ExitCode >= 0:
		return *tm.ExitCode
	default:
		return exitSignalled
	}
}

func terminalsFollow(r *runner) error {
	// Its own flags: it never starts a kernel, so --data-dir only says
	// where the token is.
	r.fs.StringVar(&r.cf.addr, "addr", kernelAddr(), "host:port of the running kernel, or http(s)://host:port ($FOYA_ADDR sets the default)")
	r.fs.StringVar(&r.cf.dataDir, "data-dir", cmdutil.DefaultDataDir(), "the kernel's data directory, where its auth-token is (loopback --addr)")
	r.fs.StringVar(&r.cf.tokenFile, "token-file", "", "file holding the kernel's bearer token (default: $FOYA_TOKEN, else <data-dir>/auth-token for a loopback --addr)")
	rest, err := cmdutil.Parse(r.fs, r.args)
	if err != nil {
		return err
	}
	if len(rest) != 2 {
		return cmdutil.UsageError{Err: fmt.Errorf("usage: foya %s %s (see foya %s --help)", r.sub.Name, r.sub.Synopsis, r.sub.Name)}
	}
	if err := checkAddr(client.New(r.cf.addr, "").Addr()); err != nil {
		return err
	}
	// The token is read here (FOYA_TOKEN, --token-file, the data
	// directory's), never passed on the command line.
	token, err := clientToken(r.cf.tokenFile, r.cf.dataDir, r.cf.addr)
	if err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer cancel()
	f := &follower{c: client.New(r.cf.addr, token), sid: rest[0], tid: rest[1], out: r.stdout, warn: r.stderr}
	tm, err := f.run(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return exitCodeError{code: 130} // interrupted: the terminal runs on
		}
		if isConnRefused(err) {
			err = fmt.Errorf("no Foya kernel answers at %s: %w", f.c.Endpoint(), err)
		}
		return err
	}
	return exitCodeError{code: terminalExitCode(tm)}
}

// follower mirrors one terminal's output.
type follower struct {
	c        *client.Client
	sid, tid string
	out      io.Writer
	warn     io.Writer
	next     int // the offset of the next byte to print
}

// run prints the output until the terminal ends and returns it as it ended.
func (f *follower) run(ctx context.Context) (client.TerminalFields, error) {
	backoff := 200 * time.Millisecond
	lost := 0
	for {
		tm, subscribed, err := f.follow(ctx)
		if err == nil {
			return tm, nil
		}
		var ke *client.Error
		if ctx.Err() != nil || errors.As(err, &ke) || (!subscribed && f.next == 0 && lost == 0) {
			return client.TerminalFields{}, err // a kernel's answer (NOT_FOUND…), or nothing there at all
		}
		if subscribed {
			lost, backoff = 0, 200*time.Millisecond
		}
		if lost++; lost > 10 {
			return client.TerminalFields{}, exitCodeError{code: exitKernelLost, err: fmt.Errorf("follow terminal %s: %w", f.tid, err)}
		}
		select {
		case <-ctx.Done():
			return client.TerminalFields{}, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// follow subscribes to the session's live events, catches up with
// terminalOutput and prints live chunks until the terminal ends (nil
// error) or the stream does. subscribed says whether the subscription
// was made.
func (f *follower) follow(ctx context.Context) (tm client.TerminalFields, subscribed bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Subscribed first, then caught up: no chunk falls between the two.
	st, err := client.Subscribe[client.TerminalEventsResponse](ctx, f.c, client.TerminalEvents_Operation,
		map[string]any{"sessionId": f.sid})
	if err != nil {
		return tm, false, err
	}
	defer st.Close()
	if tm, ended, err := f.catchUp(ctx); err != nil || ended {
		return tm, true, err
	}
	for ev := range st.Events {
		e := ev.Data.SessionEvents
		switch {
		case e.Type == "terminal_output" && e.TerminalOutput != nil && e.TerminalOutput.TerminalId == f.tid:
			if f.chunk(e.TerminalOutput.Offset, e.TerminalOutput.Text) {
				continue
			}
			if tm, ended, err := f.catchUp(ctx); err != nil || ended {
				return tm, true, err
			}
		case e.Type == "terminal_exited" && e.Terminal != nil && e.Terminal.Id == f.tid,
			e.Type == "resync_required":
			// The end, or missed events: read what is left and see.
			if tm, ended, err := f.catchUp(ctx); err != nil || ended {
				return tm, true, err
			}
			if e.Type == "resync_required" {
				return tm, true, errors.New("the kernel dropped events for this follower (resync_required)")
			}
		case e.Type == "session_deleted":
			return tm, true, &client.Error{Message: "session " + f.sid + " was deleted", Code: "NOT_FOUND"}
		}
	}
	if err := st.Err(); err != nil {
		return tm, true, err
	}
	return tm, true, errors.New("the kernel ended the event stream")
}

// chunk prints a live chunk that starts where the output printed so far
// ends (or overlaps it); false when it cannot be used as is: a gap before
// it, or a character split across chunks (replaced in the event's text),
// which terminalOutput reads whole.
func (f *follower) chunk(offset int, text string) bool {
	end := offset + len(text)
	switch {
	case end <= f.next:
		return true // printed already
	case offset > f.next || strings.ContainsRune(text, '\uFFFD'):
		return false
	}
	if _, err := io.WriteString(f.out, text[f.next-offset:]); err != nil {
		return false
	}
	f.next = end
	return true
}

// catchUp prints the output kept after f.next and reports whether the
// terminal has ended (then everything it wrote has been printed).
func (f *follower) catchUp(ctx context.Context) (client.TerminalFields, bool, error) {
	for {
		after := f.next
		r, err := client.TerminalOutput(ctx, f.c, f.sid, f.tid, &after)
		if err != nil {
			return client.TerminalFields{}, false, err
		}
		o := r.TerminalOutput
		if o.DroppedBytes > 0 {
			fmt.Fprintf(f.warn, "foya: %d bytes of the terminal's output were dropped before they could be printed\n", o.DroppedBytes)
		}
		if _, err := io.WriteString(f.out, o.Text); err != nil {
			return client.TerminalFields{}, false, fmt.Errorf("write the output: %w", err)
		}
		f.next = o.NextOffset
		if !o.More {
			tm := o.Terminal.TerminalFields
			return tm, tm.Status != client.TerminalStatusRunning, nil
		}
	}
}
