package storage

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
)

// metaSeeds are session metadata documents: as the kernel writes them,
// and the shapes decodeMeta must hand to json.Unmarshal.
func metaSeeds(t testing.TB) []string {
	full := core.SessionMeta{
		ID: "ses_1", ParentID: "ses_0", Source: "task:call_1", ProjectID: "prj_1", Title: "Ünïcode title — ok",
		Pinned: true, ConnectionID: "con_1", Model: "gpt-x", ReasoningEffort: "high",
		ApprovalMode: core.ApprovalGuarded, AgentMode: core.AgentPlan,
		Tasks:          []core.Task{{ID: "1", Text: "do \"this\" {then} [that]", Status: "pending"}},
		Agent:          &core.AgentSnapshot{Name: "explore", Instructions: "look, don't touch\n"},
		CreatedAt:      time.Date(2026, 12, 2, 7, 0, 0, 123456789, time.UTC),
		FallbackModels: []core.ModelRef{{ConnectionID: "con_2", Model: "m2"}},
		Worktree:       &core.Worktree{Path: "/tmp/w", Branch: "foya/x", BaseRef: "main"},
	}
	var docs []string
	for _, m := range []core.SessionMeta{
		{ID: "ses_a", Title: "session ses_a", Model: "m", CreatedAt: time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)},
		{ID: "ses_b", CreatedAt: time.Date(2026, 1, 1, 0, 0, 1, 0, time.FixedZone("x", 3600+1800))},
		{ID: "tab\there", Title: "<html> & \u2028"},
		full,
	} {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	return append(docs,
		`{}`, ` { } `, `{"id":null}`, `{"ID":"upper"}`, `{"id":"a","id":"b"}`, `{"unknown":1,"id":"x"}`,
		`{"pinned":true,"pinned":false}`, `{"pinned":tru}`, `{"id":"x",}`, `{"id":"x"`, `{"id":"x"}x`,
		`{"title":"a\"b"}`, `{"title":"\u00e9"}`, "{\"title\":\"\xff\"}", `{"createdAt":"2026-12-02T7:00:00Z"}`,
		`{"createdAt":"2026-12-02T07:00:00,5Z"}`, `{"createdAt":"2026-12-02T07:00:00+25:00"}`,
		`{"createdAt":"2026-12-02T07:00:00.5+01:00"}`, `{"createdAt":"nope"}`,
		`{"tasks":[{"id":"1","text":"]}","status":"done"}],"agent":null,"worktree":{"path":"p"}}`,
		`{"tasks":"x"}`, `{"tasks":[1,2]}`, `{"agent":{"name":"a"} , "fallbackModels":[]}`,
		`{"worktree":{"path":"a\\"}}`, `{"tasks":[],"tasks":[{"id":"2"}]}`, ` {"id" : "x" , "model":"m"}`+"\n",
	)
}

// TestDecodeMetaLikeJSON: decodeMeta gives json.Unmarshal's result (and
// fails where it fails) on every seed; the kernel's own documents take the
// fast path.
func TestDecodeMetaLikeJSON(t *testing.T) {
	for i, doc := range metaSeeds(t) {
		checkDecodeMeta(t, doc)
		var m core.SessionMeta
		if (i == 0 || i == 1 || i == 3) && !fastMeta(doc, &m) { // without escapes
			t.Errorf("the kernel's document %s took the slow path", doc)
		}
	}
}

func FuzzDecodeMeta(f *testing.F) {
	for _, doc := range metaSeeds(f) {
		f.Add(doc)
	}
	f.Fuzz(checkDecodeMeta)
}

func checkDecodeMeta(t *testing.T, doc string) {
	var want, got core.SessionMeta
	werr := json.Unmarshal([]byte(doc), &want)
	gerr := decodeMeta(doc, &got)
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("%q: error %v, json.Unmarshal's %v", doc, gerr, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", doc, got, want)
	}
}

// TestParseTimeBytes: the direct reading of stored times gives what
// parseTime gives.
func TestParseTimeBytes(t *testing.T) {
	in := []string{"2026-02-29T00:00:00.000000000Z", "2026-13-01T00:00:00.000000000Z", "2026-12-02T24:00:00.000000000Z",
		"2026-12-02T07:00:00.0000000001Z", "2026-12-02T07:00:00Z", "x026-12-02T07:00:00.000000000Z"}
	for _, at := range []time.Time{time.Date(2024, 2, 29, 23, 59, 59, 999999999, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 31, 7, 8, 9, 10, time.FixedZone("x", -3600)), time.Now()} {
		in = append(in, fmtTime(at))
	}
	for _, s := range in {
		want, werr := parseTime(s)
		got, gerr := parseTimeBytes([]byte(s))
		if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, %v; parseTime: %v, %v", s, got, gerr, want, werr)
		}
	}
}
