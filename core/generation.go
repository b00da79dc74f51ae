package core

import "context"

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
