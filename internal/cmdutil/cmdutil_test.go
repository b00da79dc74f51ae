package cmdutil

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestParseHelpAndErrors(t *testing.T) {
	c := Command{Name: "things add", Synopsis: "NAME [flags]", Doc: "Adds a thing."}
	for _, tc := range []struct {
		args      []string
		help      bool
		usageCode bool
		rest      []string
	}{
		{args: []string{"--help"}, help: true},
		{args: []string{"x", "-h"}, help: true},
		{args: []string{"--bogus"}, usageCode: true},
		{args: []string{"x", "--n", "3", "y"}, rest: []string{"x", "y"}},
	} {
		var stdout, stderr bytes.Buffer
		fs := NewFlagSet(c, &stdout)
		n := fs.Int("n", 0, "how many")
		rest, err := Parse(fs, tc.args)
		code := Exit(err, &stderr)
		switch {
		case tc.help:
			if !errors.Is(err, ErrHelpShown) || code != 0 || stderr.Len() != 0 ||
				!strings.HasPrefix(stdout.String(), "Usage: foya things add NAME [flags]\n\nAdds a thing.\n\nFlags:\n  -n int") {
				t.Errorf("%v: code %d stdout %q stderr %q", tc.args, code, stdout.String(), stderr.String())
			}
		case tc.usageCode:
			if code != 2 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "see foya things add --help") {
				t.Errorf("%v: code %d stdout %q stderr %q", tc.args, code, stdout.String(), stderr.String())
			}
		default:
			if err != nil || *n != 3 || strings.Join(rest, ",") != strings.Join(tc.rest, ",") || stdout.Len() != 0 {
				t.Errorf("%v: %v %d %v", tc.args, err, *n, rest)
			}
		}
	}
}
