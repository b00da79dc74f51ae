package daemon

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/internal/cmdutil"
)

func TestParseFlags(t *testing.T) {
	m := NewMain("test", &bytes.Buffer{}, &bytes.Buffer{})
	err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--data-dir", "d", "--tool-network", "off", "--tool-writable", "w",
		"--auth-token-file", "tok", "--allow-origin", "a.test", "--allow-origin", "b.test", "--plugin-idle-stop", "0", "--log-level", "debug"})
	if err != nil {
		t.Fatal(err)
	}
	c := m.Config
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	switch {
	case c.Addr != "127.0.0.1:0" || c.DataDir != "d" || c.PluginIdleStop != 0 || c.LogLevel.String() != "DEBUG" || c.ChildNice != 5:
		t.Errorf("config %+v", c)
	case !c.Tools.NetworkOff || !slices.Equal(c.Tools.Writable, []string{abs("w")}) || !slices.Equal(c.Tools.Hidden, []string{abs("tok")}):
		t.Errorf("tools %+v", c.Tools)
	case !slices.Equal(c.Origins, []string{"a.test", "b.test"}) || c.Tools.Limits == nil:
		t.Errorf("config %+v", c)
	case c.Retry.MaxAttempts < 1 || c.Output.TextBytes <= 0 || c.Requests.MaxBodyBytes <= 0 || c.WSPing < time.Second:
		t.Errorf("defaults %+v", c)
	}
}

func TestParseFlagsRefuses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--ws-ping-interval", "10ms"}, "--ws-ping-interval"},
		{[]string{"--tls-cert", "c.pem"}, "go together"},
		{[]string{"--advertise-url", "ftp://x"}, "--advertise-url"},
		{[]string{"--max-variables", "2MiB", "--max-request-body", "1MiB"}, "larger than"},
		{[]string{"--max-subscriptions", "0"}, "--max-subscriptions 0"},
		{[]string{"--max-response", "1KiB"}, "--max-response 1024: must be at least 64KiB"},
		{[]string{"--log-level", "loud"}, "--log-level"},
		{[]string{"--pprof", "0.0.0.0:6060"}, "loopback only"},
		{[]string{"--plugin-idle-stop", "-1s"}, "--plugin-idle-stop"},
		{[]string{"--retry-max-attempts", "0"}, "--retry-max-attempts"},
		{[]string{"--database", "mysql://u:secret@h/db"}, "postgres://"},
		{[]string{"--max-reply-text", "0"}, "--max-reply-text"},
		{[]string{"--tool-network", "maybe"}, "--tool-network"},
		{[]string{"--tool-max-procs", "-1"}, "--tool-max-procs"},
		{[]string{"--tool-max-memory", "1M"}, "at least 64M"},
		{[]string{"--otlp-protocol", "thrift"}, "--otlp-protocol"},
		{[]string{"--terminal-max-cpu", "-1s"}, "--terminal-max-cpu"},
		{[]string{"--child-nice", "20"}, "--child-nice 20: give 0 to 19"},
		{[]string{"--child-nice", "-1"}, "--child-nice -1"},
		{[]string{"--no-such-flag"}, "see foya serve --help"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			err := NewMain("test", &bytes.Buffer{}, &bytes.Buffer{}).ParseFlags(tc.args)
			var ue cmdutil.UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a usage error saying %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the password is in the error: %v", err)
			}
		})
	}
}

func TestParseFlagsHelp(t *testing.T) {
	var stdout bytes.Buffer
	err := NewMain("test", &stdout, &bytes.Buffer{}).ParseFlags([]string{"--help"})
	if !errors.Is(err, cmdutil.ErrHelpShown) || !strings.Contains(stdout.String(), "Usage: foya serve") || !strings.Contains(stdout.String(), "-tool-max-procs") {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
}

func TestByteFlag(t *testing.T) {
	for in, want := range map[string]int64{"1": 1, "2KiB": 2 << 10, " 3 MiB ": 3 << 20, "1GiB": 1 << 30} {
		var b byteFlag
		if err := b.Set(in); err != nil || int64(b) != want {
			t.Errorf("%q: %d, %v; want %d", in, b, err, want)
		}
	}
	for _, in := range []string{"0", "-1", "1KB", "x", "2000GiB"} {
		var b byteFlag
		if err := b.Set(in); err == nil {
			t.Errorf("%q: accepted as %d", in, b)
		}
	}
}
