//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// The tests of this file run real shell scripts as lifecycle hooks
// (docs/hooks.md) through the kernel binary and a fake OpenAI-compatible
// server, and read what reached the model in its request bodies.

func TestHooksConfigValidation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	k := startKernel(t, dir)
	r := k.hooksDoc(t)
	if strings.TrimSpace(string(r.Hooks)) != "{}" {
		t.Fatalf("hooks without a file: %s", r.Hooks)
	}
	code, msg := k.setHooksError(t, map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "Bash", "hooks": []any{map[string]any{"type": "command", "command": ""}}}},
	})
	if code != "BAD_INPUT" || !strings.Contains(msg, "hooks.PreToolUse[0].hooks[0].command") {
		t.Fatalf("empty command: %s %s", code, msg)
	}
	code, msg = k.setHooksError(t, map[string]any{"OnLunch": []any{}})
	if code != "BAD_INPUT" || !strings.Contains(msg, "hooks.OnLunch") {
		t.Fatalf("unknown event: %s %s", code, msg)
	}
	code, msg = k.setHooksError(t, map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "(", "hooks": []any{map[string]any{"type": "command", "command": "true"}}}},
	})
	if code != "BAD_INPUT" || !strings.Contains(msg, "hooks.PreToolUse[0].matcher") {
		t.Fatalf("bad regex: %s %s", code, msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "hooks.json")); err == nil {
		t.Fatal("a refused document was written")
	}
	// A whole Claude Code settings object is accepted.
	k.setHooks(t, `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true", "timeout": 5}]}]}}`)
	r = k.hooksDoc(t)
	if !strings.Contains(string(r.Hooks), `"Stop"`) {
		t.Fatalf("stored hooks: %s", r.Hooks)
	}
	fi, err := os.Stat(filepath.Join(dir, "hooks.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("hooks.json: %v %v", fi, err)
	}
}

