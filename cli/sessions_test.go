package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/client"
)

// allSessions walks the kernel's pages: a page over the response limit is
// asked for again a quarter as long, and a cursor deleted between two
// pages starts the walk again, listing each session once, in the kernel's
// order.
func TestAllSessionsPagesAndRestarts(t *testing.T) {
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	session := func(i int) string {
		return fmt.Sprintf(`{"id":"ses_%04d","phase":"IDLE","approvalMode":"ASK","createdAt":%q,"updatedAt":%q,"headSeq":1,"usage":{"inputTokens":0,"outputTokens":0,"cachedTokens":0,"unpricedTokens":0}}`,
			i, base.Add(time.Duration(i)*time.Second).Format(time.RFC3339Nano), base.Format(time.RFC3339Nano))
	}
	// The kernel's sessions, newest first: 299 … 0, and 300 created while
	// the walk runs.
	page := func(from, n int) string {
		var out []string
		for i := from; i > from-n && i >= 0; i-- {
			out = append(out, session(i))
		}
		return `{"data":{"sessions":[` + strings.Join(out, ",") + `],"connections":[]}}`
	}
	tooLarge := `{"errors":[{"message":"the response would be larger than 64 KiB (the response size limit) and was not built","extensions":{"code":"BAD_INPUT"}}]}`
	notFound := `{"errors":[{"message":"after: session ses_0050 not found (deleted since the previous page? list again from the start)","extensions":{"code":"NOT_FOUND"}}]}`
	type vars struct {
		First int
		After *string
	}
	var asked []vars
	answers := []string{
		tooLarge,        // first: 1000
		page(299, 250),  // first: 250 → 299 … 50
		notFound,        // after 50: deleted
		page(300, 250),  // from the start again: 300 (new) … 51
		page(50-1, 250), // after 51 (50 deleted): 49 … 0, the end
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Variables vars }
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &req); err != nil {
			t.Error(err)
		}
		asked = append(asked, req.Variables)
		if len(asked) > len(answers) {
			t.Errorf("request %d: %s", len(asked), b)
			io.WriteString(w, `{"errors":[{"message":"no more"}]}`)
			return
		}
		io.WriteString(w, answers[len(asked)-1])
	}))
	defer srv.Close()
	got, _, err := allSessions(context.Background(), client.New(strings.TrimPrefix(srv.URL, "http://"), ""), false)
	if err != nil {
		t.Fatal(err)
	}
	firsts := []int{}
	for _, a := range asked {
		firsts = append(firsts, a.First)
	}
	if fmt.Sprint(firsts) != "[1000 250 250 250 250]" || asked[2].After == nil || *asked[2].After != "ses_0050" || asked[3].After != nil || *asked[4].After != "ses_0051" {
		t.Fatalf("pages asked: %+v", asked)
	}
	if len(got) != 301 {
		t.Fatalf("%d sessions, want 301 (300 … 0, each once)", len(got))
	}
	for i, s := range got {
		if want := fmt.Sprintf("ses_%04d", 300-i); s.Id != want {
			t.Fatalf("session %d is %s, want %s", i, s.Id, want)
		}
	}
}
