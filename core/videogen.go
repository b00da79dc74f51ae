package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// VideoRequest asks a video connection for a generated video (PRV-2).
// Protocol is the connection's declared video protocol.
type VideoRequest struct {
	Model           string
	Prompt          string
	Protocol        string
	DurationSeconds int
	Size            string
}

// GeneratedVideo is one generated video.
type GeneratedVideo struct {
	MediaType string
	Data      []byte
}

// VideoResult is the answer of a video generation.
type VideoResult struct {
	Videos []GeneratedVideo
	Usage  *Usage
}

// VideoGenerator is the video generation capability (PRV-2).
type VideoGenerator interface {
	GenerateVideo(ctx context.Context, ep Endpoint, req VideoRequest) (VideoResult, error)
}

// GenerateVideoInput is the input of generateVideo.
type GenerateVideoInput struct {
	Prompt          string
	ConnectionID    string
	Model           string
	DurationSeconds int
	Size            string
	// SessionID, when set, is the session the video is for: the usage is
	// recorded there.
	SessionID string
}

// Video generation limits.
const (
	MaxVideoPromptBytes     = 32 << 10
	MaxVideoDurationSeconds = 600
)

// GenerateVideo generates a video through a VIDEO connection's provider
// (the video_generator capability), passing the connection's declared
// video protocol; the videos are kept in the artifact store and returned as
// attachments. A provider without video generation is UNAVAILABLE.
func (e *Engine) GenerateVideo(ctx context.Context, in GenerateVideoInput) ([]Attachment, error) {
	in.Prompt = strings.TrimSpace(in.Prompt)
	switch {
	case in.Prompt == "":
		return nil, Errorf(CodeBadInput, "prompt: describe the video")
	case len(in.Prompt) > MaxVideoPromptBytes:
		return nil, Errorf(CodeBadInput, "prompt: at most %d bytes", MaxVideoPromptBytes)
	case in.DurationSeconds < 0 || in.DurationSeconds > MaxVideoDurationSeconds:
		return nil, Errorf(CodeBadInput, "durationSeconds: 1 to %d (or omit for the service's default)", MaxVideoDurationSeconds)
	case in.Size != "" && !imageSizeRE.MatchString(in.Size):
		return nil, Errorf(CodeBadInput, "size %q: use WIDTHxHEIGHT such as 1280x720, or auto", in.Size)
	}
	if in.SessionID != "" {
		if _, err := e.svc.Session(ctx, in.SessionID); err != nil {
			return nil, err
		}
	}
	connectionID, model := in.ConnectionID, in.Model
	if connectionID == "" {
		d, err := e.cfg.Catalog.Defaults(ctx)
		if err != nil {
			return nil, err
		}
		if d.Video == nil {
			return nil, Errorf(CodeUnavailable, "no default video model: pass connectionId, or set one with setDefaultModel(purpose: VIDEO)")
		}
		connectionID = d.Video.ConnectionID
		if model == "" {
			model = d.Video.Model
		}
	}
	conn, err := e.cfg.Catalog.Connection(ctx, connectionID)
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(CodeBadInput, "connectionId: no connection with id %q", connectionID)
	}
	if err != nil {
		return nil, err
	}
	if conn.Type != ConnVideo {
		return nil, Errorf(CodeBadInput, "connectionId: %q is a %s connection; video generation needs a VIDEO connection", conn.Name, conn.Type)
	}
	if model == "" {
		if len(conn.Models) == 0 {
			return nil, Errorf(CodeBadInput, "model: connection %q lists no models; name one", conn.Name)
		}
		model = conn.Models[0].ID
	}
	if !modelUsable(conn, model) {
		return nil, Errorf(CodeBadInput, "model: connection %q has no model %q", conn.Name, model)
	}
	m := generationModel(conn, model)
	if err := generationFlagError(conn, m, "video", "generateVideo"); err != nil {
		return nil, err
	}
	p, err := e.cfg.Providers.Provider(conn.ProviderKind)
	if err != nil {
		return nil, &Error{Code: CodeUnavailable, Message: fmt.Sprintf("provider %q of connection %q is not available", conn.ProviderKind, conn.Name), Err: err}
	}
	gen, ok := p.(VideoGenerator)
	if !ok || !HasCapability(p, CapVideoGenerator) {
		return nil, Errorf(CodeUnavailable, "provider %q of connection %q cannot generate video: install a provider plugin that declares the video_generator capability and point the connection at it", conn.ProviderKind, conn.Name)
	}
	ep, err := e.cfg.Catalog.Endpoint(ctx, conn.ID)
	if err != nil {
		return nil, err
	}
	b := boundModel{conn: conn, model: m, endpoint: ep, provider: p, route: RouteKey(conn, model)}
	res, err := gen.GenerateVideo(ctx, ep, VideoRequest{Model: model, Prompt: in.Prompt, Protocol: conn.VideoProtocol, DurationSeconds: in.DurationSeconds, Size: in.Size})
	if err != nil {
		return nil, providerFailure("generate video", err, ep.APIKey)
	}
	pctx := context.WithoutCancel(ctx)
	e.recordGenerationUsage(pctx, in.SessionID, b, res.Usage, "video_generation")
	out := make([]Attachment, 0, len(res.Videos))
	for i, v := range res.Videos {
		name := fmt.Sprintf("generated-%d%s", i+1, videoExt(v.MediaType))
		a, err := e.keepAttachment(pctx, &ToolAttachment{Name: name, MediaType: v.MediaType, Data: v.Data})
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	e.log.Info("videos generated", "connection_id", conn.ID, "model", model, "protocol", conn.VideoProtocol, "count", len(out), "session_id", in.SessionID)
	return out, nil
}

func videoExt(mediaType string) string {
	switch mediaType {
	case "video/mp4":
		return ".mp4"
	case "video/webm":
		return ".webm"
	case "video/quicktime":
		return ".mov"
	}
	return ""
}
