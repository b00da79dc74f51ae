package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// What foya exec prints of the session's events (without --json).

// print prints one event of the turn: text to stdout, the rest to stderr.
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
			// What a tool made (a generated image or video) can be saved.
			for _, a := range m.Attachments {
				t.pr.info("  attachment %s: %s (%s, %d bytes); foya attachments save %s", a.Id, a.Name, a.MediaType, a.Size, a.Id)
			}
		}
	case "hook_started", "hook_finished":
		t.printHook(ev)
	case "retry_scheduled":
		t.printRetry(ev)
	case "route_fallback":
		t.printFallback(ev)
	case "terminal_started", "terminal_exited":
		if tm := ev.Terminal; tm != nil {
			t.pr.info("%s", terminalLine(ev.Type, tm.TerminalFields))
		}
	case "guardian_verdict":
		if g := ev.GuardianVerdict; g != nil {
			line := fmt.Sprintf("guardian %s %s", g.Verdict, g.Tool)
			if g.Cause != "" && g.Cause != "verdict" {
				line += " (" + g.Cause + ")"
			}
			if g.Model != "" {
				line += " by " + g.Model
			}
			if g.Reason != "" {
				line += ": " + short(g.Reason, 200)
			}
			if g.Verdict == "deny" {
				t.pr.errorf("%s", line)
			} else {
				t.pr.info("%s", line)
			}
		}
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

// printHook prints a hook's start or its end and how it went.
func (t *turnWatch) printHook(ev execEvent) {
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
}

// printRetry prints a scheduled retry of the model call.
func (t *turnWatch) printRetry(ev execEvent) {
	var r struct {
		Attempt, MaxAttempts int
		DelayMs              int64
		Reason               string
	}
	_ = json.Unmarshal(payloadOf(ev), &r)
	t.pr.info("retrying in %s (attempt %d of %d): %s", (time.Duration(r.DelayMs) * time.Millisecond).String(), r.Attempt, r.MaxAttempts, short(r.Reason, 160))
}

// printFallback prints that the model call continues on a fallback model:
// which model failed, why, and which model answers instead.
func (t *turnWatch) printFallback(ev execEvent) {
	var r struct {
		From, To struct{ Model string }
		Reason   string
		Message  string
		Attempt  int
	}
	_ = json.Unmarshal(payloadOf(ev), &r)
	t.pr.info("model %s failed (%s: %s); answering with fallback %s (fallback %d)", r.From.Model, strings.ReplaceAll(r.Reason, "_", " "), short(r.Message, 120), r.To.Model, r.Attempt)
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
