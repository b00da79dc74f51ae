package daemon

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

func listen(t *testing.T, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("listen on %s: %v", addr, err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

func TestListenerNames(t *testing.T) {
	lo := listen(t, "127.0.0.1:0")
	if !isLoopbackListener(lo) || playgroundHost(lo) != lo.Addr().String() {
		t.Errorf("loopback: %v %s", isLoopbackListener(lo), playgroundHost(lo))
	}
	if got := advertiseURL("", lo, true); got != "https://"+lo.Addr().String() {
		t.Errorf("advertise %s", got)
	}
	if got := advertiseURL("http://10.0.0.5:4777", lo, false); got != "http://10.0.0.5:4777" {
		t.Errorf("advertise %s", got)
	}
	all := listen(t, ":0")
	port := strconv.Itoa(all.Addr().(*net.TCPAddr).Port)
	if isLoopbackListener(all) || playgroundHost(all) != "localhost:"+port {
		t.Errorf("all addresses: %v %s", isLoopbackListener(all), playgroundHost(all))
	}
	if got := advertiseURL("", all, false); !strings.HasPrefix(got, "http://") || !strings.HasSuffix(got, ":"+port) || strings.Contains(got, "[::]") {
		t.Errorf("advertise %s", got)
	}
	if err := checkInsecureNoToken(tokenPolicy{insecure: true}, false, all.Addr().String()); err == nil {
		t.Error("--insecure-no-token accepted beyond loopback")
	}
	if err := checkInsecureNoToken(tokenPolicy{insecure: true}, true, lo.Addr().String()); err != nil {
		t.Error(err)
	}
}

func TestCheckAdvertiseURL(t *testing.T) {
	for v, ok := range map[string]bool{"": true, "http://h:1": true, "https://h/": true, "ftp://h": false, "http://": false, "http://h/x": false, "http://h?q=1": false} {
		if err := checkAdvertiseURL(v); (err == nil) != ok {
			t.Errorf("%q: %v", v, err)
		}
	}
}
