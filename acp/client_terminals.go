package acp

import (
	"context"
	"time"
)

// Kernel terminals mirrored in the client's terminals: when the client
// advertised clientCapabilities.terminal, each kernel terminal that starts
// while the session is open gets a client terminal (terminal/create)
// running `foya terminals follow SESSION TERMINAL` (Options.TerminalCommand),
// which prints the kernel terminal's output and exits with its exit code.
// The tool call then embeds that terminal ({type: "terminal"}) instead of
// a text tail. When the kernel terminal ends the agent waits for the
// follower's exit (bounded) and releases the client terminal. The command
// runs on the client's machine, but only as a viewer: the terminal itself
// runs in the kernel. A client that refuses terminal/create gets the text
// content (terminals.go).

// Bounds of the client's terminal/* calls.
const (
	clientTerminalCreateTimeout  = 10 * time.Second
	clientTerminalWaitTimeout    = 15 * time.Second
	clientTerminalReleaseTimeout = 5 * time.Second
	// clientTerminalOutputLimit is the outputByteLimit asked for: the
	// kernel keeps 1 MiB per terminal.
	clientTerminalOutputLimit = 1 << 20
)

// createTerminalRequest is terminal/create's params (CreateTerminalRequest).
type createTerminalRequest struct {
	Args            []string `json:"args"`
	Command         string   `json:"command"`
	Cwd             string   `json:"cwd,omitempty"`
	Env             []envVar `json:"env"`
	OutputByteLimit int      `json:"outputByteLimit"`
	SessionID       string   `json:"sessionId"`
}

type envVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// createTerminalResponse is terminal/create's result.
type createTerminalResponse struct {
	TerminalID string `json:"terminalId"`
}

// clientTerminalRequest is the params of terminal/wait_for_exit,
// terminal/release, terminal/kill and terminal/output.
type clientTerminalRequest struct {
	SessionID  string `json:"sessionId"`
	TerminalID string `json:"terminalId"`
}

// waitForExitResponse is terminal/wait_for_exit's result.
type waitForExitResponse struct {
	ExitCode *int    `json:"exitCode"`
	Signal   *string `json:"signal"`
}

// terminalContent embeds a client terminal in a tool call's content.
type terminalContent struct {
	TerminalID string `json:"terminalId"`
	Type       string `json:"type"` // "terminal"
}

func (terminalContent) toolCallContent() {}

// createClientTerminal asks the client to run the follower of kernel
// terminal tm; "" when it cannot or refuses (then the text content
// stands). Neither the args nor the environment carry the kernel's token:
// the follower finds it itself, as foya acp did.
func (s *session) createClientTerminal(id, cwd string) string {
	if !s.a.clientTerminals.Load() {
		return ""
	}
	command, args := s.a.opts.TerminalCommand(s.id, id)
	ctx, cancel := context.WithTimeout(s.ctx, clientTerminalCreateTimeout)
	defer cancel()
	var res createTerminalResponse
	err := s.a.conn.call(ctx, "terminal/create", createTerminalRequest{SessionID: s.id, Command: command, Args: args,
		Cwd: cwd, Env: []envVar{}, OutputByteLimit: clientTerminalOutputLimit}, &res)
	if err != nil || res.TerminalID == "" {
		s.a.log.Info("acp: the client did not create a terminal; showing the kernel terminal's output as text",
			"session_id", s.id, "terminal_id", id, "err", err)
		return ""
	}
	return res.TerminalID
}

// endClientTerminal waits (bounded) for the follower in client terminal
// clientID to exit, sends the tool call's last update through done, then
// releases the client terminal.
func (s *session) endClientTerminal(clientID string, done func()) {
	req := clientTerminalRequest{SessionID: s.id, TerminalID: clientID}
	ctx, cancel := context.WithTimeout(s.ctx, clientTerminalWaitTimeout)
	var res waitForExitResponse
	err := s.a.conn.call(ctx, "terminal/wait_for_exit", req, &res)
	cancel()
	if err != nil {
		s.a.log.Info("acp: wait for the client terminal's exit", "session_id", s.id, "client_terminal_id", clientID, "err", err)
	}
	done()
	s.releaseClientTerminal(clientID)
}

// releaseClientTerminal releases a client terminal (which kills its
// follower if it still runs).
func (s *session) releaseClientTerminal(clientID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), clientTerminalReleaseTimeout)
	defer cancel()
	if err := s.a.conn.call(ctx, "terminal/release", clientTerminalRequest{SessionID: s.id, TerminalID: clientID}, nil); err != nil {
		s.a.log.Info("acp: release a client terminal", "session_id", s.id, "client_terminal_id", clientID, "err", err)
	}
}
