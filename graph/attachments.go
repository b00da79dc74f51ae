package graph

import (
	"context"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/graph/model"
)

// The mutations that make attachments: generated images and videos.

// generateImage serves generateImage; a count of 0 is refused here, the
// engine checks the rest.
func generateImage(ctx context.Context, e *engine.Engine, input model.GenerateImageInput) ([]core.Attachment, error) {
	in := core.GenerateImageInput{Prompt: input.Prompt, ConnectionID: deref(input.ConnectionID), Model: deref(input.Model), Size: deref(input.Size), SessionID: deref(input.SessionID)}
	if input.Count != nil {
		in.Count = int(*input.Count)
		if in.Count == 0 {
			return nil, core.Errorf(core.CodeBadInput, "count: 1 to %d", engine.MaxImageCount)
		}
	}
	return e.Generation().Image(ctx, in)
}

// generateVideo serves generateVideo; a duration of 0 or less is refused
// here (omitted, the service's default applies), the engine checks the
// rest.
func generateVideo(ctx context.Context, e *engine.Engine, input model.GenerateVideoInput) ([]core.Attachment, error) {
	in := core.GenerateVideoInput{Prompt: input.Prompt, ConnectionID: deref(input.ConnectionID), Model: deref(input.Model), Size: deref(input.Size), SessionID: deref(input.SessionID)}
	if input.DurationSeconds != nil {
		in.DurationSeconds = int(*input.DurationSeconds)
		if in.DurationSeconds <= 0 {
			return nil, core.Errorf(core.CodeBadInput, "durationSeconds: 1 to %d (or omit for the service's default)", engine.MaxVideoDurationSeconds)
		}
	}
	return e.Generation().Video(ctx, in)
}
