package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
)

// Image generation limits.
const (
	MaxImagePromptBytes = 32 << 10
	MaxImageCount       = 10
)

var imageSizeRE = regexp.MustCompile(`^(auto|[1-9][0-9]{1,4}x[1-9][0-9]{1,4})$`)

// imageRoute is an image connection, model and provider ready to call.
type imageRoute struct {
	b   boundModel
	gen core.ImageGenerator
}

// imageModel resolves the image connection and model of a generation: the
// given connection (an IMAGE connection) and model, else the IMAGE default.
// Image connections are never chat models, and chat connections never
// generate images here (PRV-2).
func (g *Generator) imageModel(ctx context.Context, connectionID, model string) (imageRoute, error) {
	if connectionID == "" {
		d, err := g.cfg.Catalog.Defaults(ctx)
		if err != nil {
			return imageRoute{}, err
		}
		if d.Image == nil {
			return imageRoute{}, core.Errorf(core.CodeUnavailable, "no default image model: pass connectionId, or set one with setDefaultModel(purpose: IMAGE)")
		}
		connectionID = d.Image.ConnectionID
		if model == "" {
			model = d.Image.Model
		}
	}
	conn, err := g.cfg.Catalog.Connection(ctx, connectionID)
	if errors.Is(err, core.ErrNotFound) {
		return imageRoute{}, core.Errorf(core.CodeBadInput, "connectionId: no connection with id %q", connectionID)
	}
	if err != nil {
		return imageRoute{}, err
	}
	if conn.Type != core.ConnImage {
		return imageRoute{}, core.Errorf(core.CodeBadInput, "connectionId: %q is a %s connection; image generation needs an IMAGE connection", conn.Name, conn.Type)
	}
	if model == "" {
		if len(conn.Models) == 0 {
			return imageRoute{}, core.Errorf(core.CodeBadInput, "model: connection %q lists no models; name one", conn.Name)
		}
		model = conn.Models[0].ID
	}
	if !catalog.ModelUsable(conn, model) {
		return imageRoute{}, core.Errorf(core.CodeBadInput, "model: connection %q has no model %q", conn.Name, model)
	}
	m := generationModel(conn, model)
	if err := generationFlagError(conn, m, "image", "generateImage"); err != nil {
		return imageRoute{}, err
	}
	if f := m.Capabilities.Generation; f == nil || f.Image == nil {
		g.log.Info("the model's generation.image flag is unknown (null): allowed", "connection_id", conn.ID, "model", m.ID)
	}
	ep, err := g.cfg.Catalog.Endpoint(ctx, conn.ID)
	if err != nil {
		return imageRoute{}, err
	}
	p, err := g.cfg.Providers.Provider(conn.ProviderKind)
	if err != nil {
		return imageRoute{}, &core.Error{Code: core.CodeUnavailable, Message: fmt.Sprintf("provider %q of connection %q is not available", conn.ProviderKind, conn.Name), Err: err}
	}
	gen, ok := p.(core.ImageGenerator)
	if !ok || !core.HasCapability(p, core.CapImageGenerator) {
		return imageRoute{}, core.Errorf(core.CodeUnavailable, "provider %q of connection %q cannot generate images", conn.ProviderKind, conn.Name)
	}
	return imageRoute{b: boundModel{conn: conn, model: m, endpoint: ep, provider: p, route: core.RouteKey(conn, model)}, gen: gen}, nil
}

