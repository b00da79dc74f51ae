package access

import (
	"net"
	"strings"
)

// IsLoopbackName reports whether host (a name or IP, without port) is
// loopback: localhost, any address of 127.0.0.0/8 or ::1.
func IsLoopbackName(host string) bool {
	host = strings.TrimSuffix(strings.Trim(strings.ToLower(host), "[]"), ".")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
