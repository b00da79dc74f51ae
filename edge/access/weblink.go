package access

import "net/url"

// WebLinkParam is the name of the token in the fragment of a web link
// (http://127.0.0.1:4777/#token=…). Foya web and the playground read it,
// keep the token in sessionStorage and take it off the address bar.
const WebLinkParam = "token"

// WebLink is the link that opens Foya web on the kernel at hostport with
// token. The token is in the fragment, which browsers never send to a
// server, so it reaches neither the kernel's nor a proxy's access log.
func WebLink(scheme, hostport, token string) string {
	return scheme + "://" + hostport + "/#" + WebLinkParam + "=" + url.QueryEscape(token)
}