// Image generates images through an image connection's provider
// (the image_generator capability; the OpenAI provider uses the
// images/generations endpoint), stores them in the artifact store and
// returns them as attachments.
func (g *Generator) Image(ctx context.Context, in core.GenerateImageInput) ([]core.Attachment, error) {
	in.Prompt = strings.TrimSpace(in.Prompt)
	switch {
	case in.Prompt == "":
		return nil, core.Errorf(core.CodeBadInput, "prompt: describe the image")
	case len(in.Prompt) > MaxImagePromptBytes:
		return nil, core.Errorf(core.CodeBadInput, "prompt: at most %d bytes", MaxImagePromptBytes)
	case in.Count < 0 || in.Count > MaxImageCount:
		return nil, core.Errorf(core.CodeBadInput, "count: 1 to %d", MaxImageCount)
	case in.Size != "" && !imageSizeRE.MatchString(in.Size):
		return nil, core.Errorf(core.CodeBadInput, "size %q: use WIDTHxHEIGHT such as 1024x1024, or auto", in.Size)
	}
	if in.Count == 0 {
		in.Count = 1
	}
	if in.SessionID != "" {
		if _, err := g.svc.Session(ctx, in.SessionID); err != nil {
			return nil, err
		}
	}
	r, err := g.imageModel(ctx, in.ConnectionID, in.Model)
	if err != nil {
		return nil, err
	}
	res, err := r.gen.GenerateImage(ctx, r.b.endpoint, core.ImageRequest{Model: r.b.model.ID, Prompt: in.Prompt, Size: in.Size, Count: in.Count})
	if err != nil {
		return nil, catalog.ProviderFailure("generate image", err, r.b.endpoint.APIKey)
	}
	pctx := context.WithoutCancel(ctx)
	g.recordGenerationUsage(pctx, in.SessionID, r.b, res.Usage, "image_generation")
	out := make([]core.Attachment, 0, len(res.Images))
	for i, im := range res.Images {
		name := fmt.Sprintf("generated-%d%s", i+1, imageExt(im.MediaType))
		a, err := g.cfg.keepAttachment(pctx, &core.ToolAttachment{Name: name, MediaType: im.MediaType, Data: im.Data})
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	g.log.Info("images generated", "connection_id", r.b.conn.ID, "model", r.b.model.ID, "count", len(out), "session_id", in.SessionID)
	return out, nil
}

func imageExt(mediaType string) string {
	switch mediaType {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "image/webp":
		return ".webp"
	case "image/gif":
		return ".gif"
	}
	return ""
}

// ToolImageGeneration is the kernel tool that generates images with the
// IMAGE default model; it is offered only when that default exists.
const ToolImageGeneration = "image_generation"

// It is not read-only: it spends money and shows the user content, so it
// needs approval wherever a write would (ASK asks, EXPLORE and planning
// refuse, BYPASS runs it).
var imageGenerationToolInfo = core.ToolInfo{Name: ToolImageGeneration, ReadOnly: false,
	Description: "Generate images from a text description with the user's default image model. The images are attached to the result and shown to the user.",
	Schema:      json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"What the image shows, in detail."},"size":{"type":"string","description":"WIDTHxHEIGHT such as 1024x1024 (optional)"},"count":{"type":"integer","minimum":1,"maximum":4}},"required":["prompt"],"additionalProperties":false}`)}

// imageDefaultSet reports whether an IMAGE default model exists.
func (g *Generator) imageDefaultSet(ctx context.Context) bool {
	d, err := g.cfg.Catalog.Defaults(ctx)
	return err == nil && d.Image != nil
}

// runImageGeneration runs the image_generation tool: the images become the
// tool message's attachments, which reach a vision model like any tool image.
func (g *Generator) runImageGeneration(ctx context.Context, s core.Session, c core.ToolCall) (string, []core.Attachment, bool) {
	var in struct {
		Prompt string `json:"prompt"`
		Size   string `json:"size"`
		Count  int    `json:"count"`
	}
	if err := json.Unmarshal(c.Input, &in); err != nil || strings.TrimSpace(in.Prompt) == "" {
		return "image_generation: give a non-empty \"prompt\"", nil, true
	}
	if in.Count > 4 {
		in.Count = 4
	}
	atts, err := g.Image(ctx, core.GenerateImageInput{Prompt: in.Prompt, Size: in.Size, Count: in.Count, SessionID: s.ID})
	if err != nil {
		return "image_generation failed: " + core.ErrorMessage(err), nil, true
	}
	names := make([]string, len(atts))
	for i, a := range atts {
		names[i] = a.Name
	}
	return fmt.Sprintf("generated %d image(s), attached and shown to the user: %s", len(atts), strings.Join(names, ", ")), atts, false
}
