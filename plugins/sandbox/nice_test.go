package sandbox

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// With SetChildNice a confined command (a hook's or terminal's, started by
// the kernel through the helper) runs that many nice levels below the
// caller, with and without user namespaces, and so does what it starts;
// without it, at the caller's level. (Plugins: TestPluginsStartOnDemand
// in test/e2e checks every thread of the plugin processes and a bash
// call.)
func TestChildNice(t *testing.T) {
	probe := confinedProbe(t)
	own, err := ownNice()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = SetChildNice(0) })
	script := `cut -d' ' -f19 /proc/self/stat; sh -c "cut -d' ' -f19 /proc/self/stat"`
	for _, c := range []struct{ set, want int }{{3, min(own+3, MaxChildNice)}, {0, own}} {
		if err := SetChildNice(c.set); err != nil {
			t.Fatal(err)
		}
		for _, ns := range []bool{probe.Namespaces, false} {
			out, rep := runConfined(t, Policy{Namespaces: ns, Writable: []string{"/tmp"}, Network: true, Dir: "/"}, script)
			want := strconv.Itoa(c.want) + "\n" + strconv.Itoa(c.want)
			if strings.TrimSpace(out) != want || rep.ExitCode != 0 {
				t.Fatalf("SetChildNice(%d), namespaces %v: the command and its child report %q (%+v), want %q", c.set, ns, out, rep, want)
			}
		}
	}
	for _, bad := range []int{-1, MaxChildNice + 1} {
		if err := SetChildNice(bad); err == nil || !strings.Contains(err.Error(), fmt.Sprint(bad)) {
			t.Fatalf("SetChildNice(%d): %v", bad, err)
		}
	}
}
