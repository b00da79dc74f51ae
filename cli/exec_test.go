package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/foya-dev/foya/client"
)

// fakeGraphQL records the operations it receives and answers data.
func fakeGraphQL(t *testing.T, data string) (*client.Client, func() []string) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
		io.WriteString(w, `{"data":`+data+`}`)
	}))
	t.Cleanup(srv.Close)
	return client.New(strings.TrimPrefix(srv.URL, "http://"), ""), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// Without a terminal an approval request is denied, and the user is told why.
func TestExecDeniesApprovalWithoutTerminal(t *testing.T) {
	c, requests := fakeGraphQL(t, `{"resolveApproval":true}`)
	var stdout, stderr bytes.Buffer
	w := &turnWatch{c: c, sessionID: "ses_1", started: true, pr: newPrinter(&stdout, &stderr), stdin: strings.NewReader("y\n")}
	ev := func(s string) (int, bool, error) {
		var e execEvent
		if err := json.Unmarshal([]byte(s), &e); err != nil {
			t.Fatal(err)
		}
		return w.handle(context.Background(), e, json.RawMessage(s))
	}
	ev(`{"type":"turn_started","payload":{"turnId":"trn_1"}}`)
	ev(`{"type":"approval_requested","approval":{"requestId":"apr_1","tool":"bash","action":"command","summary":"rm -rf build"}}`)
	reqs := requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0], `"decision":"DENIED"`) || !strings.Contains(reqs[0], `"requestId":"apr_1"`) {
		t.Fatalf("requests %v", reqs)
	}
	if !strings.Contains(stderr.String(), "no terminal") || !strings.Contains(stderr.String(), "rm -rf build") {
		t.Fatalf("stderr %q", stderr.String())
	}
	// Another turn's finish does not end this one; ours does, with its status.
	if _, done, _ := ev(`{"type":"turn_finished","payload":{"turnId":"trn_0","status":"completed"}}`); done {
		t.Fatal("finished on another turn")
	}
	code, done, err := ev(`{"type":"turn_finished","payload":{"turnId":"trn_1","status":"failed","reason":"provider said no"}}`)
	if !done || code != exitFailed || err == nil || !strings.Contains(err.Error(), "provider said no") {
		t.Fatalf("turn_finished: %d %v %v", code, done, err)
	}
}

// A queued message's turn is recognised by its queue item; events of the
// turn running before it are not printed.
func TestExecFollowsQueuedTurn(t *testing.T) {
	var stdout, stderr bytes.Buffer
	w := &turnWatch{queueItemID: "qi_2", pr: newPrinter(&stdout, &stderr)}
	for _, s := range []string{
		`{"type":"message_delta","delta":"theirs"}`,
		`{"type":"turn_finished","payload":{"turnId":"trn_1","status":"completed"}}`,
		`{"type":"turn_started","payload":{"turnId":"trn_2","queueItemId":"qi_2"}}`,
		`{"type":"message_delta","delta":"ours"}`,
		`{"type":"message_end","message":{"role":"ASSISTANT","text":"ours, complete"}}`,
	} {
		var e execEvent
		json.Unmarshal([]byte(s), &e)
		if _, done, err := w.handle(context.Background(), e, json.RawMessage(s)); done || err != nil {
			t.Fatalf("%s: done %v err %v", s, done, err)
		}
	}
	payload := json.RawMessage(`{"turnId":"trn_2","status":"cancelled"}`)
	code, done, _ := w.handle(context.Background(), execEvent{Type: "turn_finished", Payload: &payload}, nil)
	if !done || code != exitCancelled {
		t.Fatalf("cancelled turn: %d %v", code, done)
	}
	w.pr.flush()
	// Deltas missed by a late subscription are completed from message_end.
	if stdout.String() != "ours, complete\n" {
		t.Fatalf("stdout %q", stdout.String())
	}
}

// A route_fallback event prints which model failed, why, and which model
// answers instead.
func TestExecPrintsRouteFallback(t *testing.T) {
	var stdout, stderr bytes.Buffer
	w := &turnWatch{started: true, pr: newPrinter(&stdout, &stderr)}
	for _, s := range []string{
		`{"type":"turn_started","payload":{"turnId":"trn_1"}}`,
		`{"type":"route_fallback","payload":{"turnId":"trn_1","from":{"connectionId":"conn_a","model":"gpt-t"},"to":{"connectionId":"conn_b","model":"gpt-backup"},"reason":"overloaded","category":"throttling","message":"throttling: Overloaded","attempt":1}}`,
	} {
		var e execEvent
		if err := json.Unmarshal([]byte(s), &e); err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.handle(context.Background(), e, json.RawMessage(s)); err != nil {
			t.Fatal(err)
		}
	}
	if got := stderr.String(); !strings.Contains(got, "model gpt-t failed (overloaded: throttling: Overloaded); answering with fallback gpt-backup") {
		t.Fatalf("stderr %q", got)
	}
}

// A guardian_verdict event prints the verdict, the tool, the model and the
// reason: a deny on stderr as an error line, the others as info.
func TestExecPrintsGuardianVerdict(t *testing.T) {
	var stdout, stderr bytes.Buffer
	w := &turnWatch{started: true, pr: newPrinter(&stdout, &stderr)}
	for _, s := range []string{
		`{"type":"turn_started","payload":{"turnId":"trn_1"}}`,
		`{"type":"guardian_verdict","guardianVerdict":{"toolCallId":"c1","tool":"bash","verdict":"deny","reason":"deletes the root filesystem","cause":"verdict","model":"gpt-mini"}}`,
		`{"type":"guardian_verdict","guardianVerdict":{"toolCallId":"c2","tool":"write","verdict":"escalate","reason":"no answer","cause":"timeout","model":"gpt-mini"}}`,
	} {
		var e execEvent
		if err := json.Unmarshal([]byte(s), &e); err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.handle(context.Background(), e, json.RawMessage(s)); err != nil {
			t.Fatal(err)
		}
	}
	w.pr.flush()
	out := stderr.String()
	for _, want := range []string{"guardian deny bash by gpt-mini: deletes the root filesystem", "guardian escalate write (timeout) by gpt-mini: no answer"} {
		if !strings.Contains(out, want) {
			t.Fatalf("stderr lacks %q:\n%s", want, out)
		}
	}
}

// The message header of `foya sessions show` names the model that answered
// when it is a fallback, not the session's own.
func TestAnsweredBy(t *testing.T) {
	fb, own := "gpt-backup", "gpt-t"
	if answeredBy(&fb, "gpt-t") != "gpt-backup" || answeredBy(&own, "gpt-t") != "" || answeredBy(nil, "gpt-t") != "" {
		t.Fatal("answeredBy")
	}
}
