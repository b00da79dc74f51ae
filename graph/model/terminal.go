package model

import "github.com/foya-dev/foya/core"

// Terminal is the terminal of terminal_started and terminal_exited.
func (e *SessionEvent) Terminal() (*core.Terminal, error) {
	var t core.Terminal
	switch e.Event.Type {
	case core.EventTerminalStarted:
		var p core.TerminalStartedPayload
		if err := e.Event.Decode(&p); err != nil {
			return nil, err
		}
		t = p.Terminal
	case core.EventTerminalExited:
		var p core.TerminalExitedPayload
		if err := e.Event.Decode(&p); err != nil {
			return nil, err
		}
		t = p.Terminal
	default:
		return nil, nil
	}
	return &t, nil
}

// TerminalOutput is the new output of a live terminal_output event.
func (e *SessionEvent) TerminalOutput() (*core.TerminalOutputPayload, error) {
	if e.Event.Type != core.EventTerminalOutput {
		return nil, nil
	}
	var p core.TerminalOutputPayload
	if err := e.Event.Decode(&p); err != nil {
		return nil, err
	}
	return &p, nil
}
