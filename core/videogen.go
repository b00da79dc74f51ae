package core

import (
	"context"
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
