// Command videoecho is an example third-party provider plugin written only
// against plugins/sdk that implements the video_generator capability: it
// "renders" a video whose bytes name the connection's video protocol, the
// model, the size, the duration and the prompt. Tests build it into a plugin
// directory: go build -o <data-dir>/plugins/videoecho ./providers/videoecho
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/foya-dev/foya/plugins/sdk"
)

type videoecho struct{}

func (videoecho) Describe() sdk.ProviderInfo {
	return sdk.ProviderInfo{Kind: "videoecho", Version: "0.1.0", Capabilities: []sdk.Capability{sdk.CapVideoGenerator}}
}

func (videoecho) Stream(context.Context, sdk.Endpoint, sdk.Request, sdk.StreamSender) (string, error) {
	return "", fmt.Errorf("videoecho only generates video")
}

func (videoecho) GenerateVideo(_ context.Context, _ sdk.Endpoint, req sdk.VideoRequest) (sdk.VideoResult, error) {
	if req.Protocol != "openai_video" {
		return sdk.VideoResult{}, fmt.Errorf("video protocol %q is not supported (use openai_video)", req.Protocol)
	}
	if strings.Contains(req.Prompt, "fail") {
		return sdk.VideoResult{}, fmt.Errorf("videoecho refused the prompt")
	}
	// An ISO BMFF ftyp box makes the bytes sniff as video/mp4.
	data := "\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + fmt.Sprintf("FAKEMP4 protocol=%s model=%s size=%s duration=%d prompt=%s", req.Protocol, req.Model, req.Size, req.DurationSeconds, req.Prompt)
	return sdk.VideoResult{
		Videos: []sdk.GeneratedVideo{{MediaType: "video/mp4", Data: []byte(data)}},
		Usage:  &sdk.Usage{InputTokens: 5, OutputTokens: 100, TotalTokens: 105, Model: req.Model},
	}, nil
}

func main() {
	if err := sdk.ServeProvider(videoecho{}); err != nil {
		fmt.Fprintln(os.Stderr, "videoecho:", err)
		os.Exit(1)
	}
}
