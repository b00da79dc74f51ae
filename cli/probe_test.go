package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/internal/cmdutil"
)

func TestCheckAddr(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:4777": true, "localhost:1": true, "[::1]:4777": true, "http://127.0.0.1:4777": true, "https://h.example:443/": true,
		"127.0.0.1": false, "localhost": false, "127.0.0.1:": false, "http://127.0.0.1": false, "[::1]": false, "h:1/x": false,
	} {
		err := checkAddr(client.New(addr, "").Addr())
		var ue cmdutil.UsageError
		if ok != (err == nil) || (err != nil && (!errors.As(err, &ue) || !strings.Contains(err.Error(), "host:port"))) {
			t.Errorf("%q: %v", addr, err)
		}
	}
}

func TestIsFoya(t *testing.T) {
	name := func(s string) *string { return &s }
	foya := &client.ProbeResponse{Foya: &client.ProbeFoyaType{Name: name("SessionEvent"), Fields: []client.ProbeFoyaTypeFieldsField{{Name: "type"}, {Name: "seq"}}}}
	if !isFoya(foya) {
		t.Error("Foya's answer refused")
	}
	for i, p := range []*client.ProbeResponse{
		nil, {}, {Typename: name("Query")},
		{Foya: &client.ProbeFoyaType{Name: name("SessionEvent")}},
		{Foya: &client.ProbeFoyaType{Name: name("Other"), Fields: []client.ProbeFoyaTypeFieldsField{{Name: "seq"}}}},
	} {
		if isFoya(p) {
			t.Errorf("case %d taken for Foya", i)
		}
	}
}