func TestHooksPreToolUseBlocksRmRf(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	proj := outsideTmp(t)
	scripts := t.TempDir()
	guard := writeHook(t, scripts, "guard.sh", `
input=$(cat)
cmd=$(printf '%s' "$input" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["hook_event_name"], d["tool_name"], d["tool_input"].get("command",""), sep="|")')
case "$cmd" in
  *"rm -rf"*) echo "refusing rm -rf: $cmd" >&2; exit 2;;
esac
exit 0
`)
	k.setHooks(t, `{"PreToolUse": [{"matcher": "bash", "hooks": [{"type": "command", "command": "`+guard+`"}]}]}`)
	fake := openaitest.New(t)
	sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
	if err := os.WriteFile(filepath.Join(proj, "keep.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	msgs := k.runTools(t, fake, sid,
		toolCall("c1", "bash", map[string]any{"command": "rm -rf keep.txt"}),
		toolCall("c2", "bash", map[string]any{"command": "echo fine"}))
	if !msgs[0].IsError || !strings.Contains(msgs[0].Text, "refusing rm -rf: PreToolUse|bash|rm -rf keep.txt") {
		t.Fatalf("blocked call: %+v", msgs[0])
	}
	if !exists(filepath.Join(proj, "keep.txt")) {
		t.Fatal("the blocked command ran")
	}
	if msgs[1].IsError || !strings.Contains(msgs[1].Text, "fine") {
		t.Fatalf("allowed call: %+v", msgs[1])
	}
	reqs := fake.Requests()
	if !strings.Contains(requestText(reqs[1]), "refusing rm -rf") {
		t.Fatalf("the model did not read the hook's reason: %s", reqs[1].Body)
	}
	started, finished, _ := k.hookEvents(t, sid)
	if len(started) != 2 || len(finished) != 2 || finished[0]["exitCode"] != float64(2) || finished[0]["event"] != "PreToolUse" {
		t.Fatalf("hook events: %v %v", started, finished)
	}
}

func TestHooksPermissionDecisionDeny(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	proj := outsideTmp(t)
	deny := writeHook(t, t.TempDir(), "deny.sh", `cat >/dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "writes are frozen today"}}'
`)
	k.setHooks(t, `{"PreToolUse": [{"matcher": "write|bash", "hooks": [{"type": "command", "command": "`+deny+`"}]}]}`)
	fake := openaitest.New(t)
	sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
	msgs := k.runTools(t, fake, sid, toolCall("c1", "bash", map[string]any{"command": "touch made.txt"}))
	if !msgs[0].IsError || !strings.Contains(msgs[0].Text, "writes are frozen today") || exists(filepath.Join(proj, "made.txt")) {
		t.Fatalf("denied call: %+v", msgs[0])
	}
}

func TestHooksUserPromptSubmitContext(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	proj := outsideTmp(t)
	ctxHook := writeHook(t, t.TempDir(), "ctx.sh", `
prompt=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["prompt"])')
echo "Sprint context: the prompt was <$prompt>; cwd=$PWD"
`)
	k.setHooks(t, `{"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "`+ctxHook+`"}]}]}`)
	fake := openaitest.New(t)
	sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
	k.runTools(t, fake, sid)
	_, finished, system := k.hookEvents(t, sid)
	if len(finished) != 1 || len(system) != 1 {
		t.Fatalf("hook events %v, system messages %v", finished, system)
	}
	want := "Sprint context: the prompt was <go>; cwd=" + proj
	if system[0]["text"] != want || !strings.HasPrefix(system[0]["source"].(string), "hook UserPromptSubmit: ") {
		t.Fatalf("system message: %v", system[0])
	}
	var body struct {
		Messages []struct {
			Role    string
			Content any
		}
	}
	if err := json.Unmarshal(fake.LastRequest().Body, &body); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range body.Messages {
		if s, _ := json.Marshal(m.Content); strings.Contains(string(s), "Sprint context") {
			if m.Role != "system" {
				t.Fatalf("hook context sent as %s", m.Role)
			}
			found = true
		}
	}
	if !found {
		t.Fatalf("hook context not in the request: %s", fake.LastRequest().Body)
	}
	s := k.sessionDetail(t, sid)
	if len(s.Session.Messages) < 2 || s.Session.Messages[1].Role != "SYSTEM" || s.Session.Messages[1].Source == "" {
		t.Fatalf("messages: %+v", s.Session.Messages)
	}
}

func TestHooksUserPromptSubmitRefuses(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	refuse := writeHook(t, t.TempDir(), "refuse.sh", "cat >/dev/null; echo 'no secrets in prompts' >&2; exit 2\n")
	k.setHooks(t, `{"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "`+refuse+`"}]}]}`)
	fake := openaitest.New(t)
	sid := k.session(t, fake.BaseURL(), outsideTmp(t), "BYPASS")
	k.sendMessage(t, sid, "go")
	k.waitEvents(t, sid, "turn_finished", 1)
	r := k.eventLog(t, sid)
	last := r.Events[len(r.Events)-1]
	for _, e := range r.Events {
		if e.Type == "turn_finished" {
			last = e
		}
	}
	if !strings.Contains(string(last.Payload), "no secrets in prompts") || len(fake.Requests()) != 0 {
		t.Fatalf("turn_finished %s; %d requests", last.Payload, len(fake.Requests()))
	}
}

func TestHooksStopContinuationBounded(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	stop := writeHook(t, t.TempDir(), "stop.sh", "cat >/dev/null; echo 'run the tests first' >&2; exit 2\n")
	k.setHooks(t, `{"Stop": [{"hooks": [{"type": "command", "command": "`+stop+`"}]}]}`)
	fake := openaitest.New(t)
	sid := k.session(t, fake.BaseURL(), outsideTmp(t), "BYPASS")
	for range 4 {
		fake.Enqueue(openaitest.TextStream("gpt-t", "done"))
	}
	k.sendMessage(t, sid, "go")
	k.waitEvents(t, sid, "turn_finished", 1)
	reqs := fake.Requests()
	if len(reqs) != 4 { // the first answer plus three continuations
		t.Fatalf("%d model requests, want 4", len(reqs))
	}
	if !strings.Contains(requestText(reqs[1]), "run the tests first") {
		t.Fatalf("the model did not read the Stop feedback: %s", reqs[1].Body)
	}
}

func TestHooksTimeoutKillsHook(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	marker := filepath.Join(t.TempDir(), "survived")
	hang := writeHook(t, t.TempDir(), "hang.sh", "cat >/dev/null; (sleep 30; touch "+marker+") & sleep 30\n")
	k.setHooks(t, `{"PreToolUse": [{"matcher": "bash", "hooks": [{"type": "command", "command": "`+hang+`", "timeout": 0.5}]}]}`)
	fake := openaitest.New(t)
	proj := outsideTmp(t)
	sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
	msgs := k.runTools(t, fake, sid, toolCall("c1", "bash", map[string]any{"command": "echo ran"}))
	if msgs[0].IsError || !strings.Contains(msgs[0].Text, "ran") {
		t.Fatalf("a timed-out hook must not block: %+v", msgs[0])
	}
	_, finished, _ := k.hookEvents(t, sid)
	if len(finished) != 1 || finished[0]["timedOut"] != true {
		t.Fatalf("hook_finished: %v", finished)
	}
	// The whole process group is gone: nothing is left that could touch
	// the marker.
	waitNoProcessesIn(t, proj)
}

func TestHooksRunConfined(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	k := startKernel(t, dataDir)
	namespaces := k.requireLandlock(t)
	outside := outsideTmp(t)
	proj := filepath.Join(outside, "proj")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "other.txt"), []byte("other-project-secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	probe := writeHook(t, t.TempDir(), "probe.sh", `cat >/dev/null
cat ../other.txt 2>/dev/null || echo read-refused
touch inside.txt && echo inside-ok
touch ../escape.txt 2>/dev/null && echo escaped
ls "`+dataDir+`" 2>/dev/null | grep -q hooks.json && echo saw-data
exit 0
`)
	k.setHooks(t, `{"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "`+probe+`"}]}]}`)
	fake := openaitest.New(t)
	sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
	k.runTools(t, fake, sid)
	_, _, system := k.hookEvents(t, sid)
	if len(system) != 1 {
		t.Fatalf("system messages: %v", system)
	}
	text := system[0]["text"].(string)
	if !strings.Contains(text, "inside-ok") || strings.Contains(text, "escaped") || exists(filepath.Join(outside, "escape.txt")) ||
		!strings.Contains(text, "read-refused") || strings.Contains(text, "other-project-secret") {
		t.Fatalf("confinement: %q", text)
	}
	if namespaces && strings.Contains(text, "saw-data") {
		t.Fatalf("the hook saw the data directory: %q", text)
	}
}

func TestHooksProjectTrust(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	k := startKernel(t, dataDir)
	proj := outsideTmp(t)
	if err := os.MkdirAll(filepath.Join(proj, ".foya"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeProjectHooks := func(word string) {
		doc := `{"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo project-context-` + word + `"}]}]}`
		if err := os.WriteFile(filepath.Join(proj, ".foya", "hooks.json"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeProjectHooks("one")
	fake := openaitest.New(t)
	sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
	turn := func() string {
		k.runTools(t, fake, sid)
		return string(fake.LastRequest().Body)
	}
	untrusted := func() int {
		r := k.eventLog(t, sid)
		n := 0
		for _, e := range r.Events {
			if e.Type == "hook_untrusted" {
				n++
			}
		}
		return n
	}
	// Untrusted: reported, never run.
	if body := turn(); strings.Contains(body, "project-context") || untrusted() != 1 {
		t.Fatalf("an untrusted project hook ran (or was not reported): %s", body)
	}
	pid := k.listProjects(t)[0].Id
	st := k.projectHooks(t, pid)
	if !st.ProjectHooks.Present || st.ProjectHooks.Trusted {
		t.Fatalf("state before trust: %+v", st)
	}
	// Trusted through the CLI: it runs.
	var o outputs
	res := o.run(t, "", "projects", "trust", proj, "--addr", k.addr, "--data-dir", dataDir)
	if res.code != 0 || !strings.Contains(res.stdout, "trusted") {
		t.Fatalf("foya projects trust: %+v", res)
	}
	if body := turn(); !strings.Contains(body, "project-context-one") {
		t.Fatalf("a trusted project hook did not run: %s", body)
	}
	// Changed: not run until trusted again.
	writeProjectHooks("two")
	if body := turn(); strings.Contains(body, "project-context-two") || untrusted() != 2 {
		t.Fatalf("a changed project hook ran: %s", body)
	}
	st = k.projectHooks(t, pid)
	if st.ProjectHooks.Trusted || !st.ProjectHooks.Changed {
		t.Fatalf("state after change: %+v", st)
	}
	if _, err := client.TrustProject(context.Background(), k.client(), pid); err != nil {
		t.Fatalf("trustProject: %v", err)
	}
	if body := turn(); !strings.Contains(body, "project-context-two") {
		t.Fatalf("a re-trusted project hook did not run: %s", body)
	}
}

func TestHooksPostToolUseFeedback(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	post := writeHook(t, t.TempDir(), "post.sh", `
python3 -c 'import json,sys; d=json.load(sys.stdin); sys.stderr.write("lint after %s: %s" % (d["tool_name"], d["tool_response"]["text"].strip()))'
exit 2
`)
	k.setHooks(t, `{"PostToolUse": [{"matcher": "bash", "hooks": [{"type": "command", "command": "`+post+`"}]}]}`)
	fake := openaitest.New(t)
	sid := k.session(t, fake.BaseURL(), outsideTmp(t), "BYPASS")
	msgs := k.runTools(t, fake, sid, toolCall("c1", "bash", map[string]any{"command": "echo hello"}))
	if !strings.Contains(msgs[0].Text, "[PostToolUse hook: lint after bash: hello") {
		t.Fatalf("tool message: %+v", msgs[0])
	}
	if !strings.Contains(requestText(fake.LastRequest()), "lint after bash") {
		t.Fatal("the model did not read the PostToolUse feedback")
	}
}

// SessionStart runs once, before the first model request of a session: its
// stdout becomes a hook-context system message the model sees on that turn,
// and later turns do not run it again.
func TestHooksSessionStartContext(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	proj := outsideTmp(t)
	hook := writeHook(t, t.TempDir(), "start.sh", `
src=$(python3 -c 'import json,sys; print(json.load(sys.stdin).get("source",""))')
echo "Session primer: source=$src"
`)
	k.setHooks(t, `{"SessionStart": [{"hooks": [{"type": "command", "command": "`+hook+`"}]}]}`)
	fake := openaitest.New(t)
	sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
	k.runTools(t, fake, sid)
	if !strings.Contains(lastTurnRequest(fake), "Session primer: source=startup") {
		t.Fatalf("SessionStart context not in the first request: %s", lastTurnRequest(fake))
	}
	k.runTools(t, fake, sid)
	started, _, system := k.hookEvents(t, sid)
	if len(started) != 1 || started[0]["event"] != "SessionStart" {
		t.Fatalf("hook_started events: %v", started)
	}
	if len(system) != 1 || system[0]["text"] != "Session primer: source=startup" ||
		!strings.HasPrefix(system[0]["source"].(string), "hook SessionStart: ") {
		t.Fatalf("system messages: %v", system)
	}
	// The context stays in the history: the second turn's request carries it once.
	if n := strings.Count(lastTurnRequest(fake), "Session primer"); n != 1 {
		t.Fatalf("second request carries the primer %d times: %s", n, lastTurnRequest(fake))
	}
}

// permissionDecision "ask" puts the call to a person even in BYPASS mode:
// the first call waits for approval and runs once approved; the second is
// denied and does not run.
func TestHooksPermissionDecisionAsk(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	proj := outsideTmp(t)
	ask := writeHook(t, t.TempDir(), "ask.sh", `cat >/dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "check with a human"}}'
`)
	k.setHooks(t, `{"PreToolUse": [{"matcher": "bash", "hooks": [{"type": "command", "command": "`+ask+`"}]}]}`)
	fake := openaitest.New(t)
	sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
	fake.Enqueue(toolCall("c1", "bash", map[string]any{"command": "touch approved.txt"}),
		toolCall("c2", "bash", map[string]any{"command": "touch denied.txt"}),
		openaitest.TextStream("gpt-t", "done"))
	k.sendMessage(t, sid, "go")
	for i, decision := range []string{"APPROVED", "DENIED"} {
		k.waitEvents(t, sid, "approval_requested", i+1)
		ev := k.eventLog(t, sid)
		var reqs []struct{ RequestID string }
		for _, e := range ev.Events {
			if e.Type == "approval_requested" {
				var p struct{ RequestID string }
				if err := json.Unmarshal(e.Payload, &p); err != nil {
					t.Fatal(err)
				}
				reqs = append(reqs, p)
			}
		}
		if exists(filepath.Join(proj, "approved.txt")) != (i == 1) {
			t.Fatalf("approved.txt exists=%v before decision %d", exists(filepath.Join(proj, "approved.txt")), i)
		}
		k.resolveApproval(t, sid, reqs[i].RequestID, client.ApprovalDecision(decision))
	}
	k.waitEvents(t, sid, "turn_finished", 1)
	if !exists(filepath.Join(proj, "approved.txt")) || exists(filepath.Join(proj, "denied.txt")) {
		t.Fatalf("approved ran=%v, denied ran=%v", exists(filepath.Join(proj, "approved.txt")), exists(filepath.Join(proj, "denied.txt")))
	}
	if !strings.Contains(requestText(fake.LastRequest()), "PreToolUse hook asked for approval") {
		t.Fatalf("the model did not learn of the denial: %s", fake.LastRequest().Body)
	}
}

// PreCompact runs before a manual compaction (compactSession) with trigger
// "manual" on its stdin, and is recorded like any hook.
func TestHooksPreCompact(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	proj := outsideTmp(t)
	scripts := t.TempDir()
	seen := filepath.Join(scripts, "seen.json")
	hook := writeHook(t, scripts, "pre.sh", `cat > `+seen+"\n")
	k.setHooks(t, `{"PreCompact": [{"hooks": [{"type": "command", "command": "`+hook+`"}]}]}`)
	fake := openaitest.New(t)
	sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
	k.runTools(t, fake, sid)
	k.runTools(t, fake, sid)
	if exists(seen) {
		t.Fatal("PreCompact ran without a compaction")
	}
	fake.Enqueue(openaitest.Completion("gpt-t", "## Goal\nsummary", "stop", 700, 60))
	if _, err := client.CompactSession(context.Background(), k.client(), sid); err != nil {
		t.Fatalf("compactSession: %v", err)
	}
	raw, err := os.ReadFile(seen)
	if err != nil {
		t.Fatalf("PreCompact did not run: %v", err)
	}
	var in map[string]any
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatal(err)
	}
	if in["hook_event_name"] != "PreCompact" || in["trigger"] != "manual" || in["session_id"] != sid {
		t.Fatalf("hook input: %s", raw)
	}
	started, finished, _ := k.hookEvents(t, sid)
	if len(started) != 1 || started[0]["event"] != "PreCompact" || len(finished) != 1 || finished[0]["exitCode"] != float64(0) {
		t.Fatalf("hook events: %v %v", started, finished)
	}
}

// A sub-agent's child session runs SubagentStop instead of Stop when it
// finishes; its parent runs Stop.
func TestHooksSubagentStop(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	proj := outsideTmp(t)
	scripts := t.TempDir()
	log := filepath.Join(scripts, "stops.log")
	hook := writeHook(t, scripts, "stop.sh", `python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["hook_event_name"], d["session_id"])' >> `+log+"\n")
	k.setHooks(t, `{"Stop": [{"hooks": [{"type": "command", "command": "`+hook+`"}]}],
		"SubagentStop": [{"hooks": [{"type": "command", "command": "`+hook+`"}]}]}`)
	fake := openaitest.New(t)
	sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
	fake.Enqueue(toolCall("c1", "task", map[string]any{"prompt": "say hi"}),
		openaitest.TextStream("gpt-t", "child says hi"), openaitest.TextStream("gpt-t", "done"))
	k.sendMessage(t, sid, "go")
	k.waitEvents(t, sid, "turn_finished", 1)
	if !strings.Contains(requestText(fake.LastRequest()), "child says hi") {
		t.Fatalf("task result not in the last request: %s", fake.LastRequest().Body)
	}
	raw, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "SubagentStop ") || lines[0] == "SubagentStop "+sid || lines[1] != "Stop "+sid {
		t.Fatalf("stop hooks ran as:\n%s", raw)
	}
}

// foya exec shows hooks as dim lines on stderr (event, command, exit code,
// duration); stdout keeps only the assistant's text.
func TestHooksExecPrintsHookLines(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	hook := writeHook(t, t.TempDir(), "ctx.sh", "cat >/dev/null; echo hook-stdout-context\n")
	k.setHooks(t, `{"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "`+hook+`"}]}]}`)
	fake.Enqueue(openaitest.TextStream("gpt-t", "Hello"))
	r := o.mustRun(t, "", "exec", "--addr", k.addr, "--no-project", "--model", "fake/gpt-t", "--approval-mode", "bypass", "hi")
	if r.stdout != "Hello\n" {
		t.Fatalf("stdout %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "hook UserPromptSubmit: "+hook+"\n") ||
		!regexp.MustCompile(`hook UserPromptSubmit done: \S+ctx\.sh, exit 0 in \d`).MatchString(r.stderr) {
		t.Fatalf("stderr: %s", r.stderr)
	}
	// The hook ran in the scratch session's directory (under the hidden
	// data directory) and its stdout reached the model, not the terminal.
	sent := false
	for _, rq := range fake.Requests() {
		sent = sent || strings.Contains(requestText(rq), "hook-stdout-context")
	}
	if !sent || strings.Contains(r.stderr, "hook-stdout-context") {
		t.Fatalf("hook context sent %v; stderr %s", sent, r.stderr)
	}
	// --json prints the events as received, hook events among them. The
	// first session's background title request may still take a scripted
	// reply: script one more so the turn always has its own.
	fake.Enqueue(openaitest.TextStream("gpt-t", "Again"))
	fake.Enqueue(openaitest.TextStream("gpt-t", "Again"))
	r = o.mustRun(t, "", "exec", "--addr", k.addr, "--no-project", "--model", "fake/gpt-t", "--approval-mode", "bypass", "--json", "hi")
	if !strings.Contains(r.stdout, `"type":"hook_finished"`) || strings.Contains(r.stderr, "hook UserPromptSubmit") {
		t.Fatalf("--json stdout %s\nstderr %s", r.stdout, r.stderr)
	}
}

// A hook-context system message is part of the history: a fork copies it,
// and a rewind past it removes it from what the model sees.
func TestHooksContextForkAndRewind(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	proj := outsideTmp(t)
	scripts := t.TempDir()
	hook := writeHook(t, scripts, "ctx.sh", `cat >/dev/null
n=$(( $(cat `+scripts+`/n 2>/dev/null || echo 0) + 1 )); echo $n > `+scripts+`/n
echo "hook-ctx-$n"
`)
	k.setHooks(t, `{"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "`+hook+`"}]}]}`)
	fake := openaitest.New(t)
	sid := k.session(t, fake.BaseURL(), proj, "BYPASS")
	k.runTools(t, fake, sid)
	k.runTools(t, fake, sid)
	type msg = client.SessionDetailSessionMessagesMessage
	messages := func(id string) []msg { return k.sessionDetail(t, id).Session.Messages }
	texts := func(ms []msg) string {
		var b strings.Builder
		for _, m := range ms {
			b.WriteString(string(m.Role) + ":" + m.Text + "|")
		}
		return b.String()
	}
	ms := messages(sid)
	if got := texts(ms); got != "USER:go|SYSTEM:hook-ctx-1|ASSISTANT:done|USER:go|SYSTEM:hook-ctx-2|ASSISTANT:done|" {
		t.Fatalf("messages: %s", got)
	}
	// Fork after the first answer: the fork has the first hook context.
	f, err := client.ForkSession(context.Background(), k.client(), sid, ms[2].Seq)
	if err != nil {
		t.Fatalf("forkSession: %v", err)
	}
	fm := messages(f.ForkSession.Id)
	if got := texts(fm); got != "USER:go|SYSTEM:hook-ctx-1|ASSISTANT:done|" || !strings.HasPrefix(fm[1].Source, "hook UserPromptSubmit: ") {
		t.Fatalf("fork messages: %s %+v", got, fm)
	}
	// Rewind the original to its second prompt: the second context goes.
	k.rewindTo(t, sid, ms[3].Seq)
	if got := texts(messages(sid)); got != "USER:go|SYSTEM:hook-ctx-1|ASSISTANT:done|" {
		t.Fatalf("messages after rewind: %s", got)
	}
	k.runTools(t, fake, sid)
	body := ""
	for _, rq := range fake.Requests() {
		if b := requestText(rq); strings.Contains(b, "hook-ctx-3") && !strings.Contains(b, "Write a title") {
			body = b
		}
	}
	if !strings.Contains(body, "hook-ctx-1") || strings.Contains(body, "hook-ctx-2") || !strings.Contains(body, "hook-ctx-3") {
		t.Fatalf("request after rewind: %s", body)
	}
}
