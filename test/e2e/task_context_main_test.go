//go:build linux

package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// chatMessages are the role and text of each message of a chat request
// after the system prompt.
func chatMessages(t *testing.T, r openaitest.Request) (roles, texts []string) {
	t.Helper()
	var body struct {
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	for _, m := range body.Messages {
		if m.Role == "system" {
			continue // the system prompt
		}
		var s string
		if json.Unmarshal(m.Content, &s) != nil {
			var parts []struct{ Text string }
			_ = json.Unmarshal(m.Content, &parts)
			for _, p := range parts {
				s += p.Text
			}
		}
		roles, texts = append(roles, m.Role), append(texts, s)
	}
	return
}

// MSG-10: the task tool's context hands the child the parent's chosen
// messages, in order, before its prompt; bad seqs and too much context are
// clear tool errors.
func TestTaskContextBySeq(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	fake := openaitest.New(t)
	sid := k.session(t, fake.BaseURL(), "", "BYPASS")
	say := func(text, reply string) {
		n := k.turnsFinished(t, sid)
		fake.Enqueue(openaitest.TextStream("gpt-t", reply))
		k.sendMessage(t, sid, text)
		k.waitEvents(t, sid, "turn_finished", n+1)
	}
	say("alpha: the launch code is BLUE-42", "noted alpha")
	say("beta: idle chatter nobody needs", "noted beta")
	say("gamma: the deploy target is eu-west", "noted gamma")
	say("delta: "+strings.Repeat("long text ", 7000), "noted delta") // about 17500 tokens
	seq := map[string]int{}
	for _, m := range k.sessionDetail(t, sid).Session.Messages {
		seq[m.Text[:min(len(m.Text), 11)]] = m.Seq
	}
	alpha, gamma, gammaReply, delta := seq["alpha: the "], seq["gamma: the "], seq["noted gamma"], seq["delta: long"]
	if alpha == 0 || gamma == 0 || gammaReply == 0 || delta == 0 {
		t.Fatalf("seqs: %v", seq)
	}

	child := openaitest.TextStream("gpt-t", "child done")
	n := k.turnsFinished(t, sid)
	fake.Enqueue(
		toolCall("t1", "task", map[string]any{"prompt": "what do we know?", "context": map[string]any{"seqs": []int{gamma, alpha}}}),
		child,
		toolCall("t2", "task", map[string]any{"prompt": "and the target?", "context": map[string]any{"fromSeq": gamma, "toSeq": gammaReply}}),
		child,
		toolCall("t3", "task", map[string]any{"prompt": "x", "context": map[string]any{"seqs": []int{99999}}}),
		toolCall("t4", "task", map[string]any{"prompt": "x", "context": map[string]any{"seqs": []int{delta}}}),
		openaitest.TextStream("gpt-t", "all done"))
	before := len(fake.Requests())
	k.sendMessage(t, sid, "delegate")
	k.waitEvents(t, sid, "turn_finished", n+1)
	reqs := fake.Requests()[before:]
	if len(reqs) != 7 {
		for _, r := range reqs {
			roles, texts := chatMessages(t, r)
			for i := range texts {
				texts[i] = texts[i][:min(len(texts[i]), 60)]
			}
			t.Logf("%s %q %q", r.Path, roles, texts)
		}
		t.Fatalf("%d model requests, want 7", len(reqs))
	}

	// The first child's first request: the system prompt, then alpha and
	// gamma in seq order (not beta), then the prompt.
	roles, texts := chatMessages(t, reqs[1])
	if len(texts) != 3 || texts[0] != "alpha: the launch code is BLUE-42" || texts[1] != "gamma: the deploy target is eu-west" || roles[2] != "user" || texts[2] != "what do we know?" {
		t.Fatalf("first child request: %q %q", roles, texts)
	}
	roles, texts = chatMessages(t, reqs[3])
	if len(texts) != 3 || texts[0] != "gamma: the deploy target is eu-west" || roles[1] != "assistant" || texts[1] != "noted gamma" || texts[2] != "and the target?" {
		t.Fatalf("second child request: %q %q", roles, texts)
	}

	var tools []toolMsg
	for _, m := range k.sessionDetail(t, sid).Session.Messages {
		if m.Role == "TOOL" {
			tools = append(tools, m)
		}
	}
	if len(tools) != 4 || tools[0].IsError || tools[0].Text != "child done" {
		t.Fatalf("task results: %+v", tools)
	}
	if !tools[2].IsError || !strings.Contains(tools[2].Text, "no message with seq 99999") {
		t.Fatalf("out-of-range seq: %+v", tools[2])
	}
	if !tools[3].IsError || !strings.Contains(tools[3].Text, "over the limit of") {
		t.Fatalf("over-budget context: %+v", tools[3])
	}

	// The child's snapshot records the seqs passed.
	var out struct {
		Session struct {
			Children []struct {
				Agent struct{ ContextSeqs []int }
			}
		}
	}
	k.gql(t, `query($id: ID!) { session(id: $id) { children { agent { contextSeqs } } } }`, map[string]any{"id": sid}, &out)
	var got [][]int
	for _, c := range out.Session.Children {
		got = append(got, c.Agent.ContextSeqs)
	}
	if len(got) != 2 || !slices.ContainsFunc(got, func(s []int) bool { return slices.Equal(s, []int{alpha, gamma}) }) ||
		!slices.ContainsFunc(got, func(s []int) bool { return slices.Equal(s, []int{gamma, gammaReply}) }) {
		t.Fatalf("children's contextSeqs: %v (alpha %d, gamma %d, reply %d)", got, alpha, gamma, gammaReply)
	}
}
