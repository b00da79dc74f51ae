package responses_test

import (
	"context"
	"strings"
	"testing"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/openai/openaitest"
	"github.com/foya-dev/foya/providers/responses"
)

func TestWebSearch(t *testing.T) {
	srv := openaitest.New(t)
	srv.Enqueue(openaitest.Response{Body: `{"id":"resp_1","object":"response","model":"gpt-5","status":"completed","output":[
		{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"go 1.26"}},
		{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Go 1.26 shipped.","annotations":[
			{"type":"url_citation","start_index":0,"end_index":5,"url":"https://go.dev/doc/go1.26","title":"Go 1.26 Release Notes"},
			{"type":"url_citation","start_index":6,"end_index":9,"url":"https://go.dev/doc/go1.26","title":"Go 1.26 Release Notes"}]}]}],
		"usage":{"input_tokens":300,"input_tokens_details":{"cached_tokens":0},"output_tokens":20,"total_tokens":320}}`})
	p := responses.New(responses.Config{})
	r, err := p.WebSearch(context.Background(), sdk.Endpoint{BaseURL: srv.BaseURL(), APIKey: "k"}, sdk.WebSearchRequest{Model: "gpt-5", Query: "go 1.26"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "Go 1.26 shipped." || len(r.Sources) != 1 || r.Sources[0].URL != "https://go.dev/doc/go1.26" || r.Usage.InputTokens != 300 {
		t.Fatalf("%+v", r)
	}
	body := string(srv.LastRequest().Body)
	if !strings.Contains(body, `"tools":[{"type":"web_search"}]`) || !strings.Contains(body, `"store":false`) || srv.LastRequest().Path != "/v1/responses" {
		t.Fatalf("request %s", body)
	}
}

func TestCompactContextOff(t *testing.T) {
	p := responses.New(responses.Config{})
	_, err := p.CompactContext(context.Background(), sdk.Endpoint{Options: map[string]string{responses.OptionNativeCompaction: "off"}}, sdk.Request{Model: "m"})
	if e, ok := err.(*sdk.Error); !ok || e.Category != sdk.CategoryUnavailable {
		t.Fatalf("err %v", err)
	}
}
