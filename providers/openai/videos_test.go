package openai_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/plugins/sdk"
	"github.com/foya-dev/foya/providers/openai"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

func videoEndpoint(fake *openaitest.Server) sdk.Endpoint {
	return sdk.Endpoint{ConnectionID: "conn_v", BaseURL: fake.BaseURL(), APIKey: "sk-video"}
}

// The openai_video protocol: a multipart job creation, status reads at the
// pace the service suggests until completed, then the content with the key.
func TestGenerateVideoJob(t *testing.T) {
	fake := openaitest.New(t)
	mp4 := openaitest.MP4("fox", 5000)
	fake.Enqueue(openaitest.VideoJob("video_1", "queued", 0), openaitest.VideoJob("video_1", "in_progress", 40),
		openaitest.VideoJob("video_1", "completed", 100), openaitest.VideoContent(mp4))
	p := openai.New(openai.Config{})
	if !strings.Contains(strings.Join(capNames(p.Describe().Capabilities), ","), "video_generator") {
		t.Fatalf("capabilities %v", p.Describe().Capabilities)
	}
	res, err := p.GenerateVideo(context.Background(), videoEndpoint(fake), sdk.VideoRequest{Model: "sora-2", Prompt: "a fox in the snow", Protocol: "openai_video", DurationSeconds: 8, Size: "1280x720"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Videos) != 1 || res.Videos[0].MediaType != "video/mp4" || string(res.Videos[0].Data) != string(mp4) {
		t.Fatalf("videos %+v", res.Videos)
	}
	reqs := fake.Requests()
	want := []string{"POST /v1/videos", "GET /v1/videos/video_1", "GET /v1/videos/video_1", "GET /v1/videos/video_1/content"}
	if len(reqs) != len(want) {
		t.Fatalf("%d requests, want %d", len(reqs), len(want))
	}
	for i, r := range reqs {
		if r.Method+" "+r.Path != want[i] || r.Header.Get("Authorization") != "Bearer sk-video" {
			t.Fatalf("request %d: %s %s (auth %q), want %s", i, r.Method, r.Path, r.Header.Get("Authorization"), want[i])
		}
	}
	form, err := reqs[0].Form()
	if err != nil {
		t.Fatal(err)
	}
	if form["prompt"] != "a fox in the snow" || form["model"] != "sora-2" || form["seconds"] != "8" || form["size"] != "1280x720" || len(form) != 4 {
		t.Fatalf("form %v", form)
	}
	if a := reqs[3].Header.Get("Accept"); !strings.Contains(a, "video/mp4") {
		t.Fatalf("content Accept %q", a)
	}

	// Without a duration or size (and with "auto") the service's defaults apply.
	fake.Enqueue(openaitest.VideoJob("video_2", "completed", 100), openaitest.VideoContent(mp4))
	if _, err := p.GenerateVideo(context.Background(), videoEndpoint(fake), sdk.VideoRequest{Model: "sora-2", Prompt: "p", Protocol: "openai_video", Size: "auto"}); err != nil {
		t.Fatal(err)
	}
	if form, _ := fake.Requests()[4].Form(); len(form) != 2 {
		t.Fatalf("form %v", form)
	}
}

func TestGenerateVideoFailures(t *testing.T) {
	fake := openaitest.New(t)
	p := openai.New(openai.Config{})
	ep := videoEndpoint(fake)
	gen := func(protocol string) error {
		_, err := p.GenerateVideo(context.Background(), ep, sdk.VideoRequest{Model: "sora-2", Prompt: "p", Protocol: protocol})
		return err
	}
	category := func(err error) sdk.ErrorCategory {
		var e *sdk.Error
		if !errors.As(err, &e) {
			t.Fatalf("not an sdk.Error: %v", err)
		}
		return e.Category
	}
	// Another protocol: refused before any request, naming the one it speaks.
	if err := gen("runway"); err == nil || !strings.Contains(err.Error(), "openai_video") || category(err) != sdk.CategoryBadRequest || len(fake.Requests()) != 0 {
		t.Fatalf("other protocol: %v (%d requests)", err, len(fake.Requests()))
	}
	// A job the service failed: its code and message, classified.
	fake.Enqueue(openaitest.VideoJob("video_f", "queued", 0), openaitest.VideoFailed("video_f", "moderation_blocked", "Your request was blocked by our moderation system."))
	if err := gen("openai_video"); err == nil || !strings.Contains(err.Error(), "moderation_blocked") || !strings.Contains(err.Error(), "blocked by our moderation") || category(err) != sdk.CategoryBadRequest {
		t.Fatalf("failed job: %v", err)
	}
	fake.Enqueue(openaitest.VideoFailed("video_g", "internal_error", "try again"))
	if err := gen("openai_video"); err == nil || category(err) != sdk.CategoryServer {
		t.Fatalf("failed job: %v", err)
	}
	// An HTTP error creating the job is classified like any request's.
	fake.Enqueue(openaitest.Error(429, "rate_limit_error", "rate_limit_exceeded", "slow down"))
	if err := gen("openai_video"); err == nil || category(err) != sdk.CategoryRateLimit {
		t.Fatalf("429: %v", err)
	}
	// An unknown status, content that is not a video, a video over the limit.
	fake.Enqueue(openaitest.VideoJob("video_u", "exploded", 0))
	if err := gen("openai_video"); err == nil || !strings.Contains(err.Error(), `"exploded"`) {
		t.Fatalf("unknown status: %v", err)
	}
	fake.Enqueue(openaitest.VideoJob("video_h", "completed", 100), openaitest.Response{Body: "<html>not found</html>", Header: http.Header{"Content-Type": {"text/html"}}})
	if err := gen("openai_video"); err == nil || !strings.Contains(err.Error(), "not a video") {
		t.Fatalf("html content: %v", err)
	}
	fake.Enqueue(openaitest.VideoJob("video_b", "completed", 100), openaitest.VideoContent(openaitest.MP4("big", 20<<20+1)))
	if err := gen("openai_video"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("oversized: %v", err)
	}
	// A job without an id.
	fake.Enqueue(openaitest.Response{Body: `{"object":"video","status":"queued"}`})
	if err := gen("openai_video"); err == nil || !strings.Contains(err.Error(), "without an id") {
		t.Fatalf("no id: %v", err)
	}
}

// Cancelling the caller's context ends the wait between status reads.
func TestGenerateVideoCancelledWhileWaiting(t *testing.T) {
	fake := openaitest.New(t)
	slow := openaitest.VideoJob("video_s", "queued", 0)
	slow.Header = http.Header{"Openai-Poll-After-Ms": {"600000"}} // kept within 10 s
	fake.Enqueue(slow)
	p := openai.New(openai.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(fake.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := p.GenerateVideo(ctx, videoEndpoint(fake), sdk.VideoRequest{Model: "sora-2", Prompt: "p", Protocol: "openai_video"})
	if !errors.Is(err, context.Canceled) || len(fake.Requests()) != 1 {
		t.Fatalf("err %v after %d requests", err, len(fake.Requests()))
	}
}

func capNames(cs []sdk.Capability) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c)
	}
	return out
}
