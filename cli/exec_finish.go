package cli

import "strings"

// finishReason says on stderr why a reply ended when it is not an answer:
// a refusal (with the service's explanation when it gave one) or the
// provider's content filter. The turn still completed (exit 0).
func (t *turnWatch) finishReason(reason, refusal *string) {
	switch deref(reason) {
	case "refusal":
		t.pr.errorf("refused: %s", orDefault(strings.TrimSpace(deref(refusal)), "the model declined to answer (no explanation given)"))
	case "content_filter":
		t.pr.errorf("stopped by the provider's content filter")
	}
}
