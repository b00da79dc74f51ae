package core

import (
	"context"
)

// ImageRequest asks an image connection for generated images (PRV-2).
type ImageRequest struct {
	Model  string
	Prompt string
	Size   string
	Count  int
}

// GeneratedImage is one generated image.
type GeneratedImage struct {
	MediaType     string
	Data          []byte
	RevisedPrompt string
}

// ImageResult is the answer of an image generation.
type ImageResult struct {
	Images []GeneratedImage
	Usage  *Usage
}

// ImageGenerator is the image generation capability (PRV-2, PRV-7).
type ImageGenerator interface {
	GenerateImage(ctx context.Context, ep Endpoint, req ImageRequest) (ImageResult, error)
}

// GenerateImageInput is the input of generateImage.
type GenerateImageInput struct {
	Prompt       string
	ConnectionID string
	Model        string
	Size         string
	Count        int
	// SessionID, when set, is the session the images are for: the usage is
	// recorded there.
	SessionID string
}
