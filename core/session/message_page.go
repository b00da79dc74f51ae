package session

import (
	"context"
	"github.com/foya-dev/foya/core"
)

// MessagePage returns a page of a session's messages (see MessageQuery).
func (s *Service) MessagePage(ctx context.Context, id string, q core.MessageQuery) ([]core.Message, error) {
	if q.AfterSeq < 0 || q.BeforeSeq < 0 {
		return nil, core.Errorf(core.CodeBadInput, "afterSeq and beforeSeq must be 0 or more")
	}
	if q.Limit < 0 {
		return nil, core.Errorf(core.CodeBadInput, "first and last must be 1 or more")
	}
	if _, err := s.store.Session(ctx, id); err != nil {
		return nil, err
	}
	return s.store.MessagePage(ctx, id, q)
}
