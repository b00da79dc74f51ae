package graph

import (
	"context"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/terminal"
)

// The GraphQL side of background terminals (docs/terminals.md): a thin
// layer over Resolver.Terminals.

// terminals returns the terminal service, or UNAVAILABLE without one.
func (r *Resolver) terminals() (core.Terminals, error) {
	if r.Terminals == nil {
		return nil, core.Errorf(core.CodeUnavailable, "terminals are not available in this kernel")
	}
	return r.Terminals, nil
}

// checkSession answers NOT_FOUND for an unknown session.
func (r *Resolver) checkSession(ctx context.Context, sessionID string) error {
	_, err := r.Service.Session(ctx, sessionID)
	return err
}

func (r *Resolver) sessionTerminals(obj *core.Session) []core.Terminal {
	if r.Terminals == nil {
		return []core.Terminal{}
	}
	return r.Terminals.List(obj.ID)
}

func (r *Resolver) terminalOutput(ctx context.Context, sessionID, terminalID string, afterOffset *int64) (*core.TerminalOutput, error) {
	ts, err := r.terminals()
	if err != nil {
		return nil, err
	}
	if err := r.checkSession(ctx, sessionID); err != nil {
		return nil, err
	}
	out, err := ts.Read(ctx, sessionID, terminalID, deref(afterOffset), terminal.MaxReadBytes, 0)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

func (r *Resolver) killTerminal(ctx context.Context, sessionID, terminalID string) (*core.Terminal, error) {
	ts, err := r.terminals()
	if err != nil {
		return nil, err
	}
	if err := r.checkSession(ctx, sessionID); err != nil {
		return nil, err
	}
	return ptr(ts.Kill(ctx, sessionID, terminalID, "KILL"))
}

func (r *Resolver) writeTerminal(ctx context.Context, sessionID, terminalID, input string) (bool, error) {
	ts, err := r.terminals()
	if err != nil {
		return false, err
	}
	if err := r.checkSession(ctx, sessionID); err != nil {
		return false, err
	}
	return done(ts.Write(ctx, sessionID, terminalID, input))
}

// stopTurnTerminals kills the session's running terminals after stopTurn
// when killTerminals is true.
func (r *Resolver) stopTurnTerminals(ctx context.Context, sessionID string, killTerminals *bool) {
	if killTerminals == nil || !*killTerminals || r.Terminals == nil {
		return
	}
	if n := r.Terminals.KillSession(context.WithoutCancel(ctx), sessionID); n > 0 {
		r.Log.Info("terminals killed with the turn", "session_id", sessionID, "count", n)
	}
}
