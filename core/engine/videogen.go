package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
)

// Video generation limits.
const (
	MaxVideoPromptBytes     = 32 << 10
	MaxVideoDurationSeconds = 600
)

// Video generates a video through a VIDEO connection's provider
// (the video_generator capability), passing the connection's declared
// video protocol; the videos are kept in the artifact store and returned as
// attachments. A provider without video generation is UNAVAILABLE.
func (g *Generator) Video(ctx context.Context, in core.GenerateVideoInput) ([]core.Attachment, error) {
	in.Prompt = strings.TrimSpace(in.Prompt)
	switch {
	case in.Prompt == "":
		return nil, core.Errorf(core.CodeBadInput, "prompt: describe the video")
	case len(in.Prompt) > MaxVideoPromptBytes:
		return nil, core.Errorf(core.CodeBadInput, "prompt: at most %d bytes", MaxVideoPromptBytes)
	case in.DurationSeconds < 0 || in.DurationSeconds > MaxVideoDurationSeconds:
		return nil, core.Errorf(core.CodeBadInput, "durationSeconds: 1 to %d (or omit for the service's default)", MaxVideoDurationSeconds)
	case in.Size != "" && !imageSizeRE.MatchString(in.Size):
		return nil, core.Errorf(core.CodeBadInput, "size %q: use WIDTHxHEIGHT such as 1280x720, or auto", in.Size)
	}
	if in.SessionID != "" {
		if _, err := g.svc.Session(ctx, in.SessionID); err != nil {
			return nil, err
		}
	}
	conn, model, err := g.videoConnection(ctx, in.ConnectionID, in.Model)
	if err != nil {
		return nil, err
	}
	m := generationModel(conn, model)
	if err := generationFlagError(conn, m, "video", "generateVideo"); err != nil {
		return nil, err
	}
	p, err := g.cfg.Providers.Provider(conn.ProviderKind)
	if err != nil {
		return nil, &core.Error{Code: core.CodeUnavailable, Message: fmt.Sprintf("provider %q of connection %q is not available", conn.ProviderKind, conn.Name), Err: err}
	}
	gen, ok := p.(core.VideoGenerator)
	if !ok || !core.HasCapability(p, core.CapVideoGenerator) {
		return nil, core.Errorf(core.CodeUnavailable, "provider %q of connection %q cannot generate video: install a provider plugin that declares the video_generator capability and point the connection at it", conn.ProviderKind, conn.Name)
	}
	ep, err := g.cfg.Catalog.Endpoint(ctx, conn.ID)
	if err != nil {
		return nil, err
	}
	b := boundModel{conn: conn, model: m, endpoint: ep, provider: p, route: core.RouteKey(conn, model)}
	res, err := gen.GenerateVideo(ctx, ep, core.VideoRequest{Model: model, Prompt: in.Prompt, Protocol: conn.VideoProtocol, DurationSeconds: in.DurationSeconds, Size: in.Size})
	if err != nil {
		return nil, catalog.ProviderFailure("generate video", err, ep.APIKey)
	}
	pctx := context.WithoutCancel(ctx)
	g.recordGenerationUsage(pctx, in.SessionID, b, res.Usage, "video_generation")
	out := make([]core.Attachment, 0, len(res.Videos))
	for i, v := range res.Videos {
		name := fmt.Sprintf("generated-%d%s", i+1, videoExt(v.MediaType))
		a, err := g.cfg.keepAttachment(pctx, &core.ToolAttachment{Name: name, MediaType: v.MediaType, Data: v.Data})
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	g.log.Info("videos generated", "connection_id", conn.ID, "model", model, "protocol", conn.VideoProtocol, "count", len(out), "session_id", in.SessionID)
	return out, nil
}

// videoConnection finds the VIDEO connection and model a generateVideo
// names, or the default video model when it names no connection.
func (g *Generator) videoConnection(ctx context.Context, connectionID, model string) (core.Connection, string, error) {
	if connectionID == "" {
		d, err := g.cfg.Catalog.Defaults(ctx)
		if err != nil {
			return core.Connection{}, "", err
		}
		if d.Video == nil {
			return core.Connection{}, "", core.Errorf(core.CodeUnavailable, "no default video model: pass connectionId, or set one with setDefaultModel(purpose: VIDEO)")
		}
		connectionID = d.Video.ConnectionID
		if model == "" {
			model = d.Video.Model
		}
	}
	conn, err := g.cfg.Catalog.Connection(ctx, connectionID)
	if errors.Is(err, core.ErrNotFound) {
		return core.Connection{}, "", core.Errorf(core.CodeBadInput, "connectionId: no connection with id %q", connectionID)
	}
	if err != nil {
		return core.Connection{}, "", err
	}
	if conn.Type != core.ConnVideo {
		return core.Connection{}, "", core.Errorf(core.CodeBadInput, "connectionId: %q is a %s connection; video generation needs a VIDEO connection", conn.Name, conn.Type)
	}
	if model == "" {
		if len(conn.Models) == 0 {
			return core.Connection{}, "", core.Errorf(core.CodeBadInput, "model: connection %q lists no models; name one", conn.Name)
		}
		model = conn.Models[0].ID
	}
	if !catalog.ModelUsable(conn, model) {
		return core.Connection{}, "", core.Errorf(core.CodeBadInput, "model: connection %q has no model %q", conn.Name, model)
	}
	return conn, model, nil
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

// ToolVideoGeneration is the kernel tool that generates a video with the
// VIDEO default model; it is offered only when that default exists.
const ToolVideoGeneration = "video_generation"

// Like image_generation it is not read-only (it spends money and shows the
// user content): ASK asks, EXPLORE and planning refuse, BYPASS runs it. A
// video job takes minutes; stopping the turn stops the wait.
var videoGenerationToolInfo = core.ToolInfo{Name: ToolVideoGeneration, ReadOnly: false,
	Description: "Generate a short video from a text description with the user's default video model (this takes minutes). The video is attached to the result and shown to the user; you cannot watch it.",
	Schema:      json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"What the video shows: subject, action, setting, camera, style."},"seconds":{"type":"integer","minimum":1,"maximum":60,"description":"Length in seconds (optional; the service's default otherwise)"},"size":{"type":"string","description":"WIDTHxHEIGHT such as 1280x720 or 720x1280 (optional)"}},"required":["prompt"],"additionalProperties":false}`)}

// videoDefaultSet reports whether a VIDEO default model exists.
func (g *Generator) videoDefaultSet(ctx context.Context) bool {
	d, err := g.cfg.Catalog.Defaults(ctx)
	return err == nil && d.Video != nil
}

// runVideoGeneration runs the video_generation tool: the video becomes the
// tool message's attachment (a model is told it is attached, never sent
// its bytes).
func (g *Generator) runVideoGeneration(ctx context.Context, s core.Session, c core.ToolCall) (string, []core.Attachment, bool) {
	var in struct {
		Prompt  string `json:"prompt"`
		Seconds int    `json:"seconds"`
		Size    string `json:"size"`
	}
	if err := json.Unmarshal(c.Input, &in); err != nil || strings.TrimSpace(in.Prompt) == "" {
		return "video_generation: give a non-empty \"prompt\"", nil, true
	}
	atts, err := g.Video(ctx, core.GenerateVideoInput{Prompt: in.Prompt, DurationSeconds: in.Seconds, Size: in.Size, SessionID: s.ID})
	if err != nil {
		return "video_generation failed: " + core.ErrorMessage(err), nil, true
	}
	names := make([]string, len(atts))
	for i, a := range atts {
		names[i] = fmt.Sprintf("%s (%s, %d bytes)", a.Name, a.MediaType, a.Size)
	}
	return fmt.Sprintf("generated %d video(s), attached and shown to the user: %s", len(atts), strings.Join(names, ", ")), atts, false
}
